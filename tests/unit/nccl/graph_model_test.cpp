// The analytical engine's answer (NcclGroups::time with no engine): the NCCL model priced on the
// graph (docs/analytical-engine.md). Hand-derived: an oversubscribed core halves a ring whose
// every hop crosses it, a slow inter-switch link bounds a ring at its rate, a failed link
// reroutes onto a slower path, long-haul fibre adds the crossings of the algorithm's chain; and
// on the presets' rail-optimised fabrics the answer is the NCCL model's own.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "lockstep/config/yaml_reader.hpp"
#include "lockstep/nccl/engine_run.hpp"
#include "lockstep/nccl/groups.hpp"
#include "lockstep/nccl/sweep.hpp"
#include "lockstep/topology/builder.hpp"
#include "lockstep/topology/presets.hpp"

namespace lockstep {
namespace {

Topology build_yaml(const std::string& cluster) {
  BuildResult built = build_topology(parse_yaml_args(cluster, "t.yaml", "cluster"));
  return std::move(*built.graph);
}

// n one-GPU nodes: GPU i behind its own NIC (PCIe 100 GB/s) on a 400 Gb/s port of switch
// leaf_of(i); `fabric` lists the switches and the links between them.
std::string one_gpu_nodes(int n, const std::function<std::string(int)>& leaf_of,
                          const std::string& switches, const std::string& fabric_links) {
  std::string y =
      "builder: from_file\n"
      "traits: {gpu: h100, fabric: infiniband, gpus_per_node: 1, nics_per_node: 1}\n"
      "link_defaults: {bandwidth: 400Gbps, length: 10m}\n"
      "devices:\n" +
      switches;
  for (int i = 0; i < n; ++i) {
    y += "  - {id: g" + std::to_string(i) + ", kind: gpu, node: " + std::to_string(i) + "}\n";
    y += "  - {id: n" + std::to_string(i) + ", kind: nic, node: " + std::to_string(i) + "}\n";
  }
  y += "links:\n" + fabric_links;
  for (int i = 0; i < n; ++i) {
    const std::string g = "g" + std::to_string(i), nic = "n" + std::to_string(i);
    y += "  - {a: " + g + ", b: " + nic + ", bandwidth: 100GB/s, medium: pcie}\n";
    y += "  - {a: " + nic + ", b: " + leaf_of(i) + "}\n";
  }
  return y;
}

struct Timed {
  Prediction p;  // the NCCL model's
  Time t;        // on the graph
};

Timed ring_all_reduce(const Topology& topo, Bytes bytes) {
  const NcclGroups nccl(topo);
  TunerRequest req;
  req.bytes = bytes;
  req.algo = Algorithm::Ring;
  req.proto = nccl::Proto::Simple;
  const Prediction p = nccl.predict(req, nccl.all());
  return {p,
          nccl.time(p, CollectiveOp::AllReduce, bytes, DataType::Float32, {nccl.all()}, nullptr)};
}

// 8 GPUs alternating between two leaves (GPU i on leaf i mod 2), so that every hop of the
// ring 0 -> 1 -> ... -> 7 -> 0 crosses from one leaf to the other. Each leaf has four 400 Gb/s
// NIC ports (200 GB/s down) and one uplink to the spine of `uplink`.
Topology alternating_leaves(const std::string& uplink) {
  return build_yaml(one_gpu_nodes(
      8, [](int i) { return i % 2 ? std::string("l1") : std::string("l0"); },
      "  - {id: l0, kind: switch}\n  - {id: l1, kind: switch}\n  - {id: s, kind: switch}\n",
      "  - {a: l0, b: s, bandwidth: " + uplink + "}\n  - {a: l1, b: s, bandwidth: " + uplink +
          "}\n"));
}

TEST(GraphModel, TwoToOneOversubscribedCoreHalvesACrossLeafRing) {
  // NCCL's ring with one GPU per node runs at the node's NIC: 48 GB/s of search speed for a
  // 400G NIC, so the model's transfer is 2 (n-1)/n S / 48 GB/s. Each step, every GPU sends S/8
  // (its channels' slices) to the next GPU, which sits on the other leaf: the four GPUs of a
  // leaf send 4 S/8 = S/2 up its one uplink. At 1:1 (1.6 Tb/s, 200 GB/s) the uplink moves S/2
  // in the time a NIC moves S/8: no slower than NCCL assumes, the answer is the model's. At 2:1
  // (800 Gb/s, 100 GB/s) it takes twice as long: the transfer term doubles, at the same 48/50
  // of line rate NCCL's model runs the NICs at (14 steps x S/2 / (100 GB/s x 0.96) = 7 S / 96
  // GB/s).
  const Bytes S = Bytes::gib(1);
  const Timed full = ring_all_reduce(alternating_leaves("1600Gbps"), S);
  EXPECT_NEAR(full.p.transfer.seconds(), 1.75 * S.as_double() / 48e9, 1e-12);
  EXPECT_EQ(full.t, full.p.time);
  const Timed half = ring_all_reduce(alternating_leaves("800Gbps"), S);
  EXPECT_EQ(half.p.time, full.p.time);  // NCCL's model does not see the core
  const Time twice = half.p.time - half.p.transfer + Time::s(7.0 * S.as_double() / 96e9);
  EXPECT_NEAR(static_cast<double>(half.t.picoseconds()), static_cast<double>(twice.picoseconds()),
              2.0);
  // The bus bandwidth nccl-tests would print: 1.75 S / t, about half of the model's.
  const double model_bus = 1.75 * S.as_double() / full.t.seconds() / 1e9;
  const double graph_bus = 1.75 * S.as_double() / half.t.seconds() / 1e9;
  EXPECT_NEAR(graph_bus / model_bus, 0.5, 0.01);
}

TEST(GraphModel, AllToAllAcrossATwoToOneCoreIsBoundByTheUplink) {
  // Direct all-to-all of S per rank over the same 2:1 leaves: each GPU sends S/8 to each of its
  // 7 peers, 7/8 S through its NIC (the model's time, 7/8 S / 48 GB/s), of which the 4 peers on
  // the other leaf take S/2; the four GPUs of a leaf put 2 S on its uplink: 2 S / (100 GB/s x
  // 0.96) = S / 48 GB/s, 8/7 of the model's transfer.
  const Topology topo = alternating_leaves("800Gbps");
  const NcclGroups nccl(topo);
  const Bytes S = Bytes::gib(1);
  TunerRequest req;
  req.op = CollectiveOp::AllToAll;
  req.bytes = S;
  const Prediction p = nccl.predict(req, nccl.all());
  ASSERT_EQ(p.algo, Algorithm::Direct);
  EXPECT_NEAR(p.transfer.seconds(), 0.875 * S.as_double() / 48e9, 1e-12);
  const Time t = nccl.time(p, req.op, S, DataType::Float32, {nccl.all()}, nullptr);
  const Time bound = p.time - p.transfer + Time::s(S.as_double() / 48e9);
  EXPECT_NEAR(static_cast<double>(t.picoseconds()), static_cast<double>(bound.picoseconds()), 2.0);
}

// 8 GPUs, four on switch a and four on switch b, the switches joined by one link of `link`.
Topology two_switches(const std::string& link) {
  return build_yaml(one_gpu_nodes(
      8, [](int i) { return i < 4 ? std::string("a") : std::string("b"); },
      "  - {id: a, kind: switch}\n  - {id: b, kind: switch}\n",
      "  - {a: a, b: b, bandwidth: " + link + "}\n"));
}

TEST(GraphModel, OneSlowInterSwitchLinkBoundsARingCrossingItAtItsRate) {
  // The ring 0..7 crosses a-b twice per lap, 3 -> 4 and 7 -> 0: each step every channel's
  // slice crosses once each way, S/8 per direction over the 100 Gb/s link (12.5 GB/s, run at
  // the 48/50 NCCL's model allows every network link: 12 GB/s). 14 steps: 1.75 S / 12 GB/s,
  // four times the model's 1.75 S / 48 GB/s; the bus bandwidth tends to the link's 12 GB/s.
  // Latency: a crossing's path is the a-b cable (10 m, 50 ns) longer than the path of rank 0 to
  // 1, which NCCL's step latency includes, and the chain of 14 hops, two laps less two, crosses
  // four times: 200 ns.
  const Bytes S = Bytes::gib(4);
  const Time crossings = Time::ns(4 * 50);
  const Timed r = ring_all_reduce(two_switches("100Gbps"), S);
  EXPECT_NEAR(r.p.transfer.seconds(), 1.75 * S.as_double() / 48e9, 1e-12);
  const Time bound = r.p.time - r.p.transfer + Time::s(1.75 * S.as_double() / 12e9) + crossings;
  EXPECT_NEAR(static_cast<double>(r.t.picoseconds()), static_cast<double>(bound.picoseconds()),
              2.0);
  const double busbw = 1.75 * S.as_double() / r.t.seconds() / 1e9;
  EXPECT_GT(busbw, 11.9);
  EXPECT_LE(busbw, 12.0);
  // The same graph with a 400 Gb/s link is as fast as NCCL assumes, but for the crossings.
  const Timed fast = ring_all_reduce(two_switches("400Gbps"), S);
  EXPECT_EQ(fast.t, fast.p.time + crossings);
}

Time tree_ll_all_reduce(const Topology& topo, Bytes bytes, Prediction* p) {
  const NcclGroups nccl(topo);
  TunerRequest req;
  req.bytes = bytes;
  req.algo = Algorithm::Tree;
  req.proto = nccl::Proto::LL;
  *p = nccl.predict(req, nccl.all());
  return nccl.time(*p, CollectiveOp::AllReduce, bytes, DataType::Float32, {nccl.all()}, nullptr);
}

TEST(GraphModel, ATreesLevelsCrossALinkInTurnWithOneChunkAndOverlapWithMore) {
  // Four one-GPU nodes, 0-2 on switch a and 3 on switch b, a-b at 100 Gb/s: a quarter of a
  // NIC's 400 Gb/s, at the same 48/50 x 1/3.8 of line rate (tree LL). n: a NIC's rate so.
  // NCCL's double binary tree (in-order over positions 1-4, root 4): tree 0 (node u at u + 1)
  // is 3 <- 1 <- {0, 2}, tree 1 (node u at 4 - u) is 0 <- 2 <- {3, 1}; each tree's edges carry
  // S/2 each way. Across a-b: tree 0's 1 -> 3 (level 2, up) and 3 -> 1 (level 3, down), tree 1's
  // 3 -> 2 (level 1) and 2 -> 3 (level 4): S each way in all, 4 S/n, where the model (node 1's
  // NIC carrying 2 S) says 2 S/n.
  // One chunk per lane (64 KiB over 2 channels: 32 KiB, LL's chunk) crosses the levels in turn.
  // In its level a crossing needs (S/2) / (n/4) = 2 S/n on a-b, less its busiest own link
  // (NIC): tree 0's crossings share their NICs with nothing, S/2, so 1.5 S/n each; tree 1's
  // share node 2's with 1 -> 2 (level 1) and 2 -> 1 (level 4), S, so 1 S/n each. Longest chain:
  // tree 0's 1.5 + 1.5 = 3 S/n, of which the steady state covers the a-b link's 4 S/n beyond the
  // NICs' 2 S/n: 1 S/n is fill. Time: the model's + 4 S/n + 1 S/n - 2 S/n, i.e. 3 S/n more than
  // with a 1.6 Tb/s a-b, where nothing is slower than the NICs (the steady state alone: 2 S/n).
  const auto topo = [](const std::string& link) {
    return build_yaml(one_gpu_nodes(
        4, [](int i) { return i < 3 ? std::string("a") : std::string("b"); },
        "  - {id: a, kind: switch}\n  - {id: b, kind: switch}\n",
        "  - {a: a, b: b, bandwidth: " + link + "}\n"));
  };
  const Topology slow = topo("100Gbps"), fast = topo("1600Gbps");
  const double n = 48e9 / 3.8;
  for (const auto& [size, extra] :
       {std::pair{Bytes::kib(64), 3.0}, std::pair{Bytes::kib(128), 2.5}}) {
    SCOPED_TRACE(size.count());
    Prediction p, q;
    const Time t = tree_ll_all_reduce(slow, size, &p);
    const Time reference = tree_ll_all_reduce(fast, size, &q);
    ASSERT_EQ(p.channels, 2u);
    EXPECT_NEAR(p.transfer.seconds(), 2 * size.as_double() / n, 1e-12);
    // Two chunks (128 KiB): the other chunk fills a-b's idle time between its levels. In the
    // walk of excesses above, a -> b is busy from the start (1 -> 3) until tree 1's 2 -> 3 ends
    // at 1 + 1 = 2 S/n of 3: idle 1 S/n after it, paid at a chunk's size: 0.5 S/n.
    EXPECT_NEAR((t - reference).seconds(), extra * size.as_double() / n, 1e-11);
  }
}

// Alternating leaves joined by a direct 1.6 Tb/s link (one hop) and, two hops long, through a
// spine by 800 Gb/s links; `direct` false: the direct link has failed (removed, as the
// failed-link fault does).
Topology leaves_with_detour(bool direct) {
  std::string fabric =
      "  - {a: l0, b: s, bandwidth: 800Gbps}\n  - {a: l1, b: s, bandwidth: 800Gbps}\n";
  if (direct) fabric += "  - {a: l0, b: l1, bandwidth: 1600Gbps}\n";
  return build_yaml(one_gpu_nodes(
      8, [](int i) { return i % 2 ? std::string("l1") : std::string("l0"); },
      "  - {id: l0, kind: switch}\n  - {id: l1, kind: switch}\n  - {id: s, kind: switch}\n",
      fabric));
}

TEST(GraphModel, AFailedLinkReroutesOntoASlowerPathAndSlowsThePhase) {
  // Shortest paths take the direct link: S/2 per step over 200 GB/s, no slower than a NIC's
  // S/8 over 50 GB/s. Without it, routes go through the spine: S/2 over 100 GB/s, twice a NIC's
  // time, so the transfer term doubles as in the 2:1 core above.
  const Bytes S = Bytes::gib(1);
  const Timed intact = ring_all_reduce(leaves_with_detour(true), S);
  EXPECT_EQ(intact.t, intact.p.time);
  const Timed failed = ring_all_reduce(leaves_with_detour(false), S);
  const Time twice = failed.p.time - failed.p.transfer + Time::s(7.0 * S.as_double() / 96e9);
  EXPECT_NEAR(static_cast<double>(failed.t.picoseconds()), static_cast<double>(twice.picoseconds()),
              2.0);
  EXPECT_GT(failed.t, intact.t);
}

// Two sites of two HGX-H100 nodes each (leaf-spine, NDR), 50 km apart.
Topology two_sites() {
  return build_yaml(
      "builder: multi_site\n"
      "distance: 50km\n"
      "capacity: 12.8Tbps\n"
      "sites:\n"
      "  east: {builder: leaf_spine, gpu: h100, nodes: 2, nic: cx7_ndr, switch: qm9700}\n"
      "  west: {builder: leaf_spine, gpu: h100, nodes: 2, nic: cx7_ndr, switch: qm9700}\n");
}

Time fibre_latency(const Topology& topo) {
  for (const Link& l : topo.links())
    if (l.medium == LinkMedium::LongHaulFibre) return l.latency;
  return Time::zero();
}

TEST(GraphModel, TwoSitesFiftyKilometresApartPayTheFibreCrossingsOfTheChain) {
  // 50 km of fibre at 5 us/km: 250 us one way (plus the gateways' share of the link's latency).
  // A 1 MiB all-reduce cannot finish before data has crossed and come back:
  //  - ring over 32 ranks, east's 16 then west's: the chain of 2 (n-1) = 62 dependent hops is
  //    two laps less two hops, and a lap crosses the fibre twice (east -> west, west -> east):
  //    four crossings, two round trips;
  //  - tree: NCCL's double binary tree over the four nodes (in-order, root position 4) runs
  //    west node 2 -> east node 1 -> west root 3 in tree 0 (and its mirror in tree 1): two
  //    crossings up, two down, two round trips.
  // Each crossing costs its path's latency beyond the path NCCL's network step latency includes
  // (rank 0 to 8, the next node on the same leaf: NIC, leaf, NIC).
  const Topology topo = two_sites();
  const Time fibre = fibre_latency(topo);
  ASSERT_GE(fibre, Time::us(250));
  ASSERT_LT(fibre, Time::us(251));
  const NcclGroups nccl(topo);
  const Bytes S = Bytes::mib(1);
  for (Algorithm a : {Algorithm::Ring, Algorithm::Tree}) {
    SCOPED_TRACE(to_string(a));
    TunerRequest req;
    req.bytes = S;
    req.algo = a;
    const Prediction p = nccl.predict(req, nccl.all());
    const Time t =
        nccl.time(p, CollectiveOp::AllReduce, S, DataType::Float32, {nccl.all()}, nullptr);
    EXPECT_GE(t, fibre * 4);  // two round trips of the fibre alone
    const Time covered = gpu_path_latency(topo, 0, 8);
    // The crossing paths add a few microseconds of NICs, switches and cables to the fibre.
    EXPECT_GE(t - p.time, (fibre - covered) * 4);
    EXPECT_LE(t - p.time, (fibre + Time::us(5) - covered) * 4);
  }
}

TEST(GraphModel, TheDefaultAlgorithmOnTwoSitesIsNoFasterThanTwoRoundTrips) {
  // `lockstep collective --scenario scenarios/two_sites_50km.yaml` at 1 MiB on this smaller pair
  // of sites: NCCL's choice (it does not see the distance) still pays it.
  const Topology topo = two_sites();
  CollectiveSweep sweep;
  sweep.min_bytes = sweep.max_bytes = Bytes::mib(1);
  const auto rows = run_collective_sweep(sweep, nccl_cluster(topo), &topo);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_GE(rows[0].time, fibre_latency(topo) * 4);
}

// The NCCL model alone and on the preset's graph, for every row of a sweep. Across nodes the
// direct algorithm (all-to-all) sends from every GPU to every rail: a cross-rail send goes over
// NVLink to the GPU on the destination's rail first (NCCL's PXN, docs/routing.md), one scale-up
// hop (GPU 0 to GPU 1 of a node) longer than the same-rail path NCCL's step latency includes,
// and its one round pays that detour (the flow engine too). Before PXN it climbed to a spine
// and back down instead, two leaf-spine links.
void expect_graph_equals_model(const PresetRequest& req, CollectiveOp op,
                               std::optional<Algorithm> algo) {
  const PresetCluster preset = resolve_preset(req);
  const NcclCluster cluster = nccl_cluster(preset);
  const BuildResult built = build_topology(rail_optimized_args(preset));
  const Topology& topo = *built.graph;
  const Time relay_hop = gpu_path_latency(topo, 0, 1);
  CollectiveSweep sweep;
  sweep.op = op;
  sweep.algo = algo;
  sweep.min_bytes = Bytes(64);
  sweep.max_bytes = Bytes::gib(2);
  sweep.step_factor = 32;
  const auto model = run_collective_sweep(sweep, cluster, nullptr);
  const auto graph = run_collective_sweep(sweep, cluster, &*built.graph);
  ASSERT_EQ(model.size(), graph.size());
  for (std::size_t i = 0; i < model.size(); ++i) {
    SCOPED_TRACE(std::to_string(model[i].bytes) + " B " + model[i].algorithm + " " +
                 model[i].protocol);
    const bool detour = model[i].algorithm == "direct" && cluster.nodes > 1;
    EXPECT_EQ(graph[i].time, model[i].time + (detour ? relay_hop : Time::zero()));
  }
}

TEST(GraphModel, ThePresetsRailOptimisedFabricsGiveTheModelsAnswer) {
  // Non-blocking, rail-aligned, short: no link is slower and no path longer than NCCL's model
  // assumes, so the graph never binds, to the picosecond.
  struct Case {
    const char* system;
    const char* fabric;
    std::uint32_t nodes;
  };
  for (const Case c : {Case{"hgx-h100", "ib-ndr", 1}, Case{"hgx-h100", "ib-ndr", 2},
                       Case{"hgx-h100", "ib-ndr", 16}, Case{"hgx-h100", "roce-400g", 4},
                       Case{"hgx-h100", "efa", 4}, Case{"hgx-h100", "tcp", 2},
                       Case{"dgx-a100", "ib-hdr", 4}, Case{"hgx-b200", "ib-xdr", 4},
                       Case{"mi300x", "roce-400g", 2}, Case{"gb200-nvl72", "ib-ndr", 18}}) {
    PresetRequest req;
    req.system = c.system;
    req.fabric = c.fabric;
    req.nodes = c.nodes;
    SCOPED_TRACE(std::string(c.system) + " " + c.fabric + " x " + std::to_string(c.nodes));
    // Not sendrecv across nodes: rank r sends to r + 1, so GPU 7 of a node sends to GPU 0 of
    // the next, another rail. Without PXN it went up through the spines, where ECMP hashed the
    // 2 x 16 channel flows of a 2-node preset over its rail leaf's 2 uplinks unevenly (19 of
    // 32 slices on one: the graph was 19/16 of the model); with PXN it is relayed over NVLink,
    // which this test does not derive.
    // MI300X's GPUs are wired pairwise: the rings take all seven links of a GPU (mesh rings),
    // but lockstep's chain (broadcast) and tree programs walk a node's GPUs in order over one
    // 64 GB/s link per hop, a seventh of what NCCL's model assumes (next test).
    const bool mesh = std::string(c.system) == "mi300x";
    for (CollectiveOp op :
         {CollectiveOp::AllReduce, CollectiveOp::AllGather, CollectiveOp::ReduceScatter,
          CollectiveOp::Broadcast, CollectiveOp::AllToAll})
      if (!mesh || (op != CollectiveOp::AllReduce && op != CollectiveOp::Broadcast))
        expect_graph_equals_model(req, op, std::nullopt);
    if (c.nodes > 1) {
      expect_graph_equals_model(req, CollectiveOp::AllReduce, Algorithm::Ring);
      if (!mesh) expect_graph_equals_model(req, CollectiveOp::AllReduce, Algorithm::Tree);
    }
  }
}

TEST(GraphModel, ATreeOnAPairwiseMeshCrossesOneLinkPerHop) {
  // MI300X, two nodes, tree all-reduce, Simple, 1 GiB, 16 lanes of S/16 (8 per tree, heads
  // 0..7). Inside a node NCCL's tree is a chain (tree.cpp): a lane's chain walks the GPUs in
  // local order from its head h, h -> h+1 -> ... -> h+7 (mod 8), data going down the chain
  // forwards and up it backwards. So the directed link j -> j+1 is the one xGMI link between
  // them (448 / 7 = 64 GB/s, run at NCCL's 369 / 448 of it and the tree's 0.92), and carries
  // the down traffic of every lane whose chain holds the edge {j, j+1}: all heads but j+1, 7 of
  // each tree's 8, 14 x S/16 = 0.875 S. NCCL's model prices the chain at 2 S per GPU over the
  // GPU's whole 369 GB/s x 0.92: the graph is 3.1 times longer.
  PresetRequest req;
  req.system = "mi300x";
  req.nodes = 2;
  const PresetCluster preset = resolve_preset(req);
  const BuildResult built = build_topology(rail_optimized_args(preset));
  const NcclGroups nccl(nccl_cluster(preset), &*built.graph);
  TunerRequest tr;
  tr.bytes = Bytes::gib(1);
  tr.algo = Algorithm::Tree;
  tr.proto = nccl::Proto::Simple;
  const Prediction p = nccl.predict(tr, nccl.all());
  const Time t =
      nccl.time(p, CollectiveOp::AllReduce, tr.bytes, DataType::Float32, {nccl.all()}, nullptr);
  const double link = 448e9 / 7 * (nccl.cluster().intra_GBps / 448) * 0.92;
  const double graph_s = 0.875 * tr.bytes.as_double() / link;
  EXPECT_NEAR((t - p.time + p.transfer).seconds(), graph_s, 1e-9);
}

TEST(GraphModel, OneGpuPerNodeAndFewerNicsGiveTheModelsAnswerToo) {
  PresetRequest one;
  one.system = "hgx-h100";
  one.nodes = 4;
  one.gpus_per_node = 1;
  expect_graph_equals_model(one, CollectiveOp::AllReduce, std::nullopt);
  expect_graph_equals_model(one, CollectiveOp::AllGather, Algorithm::Pat);
}

}  // namespace
TEST(GraphModel, ARingWithFewerChannelsCrossesFewerNics) {
  // 2 x HGX-H100 with NDR: channel c of NCCL's ring leaves a node through one NIC, so one
  // channel moves the all-reduce's 2 (n-1)/n S = 2 x 15/16 x 256 MiB = 503,316,480 B through one
  // 50 GB/s NIC at NCCL's network efficiency 48/50: 10,485.76 us; two channels through two NICs
  // take half, 5,242.88 us; sixteen cross all eight NICs twice and the model's bandwidth term
  // binds. The model's latency terms do not depend on the channels, so the differences between
  // the rows are the graph's terms exactly (the model alone prices every count alike: its
  // per-channel caps are issue 20's).
  PresetRequest req;
  req.system = "hgx-h100";
  req.fabric = "ib-ndr";
  req.nodes = 2;
  const PresetCluster preset = resolve_preset(req);
  const NcclCluster cluster = nccl_cluster(preset);
  const BuildResult built = build_topology(rail_optimized_args(preset));
  const auto ring_time = [&](std::uint32_t channels, const Topology* graph) {
    CollectiveSweep sweep;
    sweep.algo = Algorithm::Ring;
    sweep.proto = nccl::Proto::Simple;
    sweep.channels = channels;
    sweep.min_bytes = sweep.max_bytes = Bytes::mib(256);
    return run_collective_sweep(sweep, cluster, graph).at(0).time;
  };
  const Time one = ring_time(1, &*built.graph), two = ring_time(2, &*built.graph),
             sixteen = ring_time(16, &*built.graph);
  EXPECT_NEAR((one - two).microseconds(), 5242.88, 1e-3);
  EXPECT_LT(sixteen, two);
  // Sixteen channels: the graph never binds on the rail-optimised preset (test above).
  EXPECT_EQ(sixteen, ring_time(16, nullptr));
}

}  // namespace lockstep
