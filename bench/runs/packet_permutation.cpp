// Whole-process run (not Google Benchmark): prints its own figures, see bench/CMakeLists.txt.
// Packet-engine speed: a random permutation of 2 MB flows on a 3-tier k-ary fat tree at 400 Gb/s
// with a 4 KiB MTU (one GPU and one NIC per host). Prints, per size, wall time of the simulation,
// peak memory, packets and events per second of CPU time (the machine may be shared, so wall
// time is printed beside CPU time; the simulation is single-threaded), and a digest of every
// transfer's start and end and the congestion counters, for checking that a speed-up changed no
// outcome.
//
//   bench_packet_permutation [k ...] [--fabric infiniband|roce|ethernet|ultra_ethernet]
//                            [--cm FILE] [--write-cm FILE] [--ack-every N]
//   (default k = 8 16 32: 128, 1,024 and 8,192 hosts)
// --cm runs the connections of an htsim connection-matrix file instead (htsim's
// datacenter/connection_matrices format: docs/packet-engine.md "Speed"), on the fat tree whose
// k^3 / 4 hosts are its Nodes; --write-cm writes the built-in permutation of each k in that
// format (FILE gets -k<k>.cm appended when several k are given), so htsim runs the same pairs.
// --ack-every N overrides the preset's ACK coalescing (docs/packet-engine.md "Control packets").
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
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

/// One connection of a connection matrix: src -> dst, `bytes` from `start_us`.
struct Connection {
  Rank src = 0, dst = 0;
  std::uint64_t bytes = 0;
  double start_us = 0;
};

[[noreturn]] void fail(const std::string& where, const std::string& msg) {
  fmt::print(stderr, "{}: {}\n", where, msg);
  std::exit(2);
}

/// Reads htsim's connection-matrix format: "Nodes N", "Connections M", optionally "Triggers 0"
/// and "Failures 0", then M lines "S->D id I start T size B" (T in microseconds, B in bytes;
/// id, start and size in any order). Triggers and failures are not supported.
std::vector<Connection> read_cm(const std::string& path, Rank& nodes) {
  std::ifstream in(path);
  if (!in) fail(path, "cannot open the connection matrix");
  std::vector<Connection> out;
  std::string line;
  std::uint64_t expected = 0;
  bool have_nodes = false, have_conns = false;
  for (int number = 1; std::getline(in, line); ++number) {
    const std::string at = fmt::format("{}:{}:1", path, number);
    std::istringstream words(line);
    std::string first;
    if (!(words >> first)) continue;
    if (first == "Nodes" || first == "Connections" || first == "Triggers" || first == "Failures") {
      std::uint64_t v = 0;
      if (!(words >> v)) fail(at, first + ": expected a count");
      if (first == "Nodes") {
        nodes = static_cast<Rank>(v);
        have_nodes = true;
      } else if (first == "Connections") {
        expected = v;
        have_conns = true;
      } else if (v != 0) {
        fail(at, first + ": triggers and failures are not supported (expected 0)");
      }
      continue;
    }
    if (!have_nodes || !have_conns) fail(at, "Nodes and Connections must come first");
    const std::size_t arrow = first.find("->");
    if (arrow == std::string::npos) fail(at, "connection: expected SRC->DST");
    Connection c;
    char* end = nullptr;
    const unsigned long src = std::strtoul(first.c_str(), &end, 10);
    const unsigned long dst = std::strtoul(first.c_str() + arrow + 2, nullptr, 10);
    if (end != first.c_str() + arrow || src >= nodes || dst >= nodes || src == dst)
      fail(at, fmt::format("connection: '{}' is not two different nodes below {}", first, nodes));
    c.src = static_cast<Rank>(src);
    c.dst = static_cast<Rank>(dst);
    std::string key, value;
    bool sized = false;
    while (words >> key) {
      if (!(words >> value)) fail(at, key + ": expected a value");
      if (key == "size") {
        c.bytes = std::strtoull(value.c_str(), nullptr, 10);
        sized = c.bytes > 0;
      } else if (key == "start") {
        c.start_us = std::strtod(value.c_str(), nullptr);
        if (!(c.start_us >= 0) || !std::isfinite(c.start_us))
          fail(at, "start: expected microseconds >= 0");
      } else if (key != "id") {
        fail(at, key + ": not supported (id, start and size are)");
      }
    }
    if (!sized) fail(at, "size: expected a positive byte count");
    out.push_back(c);
  }
  if (!have_nodes) fail(path, "Nodes: missing");
  if (out.size() != expected)
    fail(path, fmt::format("Connections: {} announced, {} read", expected, out.size()));
  return out;
}

void write_cm(const std::string& path, Rank nodes, const std::vector<Connection>& conns) {
  std::ofstream out(path);
  if (!out) fail(path, "cannot write the connection matrix");
  out << "Nodes " << nodes << "\nConnections " << conns.size() << "\n";
  for (std::size_t i = 0; i < conns.size(); ++i)
    out << conns[i].src << "->" << conns[i].dst << " id " << i + 1 << " start 0 size "
        << conns[i].bytes << "\n";
}

std::vector<Connection> permutation(Rank hosts) {
  const std::vector<Rank> dst = derangement(hosts, 42);
  std::vector<Connection> conns;
  for (Rank r = 0; r < hosts; ++r) conns.push_back({r, dst[r], 2'000'000, 0});
  return conns;
}

int ack_every = -1;  // --ack-every; -1: the preset's

/// FNV-1a over every transfer's (src, dst, start, end) and the congestion counters: two runs
/// that print the same digest made the same decisions (an engine speed-up must keep it).
std::uint64_t outcome_digest(const PacketStats& s) {
  std::uint64_t h = 14695981039346656037ull;
  auto mix = [&h](std::uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      h ^= (v >> (8 * i)) & 0xFF;
      h *= 1099511628211ull;
    }
  };
  for (std::size_t i = 0; i < s.flows.size(); ++i) {
    mix(s.flows.src(i));
    mix(s.flows.dst(i));
    mix(static_cast<std::uint64_t>(s.flows.start(i).picoseconds()));
    mix(static_cast<std::uint64_t>(s.flows.end(i).picoseconds()));
  }
  for (std::uint64_t v : {s.drops, s.trims, s.ecn_marks, s.pfc_pauses, s.pfc_frames,
                          s.retransmissions, s.control_sent, s.control_drops, s.credit_stalls})
    mix(v);
  return h;
}

void run(std::uint32_t k, const std::string& fabric, const std::vector<Connection>& conns) {
  const auto t0 = std::chrono::steady_clock::now();
  BuildResult built = build_topology(fat_tree_args(k));
  const Topology& topo = *built.graph;
  const auto hosts = static_cast<Rank>(topo.gpus().size());
  MaterializedProgramSet programs(hosts);
  // Each connection is its own queue pair: a channel of its own between the pair. All sends
  // first, then all receives (the order the permutation always had).
  std::map<std::pair<Rank, Rank>, std::uint16_t> channels;
  std::vector<std::uint16_t> channel(conns.size());
  for (std::size_t i = 0; i < conns.size(); ++i) {
    const Connection& c = conns[i];
    channel[i] = channels[{c.src, c.dst}]++;
    Op send = make_send(c.dst, {Buffer::Input, 0, c.bytes}, channel[i]);
    if (c.start_us > 0) send.add_dep(programs.add(c.src, make_compute(Time::us(c.start_us))));
    programs.add(c.src, send);
  }
  for (std::size_t i = 0; i < conns.size(); ++i) {
    const Connection& c = conns[i];
    programs.add(c.dst, make_recv(c.src, {Buffer::Output, 0, c.bytes}, RecvMode::Copy, channel[i]));
  }
  PacketConfig cfg = packet_config_for_fabric(fabric);
  if (ack_every >= 0) cfg.ack_every = static_cast<std::uint32_t>(ack_every);
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
      "FCT p50 {:.2f} us p99 {:.2f} us  drops {}  peak events {} packets {}  control {} "
      "(dropped {})  trims {}  ECN marks {}  pauses {}  digest {:016x}\n",
      hosts, k, fabric, wall, cpu, setup, peak_rss_mib(), s.packets_sent,
      static_cast<double>(s.packets_sent) / cpu / 1e6, r.events,
      static_cast<double>(r.events) / cpu / 1e6, r.makespan.microseconds(),
      s.flows.completion_percentile(0.5).microseconds(),
      s.flows.completion_percentile(0.99).microseconds(), s.drops, s.peak_pending_events,
      s.peak_packets, s.control_sent, s.control_drops, s.trims, s.ecn_marks, s.pfc_pauses,
      outcome_digest(s));
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::uint32_t> ks;
  std::string fabric = "infiniband", cm, write;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--fabric" && i + 1 < argc) {
      fabric = argv[++i];
    } else if (a == "--cm" && i + 1 < argc) {
      cm = argv[++i];
    } else if (a == "--write-cm" && i + 1 < argc) {
      write = argv[++i];
    } else if (a == "--ack-every" && i + 1 < argc) {
      ack_every = static_cast<int>(std::strtoul(argv[++i], nullptr, 10));
    } else {
      ks.push_back(static_cast<std::uint32_t>(std::strtoul(a.c_str(), nullptr, 10)));
    }
  }
  if (!cm.empty()) {
    Rank nodes = 0;
    const std::vector<Connection> conns = read_cm(cm, nodes);
    // A 3-tier k-ary fat tree has k^3 / 4 hosts.
    const auto k = static_cast<std::uint32_t>(std::lround(std::cbrt(4.0 * nodes)));
    if (k < 2 || k % 2 != 0 || k * k * k / 4 != nodes)
      fail(cm, fmt::format("Nodes: {} is not k^3 / 4 hosts of a 3-tier fat tree (even k)", nodes));
    fmt::print("packet engine, {} connections of {}, 3-tier fat tree, 400 Gb/s, 4 KiB MTU\n",
               conns.size(), cm);
    run(k, fabric, conns);
    return 0;
  }
  if (ks.empty()) ks = {8, 16, 32};
  if (!write.empty()) {
    for (std::uint32_t k : ks) {
      const std::string path = ks.size() == 1 ? write : fmt::format("{}-k{}.cm", write, k);
      write_cm(path, k * k * k / 4, permutation(k * k * k / 4));
      fmt::print("wrote {}\n", path);
    }
    return 0;
  }
  fmt::print("packet engine, permutation of 2 MB flows, 3-tier fat tree, 400 Gb/s, 4 KiB MTU\n");
  for (std::uint32_t k : ks) run(k, fabric, permutation(k * k * k / 4));
  return 0;
}
