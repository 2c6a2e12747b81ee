// Links named by what they join (DeviceNames::link_name), as telemetry and the report print them.
#include <gtest/gtest.h>

#include "lockstep/topology/device_names.hpp"
#include "topology_test_util.hpp"

namespace lockstep {
namespace {

// One SU of rail_optimized: NIC i of every node goes to rail leaf i; leaves go to 4 spines.
TEST(LinkName, RailFabricLinksNameNodeGpuRailAndTier) {
  const BuildResult r = test::build({{"builder", "rail_optimized"}, {"sus", "1"}});
  const Topology& t = *r.graph;
  const DeviceNames names(t);
  bool nic_to_leaf = false, leaf_to_spine = false, gpu_to_nic = false;
  for (DirLinkId l = 0; l < t.num_directed_links(); ++l) {
    const Device& a = t.device(t.source(l));
    const Device& b = t.device(t.target(l));
    const std::string name = names.link_name(t, l);
    if (a.kind == DeviceKind::Nic && b.kind == DeviceKind::Switch && a.node == 12 &&
        a.local_index == 3) {
      // Rail 3's leaf is the fourth leaf in id order.
      EXPECT_EQ(name, "node 12 nic 3 -> leaf " + names.name(t.target(l)).substr(4) + " (rail 3)");
      nic_to_leaf = true;
    }
    if (a.kind == DeviceKind::Switch && a.tier == 0 && b.kind == DeviceKind::Switch) {
      EXPECT_EQ(name.rfind("leaf ", 0), 0u) << name;
      EXPECT_NE(name.find(" (rail "), std::string::npos) << name;
      EXPECT_NE(name.find("-> spine "), std::string::npos) << name;
      leaf_to_spine = true;
    }
    if (a.kind == DeviceKind::Gpu && b.kind == DeviceKind::Nic && a.node == 0 &&
        a.local_index == 5 && b.local_index == 5) {
      EXPECT_EQ(name, "node 0 gpu 5 -> node 0 nic 5");
      gpu_to_nic = true;
    }
  }
  EXPECT_TRUE(nic_to_leaf);
  EXPECT_TRUE(leaf_to_spine);
  EXPECT_TRUE(gpu_to_nic);
}

// A leaf of a plain leaf-spine takes every NIC of its servers: no rail in its name.
TEST(LinkName, MixedRailLeafHasNoRail) {
  const BuildResult r = test::build({{"builder", "fat_tree"}, {"gpus", "64"}});
  const Topology& t = *r.graph;
  const DeviceNames names(t);
  for (DeviceId d = 0; d < t.num_devices(); ++d) {
    if (t.device(d).kind != DeviceKind::Switch || t.device(d).tier != 0) continue;
    EXPECT_EQ(names.describe(t, d).find("rail"), std::string::npos) << names.describe(t, d);
  }
}

}  // namespace
}  // namespace lockstep
