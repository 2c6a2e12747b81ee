// Direct-connect builders (full_mesh, torus) and the scale-up builder: counts derived by hand.
#include <gtest/gtest.h>

#include "lockstep/core/error.hpp"
#include "topology_test_util.hpp"

namespace lockstep {
namespace {

using test::build;

TEST(FullMesh, TwoHundredThousandGpusAreCountedNotBuilt) {
  // n = 200,000: each GPU needs n - 1 = 199,999 ports; n (n - 1) / 2 = 19,999,900,000 cables.
  const BuildResult r = build({{"builder", "full_mesh"}, {"gpus", "200000"}});
  EXPECT_FALSE(r.graph.has_value());
  const Inventory& inv = r.inventory;
  EXPECT_FALSE(inv.graph_built);
  EXPECT_EQ(inv.gpus, 200'000u);
  EXPECT_EQ(inv.ports_per_gpu, 199'999u);
  EXPECT_EQ(inv.cables, 19'999'900'000u);
  EXPECT_FALSE(inv.feasible);
  ASSERT_EQ(inv.problems.size(), 1u);
  EXPECT_NE(inv.problems[0].find("needs 199999 ports"), std::string::npos) << inv.problems[0];
}

TEST(FullMesh, EightMi300xOnTheBoardAreFeasible) {
  // MI300X: 7 Infinity Fabric links, so 8 GPUs (7 peers each) fit; 28 = 8 x 7 / 2 board links,
  // no cables; each link 448 / 7 = 64 GB/s per direction.
  const BuildResult r =
      build({{"builder", "full_mesh"}, {"gpus", "8"}, {"gpu", "mi300x"}, {"link_m", "0"}});
  ASSERT_TRUE(r.graph.has_value());
  EXPECT_EQ(r.graph->num_links(), 28u);
  EXPECT_DOUBLE_EQ(r.graph->link(0).bandwidth.bytes_per_second(), 64e9);
  EXPECT_TRUE(r.inventory.feasible);
  EXPECT_EQ(r.inventory.cables, 0u);
  // Bisection: 4 x 4 pairs across the cut x 64 GB/s.
  EXPECT_DOUBLE_EQ(r.inventory.bisection.bytes_per_second(), 16 * 64e9);
  // Nine MI300X would need 8 ports each.
  EXPECT_FALSE(
      build({{"builder", "full_mesh"}, {"gpus", "9"}, {"gpu", "mi300x"}}).inventory.feasible);
}

TEST(Torus, FourByFourByFour) {
  // 64 nodes, 6 neighbours each: 64 x 6 / 2 = 192 links. Diameter: 2 + 2 + 2 = 6 hops.
  // Bisection: cutting one dimension in half crosses the 4 x 4 rings twice (wraparound):
  // 2 x 16 = 32 links x 400 Gb/s.
  const BuildResult r = build({{"builder", "torus"}, {"dims", "4x4x4"}});
  ASSERT_TRUE(r.graph.has_value());
  const Topology& t = *r.graph;
  EXPECT_EQ(t.num_nodes(), 64u);
  EXPECT_EQ(t.gpus().size(), 64u);
  EXPECT_EQ(t.num_links(), 192u);
  for (DeviceId g : t.gpus()) EXPECT_EQ(t.ports(g).size(), 6u);
  EXPECT_TRUE(t.connected());
  EXPECT_EQ(r.inventory.diameter_switch_hops, 6u);
  EXPECT_DOUBLE_EQ(r.inventory.bisection.bytes_per_second(), 32 * 50e9);
  // 1 m links: 5 ns each, 6 hops.
  EXPECT_EQ(r.inventory.max_one_way_latency, Time::ns(30));
  EXPECT_EQ(r.inventory.cables, 192u);
  EXPECT_EQ(r.inventory.transceivers, 0u);  // 1 m: copper DAC
}

TEST(Torus, TwoDimensionalAndSizeTwo) {
  // 2x3: the size-2 dimension has one link per pair (3 links), the ring of 3 wraps (2 x 3 = 6).
  const BuildResult r = build({{"builder", "torus"}, {"dims", "2x3"}});
  EXPECT_EQ(r.graph->num_links(), 9u);
  EXPECT_EQ(r.inventory.diameter_switch_hops, 2u);  // 1 + 1
  // Cheapest cut: across the size-2 dimension, 3 links (the ring of 3 would cut 2 x 2 = 4).
  EXPECT_DOUBLE_EQ(r.inventory.bisection.bytes_per_second(), 3 * 50e9);
  for (const char* bad : {"4x0x4", "4x4x4x4", "4xx4", "", "1"}) {
    EXPECT_THROW(build({{"builder", "torus"}, {"dims", bad}}), InputError) << bad;
  }
}

TEST(Torus, DimsAsAList) {
  // dims: [8, 8] as a scenario file writes it: 64 nodes, 2 x 64 links, diameter 4 + 4.
  ArgNode args = test::args({{"builder", "torus"}});
  ArgNode dims = ArgNode::list("cluster.dims");
  dims.push(ArgNode::scalar("8", "cluster.dims[0]"));
  dims.push(ArgNode::scalar("8", "cluster.dims[1]"));
  args.set("dims", dims);
  const BuildResult r = build_topology(args);
  EXPECT_EQ(r.graph->num_links(), 128u);
  EXPECT_EQ(r.inventory.diameter_switch_hops, 8u);
  // Bisection: 2 x 8 links x 50 GB/s.
  EXPECT_DOUBLE_EQ(r.inventory.bisection.bytes_per_second(), 16 * 50e9);
}

TEST(ScaleUp, Nvl72AndHgx) {
  // GB200 NVL72: 18 trays x 4 GPUs on one logical NVLink switch standing for 18 chips.
  const BuildResult nvl = build({{"builder", "scale_up"}, {"gpu", "gb200"}, {"gpus", "72"}});
  ASSERT_TRUE(nvl.graph.has_value());
  EXPECT_EQ(nvl.graph->num_nodes(), 18u);
  EXPECT_EQ(nvl.graph->num_links(), 72u);
  EXPECT_EQ(test::switches_in(nvl.inventory, "scale_up"), 18u);
  // Non-blocking NVLink switch: 36 GPUs x 900 GB/s cross any balanced cut.
  EXPECT_DOUBLE_EQ(nvl.inventory.bisection.bytes_per_second(), 36 * 900e9);
  EXPECT_TRUE(nvl.graph->traits().nvls);
  const BuildResult hgx = build({{"builder", "scale_up"}, {"gpus", "8"}});
  EXPECT_EQ(test::switches_in(hgx.inventory, "scale_up"), 4u);
  EXPECT_THROW(build({{"builder", "scale_up"}, {"gpus", "16"}}), InputError);
  EXPECT_THROW(build({{"builder", "scale_up"}, {"gpus", "8"}, {"scale_up", "nvl72"}}),
               InputError);  // nvl72 needs Blackwell GPUs
}

}  // namespace
}  // namespace lockstep

namespace lockstep {
namespace {

TEST(ScaleUp, Nvl72RackPairOnALeafSpine) {
  // Two GB200 NVL72 racks: 36 compute trays x 4 GPUs = 144 GPUs in 2 NVLink domains of 72
  // (2 x 18 = 36 NVLink Switch chips), 144 NICs (one per GPU). 144 NICs / 32 per leaf = 5 leaves,
  // 5 x 32 uplinks need 160 / 64 -> 3 spines, and every leaf has equal links to every spine:
  // the smallest divisor of 32 from 3 up is 4 spines, 8 links from each leaf to each.
  const BuildResult r = test::build({{"builder", "leaf_spine"}, {"gpu", "gb200"}, {"nodes", "36"}});
  const Inventory& inv = r.inventory;
  EXPECT_EQ(inv.gpus, 144u);
  EXPECT_EQ(inv.nics, 144u);
  EXPECT_EQ(test::switches_in(inv, "scale_up"), 36u);
  EXPECT_EQ(test::switches_in(inv, "leaf"), 5u);
  EXPECT_EQ(test::switches_in(inv, "spine"), 4u);
  const Topology& t = *r.graph;
  EXPECT_EQ(t.traits().scale_up, "nvl72");
  EXPECT_EQ(t.traits().gpus_per_node, 4u);
  std::size_t domains = 0;
  for (const Device& d : t.devices()) {
    if (d.kind != DeviceKind::ScaleUpSwitch) continue;
    ++domains;
    EXPECT_EQ(d.node, kNone);  // a domain spanning 18 trays belongs to no single node
  }
  EXPECT_EQ(domains, 2u);
}

TEST(ScaleUp, NvlinkDomainOf576Gpus) {
  // 576 Blackwell GPUs in one NVLink Switch domain, 4 per tray: 144 trays. Two chip levels:
  // 576 x 18 = 10,368 GPU links / 36 down ports = 288 level-1 chips + 10,368 / 72 = 144 level-2.
  const BuildResult r = test::build({{"builder", "scale_up"},
                                     {"gpu", "b200"},
                                     {"scale_up", "nvlink_domain"},
                                     {"scale_up_gpus", "576"},
                                     {"gpus", "576"}});
  EXPECT_EQ(r.graph->num_nodes(), 144u);
  EXPECT_EQ(test::switches_in(r.inventory, "scale_up"), 432u);
  EXPECT_THROW(test::build({{"builder", "scale_up"},
                            {"gpu", "b200"},
                            {"scale_up", "nvlink_domain"},
                            {"scale_up_gpus", "577"},
                            {"gpus", "8"}}),
               InputError);  // beyond the 576-GPU NVLink Switch limit
}

TEST(Topology, SameArgumentsGiveTheSameGraph) {
  const test::Kv kv = {{"builder", "rail_optimized"}, {"nodes", "40"}, {"nodes_per_su", "8"}};
  const BuildResult a = test::build(kv);
  const BuildResult b = test::build(kv);
  ASSERT_EQ(a.graph->num_links(), b.graph->num_links());
  for (LinkId i = 0; i < a.graph->num_links(); ++i) {
    EXPECT_EQ(a.graph->link(i).a, b.graph->link(i).a);
    EXPECT_EQ(a.graph->link(i).b, b.graph->link(i).b);
    EXPECT_EQ(a.graph->link(i).latency, b.graph->link(i).latency);
  }
  EXPECT_EQ(a.inventory.cost_usd, b.inventory.cost_usd);
  // Symmetry: every switch port is accounted for, ports used = 2 x switch-to-switch links +
  // host links.
  std::uint64_t used = 0;
  for (const auto& tier : a.inventory.tiers) {
    if (tier.tier != "scale_up") used += tier.ports_used;
  }
  std::uint64_t expected = 0;
  for (const Link& l : a.graph->links()) {
    expected += (a.graph->device(l.a).kind == DeviceKind::Switch) +
                (a.graph->device(l.b).kind == DeviceKind::Switch);
  }
  EXPECT_EQ(used, expected);
}

}  // namespace
}  // namespace lockstep
