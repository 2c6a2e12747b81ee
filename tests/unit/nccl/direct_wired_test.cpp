// Collectives on GPUs wired to each other (two GPUs on one cable, a full mesh, a 1-D torus):
// flow runs move data at the rate NCCL's model gives those links, derived here by hand. Before,
// the glue scaled a GPU-to-GPU cable to NCCL's intra-node figure for one-GPU nodes (its PCIe
// 12 GB/s, spread over all of a GPU's cables), and flow ran at 4-12 GB/s on 50 GB/s links
// (docs/nccl-model.md "Direct-wired GPUs").
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "lockstep/nccl/sweep.hpp"
#include "lockstep/topology/builder.hpp"

namespace lockstep {
namespace {

constexpr double kLinkGBps = 50;
// NCCL's network search speed for a 50 GB/s link: the largest entry of Hopper's inter-node
// speed array (search.cc sm90SpeedArrayInter) not above it. NCCL runs such a link at this rate.
constexpr double kNcclGBps = 48;

// Two one-GPU servers joined by one 50 GB/s, 1 us cable.
Topology two_gpus() {
  TopologyBuilder b("pair");
  const DeviceId a = b.add_device(Device{DeviceKind::Gpu, 0, 0, 0, 0});
  const DeviceId c = b.add_device(Device{DeviceKind::Gpu, 0, 1, 0, 0});
  b.add_link(Link{a, c, Bandwidth::gBps(kLinkGBps), Time::us(1), LinkMedium::CopperDac, 1});
  return std::move(b).build();
}

Topology built(const std::vector<std::pair<std::string, std::string>>& keys) {
  ArgNode args = ArgNode::map("cluster");
  for (const auto& [k, v] : keys) args.set(k, ArgNode::scalar(v, "cluster." + k));
  return std::move(*build_topology(args).graph);
}

CollectiveRow row(const Topology& topo, CollectiveOp op, Bytes bytes, const char* engine) {
  CollectiveSweep s;
  s.op = op;
  if (op == CollectiveOp::AllReduce) s.algo = Algorithm::Ring;
  s.proto = nccl::Proto::Simple;
  s.min_bytes = s.max_bytes = bytes;
  s.engine = engine;
  return run_collective_sweep(s, nccl_cluster(topo), &topo).at(0);
}

// NCCL's time for the request on this topology less its bandwidth term: launch + latency.
double fixed_us(const Topology& topo, CollectiveOp op, Bytes bytes) {
  TunerRequest r;
  r.op = op;
  r.bytes = bytes;
  if (op == CollectiveOp::AllReduce) r.algo = Algorithm::Ring;
  r.proto = nccl::Proto::Simple;
  const Prediction p = predict(nccl_cluster(topo), r);
  return (p.time - p.transfer).microseconds();
}

// One 64 MiB send each way on the cable: 2 channels of 32 MiB share it, so the payload moves at
// NCCL's 48 GB/s: S / 48 GB/s = 1,398.10 us, plus launch and NCCL's latency (1440.50 us in all;
// 46.6 GB/s, where flow printed 11.9 GB/s before).
TEST(DirectWired, SendOnOneCableRunsAtNcclsNetworkSpeed) {
  const Topology topo = two_gpus();
  const Bytes s = Bytes::mib(64);
  const double bytes_us = s.as_double() / (kNcclGBps * 1e3);
  const double want = fixed_us(topo, CollectiveOp::SendRecv, s) + bytes_us;
  for (const char* engine : {"analytical", "flow"}) {
    const CollectiveRow r = row(topo, CollectiveOp::SendRecv, s, engine);
    EXPECT_NEAR(r.time.microseconds(), want, 0.01) << engine;
    EXPECT_GT(r.busbw_GBps, 46.0) << engine;
  }
}

// Ring all-reduce of 1 GiB: each GPU sends 2 (n - 1) / n S to its ring successor, which is one
// cable away on a full mesh of 4 and on a 1-D torus of 8 (rank r to r + 1, each cable used in one
// direction by one GPU), so the bytes take 2 (n - 1) / n S / 48 GB/s: 33,554.43 us for n = 4,
// 39,146.84 us for n = 8. On a 4x4x4 torus the step from (3, y, z) to (0, y + 1, z) takes two
// cables, x then y in dimension order, neither used by another step: 2 x 63 / 64 S / 48 GB/s =
// 44,040.19 us. Bus bandwidth is then 48 GB/s less the latency's share: at most the cable's 50,
// at least 90% of NCCL's 48 (126 latencies of a 64-GPU ring).
TEST(DirectWired, RingAllReduceRunsAtItsCablesRate) {
  const Bytes s = Bytes::gib(1);
  const std::vector<std::pair<Topology, double>> cases = {
      {built({{"builder", "full_mesh"}, {"gpus", "4"}, {"link_bandwidth", "50GB/s"}}), 4},
      {built({{"builder", "torus"}, {"dims", "8"}, {"link_bandwidth", "50GB/s"}}), 8},
      {built({{"builder", "torus"}, {"dims", "4x4x4"}, {"link_bandwidth", "50GB/s"}}), 64}};
  for (const auto& [topo, n] : cases) {
    const double bytes_us = 2 * (n - 1) / n * s.as_double() / (kNcclGBps * 1e3);
    const double want = fixed_us(topo, CollectiveOp::AllReduce, s) + bytes_us;
    const CollectiveRow r = row(topo, CollectiveOp::AllReduce, s, "flow");
    EXPECT_NEAR(r.time.microseconds() / want, 1.0, 1e-4) << topo.name();
    EXPECT_LE(r.busbw_GBps, kLinkGBps) << topo.name();
    EXPECT_GE(r.busbw_GBps, 0.9 * kNcclGBps) << topo.name();
  }
}

// All-to-all of 1 GiB (the per-rank send buffer S): a GPU sends S/n to each of its n - 1 peers.
// On a full mesh each peer is one cable away, so every cable carries S/n each way at NCCL's
// 48 GB/s: 1,073,741,824 / 4 / 48e3 = 5,592.41 us on 4 GPUs (3 ports), 2,796.20 us on 8 (7
// ports), plus launch and latency, in the model (NcclCluster::gpu_ports), the analytical engine
// and flow alike. One port, as before, took n - 1 times as long.
TEST(DirectWired, AllToAllSendsOverEveryCable) {
  const Bytes s = Bytes::gib(1);
  for (const std::uint32_t n : {4u, 8u}) {
    const Topology topo = built(
        {{"builder", "full_mesh"}, {"gpus", std::to_string(n)}, {"link_bandwidth", "50GB/s"}});
    EXPECT_EQ(nccl_cluster(topo).gpu_ports, n - 1);
    const double want =
        fixed_us(topo, CollectiveOp::AllToAll, s) + s.as_double() / n / (kNcclGBps * 1e3);
    for (const char* engine : {"analytical", "flow"}) {
      const CollectiveRow r = row(topo, CollectiveOp::AllToAll, s, engine);
      EXPECT_NEAR(r.time.microseconds() / want, 1.0, 1e-4) << n << " GPUs, " << engine;
    }
  }
  // A 4x4x4 torus: 6 cables per GPU (2 per dimension of 4).
  const Topology torus =
      built({{"builder", "torus"}, {"dims", "4x4x4"}, {"link_bandwidth", "50GB/s"}});
  EXPECT_EQ(nccl_cluster(torus).gpu_ports, 6u);
}

// NCCL's tree on a full mesh (cost.cpp tree_net_GBps): every tree edge has a cable of its own,
// and the busiest is the one both trees use, ranks 2 and 3 each the other's child (the second
// tree is the first shifted by one rank), carrying S per direction: a bus of two cables,
// 2 x 48 GB/s, where one port carried a node's 2 S. On the mesh of 8 with 2 channels:
//  - LL128, 16 MiB: min(96 x 120/128 = 90, 2 x 29 per channel) / 2 = 29 GB/s, S / 29e3 =
//    578.52 us (one port: min(45, 58) / 2 = 22.5 GB/s, 745.65 us);
//  - Simple, 1 GiB: min(96 x 0.92 = 88.32, 2 x 36) / 2 = 36 GB/s, 29,826.16 us, faster than the
//    ring's 2 x 7/8 x S at 48 GB/s (39,146.02 us): the tuner takes the tree (flow agrees);
//  - LL, 64 KiB: one 32 KiB chunk per channel through 2 log2(8) = 6 network stages, each at a
//    lone tree channel's rate on its cable, min(96 / 3.8, 35) / 2 = 12.63 GB/s: 2.594 us a
//    stage, a fill of 6 x 2.594 less the one period S / 12.63e3 = 5.188 us: 10.377 us.
// A 4x4x4 torus (6 cables per GPU) keeps one port: its tree edges join ranks 2^k apart over
// routes that share cables, which the analytical engine's graph term prices.
TEST(DirectWired, TreeEdgesTakeCablesOfTheirOwnOnAFullMesh) {
  const Topology mesh =
      built({{"builder", "full_mesh"}, {"gpus", "8"}, {"link_bandwidth", "50GB/s"}});
  const auto predict_tree = [](const Topology& topo, nccl::Proto proto, Bytes bytes) {
    TunerRequest r;
    r.bytes = bytes;
    r.algo = Algorithm::Tree;
    r.proto = proto;
    r.channels = 2;
    return predict(nccl_cluster(topo), r);
  };
  EXPECT_NEAR(predict_tree(mesh, nccl::Proto::LL128, Bytes::mib(16)).transfer.microseconds(),
              578.52, 0.01);
  const Prediction simple = predict_tree(mesh, nccl::Proto::Simple, Bytes::gib(1));
  EXPECT_NEAR(simple.transfer.microseconds(), 29826.16, 0.01);
  EXPECT_NEAR(predict_tree(mesh, nccl::Proto::LL, Bytes::kib(64)).fill.microseconds(), 10.377,
              0.001);
  TunerRequest any;
  any.bytes = Bytes::gib(1);
  const Prediction picked = predict(nccl_cluster(mesh), any);
  EXPECT_EQ(picked.algo, Algorithm::Tree);
  EXPECT_EQ(picked.proto, nccl::Proto::Simple);
  const Topology torus =
      built({{"builder", "torus"}, {"dims", "4x4x4"}, {"link_bandwidth", "50GB/s"}});
  EXPECT_NEAR(predict_tree(torus, nccl::Proto::LL128, Bytes::mib(16)).transfer.microseconds(),
              745.65, 0.01);
}

// The packet engine runs the same programs with the same options. Where nothing contends (ring
// and tree on the mesh, each message on its own cable; the ring on the 1-D torus, each hop one
// cable in program order) packet and flow agree within 2%: packets carry 26 B of InfiniBand
// header per 4096 B on these cables (0.6%) plus their pipeline. Before, the packet engine
// interleaved a tree's chunks on one connection and ran the tree 1.76x slower than flow.
// The tree on the 1-D torus does contend: its edges join ranks two apart, so they are forwarded
// through a GPU and share cables (3 -> 2 and 2 -> 1 carry 2.5 S each, five connections on 3 ->
// 2). There the two engines differ in how a forwarding GPU's port shares its turns (flow: max-min
// per connection; packet: transit before its own sends, docs/packet-engine.md), so that case is
// held to the 5% the zoo allows packet against flow on contended fabrics (zoo_test.cpp).
TEST(DirectWired, PacketAgreesWithFlow) {
  const std::vector<Topology> graphs = {
      built({{"builder", "full_mesh"}, {"gpus", "4"}, {"link_bandwidth", "50GB/s"}}),
      built({{"builder", "torus"}, {"dims", "8"}, {"link_bandwidth", "50GB/s"}})};
  for (std::size_t g = 0; g < graphs.size(); ++g) {
    const Topology& topo = graphs[g];
    for (const Algorithm algo : {Algorithm::Ring, Algorithm::Tree}) {
      CollectiveSweep s;
      s.algo = algo;
      // Simple on both: the per-channel tree cap (Simple 36 GB/s per channel, LL128 29) binds
      // on both engines alike, the packet engine pacing what the flow engine caps.
      s.proto = nccl::Proto::Simple;
      s.min_bytes = s.max_bytes = Bytes::mib(8);
      s.engine = "flow";
      const double flow = run_collective_sweep(s, nccl_cluster(topo), &topo).at(0).time.seconds();
      s.engine = "packet";
      const double packet = run_collective_sweep(s, nccl_cluster(topo), &topo).at(0).time.seconds();
      const bool contended = g == 1 && algo == Algorithm::Tree;  // the torus's tree
      EXPECT_NEAR(packet / flow, 1.0, contended ? 0.05 : 0.02)
          << topo.name() << " " << to_string(algo);
    }
  }
}

}  // namespace
}  // namespace lockstep
