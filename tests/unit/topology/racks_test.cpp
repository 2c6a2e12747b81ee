// Racks and power per rack (racks.cpp): counts by hand from the documents' figures.
#include "lockstep/topology/racks.hpp"

#include <gtest/gtest.h>

#include "lockstep/topology/builder.hpp"

namespace lockstep {
namespace {

Inventory preset(const char* system, std::uint32_t nodes) {
  ArgNode m = ArgNode::map("cluster");
  m.set("builder", ArgNode::scalar("preset", "cluster.builder"));
  m.set("system", ArgNode::scalar(system, "cluster.system"));
  m.set("nodes", ArgNode::scalar(std::to_string(nodes), "cluster.nodes"));
  return build_topology(m, BuildOptions{.want_graph = false}).inventory;
}

// GB200 NVL72: 18 trays per rack, so 36 trays are 2 racks at 120-132 kW each (240-264 kW),
// liquid; 32 trays (two racks of 16) still 2 racks; 37 trays 3.
TEST(Racks, Nvl72TraysFillRacksOfEighteen) {
  const std::optional<RackPlan> p = rack_plan(preset("gb200-nvl72", 36));
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->racks, 2u);
  EXPECT_EQ(p->nodes_per_rack, 18u);
  EXPECT_DOUBLE_EQ(p->kw_per_rack_low, 120.0);
  EXPECT_DOUBLE_EQ(p->kw_per_rack_high, 132.0);
  EXPECT_EQ(p->cooling, "liquid");
  EXPECT_EQ(rack_plan(preset("gb200-nvl72", 32))->racks, 2u);
  EXPECT_EQ(rack_plan(preset("gb200-nvl72", 37))->racks, 3u);
}

// DGX H100: 4 systems per rack, 10.2 kW each: 31 systems (a SuperPOD SU less the UFM position)
// in ceil(31 / 4) = 8 racks of 40.8 kW, air-cooled.
TEST(Racks, DgxH100FourPerRack) {
  const std::optional<RackPlan> p = rack_plan(preset("hgx-h100", 31));
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->racks, 8u);
  EXPECT_DOUBLE_EQ(p->kw_per_rack_low, 4 * 10.2);
  EXPECT_EQ(p->cooling, "air");
  const std::string table = format_rack_plan(p);
  EXPECT_NE(table.find("326.4"), std::string::npos) << table;  // 8 x 40.8
}

// A system without stated rack figures gets none, not a guess.
TEST(Racks, UnstatedSystemsHaveNoPlan) {
  EXPECT_FALSE(rack_plan(preset("mi300x", 2)).has_value());
  EXPECT_NE(format_rack_plan(std::nullopt).find("no stated rack figures"), std::string::npos);
}

}  // namespace
}  // namespace lockstep
