// Whole-process run (not Google Benchmark): prints its own figures, see bench/CMakeLists.txt.
// Analytical-engine scale benchmark: a 1 GiB all-reduce on HGX-H100 nodes of the preset's
// rail-optimised NDR fabric, priced as `lockstep collective` prices it (the NCCL model on the
// graph, docs/analytical-engine.md), for NCCL's choice (auto) and for ring and tree forced.
// Per GPU count it prints the graph build's time, then per algorithm the predicted time, the
// model's own (they agree on this non-blocking fabric), the CPU time of the pricing and the
// process's peak resident memory so far (getrusage; sizes run smallest first).
//
//   bench_analytical_scale                  # 1,024, 16,384 and 131,072 GPUs
//   bench_analytical_scale 2048 8192        # any list of GPU counts (multiples of 8)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <vector>

#include "../process_usage.hpp"
#include "lockstep/nccl/sweep.hpp"
#include "lockstep/nccl/tuner.hpp"
#include "lockstep/topology/builder.hpp"
#include "lockstep/topology/presets.hpp"

namespace {

using namespace lockstep;
using bench::cpu_seconds;
using bench::peak_rss_mib;

void run(std::uint32_t gpus) {
  PresetRequest request;
  request.system = "hgx-h100";
  request.fabric = "ib-ndr";
  request.nodes = gpus / 8;
  const PresetCluster preset = resolve_preset(request);
  const NcclCluster cluster = nccl_cluster(preset);
  const double c0 = cpu_seconds();
  const BuildResult built = build_topology(rail_optimized_args(preset));
  std::printf("%8u GPUs  graph: %zu devices, %zu links, built in %.2f s CPU\n", gpus,
              built.graph->num_devices(), built.graph->num_links(), cpu_seconds() - c0);
  for (const std::optional<Algorithm> algo :
       {std::optional<Algorithm>{}, std::optional<Algorithm>{Algorithm::Ring},
        std::optional<Algorithm>{Algorithm::Tree}}) {
    CollectiveSweep sweep;
    sweep.algo = algo;
    sweep.min_bytes = sweep.max_bytes = Bytes::gib(1);
    const auto model = run_collective_sweep(sweep, cluster, nullptr);
    const double c1 = cpu_seconds();
    const auto rows = run_collective_sweep(sweep, cluster, &*built.graph);
    const double cpu = cpu_seconds() - c1;
    std::printf("          %-10s %-7s %12.2f us (model %12.2f us)  %7.2f s CPU  peak %7.1f MiB\n",
                rows[0].algorithm.c_str(), rows[0].protocol.c_str(), rows[0].time.microseconds(),
                model[0].time.microseconds(), cpu, peak_rss_mib());
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::uint32_t> sizes;
  for (int i = 1; i < argc; ++i) {
    const long v = std::strtol(argv[i], nullptr, 10);
    if (v < 8 || v % 8 != 0) {
      std::fprintf(stderr, "bench_analytical_scale: GPU counts are multiples of 8 (got '%s')\n",
                   argv[i]);
      return 2;
    }
    sizes.push_back(static_cast<std::uint32_t>(v));
  }
  if (sizes.empty()) sizes = {1024, 16384, 131072};
  std::printf("1 GiB all-reduce, HGX-H100 on the preset's rail-optimised NDR fabric, analytical\n");
  for (std::uint32_t gpus : sizes) run(gpus);
  return 0;
}
