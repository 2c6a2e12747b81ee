// Max-flow / min-cut used for measured bisections, and the length parser of multi_site/from_file.
#include "../../../src/topology/builders/min_cut.hpp"

#include <gtest/gtest.h>

#include "../../../src/topology/builders/length_arg.hpp"

namespace lockstep::builders {
namespace {

// g0 -- s1 -- g1 with a second, slower path g0 -- s2 -- g1 and a bottleneck s1-g1.
Topology diamond() {
  TopologyBuilder b("diamond");
  Device gpu;
  gpu.node = 0;
  const DeviceId g0 = b.add_device(gpu);
  gpu.node = 1;
  const DeviceId g1 = b.add_device(gpu);
  Device sw;
  sw.kind = DeviceKind::Switch;
  const DeviceId s1 = b.add_device(sw);
  const DeviceId s2 = b.add_device(sw);
  auto link = [&](DeviceId a, DeviceId c, double gbps) {
    Link l;
    l.a = a;
    l.b = c;
    l.bandwidth = Bandwidth::gbps(gbps);
    b.add_link(l);
  };
  link(g0, s1, 400);
  link(s1, g1, 100);  // bottleneck of the upper path
  link(g0, s2, 200);
  link(s2, g1, 300);  // the lower path carries min(200, 300)
  return std::move(b).build();
}

TEST(MinCut, DiamondSumsTheBottlenecksOfDisjointPaths) {
  const Topology t = diamond();
  // Upper path min(400, 100) = 100, lower path min(200, 300) = 200: 300 Gb/s in total.
  const DeviceId from[] = {0};
  const DeviceId to[] = {1};
  EXPECT_DOUBLE_EQ(max_flow(t, from, to).gigabits_per_second(), 300.0);
  // Links are full duplex: the reverse direction has the same capacity.
  EXPECT_DOUBLE_EQ(max_flow(t, to, from).gigabits_per_second(), 300.0);
  EXPECT_DOUBLE_EQ(rank_halves_cut(t).gigabits_per_second(), 300.0);
}

TEST(MinCut, LongChainNeedsNoDeepRecursion) {
  // 20,000 GPUs in a line: the cut between the halves is the single middle link.
  TopologyBuilder b("chain");
  for (std::uint32_t i = 0; i < 20'000; ++i) {
    Device d;
    d.node = i;
    b.add_device(d);
    if (i > 0) {
      Link l;
      l.a = i - 1;
      l.b = i;
      l.bandwidth = Bandwidth::gbps(100);
      b.add_link(l);
    }
  }
  const Topology t = std::move(b).build();
  EXPECT_DOUBLE_EQ(rank_halves_cut(t).gigabits_per_second(), 100.0);
}

TEST(Length, UnitsAreRequired) {
  EXPECT_DOUBLE_EQ(length_metres(ArgNode::scalar("50km", "d")), 50'000.0);
  EXPECT_DOUBLE_EQ(length_metres(ArgNode::scalar("2.5 m", "d")), 2.5);
  EXPECT_THROW(length_metres(ArgNode::scalar("50", "d")), InputError);
  EXPECT_THROW(length_metres(ArgNode::scalar("50mi", "d")), InputError);
  EXPECT_THROW(length_metres(ArgNode::scalar("-1m", "d")), InputError);
  EXPECT_THROW(length_metres(ArgNode::scalar("1e9km", "d")), InputError);
}

}  // namespace
}  // namespace lockstep::builders
