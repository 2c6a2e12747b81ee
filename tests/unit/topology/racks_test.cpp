// Racks and power per rack (racks.cpp): counts by hand from the documents' figures.
#include "lockstep/topology/racks.hpp"

#include <gtest/gtest.h>

#include "lockstep/topology/builder.hpp"
#include "lockstep/topology/reference.hpp"

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

// The value printed after `label` on its line of a `--racks` table.
std::string value_in(const std::string& table, const std::string& label) {
  const std::size_t at = table.find("  " + label + " ");
  if (at == std::string::npos) return "";
  const std::size_t end = table.find('\n', at);
  const std::string rest = table.substr(at + 2 + label.size(), end - at - 2 - label.size());
  return rest.substr(rest.find_first_not_of(' '));
}

// Network racks, derived: the DGX SuperPOD H100 1-SU fabric's 8 leaves and 4 spines are
// QM9700s of 1U each (datasheet): 12U in one 42U rack, 12 x 747 W = 8.964 kW. With its 8 compute
// racks of 40.8 kW: 9 racks, 326.4 + 8.964 = 335.364 kW, 2 tiles each = 18 tiles.
TEST(Racks, NetworkRacksAndFloorOfOneH100Su) {
  const ReferenceDesign& ref = reference_design("dgx-superpod-h100-1su", "--reference");
  const Inventory inv = build_topology(reference_args(ref), {.want_graph = false}).inventory;
  const NetworkRacks n = network_racks(inv);
  EXPECT_EQ(n.switches, 12u);
  EXPECT_EQ(n.rack_units, 12u);
  EXPECT_EQ(n.racks, 1u);
  EXPECT_NEAR(n.kw, 8.964, 1e-9);
  EXPECT_TRUE(n.unstated.empty());
  const std::string table = format_network_racks(n, rack_plan(inv));
  EXPECT_EQ(value_in(table, "racks (compute + network)"), "9") << table;
  EXPECT_EQ(value_in(table, "kW (compute + network)"), "335.4") << table;
  EXPECT_EQ(value_in(table, "floor tiles (600 mm)"), "18") << table;
}

// 43 QM9700s (1U each) overflow one 42U rack: 2 racks. A switch without a stated height is named
// and left out, not guessed.
TEST(Racks, NetworkRacksCountRackUnitsAndNameUnstatedSwitches) {
  Inventory inv;
  inv.lines.push_back({"NVIDIA Quantum-2 QM9700 (64x400G NDR)", "switch", "leaf", 43, 747, 0});
  inv.lines.push_back({"Broadcom Tomahawk 5 switch (64x800GbE)", "switch", "spine", 2, 1200, 0});
  const NetworkRacks n = network_racks(inv);
  EXPECT_EQ(n.rack_units, 43u);
  EXPECT_EQ(n.racks, 2u);
  EXPECT_EQ(n.unstated, "Broadcom Tomahawk 5 switch (64x800GbE)");
  EXPECT_NE(format_network_racks(n, std::nullopt).find("totals need the compute racks"),
            std::string::npos);
}

}  // namespace
}  // namespace lockstep
