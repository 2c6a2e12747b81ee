// Scale check of the topology layer: build the graph and the bill of materials of a
// 131,072-GPU rail-optimised 3-tier fabric (512 scalable units of 32 DGX-class nodes x 8 GPUs)
// and print wall time and peak memory (target: under 5 s and 2 GB). Also times three smaller
// sizes and the closed-form (no graph) inventory, and the 200,000-GPU full mesh.
//
//   bench_topology_scale            all sizes
//   bench_topology_scale 512        only 512 SUs
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "lockstep/topology/builder.hpp"

namespace {

using lockstep::ArgNode;

ArgNode rail_args(int sus) {
  ArgNode m = ArgNode::map("cluster");
  auto set = [&](const char* k, std::string v) { m.set(k, ArgNode::scalar(v, k)); };
  set("builder", "rail_optimized");
  set("sus", std::to_string(sus));
  set("gpu", "b200");
  set("switch", "q3400");  // Quantum-X800, 144 x 800G: 512 SUs need 57 pods of 9 SUs
  set("tiers", "3");
  return m;
}

double peak_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

void run(int sus, bool graph) {
  lockstep::BuildOptions options;
  options.want_graph = graph;
  const auto start = std::chrono::steady_clock::now();
  const lockstep::BuildResult r = lockstep::build_topology(rail_args(sus), options);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const lockstep::Inventory& inv = r.inventory;
  std::printf(
      "rail_optimized sus=%-4d %-10s gpus=%-7llu devices=%-7zu links=%-8zu switches=%llu/%llu/%llu "
      "cables=%llu transceivers=%llu feasible=%d  wall=%.3f s  peak_rss=%.0f MiB\n",
      sus, graph ? "graph" : "analytical", static_cast<unsigned long long>(inv.gpus),
      r.graph ? r.graph->num_devices() : std::size_t{0},
      r.graph ? r.graph->num_links() : std::size_t{0},
      static_cast<unsigned long long>(inv.tiers.size() > 1 ? inv.tiers[1].switches : 0),
      static_cast<unsigned long long>(inv.tiers.size() > 2 ? inv.tiers[2].switches : 0),
      static_cast<unsigned long long>(inv.tiers.size() > 3 ? inv.tiers[3].switches : 0),
      static_cast<unsigned long long>(inv.cables),
      static_cast<unsigned long long>(inv.transceivers), inv.feasible ? 1 : 0, seconds, peak_mib());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) {
    run(std::atoi(argv[1]), true);
    return 0;
  }
  for (int sus : {4, 32, 128, 512}) run(sus, true);
  run(512, false);
  {
    // The same 512 SUs on 64-port Quantum-2 switches: 128 pods of 4 SUs exceed the 64 a core of
    // 64 ports can join, so the design is reported infeasible (with the reason).
    ArgNode ndr = rail_args(512);
    ndr.set("switch", ArgNode::scalar("qm9700", "switch"));
    lockstep::BuildOptions options;
    options.want_graph = false;
    const lockstep::Inventory inv = lockstep::build_topology(ndr, options).inventory;
    std::printf("rail_optimized sus=512 on qm9700: feasible=%d (%s)\n", inv.feasible ? 1 : 0,
                inv.problems.empty() ? "" : inv.problems.front().c_str());
  }
  ArgNode mesh = ArgNode::map("cluster");
  mesh.set("builder", ArgNode::scalar("full_mesh", "builder"));
  mesh.set("gpus", ArgNode::scalar("200000", "gpus"));
  const auto start = std::chrono::steady_clock::now();
  const lockstep::BuildResult r = lockstep::build_topology(mesh);
  std::printf("full_mesh gpus=200000 cables=%llu feasible=%d wall=%.6f s peak_rss=%.0f MiB\n",
              static_cast<unsigned long long>(r.inventory.cables), r.inventory.feasible ? 1 : 0,
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
              peak_mib());
  return 0;
}
