#pragma once
// The communication of an inference step that is not a tensor-parallel all-reduce: MoE token
// dispatch and combine (DeepEP-style all-to-all) and the KV-cache transfer of disaggregated
// serving. simulate_inference calls this interface; by default DeepEpComm
// (workload/deepep_comm.hpp) runs each as programs on the job's engine (docs/moe-dispatch.md).
#include <cstdint>
#include <vector>

#include "lockstep/core/units.hpp"

namespace lockstep {

/// One MoE layer's exchange in one expert-parallel group.
struct MoeExchange {
  std::vector<std::uint32_t> ranks;   // the group's GPUs (indices of topology.gpus())
  std::vector<std::uint64_t> tokens;  // tokens each rank routes, in `ranks` order (0: idle)
  std::uint64_t hidden = 0;           // elements per token
  std::uint32_t top_k = 1;            // experts each token visits
  std::uint32_t experts = 0;          // routed experts of the layer
  double bytes_per_element = 2;       // activations sent: BF16 2, FP8 dispatch 1
  bool decode = true;                 // a decode step (DeepEP's low-latency kernels) or prefill
  // Each rank's share of the token-slots relative to the mean (mean 1, `ranks` order): the
  // experts' popularity and their placement (workload/expert_load.hpp); empty: all equal.
  std::vector<double> load;
  // With `load`: the probability that a token reaches each rank's GPU and its NVLink domain
  // (workload/expert_load.hpp's expert_reach; MoeSpec::rank_reach, node_reach); empty: uniform.
  std::vector<double> gpu_reach, domain_reach;
};

/// A KV cache moved from a prefill replica to a decode replica.
struct KvTransfer {
  std::vector<std::uint32_t> from, to;  // the replicas' GPUs, same order (GPU i sends to GPU i)
  Bytes bytes;                          // the whole request's KV cache (split over the pairs)
};

class InferenceComm {
 public:
  virtual ~InferenceComm() = default;
  /// Tokens to their experts' ranks, before the expert MLPs.
  virtual Time moe_dispatch(const MoeExchange& x) = 0;
  /// Expert outputs back to their tokens' ranks, weighted and summed there.
  virtual Time moe_combine(const MoeExchange& x) = 0;
  virtual Time kv_transfer(const KvTransfer& x) = 0;
};

}  // namespace lockstep
