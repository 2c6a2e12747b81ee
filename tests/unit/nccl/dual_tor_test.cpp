// Dual-ToR NICs (Alibaba HPN, SIGCOMM 2024: each NIC's two ports to two ToRs of a pair): NCCL's
// model sees the NIC at the sum of its ports, so a collective runs as on one port of that speed.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "lockstep/nccl/cluster.hpp"
#include "lockstep/nccl/sweep.hpp"
#include "lockstep/nccl/tuner.hpp"
#include "lockstep/topology/builder.hpp"
#include "lockstep/topology/graph.hpp"
#include "preset_views.hpp"

namespace lockstep {
namespace {

const Time kHop = Time::ns(100);

// Two nodes of one H100 and one NIC. Dual: each NIC has two 200G ports (25 GB/s), one to each
// ToR of a pair; single: one 400G port (50 GB/s) to one ToR.
Topology two_nodes(bool dual) {
  TopologyBuilder b(dual ? "dual_tor" : "single_tor");
  const DeviceId tor_a = b.add_device(Device{DeviceKind::Switch, 0, kNone, 0, 0});
  const DeviceId tor_b = b.add_device(Device{DeviceKind::Switch, 0, kNone, 0, 1});
  const Bandwidth port = Bandwidth::gbps(dual ? 200 : 400);
  for (std::uint32_t node = 0; node < 2; ++node) {
    const DeviceId g = b.add_device(Device{DeviceKind::Gpu, 0, node, 0, 0});
    const DeviceId nic = b.add_device(Device{DeviceKind::Nic, 0, node, 0, 0});
    b.add_link(Link{g, nic, Bandwidth::gBps(64), kHop, LinkMedium::Pcie});
    b.add_link(Link{nic, tor_a, port, kHop, LinkMedium::Optical});
    if (dual) b.add_link(Link{nic, tor_b, port, kHop, LinkMedium::Optical});
  }
  ClusterTraits t;
  t.gpu = "h100";
  t.gpus_per_node = 1;
  t.nics_per_node = 1;
  b.set_traits(t);
  return std::move(b).build();
}

// 2 x 200G ports = 400 Gb/s = 50 GB/s, the single 400G port's rate (the fastest single link,
// 25 GB/s, was what the model read before).
TEST(DualTor, NicRateIsTheSumOfItsPorts) {
  EXPECT_DOUBLE_EQ(nccl_cluster(two_nodes(true)).nic_GBps, 50.0);
  EXPECT_DOUBLE_EQ(nccl_cluster(two_nodes(false)).nic_GBps, 50.0);
}

// So a 1 GiB all-reduce across the two nodes predicts the same time dual-homed as on one 400G
// port (same bus bandwidth: the NIC is the bottleneck either way).
TEST(DualTor, AllReduceRunsAtTheNicsFullRate) {
  TunerRequest r;
  r.op = CollectiveOp::AllReduce;
  r.bytes = Bytes::gib(1);
  const Prediction dual = predict(nccl_cluster(two_nodes(true)), r);
  const Prediction single = predict(nccl_cluster(two_nodes(false)), r);
  EXPECT_EQ(dual.time, single.time);
  EXPECT_DOUBLE_EQ(dual.busbw_GBps, single.busbw_GBps);
  EXPECT_GT(dual.busbw_GBps, 25.0);  // more than one 200G port could carry
}

// Four one-GPU H100 nodes, one 400G ConnectX-7 each, on QM9700 leaves; dual: each NIC's two
// 200G ports to the leaf pair (HPN), one leaf per plane, so no spines.
Topology four_nodes(bool dual) {
  ArgNode args = ArgNode::map("cluster");
  const std::vector<std::pair<std::string, std::string>> keys = {
      {"builder", "leaf_spine"}, {"gpu", "h100"},      {"gpus", "4"},
      {"gpus_per_node", "1"},    {"switch", "qm9700"}, {"dual_tor", dual ? "true" : "false"}};
  for (const auto& [k, v] : keys) args.set(k, ArgNode::scalar(v, "cluster." + k));
  return std::move(*build_topology(args).graph);
}

CollectiveRow ring(const Topology& topo, const std::vector<std::string>& faults,
                   const char* engine) {
  return test::ring_simple_gib(engine, nccl_cluster(topo), topo, faults).at(0);
}

// NCCL's fixed part of that ring (launch and latency): its time less its bandwidth term.
double fixed_us(const Topology& topo) {
  TunerRequest r;
  r.op = CollectiveOp::AllReduce;
  r.bytes = Bytes::gib(1);
  r.algo = Algorithm::Ring;
  r.proto = nccl::Proto::Simple;
  const Prediction p = predict(nccl_cluster(topo), r);
  return (p.time - p.transfer).microseconds();
}

// A 1 GiB ring all-reduce over 4 ranks: each GPU sends 2 x 3/4 x S through its NIC, on 2
// channels. NCCL runs the 400G (50 GB/s) NIC at 48 GB/s (sm90SpeedArrayInter), 24 GB/s per
// channel. Dual-ToR with queue pairs alternating ports: channel 0 leaves by the 200G port to
// leaf 0 and stays in plane 0, channel 1 by the port to leaf 1, each 24 GB/s on its own
// 25 GB/s port: 1.5 S / 48 GB/s = 33,554.43 us + the fixed part, as on one 400G port. (Hashed
// to one port, both channels shared 25 GB/s: busbw 24.94 instead of 47.79 GB/s.)
TEST(DualTor, RingAllReduceOnTheBuiltFabricRunsAtTheNicsFullRate) {
  const Topology dual = four_nodes(true);
  const Topology single = four_nodes(false);
  const double s = Bytes::gib(1).as_double();
  const double want = fixed_us(dual) + 1.5 * s / 48e3;
  for (const char* engine : {"analytical", "flow"}) {
    const CollectiveRow d = ring(dual, {}, engine);
    EXPECT_NEAR(d.time.microseconds() / want, 1.0, 1e-4) << engine;
    EXPECT_NEAR(d.time.microseconds(), ring(single, {}, engine).time.microseconds(), 0.01)
        << engine;
    EXPECT_GT(d.busbw_GBps, 47.0) << engine;  // more than one 25 GB/s port could carry
  }
}

// Losing one ToR (leaf 1: every NIC's link to it failed): each NIC keeps one 200G port, the mlx5
// bond moves the queue pairs to it, and both channels share its 25 GB/s: 1.5 S / 25 GB/s =
// 64,424.51 us + the fixed part (NCCL picked its channels on the healthy fabric). Half the rate,
// not zero.
TEST(DualTor, LosingOneTorHalvesTheRate) {
  const Topology dual = four_nodes(true);
  const std::vector<std::string> tor_lost = {
      "failed-link:link=nic0-leaf1", "failed-link:link=nic1-leaf1", "failed-link:link=nic2-leaf1",
      "failed-link:link=nic3-leaf1"};
  const double s = Bytes::gib(1).as_double();
  const double want = fixed_us(dual) + 1.5 * s / 25e3;
  for (const char* engine : {"analytical", "flow"}) {
    const CollectiveRow r = ring(dual, tor_lost, engine);
    EXPECT_NEAR(r.time.microseconds() / want, 1.0, 1e-4) << engine;
    EXPECT_GT(r.busbw_GBps, 0.45 * ring(dual, {}, engine).busbw_GBps) << engine;
    EXPECT_LT(r.busbw_GBps, 25.0) << engine;
  }
}

}  // namespace
}  // namespace lockstep
