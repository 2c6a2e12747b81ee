#pragma once
// The topology zoo (issue 19): one small instance of every fabric family lockstep builds, each
// with the figures its lower bounds need, derived by hand from its links. Shared by the ctest
// cases (zoo_test.cpp) and the full table (bench/runs/zoo.cpp, `bench_zoo`).
//
// A collective of nccl-tests size S on n GPUs can finish no sooner than the largest of
//  - injection: the bytes one GPU must send (or receive) over its own links,
//      all_reduce 2 (n-1)/n S (Patarasuk and Yuan, JPDC 2009), or S when the algorithm reduces
//        in the network (NVLS, CollNet: every element still leaves each GPU once),
//      all_gather (n-1)/n S received, alltoall (n-1)/n S sent (S is the per-rank send buffer),
//      sendrecv S;
//  - the cut: GPUs [0, a) against [a, n), joined by `cut_GBps` per direction; what must cross
//    it one way: all_reduce S (each side needs the other side's sum), all_gather max(a, n-a)/n S,
//    alltoall a (n-a)/n S, sendrecv S (rank a-1 -> a; n-1 -> 0 crosses the other way);
//  - latency: the fibre and cables between the two farthest GPUs (`far_us`) for the ops where
//    every GPU needs every other's data; between neighbours in rank order for sendrecv.
// Bandwidths are per direction, GB/s = 1e9 B/s; the injection figure is the GPU's (or its
// GPU + NIC pair's) narrowest boundary to the rest of the fabric.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "lockstep/collective/collective.hpp"
#include "lockstep/config/yaml_reader.hpp"
#include "lockstep/nccl/sweep.hpp"
#include "lockstep/topology/builder.hpp"

namespace lockstep::zoo {

struct Fabric {
  const char* name;
  std::string cluster;  // the `cluster:` section, YAML
  std::uint32_t gpus;   // n
  double inject_GBps;   // per GPU, per direction
  std::uint32_t cut_a;  // the cut separates GPUs [0, cut_a) from the rest
  double cut_GBps;      // capacity of the cut, per direction
  double far_us;        // lower bound on the farthest pair's one-way latency
  double next_us;       // lower bound on the largest r -> r+1 one-way latency
};

// Propagation in fibre and copper, 5 ns per metre (docs/topology.md "Links and latency").
constexpr double kUsPerMetre = 0.005;

// One-GPU servers for the from_file case: GPU i behind NIC i (PCIe 100 GB/s) on a 400 Gb/s port
// of switch a (i < 4) or b, the switches joined by one 100 Gb/s link; every link 10 m.
inline std::string slow_link_graph() {
  std::string y =
      "builder: from_file\n"
      "traits: {gpu: h100, fabric: infiniband, gpus_per_node: 1, nics_per_node: 1}\n"
      "link_defaults: {bandwidth: 400Gbps, length: 10m}\n"
      "devices:\n"
      "  - {id: a, kind: switch}\n"
      "  - {id: b, kind: switch}\n";
  for (int i = 0; i < 8; ++i) {
    const std::string n = std::to_string(i);
    y += "  - {id: g" + n + ", kind: gpu, node: " + n + "}\n";
    y += "  - {id: n" + n + ", kind: nic, node: " + n + "}\n";
  }
  y += "links:\n  - {a: a, b: b, bandwidth: 100Gbps}\n";
  for (int i = 0; i < 8; ++i) {
    const std::string n = std::to_string(i);
    y += "  - {a: g" + n + ", b: n" + n + ", bandwidth: 100GB/s, medium: pcie}\n";
    y += "  - {a: n" + n + ", b: " + (i < 4 ? "a" : "b") + "}\n";
  }
  return y;
}

// H100 servers (HGX: 8 GPUs on NVLink, 450 GB/s each way, one 400 Gb/s NIC per GPU behind PCIe
// Gen5 x16, 63 GB/s): a GPU's boundary is its NVLink plus its PCIe, 513 GB/s. Fabric cables are
// 10 m NIC-leaf, 30 m leaf-spine, 100 m spine-core (builders' defaults).
inline std::vector<Fabric> fabrics() {
  constexpr double kHgxInject = 450 + 63;
  return {
      // Four GPUs, each pair on one 50 GB/s, 1 m cable: 3 links per GPU; GPUs {0,1} to {2,3}
      // by 2 x 2 links. Farthest pair: one cable.
      {"full-mesh-4", "builder: full_mesh\ngpus: 4\nlink_bandwidth: 50GB/s\n", 4, 3 * 50, 2, 4 * 50,
       1 * kUsPerMetre, 1 * kUsPerMetre},
      // Eight GPUs: 7 links each; 4 x 4 links across the halves.
      {"full-mesh-8", "builder: full_mesh\ngpus: 8\nlink_bandwidth: 50GB/s\n", 8, 7 * 50, 4,
       16 * 50, 1 * kUsPerMetre, 1 * kUsPerMetre},
      // A ring of 8 (1-D torus), 50 GB/s, 1 m: 2 links per GPU; halves 0-3 / 4-7 joined by the
      // links 3-4 and 7-0. Farthest pair: 4 hops.
      {"torus-8", "builder: torus\ndims: 8\nlink_bandwidth: 50GB/s\n", 8, 2 * 50, 4, 2 * 50,
       4 * kUsPerMetre, 1 * kUsPerMetre},
      // scenarios/torus_4x4x4.yaml: 400 Gb/s (50 GB/s) links of 1 m, 6 per GPU. Rank = x + 4y +
      // 16z, so ranks [0, 32) are z in {0, 1}: the cut z 1-2 and its wraparound z 3-0, 2 x 16
      // links. Farthest pair: 2 + 2 + 2 hops; rank 3 -> 4 goes x then y, 2 hops.
      {"torus-4x4x4", "builder: torus\ndims: [4, 4, 4]\nlink_bandwidth: 400Gbps\nlink_m: 1\n", 64,
       6 * 50, 32, 32 * 50, 6 * kUsPerMetre, 2 * kUsPerMetre},
      // The smallest balanced dragonfly (p = 1: a = 2 routers per group, h = 1 global link per
      // router, 3 groups), one HGX server per router: 48 GPUs. Group 0 holds ranks [0, 16) and
      // leaves through its two 400 Gb/s global links: 100 GB/s. Farthest pair: NIC-router 10 m,
      // local 30 m, global 100 m, local 30 m, router-NIC 10 m. Rank 7 -> 8 crosses a local link
      // (10 + 30 + 10 m). Small on purpose: the flow engine's speed on large dragonflies is
      // i19-speed's subject.
      {"dragonfly", "builder: dragonfly\nnodes_per_router: 1\n", 48, kHgxInject, 16, 2 * 50,
       180 * kUsPerMetre, 50 * kUsPerMetre},
      // Leaf-spine at 2:1: radix-24 leaves split 16 down / 8 up; four HGX servers, two per leaf,
      // one spine. Leaf 0 (ranks [0, 16)) reaches the spine by 8 x 400 Gb/s = 400 GB/s, half
      // its servers' 16 NICs. Farthest: 10 + 30 + 30 + 10 m; rank 7 -> 8 on the same leaf.
      {"leaf-spine-2to1", "builder: leaf_spine\nnodes: 4\nradix: 24\noversubscription: 2\n", 32,
       kHgxInject, 16, 8 * 50, 80 * kUsPerMetre, 20 * kUsPerMetre},
      // Rail-optimised, 3 tiers forced at small scale: radix-16 switches, SUs of 2 servers, one
      // SU per pod (a spine has 8 downlinks, one per rail leaf), 2 pods of 2 spines, 2 cores.
      // Pod 0 (ranks [0, 16)) leaves through its spines' 2 x 8 core links of 400 Gb/s =
      // 800 GB/s, non-blocking. Farthest: rail r of pod 0 to rail r' of pod 1, 10 + 30 + 100 +
      // 100 + 30 + 10 m; rank 7 -> 8 crosses rails in one SU: 10 + 30 + 30 + 10 m.
      {"rail-3-tier", "builder: rail_optimized\nnodes: 4\nnodes_per_su: 2\ntiers: 3\nradix: 16\n",
       32, kHgxInject, 16, 16 * 50, 280 * kUsPerMetre, 80 * kUsPerMetre},
      // scenarios/two_sites_50km.yaml at 2 servers per site (one leaf each), joined by 1.6 Tb/s
      // of long-haul fibre (200 GB/s, a quarter of a site's 16 NICs). 50 km of fibre: 250 us
      // one way; rank 15 -> 16 crosses it.
      {"two-sites-50km",
       "builder: multi_site\ndistance: 50km\ncapacity: 1.6Tbps\nsites:\n"
       "  east: {builder: leaf_spine, nodes: 2}\n  west: {builder: leaf_spine, nodes: 2}\n",
       32, kHgxInject, 16, 200, 250, 250},
      // from_file: 8 one-GPU servers, 4 per switch, the switches joined by one 100 Gb/s link
      // (12.5 GB/s), the cut between ranks [0, 4) and [4, 8). A GPU and its NIC reach the
      // switch by one 400 Gb/s port: 50 GB/s. Farthest pair: 3 links of 10 m (PCIe not counted).
      {"from-file-slow-link", slow_link_graph(), 8, 50, 4, 12.5, 30 * kUsPerMetre,
       30 * kUsPerMetre},
      // One GB200 NVL72 rack: 72 GPUs on one NVLink 5 domain, 900 GB/s each way per GPU;
      // NVSwitch is non-blocking, so a cut of 36 GPUs is their 36 x 900 GB/s. No cables.
      {"nvl72", "builder: scale_up\ngpu: gb200\nscale_up: nvl72\ngpus: 72\n", 72, 900, 36, 36 * 900,
       0, 0},
      // One MI300X server: 8 GPUs pairwise on xGMI, 448 / 7 = 64 GB/s per link, 7 per GPU;
      // 4 x 4 links across the halves. On-board traces.
      {"mi300x-mesh", "builder: scale_up\ngpu: mi300x\nscale_up: mesh\ngpus: 8\n", 8, 448, 4,
       16 * 64, 0, 0},
  };
}

// gtest prints a parameter with this (instead of its bytes).
inline void PrintTo(const Fabric& f, std::ostream* os) {
  *os << f.name;
}

inline Topology build(const Fabric& f) {
  BuildResult r = build_topology(parse_yaml_args(f.cluster, f.name, "cluster"));
  return std::move(*r.graph);
}

inline const std::vector<CollectiveOp>& ops() {
  static const std::vector<CollectiveOp> kOps{CollectiveOp::AllReduce, CollectiveOp::AllGather,
                                              CollectiveOp::AllToAll, CollectiveOp::SendRecv};
  return kOps;
}

inline const std::vector<Bytes>& sizes() {
  static const std::vector<Bytes> kSizes{Bytes::kib(64), Bytes::mib(16), Bytes::gib(1)};
  return kSizes;
}

inline bool reduces_in_network(const std::string& algorithm) {
  return algorithm == "nvls" || algorithm == "nvls_tree" || algorithm == "collnet" ||
         algorithm == "collnet_direct" || algorithm == "collnet_chain";
}

struct Bound {
  double inject_us, cut_us, latency_us;
  double us() const { return std::max({inject_us, cut_us, latency_us}); }
};

/// The lower bound for `op` of nccl-tests size `bytes` (as the row prints it) run by `algorithm`.
inline Bound bound(const Fabric& f, CollectiveOp op, std::uint64_t bytes,
                   const std::string& algorithm) {
  const double s = static_cast<double>(bytes), n = f.gpus, a = f.cut_a;
  double per_gpu = 0, across = 0;
  switch (op) {
    case CollectiveOp::AllReduce:
      per_gpu = reduces_in_network(algorithm) ? s : 2 * (n - 1) / n * s;
      across = s;
      break;
    case CollectiveOp::AllGather:
      per_gpu = (n - 1) / n * s;
      across = std::max(a, n - a) / n * s;
      break;
    case CollectiveOp::AllToAll:
      per_gpu = (n - 1) / n * s;
      across = a * (n - a) / n * s;
      break;
    default:  // sendrecv
      per_gpu = s;
      across = s;
      break;
  }
  const double latency = op == CollectiveOp::SendRecv ? f.next_us : f.far_us;
  return {per_gpu / (f.inject_GBps * 1e3), across / (f.cut_GBps * 1e3), latency};
}

/// One row of the sweep: `op` at `bytes` on `engine`, as `lockstep collective` runs it (NCCL's
/// tuner choosing the algorithm and protocol).
inline CollectiveRow run(const Topology& topo, CollectiveOp op, Bytes bytes, const char* engine,
                         std::optional<Algorithm> algo = {}) {
  CollectiveSweep s;
  s.op = op;
  s.algo = algo;
  s.min_bytes = s.max_bytes = bytes;
  s.engine = engine;
  return run_collective_sweep(s, nccl_cluster(topo), &topo).at(0);
}

}  // namespace lockstep::zoo
