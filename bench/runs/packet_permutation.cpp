// Whole-process run (not Google Benchmark): prints its own figures, see bench/CMakeLists.txt.
// Packet-engine speed: a random permutation of 2 MB flows on a 3-tier k-ary fat tree at 400 Gb/s
// with a 4 KiB MTU (one GPU and one NIC per host). Prints, per size, wall time of the simulation,
// peak memory, packets and events per second of CPU time (the machine may be shared, so wall
// time is printed beside CPU time; the simulation is single-threaded).
//
//   bench_packet_permutation [k ...] [--fabric infiniband|roce|ethernet|ultra_ethernet]
//   (default k = 8 16 32: 128, 1,024 and 8,192 hosts)
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "../process_usage.hpp"
#include "lockstep/collective/program.hpp"
#include "lockstep/core/rng.hpp"
#include "lockstep/engine/packet/packet_engine.hpp"
#include "lockstep/routing/router.hpp"
#include "lockstep/topology/builder.hpp"

namespace {

using namespace lockstep;
using bench::cpu_seconds;
using bench::peak_rss_mib;

ArgNode fat_tree_args(std::uint32_t k) {
  ArgNode n = ArgNode::map("cluster");
  auto set = [&](const char* key, std::string v) {
    n.set(key, ArgNode::scalar(std::move(v), std::string("cluster.") + key));
  };
  set("builder", "fat_tree");
  set("k", std::to_string(k));
  set("gpus_per_node", "1");
  set("nics_per_node", "1");
  set("scale_up", "none");
  set("port_speed", "400Gbps");
  return n;
}

/// A random permutation without fixed points (Sattolo's algorithm gives a single cycle).
std::vector<Rank> derangement(Rank n, std::uint64_t seed) {
  std::vector<Rank> p(n);
  for (Rank i = 0; i < n; ++i) p[i] = i;
  Rng rng(seed);
  for (Rank i = n - 1; i > 0; --i) std::swap(p[i], p[rng.below(i)]);
  return p;
}

void run(std::uint32_t k, const std::string& fabric) {
  const auto t0 = std::chrono::steady_clock::now();
  BuildResult built = build_topology(fat_tree_args(k));
  const Topology& topo = *built.graph;
  const auto hosts = static_cast<Rank>(topo.gpus().size());
  const std::uint64_t bytes = 2'000'000;
  MaterializedProgramSet programs(hosts);
  const std::vector<Rank> dst = derangement(hosts, 42);
  for (Rank r = 0; r < hosts; ++r) {
    programs.add(r, make_send(dst[r], {Buffer::Input, 0, bytes}));
  }
  for (Rank r = 0; r < hosts; ++r) {
    programs.add(dst[r], make_recv(r, {Buffer::Output, 0, bytes}, RecvMode::Copy));
  }
  PacketConfig cfg = packet_config_for_fabric(fabric);
  const bool spray = cfg.spray;
  auto router =
      make_router(topo, RouterOptions{spray ? RoutingPolicy::Spray : RoutingPolicy::Ecmp, 1, 1});
  auto engine = make_packet_engine(cfg);
  EngineInput in;
  in.topology = &topo;
  in.programs = &programs;
  in.router = router.get();
  const auto t1 = std::chrono::steady_clock::now();
  const double c1 = cpu_seconds();
  const RunResult r = engine->run(in);
  const double cpu = cpu_seconds() - c1;
  const auto t2 = std::chrono::steady_clock::now();
  const PacketStats& s = packet_stats(*engine);
  const double setup = std::chrono::duration<double>(t1 - t0).count();
  const double wall = std::chrono::duration<double>(t2 - t1).count();
  fmt::print(
      "{:>6} hosts k={:<3} {:<15} sim wall {:8.3f} s cpu {:8.3f} s  setup {:6.2f} s  peak {:7.1f} "
      "MiB  "
      "packets {:>10}  {:6.2f} Mpkt/cpu-s  events {:>11}  {:6.2f} Mev/cpu-s  makespan {:.2f} us  "
      "FCT p50 {:.2f} us p99 {:.2f} us  drops {}  peak events {} packets {}\n",
      hosts, k, fabric, wall, cpu, setup, peak_rss_mib(), s.packets_sent,
      static_cast<double>(s.packets_sent) / cpu / 1e6, r.events,
      static_cast<double>(r.events) / cpu / 1e6, r.makespan.microseconds(),
      s.flows.completion_percentile(0.5).microseconds(),
      s.flows.completion_percentile(0.99).microseconds(), s.drops, s.peak_pending_events,
      s.peak_packets);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::uint32_t> ks;
  std::string fabric = "infiniband";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--fabric" && i + 1 < argc) {
      fabric = argv[++i];
    } else {
      ks.push_back(static_cast<std::uint32_t>(std::strtoul(a.c_str(), nullptr, 10)));
    }
  }
  if (ks.empty()) ks = {8, 16, 32};
  fmt::print("packet engine, permutation of 2 MB flows, 3-tier fat tree, 400 Gb/s, 4 KiB MTU\n");
  for (std::uint32_t k : ks) run(k, fabric);
  return 0;
}
