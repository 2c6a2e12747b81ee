#include "lockstep/topology/graph.hpp"

#include <gtest/gtest.h>

#include "lockstep/core/error.hpp"

namespace lockstep {
namespace {

// Two GPUs on one switch: devices 0,1 GPUs (nodes 1 and 0), device 2 the switch.
Topology two_gpus_one_switch() {
  TopologyBuilder b("pair");
  b.add_device({.kind = DeviceKind::Gpu, .node = 1, .local_index = 0});
  b.add_device({.kind = DeviceKind::Gpu, .node = 0, .local_index = 0});
  const DeviceId sw = b.add_device({.kind = DeviceKind::Switch, .radix = 64});
  b.add_link({.a = 0, .b = sw, .bandwidth = Bandwidth::gbps(400), .latency = Time::ns(100)});
  b.add_link({.a = 1, .b = sw, .bandwidth = Bandwidth::gbps(400), .latency = Time::ns(100)});
  return std::move(b).build();
}

TEST(Graph, BuildsCsrPortsAndDirectedIds) {
  const Topology t = two_gpus_one_switch();
  EXPECT_EQ(t.num_devices(), 3u);
  EXPECT_EQ(t.num_links(), 2u);
  EXPECT_EQ(t.num_directed_links(), 4u);
  ASSERT_EQ(t.ports(2).size(), 2u);
  ASSERT_EQ(t.ports(0).size(), 1u);
  const Port p = t.ports(0)[0];
  EXPECT_EQ(p.peer, 2u);
  EXPECT_EQ(t.source(p.out), 0u);
  EXPECT_EQ(t.target(p.out), 2u);
  EXPECT_EQ(t.target(p.out ^ 1u), 0u);  // the reverse direction of the same link
  EXPECT_TRUE(t.connected());
}

TEST(Graph, GpusComeOutInNodeMajorRankOrder) {
  const Topology t = two_gpus_one_switch();
  ASSERT_EQ(t.gpus().size(), 2u);
  EXPECT_EQ(t.gpus()[0], 1u);  // node 0 first
  EXPECT_EQ(t.gpus()[1], 0u);
  EXPECT_EQ(t.num_nodes(), 2u);
}

TEST(Graph, DetectsDisconnection) {
  TopologyBuilder b("split");
  b.add_device({.kind = DeviceKind::Gpu});
  b.add_device({.kind = DeviceKind::Gpu});
  b.add_device({.kind = DeviceKind::Gpu});
  b.add_link({.a = 0, .b = 1, .bandwidth = Bandwidth::gbps(100)});
  EXPECT_FALSE(std::move(b).build().connected());
}

TEST(Graph, RejectsBadLinks) {
  {
    TopologyBuilder b("dangling");
    b.add_device({});
    b.add_link({.a = 0, .b = 5, .bandwidth = Bandwidth::gbps(1)});
    EXPECT_THROW(std::move(b).build(), InputError);
  }
  {
    TopologyBuilder b("zero");
    b.add_device({});
    b.add_device({});
    b.add_link({.a = 0, .b = 1});
    EXPECT_THROW(std::move(b).build(), InputError);
  }
  {
    TopologyBuilder b("self");
    b.add_device({});
    b.add_link({.a = 0, .b = 0, .bandwidth = Bandwidth::gbps(1)});
    EXPECT_THROW(std::move(b).build(), InputError);
  }
}

}  // namespace
}  // namespace lockstep
