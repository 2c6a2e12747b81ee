#pragma once
// NCCL's view of a preset two ways (resolved, and from the graph the preset builder makes), and a
// ring Simple all-reduce priced by the model: what the preset tests derive by hand.
#include <string>

#include "../topology/topology_test_util.hpp"
#include "lockstep/nccl/cluster.hpp"
#include "lockstep/nccl/tuner.hpp"
#include "lockstep/topology/presets.hpp"

namespace lockstep::test {

inline NcclCluster from_preset(const char* system, std::uint32_t nodes, std::uint32_t gpus = 0) {
  return nccl_cluster(resolve_preset({.system = system, .nodes = nodes, .gpus_per_node = gpus}));
}

inline NcclCluster from_graph(const char* system, std::uint32_t nodes) {
  return nccl_cluster(preset_graph(system, nodes));
}

inline Prediction ring_simple_all_reduce(const NcclCluster& c, std::uint64_t bytes) {
  TunerRequest r;
  r.bytes = Bytes(bytes);
  r.algo = Algorithm::Ring;
  r.proto = nccl::Proto::Simple;
  return predict(c, r);
}

inline constexpr std::uint64_t kGiB = 1ull << 30;

}  // namespace lockstep::test
