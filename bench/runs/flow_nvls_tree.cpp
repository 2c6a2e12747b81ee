// Whole-process run (not Google Benchmark): prints its own figures, see bench/CMakeLists.txt.
// Flow-engine cost and agreement of NCCL's NVLS_TREE all-reduce (and CollNet / NVLS with
// --sharp) on HGX-H100 nodes with rail-optimised InfiniBand NDR: exactly what `lockstep
// collective --algo nvls_tree --proto simple --engine flow` runs for one size. Prints, per node
// count, the NCCL model's time, the flow engine's, the engine run's wall and CPU time and the
// peak resident memory (getrusage). NVLS tree runs one rank class per node (its NVSwitch group
// is the class; docs/flow-engine.md "Class aggregation"); CollNet's groups span nodes, so it
// simulates every rank.
//
//   bench_flow_nvls_tree                        # 4 and 16 nodes, 1 GiB
//   bench_flow_nvls_tree 128                    # any list of node counts
//   bench_flow_nvls_tree --mib 256 --algo collnet --sharp 2 4
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "lockstep/collective/collective.hpp"
#include "lockstep/engine/registry/registry.hpp"
#include "lockstep/nccl/engine_run.hpp"
#include "lockstep/nccl/tuner.hpp"
#include "lockstep/topology/builder.hpp"
#include "lockstep/topology/presets.hpp"

namespace {

using namespace lockstep;

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec) + static_cast<double>(u.ru_utime.tv_usec) / 1e6;
}

long peak_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024;
}

void run(std::uint32_t nodes, std::uint64_t mib, const std::string& algo, bool sharp) {
  PresetRequest req;
  req.system = "hgx-h100";
  req.fabric = "ib-ndr";
  req.nodes = nodes;
  req.sharp = sharp;
  const PresetCluster preset = resolve_preset(req);
  const BuildResult built = build_topology(rail_optimized_args(preset));
  const Topology& topo = *built.graph;
  const NcclCluster cluster = nccl_cluster(preset);
  TunerRequest r;
  r.algo = nccl::parse_algorithm(algo);
  r.proto = nccl::Proto::Simple;
  r.bytes = Bytes::mib(mib);
  const Prediction p = predict(cluster, r);
  const NcclEngineRun how =
      nccl_engine_run(cluster, p, CollectiveOp::AllReduce, r.bytes, DataType::Float32, topo);
  const double cpu0 = cpu_seconds();
  const auto t0 = std::chrono::steady_clock::now();
  const double flow_us = run_nccl_engine(how, topo, *make_engine("flow")).microseconds();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%6u %7u %10s %8lu %7u %12.2f %12.2f %+7.1f%% %9.2f %9.2f %8ld\n", nodes,
              cluster.ranks(), algo.c_str(), static_cast<unsigned long>(mib), p.channels,
              p.time.microseconds(), flow_us, (flow_us / p.time.microseconds() - 1) * 100, wall,
              cpu_seconds() - cpu0, peak_mib());
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::uint32_t> nodes;
  std::uint64_t mib = 1024;
  std::string algo = "nvls_tree";
  bool sharp = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--mib") == 0 && i + 1 < argc) {
      mib = std::strtoull(argv[++i], nullptr, 10);
    } else if (std::strcmp(argv[i], "--algo") == 0 && i + 1 < argc) {
      algo = argv[++i];
    } else if (std::strcmp(argv[i], "--sharp") == 0) {
      sharp = true;
    } else {
      nodes.push_back(static_cast<std::uint32_t>(std::strtoul(argv[i], nullptr, 10)));
    }
  }
  if (nodes.empty()) nodes = {4, 16};
  std::printf("%6s %7s %10s %8s %7s %12s %12s %8s %9s %9s %8s\n", "nodes", "gpus", "algo", "MiB",
              "chan", "model_us", "flow_us", "diff", "wall_s", "cpu_s", "peak_MiB");
  try {
    for (std::uint32_t n : nodes) run(n, mib, algo, sharp);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_flow_nvls_tree: %s\n", e.what());
    return 2;
  }
  return 0;
}
