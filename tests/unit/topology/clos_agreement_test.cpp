// The Clos builders' two inventories of one design, the one counted from the built graph and the
// one tallied in closed form, held to each other line for line.
#include <gtest/gtest.h>

#include "clos_expect.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/topology/catalog.hpp"
#include "topology_test_util.hpp"

namespace lockstep {
namespace {

using test::build;
using test::kHost;
using test::switches_in;

// A counted graph and the closed-form tally of the same design must agree line for line.
void expect_same(const Inventory& a, const Inventory& b, bool latency) {
  EXPECT_EQ(a.gpus, b.gpus);
  EXPECT_EQ(a.nics, b.nics);
  EXPECT_EQ(a.cables, b.cables);
  EXPECT_EQ(a.transceivers, b.transceivers);
  EXPECT_EQ(a.feasible, b.feasible);
  EXPECT_NEAR(a.power_w, b.power_w, 1e-6 * a.power_w);
  EXPECT_NEAR(a.cost_usd, b.cost_usd, 1e-6 * a.cost_usd);
  EXPECT_EQ(a.diameter_switch_hops, b.diameter_switch_hops);
  if (latency) {
    EXPECT_EQ(a.max_one_way_latency, b.max_one_way_latency);
  }
  ASSERT_EQ(a.tiers.size(), b.tiers.size());
  for (std::size_t i = 0; i < a.tiers.size(); ++i) {
    EXPECT_EQ(a.tiers[i].tier, b.tiers[i].tier);
    EXPECT_EQ(a.tiers[i].switches, b.tiers[i].switches) << a.tiers[i].tier;
    EXPECT_EQ(a.tiers[i].ports_used, b.tiers[i].ports_used) << a.tiers[i].tier;
    EXPECT_EQ(a.tiers[i].ports_free, b.tiers[i].ports_free) << a.tiers[i].tier;
  }
  ASSERT_EQ(a.lines.size(), b.lines.size());
  for (std::size_t i = 0; i < a.lines.size(); ++i) {
    EXPECT_EQ(a.lines[i].item, b.lines[i].item);
    EXPECT_EQ(a.lines[i].count, b.lines[i].count) << a.lines[i].item;
  }
}

TEST(Clos, CountedAndAnalyticalInventoriesAgree) {
  using test::Kv;
  const std::vector<std::pair<Kv, bool>> designs = {
      {{{"builder", "fat_tree"}, kHost[0], kHost[1], {"k", "8"}, {"nodes", "100"}}, true},
      {{{"builder", "fat_tree"}, {"radix", "16"}, {"nodes", "40"}, {"oversubscription", "3"}},
       false},
      {{{"builder", "leaf_spine"},
        kHost[0],
        kHost[1],
        {"nodes", "70"},
        {"oversubscription", "3:1"}},
       true},
      {{{"builder", "leaf_spine"}, kHost[0], kHost[1], {"radix", "8"}, {"nodes", "50"}}, true},
      {{{"builder", "rail_optimized"}, {"nodes", "40"}}, false},
      {{{"builder", "rail_optimized"}, {"nodes", "40"}, {"nodes_per_su", "4"}, {"radix", "16"}},
       false},
      {{{"builder", "single_switch"}, {"nodes", "10"}}, true},
      {{{"builder", "leaf_spine"}, {"gpu", "gb200"}, {"nodes", "36"}}, false},
      {{{"builder", "leaf_spine"},
        kHost[0],
        kHost[1],
        {"switch", "qm9700"},
        {"nodes", "64"},
        {"dual_tor", "true"},
        {"optics", "per_port"}},
       true},
      {{{"builder", "leaf_spine"},
        kHost[0],
        kHost[1],
        {"switch", "qm9700"},
        {"nodes", "130"},
        {"dual_tor", "true"},
        {"optics", "per_module"}},
       true},
      {{{"builder", "leaf_spine"},
        kHost[0],
        kHost[1],
        {"nodes", "37"},
        {"host_link_m", "2"},
        {"dual_tor", "true"}},
       true},
      {{{"builder", "rail_optimized"},
        {"nodes", "7"},
        {"host_link_m", "1"},
        {"management_links", "3"}},
       false},
      {{{"builder", "rail_optimized"},
        {"nodes", "7"},
        {"host_link_m", "1"},
        {"nic_ports_per_module", "2"}},
       false},
      {{{"builder", "leaf_spine"},
        kHost[0],
        kHost[1],
        {"switch", "sn5600"},
        {"nic", "cx7_400gbe"},
        {"nodes", "75"},
        {"dual_tor", "true"}},
       true},
      {{{"builder", "fat_tree"}, {"switch", "q3400"}, {"nodes", "300"}, {"tiers", "3"}}, true},
      {{{"builder", "rail_optimized"},
        {"switch", "sn5600"},
        {"nic", "cx7_400gbe"},
        {"nodes", "40"},
        {"host_link_m", "2"}},
       false},
      {{{"builder", "leaf_spine"},
        {"radix", "8"},
        {"nodes", "5"},
        {"dual_tor", "true"},
        {"optics", "per_port"}},
       false},
      // A switch model per tier: 400G leaves under 800G spines (Q3400: a port a link; SN5600:
      // split 2 x 400G), 200G leaves under split SN5600 ports (4 x 200G, splitter fibres), and
      // fat trees with spines and cores of their own, copper and optical fabric links.
      {{{"builder", "leaf_spine"}, kHost[0], kHost[1], {"nodes", "700"}, {"spine_switch", "q3400"}},
       true},
      {{{"builder", "leaf_spine"},
        kHost[0],
        kHost[1],
        {"switch", "sn5600_400g"},
        {"radix", "40"},
        {"nic", "cx7_400gbe"},
        {"nodes", "250"},
        {"spine_switch", "sn5600"}},
       true},
      {{{"builder", "leaf_spine"},
        kHost[0],
        kHost[1],
        {"switch", "sn3700"},
        {"nodes", "300"},
        {"spine_switch", "sn5600"}},
       true},
      {{{"builder", "fat_tree"},
        kHost[0],
        kHost[1],
        {"k", "8"},
        {"nodes", "100"},
        {"core_switch", "qm9700"}},
       true},
      {{{"builder", "fat_tree"},
        kHost[0],
        kHost[1],
        {"switch", "sn3700"},
        {"radix", "8"},
        {"nodes", "90"},
        {"tiers", "3"},
        {"fabric_link_m", "2"},
        {"spine_switch", "sn5600"},
        {"core_switch", "tomahawk5"}},
       true},
      // Spine-core links at 800G (one a spine port) and at 400G on split 800G spine ports.
      {{{"builder", "rail_optimized"},
        {"sus", "2"},
        {"tiers", "3"},
        {"switch", "sn5600_400g"},
        {"radix", "64"},
        {"nic", "cx7_400gbe"},
        {"spine_switch", "sn5600"},
        {"core_switch", "tomahawk5"}},
       false},
      {{{"builder", "fat_tree"},
        kHost[0],
        kHost[1],
        {"switch", "sn5600_400g"},
        {"radix", "16"},
        {"nic", "cx7_400gbe"},
        {"nodes", "200"},
        {"spine_switch", "sn5600"},
        {"core_switch", "tomahawk5_400g"}},
       true},
  };
  for (const auto& [kv, latency] : designs) {
    const Inventory counted = build(kv, true).inventory;
    const Inventory tallied = build(kv, false).inventory;
    SCOPED_TRACE(counted.design);
    EXPECT_TRUE(counted.graph_built);
    EXPECT_FALSE(tallied.graph_built);
    expect_same(counted, tallied, latency);
  }
}

}  // namespace
}  // namespace lockstep
