// Google Benchmark: the topology layer at scale. Times build_topology on rail-optimised 3-tier
// fabrics of B200 nodes on Quantum-X800 switches (144 x 800G), 4 to 512 scalable units of 32
// nodes x 8 GPUs; 512 SUs are 131,072 GPUs in 57 pods of 9 SUs (target: under 5 s and 2 GB).
//   BM_RailOptimized/graph/sus:N      the graph and its bill of materials
//   BM_RailOptimized/inventory/sus:512        the closed-form bill of materials, no graph
//   BM_RailOptimized/inventory_qm9700/sus:512 the same 512 SUs on 64-port Quantum-2 switches:
//       128 pods of 4 SUs exceed the 64 a core of 64 ports can join, so the design is reported
//       infeasible (the label gives the reason)
//   BM_FullMesh/gpus:200000           a design too large to build as a graph: inventory only
// Counters: gpus, devices and links of the graph (0 without one), cables, transceivers, feasible,
// peak_MiB (peak resident memory of this benchmark); the label gives switches per tier.
//
//   bench_topology_scale [--benchmark_filter=graph/sus:512] [--benchmark_format=json] ...
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <optional>
#include <string>

#include "../process_usage.hpp"
#include "lockstep/topology/builder.hpp"

namespace {

using lockstep::ArgNode;

ArgNode rail_args(std::int64_t sus, const char* switch_name) {
  ArgNode m = ArgNode::map("cluster");
  auto set = [&](const char* k, std::string v) { m.set(k, ArgNode::scalar(v, k)); };
  set("builder", "rail_optimized");
  set("sus", std::to_string(sus));
  set("gpu", "b200");
  set("switch", switch_name);
  set("tiers", "3");
  return m;
}

void count(benchmark::State& state, const lockstep::BuildResult& r) {
  const lockstep::Inventory& inv = r.inventory;
  auto tier = [&](std::size_t i) { return inv.tiers.size() > i ? inv.tiers[i].switches : 0; };
  state.counters["gpus"] = static_cast<double>(inv.gpus);
  state.counters["devices"] = r.graph ? static_cast<double>(r.graph->num_devices()) : 0;
  state.counters["links"] = r.graph ? static_cast<double>(r.graph->num_links()) : 0;
  state.counters["cables"] = static_cast<double>(inv.cables);
  state.counters["transceivers"] = static_cast<double>(inv.transceivers);
  state.counters["feasible"] = inv.feasible ? 1 : 0;
  state.counters["peak_MiB"] = lockstep::bench::peak_rss_mib();
  state.SetLabel(fmt::format("switches {}/{}/{}{}", tier(1), tier(2), tier(3),
                             inv.problems.empty() ? "" : "; " + inv.problems.front()));
}

// The timed loop of every benchmark here: one build_topology per iteration.
void time_builds(benchmark::State& state, const ArgNode& args, lockstep::BuildOptions options) {
  lockstep::bench::reset_peak_rss();
  for (auto _ : state) {
    std::optional<lockstep::BuildResult> r = lockstep::build_topology(args, options);
    state.PauseTiming();  // reading the counters and freeing the graph are not the build
    count(state, *r);
    r.reset();
    lockstep::bench::release_free_memory();  // each build faults its memory in, as the first does
    state.ResumeTiming();
  }
}

void BM_RailOptimized(benchmark::State& state, const char* switch_name, bool graph) {
  lockstep::BuildOptions options;
  options.want_graph = graph;
  time_builds(state, rail_args(state.range(0), switch_name), options);
}
BENCHMARK_CAPTURE(BM_RailOptimized, graph, "q3400", true)
    ->ArgName("sus")
    ->Arg(4)
    ->Arg(32)
    ->Arg(128)
    ->Arg(512)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_RailOptimized, inventory, "q3400", false)
    ->ArgName("sus")
    ->Arg(512)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_RailOptimized, inventory_qm9700, "qm9700", false)
    ->ArgName("sus")
    ->Arg(512)
    ->Unit(benchmark::kMillisecond);

void BM_FullMesh(benchmark::State& state) {
  ArgNode mesh = ArgNode::map("cluster");
  mesh.set("builder", ArgNode::scalar("full_mesh", "builder"));
  mesh.set("gpus", ArgNode::scalar(std::to_string(state.range(0)), "gpus"));
  time_builds(state, mesh, {});
}
BENCHMARK(BM_FullMesh)->ArgName("gpus")->Arg(200'000)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
