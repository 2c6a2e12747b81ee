// Whole-process run (not Google Benchmark): prints its own figures, see bench/CMakeLists.txt.
// One training iteration of llama3-405b on 16,384 H100s (2,048 HGX nodes, rail-optimised NDR),
// TP 8, PP 16, DP 128, 16M-token global batch (Llama 3 pre-training's; Dubey et al. 2024), on the
// flow engine. Prints the iteration figures, wall time and peak memory (target: under 60 s).
//   bench_train_405b [engine] [nodes]      (defaults: flow 2048)
#include <fmt/format.h>
#include <sys/resource.h>

#include <chrono>
#include <string>

#include "lockstep/report/training.hpp"
#include "lockstep/topology/builder.hpp"
#include "lockstep/topology/presets.hpp"
#include "lockstep/workload/training.hpp"

int main(int argc, char** argv) {
  using namespace lockstep;
  const std::string engine = argc > 1 ? argv[1] : "flow";
  const std::uint32_t nodes = argc > 2 ? static_cast<std::uint32_t>(std::stoul(argv[2])) : 2048;
  const auto t0 = std::chrono::steady_clock::now();
  PresetRequest request;
  request.system = "hgx-h100";
  request.fabric = "ib-ndr";
  request.nodes = nodes;
  const PresetCluster cluster = resolve_preset(request);
  BuildResult built = build_topology(rail_optimized_args(cluster));
  const Topology& topo = *built.graph;
  const auto t1 = std::chrono::steady_clock::now();

  TrainConfig c;
  c.model = model_preset("llama3-405b");
  c.par.tp = 8;
  c.par.pp = 16;
  c.par.dp = nodes * 8 / (8 * 16);
  c.par.zero = ZeroStage::Optimizer;
  c.global_batch = 16 * c.par.dp;  // 2,048 sequences of 8,192 tokens at dp 128
  c.recompute = Recompute::Full;
  c.engine = engine;
  const TrainResult r = simulate_training(topo, c);
  const auto t2 = std::chrono::steady_clock::now();

  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  fmt::print("{}", report::format_training_text(r, c));
  fmt::print("\nbench_train_405b: {} GPUs, {} links, engine {}\n", topo.gpus().size(),
             topo.num_links(), engine);
  fmt::print("topology build  {:.2f} s\n", std::chrono::duration<double>(t1 - t0).count());
  fmt::print("simulation      {:.2f} s wall\n", std::chrono::duration<double>(t2 - t1).count());
  fmt::print("peak memory     {:.1f} MB (ru_maxrss)\n", usage.ru_maxrss / 1024.0);
  return 0;
}
