#pragma once
// NCCL's view of a preset two ways (resolved, and from the graph the preset builder makes), and a
// ring Simple all-reduce priced by the model and run on an engine: what the preset tests derive
// by hand.
#include <string>
#include <vector>

#include "../topology/topology_test_util.hpp"
#include "lockstep/nccl/cluster.hpp"
#include "lockstep/nccl/sweep.hpp"
#include "lockstep/nccl/tuner.hpp"
#include "lockstep/topology/faults.hpp"
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

// A 1 GiB ring Simple all-reduce on `engine` over the built graph, with `faults` (the --fault
// syntax) applied: one row.
inline std::vector<CollectiveRow> ring_simple_gib(const char* engine, const NcclCluster& c,
                                                  const Topology& topo,
                                                  const std::vector<std::string>& faults = {}) {
  CollectiveSweep s;
  s.op = CollectiveOp::AllReduce;
  s.algo = Algorithm::Ring;
  s.proto = nccl::Proto::Simple;
  s.min_bytes = s.max_bytes = Bytes::gib(1);
  s.engine = engine;
  for (const auto& f : faults) s.faults.push_back(parse_fault(f, "--fault"));
  return run_collective_sweep(s, c, &topo);
}

}  // namespace lockstep::test
