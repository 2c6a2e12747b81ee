// Dual-ToR NICs (Alibaba HPN, SIGCOMM 2024: each NIC's two ports to two ToRs of a pair): NCCL's
// model sees the NIC at the sum of its ports, so a collective runs as on one port of that speed.
#include <gtest/gtest.h>

#include <cstdint>

#include "lockstep/nccl/cluster.hpp"
#include "lockstep/nccl/tuner.hpp"
#include "lockstep/topology/graph.hpp"

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

}  // namespace
}  // namespace lockstep
