// Whole-process run (not Google Benchmark): prints its own figures, see bench/CMakeLists.txt.
// The flow engine off the rail-optimised ring: collectives whose programs or fabrics the engine
// cannot fold into a few rank classes (a dragonfly's all-reduce and alltoall, CollNet / SHARP and
// NVLS across nodes, up to 64 nodes). Each case runs what `lockstep collective ... --engine
// flow` runs for one size (tuner, NCCL's options, one sweep row) and prints the engine's wall and
// CPU time, the peak resident memory of the case (the process's peak is reset between cases), the
// engine's statistics and the row's time to the picosecond. Figures: docs/flow-engine.md, part 3.
//
//   bench_flow_cases                 # every case
//   bench_flow_cases collnet b200    # the cases whose name contains any of the words
//   bench_flow_cases --list          # the case names and their CLI commands
//   bench_flow_cases --algo ring --bytes 1MiB dragonfly576.all_reduce.64KiB   # another algorithm
//                                    # or size for the cases named (exploration)
//   bench_flow_cases --individual h100.n16   # every rank on its own, no skipping (to compare)
//   bench_flow_cases --no-bundle calib.gb200.n48.all_reduce   # every flow and queue pair its own
//                                    # solver variable (to compare; `bundled` counts the others)
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "../process_usage.hpp"
#include "lockstep/engine/flow/flow_engine.hpp"
#include "lockstep/nccl/groups.hpp"
#include "lockstep/nccl/sweep.hpp"
#include "lockstep/nccl/tuner.hpp"
#include "lockstep/scenario/cluster_source.hpp"

namespace {

using namespace lockstep;
using Clock = std::chrono::steady_clock;

struct Case {
  std::string name;
  std::string command;  // the same run through the CLI
  ArgNode cluster;
  CollectiveOp op;
  std::optional<Algorithm> algo;
  Bytes bytes;
  bool sharp;
};

ArgNode cluster_map(std::initializer_list<std::pair<const char*, std::string>> keys) {
  ArgNode m = ArgNode::map("cluster");
  for (const auto& [k, v] : keys) m.set(k, ArgNode::scalar(v, std::string("cluster.") + k));
  return m;
}

// A 576-GPU dragonfly (Kim et al. 2008): 9 groups of 4 routers, 2 HGX H100 nodes per router, 2
// global links per router: every pair of groups joined by one global link.
ArgNode dragonfly_576() {
  return cluster_map({{"builder", "dragonfly"},
                      {"gpu", "h100"},
                      {"nodes_per_router", "2"},
                      {"routers_per_group", "4"},
                      {"global_links_per_router", "2"},
                      {"groups", "9"}});
}
const char* kDragonflyYaml =
    "cluster: {builder: dragonfly, gpu: h100, nodes_per_router: 2, routers_per_group: 4, "
    "global_links_per_router: 2, groups: 9}";

std::string size_name(Bytes b) {
  const std::uint64_t n = b.count();
  if (n % (1ull << 30) == 0) return std::to_string(n >> 30) + "GiB";
  if (n % (1ull << 20) == 0) return std::to_string(n >> 20) + "MiB";
  if (n % (1ull << 10) == 0) return std::to_string(n >> 10) + "KiB";
  return std::to_string(n);
}

std::vector<Case> cases() {
  std::vector<Case> out;
  const Bytes sizes[] = {Bytes::kib(64), Bytes::mib(16), Bytes::gib(1)};
  for (const CollectiveOp op : {CollectiveOp::AllReduce, CollectiveOp::AllToAll}) {
    for (const Bytes b : sizes) {
      const std::string s = size_name(b);
      out.push_back({std::string("dragonfly576.") + to_string(op) + "." + s,
                     std::string("collective --scenario FILE --op ") + to_string(op) +
                         " --min-bytes " + s + " --max-bytes " + s +
                         " --engine flow   # FILE: " + kDragonflyYaml,
                     dragonfly_576(), op, std::nullopt, b, false});
    }
  }
  struct System {
    const char* system;
    const char* fabric;
  };
  for (const System sys : {System{"hgx-h100", "ib-ndr"}, System{"hgx-b200", "ib-xdr"}}) {
    for (const std::uint32_t nodes : {2u, 8u, 16u, 64u}) {
      for (const Algorithm algo : {Algorithm::CollNet, Algorithm::NetReduce, Algorithm::NvlsTree}) {
        const bool sharp = algo != Algorithm::NvlsTree;
        const std::string n = std::to_string(nodes);
        const std::string name = std::string(sys.system).substr(4) + ".n" + n + "." +
                                 nccl::algorithm_name(algo) + ".1GiB";
        out.push_back({name,
                       std::string("collective --system ") + sys.system + " --fabric " +
                           sys.fabric + " --nodes " + n + " --algo " + nccl::algorithm_name(algo) +
                           (sharp ? " --sharp" : "") +
                           " --min-bytes 1GiB --max-bytes 1GiB --engine flow",
                       cluster_map({{"system", sys.system},
                                    {"fabric", sys.fabric},
                                    {"nodes", n},
                                    {"sharp", sharp ? "true" : "false"}}),
                       CollectiveOp::AllReduce, algo, Bytes::gib(1), sharp});
      }
    }
  }
  // The heaviest rows of ../shared/calibration (bench_calibration --engine flow): alltoall on
  // GB200 NVL72 across two and three racks (16 trays each, RoCE between racks) and on 32 p5
  // nodes (32 x 100G EFA per node, fused to one NIC per GPU); the ring all-reduce on three racks
  // (nccl_tests_public_more.csv lines 47 and 48, NCCL's choice there: LL128 at 4 GiB, Simple at
  // 8 GiB) with OCI's four queue pairs per connection, as bench_calibration reads those rows
  // (calibration_row.cpp read_row_qps; the alltoall rows here keep one).
  struct Row {
    const char* name;
    const char* system;
    const char* fabric;
    const char* nodes;
    const char* nics;
    const char* speed;
    CollectiveOp op;
    Bytes bytes;
    const char* qps = "1";
  };
  const CollectiveOp a2a = CollectiveOp::AllToAll, ar = CollectiveOp::AllReduce;
  for (const Row& r : {Row{"calib.gb200.n32.alltoall.8GiB", "gb200-nvl72", "roce-400g", "32", "4",
                           "400Gbps", a2a, Bytes::gib(8)},
                       Row{"calib.gb200.n48.alltoall.8GiB", "gb200-nvl72", "roce-400g", "48", "4",
                           "400Gbps", a2a, Bytes::gib(8)},
                       Row{"calib.gb300.n32.alltoall.16GiB", "gb300-nvl72", "roce-400g", "32", "8",
                           "400Gbps", a2a, Bytes::gib(16)},
                       Row{"calib.p5.n32.alltoall.2GiB", "hgx-h100", "efa", "32", "32", "100Gbps",
                           a2a, Bytes::gib(2)},
                       Row{"calib.gb200.n48.all_reduce.4GiB", "gb200-nvl72", "roce-400g", "48", "4",
                           "400Gbps", ar, Bytes::gib(4), "4"},
                       Row{"calib.gb200.n48.all_reduce.8GiB", "gb200-nvl72", "roce-400g", "48", "4",
                           "400Gbps", ar, Bytes::gib(8), "4"}}) {
    out.push_back({r.name,
                   std::string("collective --system ") + r.system + " --fabric " + r.fabric +
                       " --nodes " + r.nodes + " --nics-per-node " + r.nics + " --nic-speed " +
                       r.speed + " --qps-per-connection " + r.qps + " --op " + to_string(r.op) +
                       " --min-bytes " + size_name(r.bytes) + " --max-bytes " + size_name(r.bytes) +
                       " --engine flow",
                   cluster_map({{"system", r.system},
                                {"fabric", r.fabric},
                                {"nodes", r.nodes},
                                {"nics_per_node", r.nics},
                                {"nic_speed", r.speed},
                                {"qps_per_connection", r.qps}}),
                   r.op, std::nullopt, r.bytes, false});
  }
  return out;
}

void run(const Case& c, const FlowEngineConfig& config) {
  bench::reset_peak_rss();
  const double cpu0 = bench::cpu_seconds();
  const auto t0 = Clock::now();
  const ClusterSource source(c.cluster);
  const BuildResult built = source.build();
  const Topology& topo = *built.graph;
  NcclCluster cluster = source.preset() ? nccl_cluster(*source.preset()) : nccl_cluster(topo);
  cluster.sharp = cluster.sharp && c.sharp;
  const NcclGroups nccl(cluster, &topo);
  TunerRequest req;
  req.op = c.op;
  // Whole elements per rank where nccl-tests counts per rank (CollectiveSweep::sizes).
  CollectiveSweep sweep;
  sweep.op = c.op;
  sweep.min_bytes = sweep.max_bytes = c.bytes;
  const std::vector<Bytes> rounded = sweep.sizes(cluster.ranks());
  if (rounded.empty()) throw InputError("bytes", "rounds to nothing");
  const Bytes bytes = rounded.front();
  req.bytes = bytes;
  req.algo = c.algo;
  const Prediction p = predict(cluster, req);
  FlowEngine engine(config);
  const auto t1 = Clock::now();
  const double cpu1 = bench::cpu_seconds();
  const Time t = nccl.time(p, c.op, bytes, DataType::Float32, {nccl.all()}, &engine);
  const double wall = std::chrono::duration<double>(Clock::now() - t1).count();
  const double cpu = bench::cpu_seconds() - cpu1;
  const double setup = std::chrono::duration<double>(t1 - t0).count();
  const FlowRunStats& st = engine.last_stats();
  std::printf(
      "%-34s %5u GPUs %-9s %-6s | run %7.2f s wall %7.2f s cpu, peak %6.0f MiB (setup %.2f s, "
      "cpu %.2f s) | classes %5u x %4u attempts %2u transfers %9llu bundled %9llu solves %8llu "
      "jumps %u | %.6f us\n",
      c.name.c_str(), cluster.ranks(), nccl::algorithm_name(p.algo), nccl::to_string(p.proto), wall,
      cpu, bench::peak_rss_mib(), setup, cpu1 - cpu0, st.simulated_ranks, st.class_size,
      st.attempts, static_cast<unsigned long long>(st.transfers),
      static_cast<unsigned long long>(st.bundled_flows),
      static_cast<unsigned long long>(st.solver_components), st.fast_forwards,
      static_cast<double>(t.picoseconds()) / 1e6);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> words;
  bool list = false;
  std::optional<Algorithm> algo;
  std::optional<Bytes> bytes;
  FlowEngineConfig config;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--list") {
      list = true;
    } else if (a == "--algo" && i + 1 < argc) {
      algo = nccl::parse_algorithm(argv[++i]);
    } else if (a == "--individual") {
      config.aggregate = false;
      config.fast_forward = false;
    } else if (a == "--no-bundle") {
      config.bundle = false;  // every flow its own variable (FlowEngineConfig::bundle), to compare
    } else if (a == "--bytes" && i + 1 < argc) {
      bytes = ArgNode::scalar(argv[++i], "--bytes").as_bytes();
    } else {
      words.push_back(a);
    }
  }
  for (Case c : cases()) {
    if (algo) c.algo = algo;
    if (bytes) c.bytes = *bytes;
    bool wanted = words.empty();
    for (const std::string& w : words) wanted = wanted || c.name.find(w) != std::string::npos;
    if (!wanted) continue;
    if (list) {
      std::printf("%-34s lockstep %s\n", c.name.c_str(), c.command.c_str());
      continue;
    }
    try {
      run(c, config);
    } catch (const std::exception& e) {
      std::printf("%-34s error: %s\n", c.name.c_str(), e.what());
    }
  }
  return 0;
}
