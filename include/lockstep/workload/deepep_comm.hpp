#pragma once
// InferenceComm on the engines (docs/moe-dispatch.md): MoE dispatch and combine as DeepEP's
// kernels move them (normal in prefill, low latency in decode) and KV caches re-cut from the
// prefill instance's GPUs to the decode instance's, each run as programs on the topology.
// Results are kept per exchange shape: a serving run prices the same shapes step after step.
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "lockstep/topology/graph.hpp"
#include "lockstep/workload/inference_comm.hpp"

namespace lockstep {

class DeepEpComm final : public InferenceComm {
 public:
  /// `engine`: analytical, flow or packet (analytical runs the programs on the analytical
  /// engine: an exchange is no NCCL collective). The topology must outlive this object.
  DeepEpComm(const Topology& topology, std::string engine);
  Time moe_dispatch(const MoeExchange& x) override;
  Time moe_combine(const MoeExchange& x) override;
  Time kv_transfer(const KvTransfer& x) override;

 private:
  using MoeKey = std::tuple<std::vector<std::uint32_t>, std::vector<std::uint64_t>, std::uint64_t,
                            std::uint32_t, std::uint32_t, double, bool, bool, std::vector<double>,
                            std::vector<double>, std::vector<double>>;
  using KvKey = std::tuple<std::vector<std::uint32_t>, std::vector<std::uint32_t>, std::uint64_t>;
  Time moe(const MoeExchange& x, bool dispatch);
  const Topology& topo_;
  std::string engine_;
  std::map<MoeKey, Time> moe_cache_;
  std::map<KvKey, Time> kv_cache_;
};

}  // namespace lockstep
