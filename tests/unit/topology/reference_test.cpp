// Reference architectures (topo --reference) and the rules they need: equal links from every
// leaf to every spine, management links, transceivers per twin-port module. Counts by hand in
// the comments; document numbers cited where they come from a document.
#include "lockstep/topology/reference.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "clos_expect.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/topology/catalog.hpp"
#include "topology_test_util.hpp"

namespace lockstep {
namespace {

using test::build;
using test::switches_in;

// The equal-links rule by hand, DGX H100 SUs of 32 nodes on 64-port QM9700 (8 rail leaves per
// SU, each with 32 uplinks): spines = the smallest divisor of 32 holding leaves x 32 uplinks.
//   1 SU:  8 leaves x 32 =   256 ports -> >= 4 spines; 4 divides 32: 4 (8 links leaf-spine)
//   2 SUs: 16 x 32       =   512       -> >= 8; 8 divides 32:       8 (4 links)
//   3 SUs: 24 x 32       =   768       -> >= 12; 12 does not divide 32, 16 does: 16 (2 links)
//   4 SUs: 32 x 32       = 1,024       -> >= 16:                    16 (2 links)
// (NVIDIA DGX SuperPOD H100 RA, compute fabric component counts: 4 / 8 / 16 / 16 spines.)
TEST(EqualLinks, SpinesForOneToFourSusByHand) {
  const std::map<int, std::uint64_t> spines = {{1, 4}, {2, 8}, {3, 16}, {4, 16}};
  for (const auto& [sus, expect] : spines) {
    const BuildResult r = build({{"builder", "rail_optimized"}, {"sus", std::to_string(sus)}});
    EXPECT_EQ(switches_in(r.inventory, "leaf"), 8u * sus) << sus;
    EXPECT_EQ(switches_in(r.inventory, "spine"), expect) << sus;
    // Every leaf has the same number of links to every spine: 32 / spines.
    const Topology& t = *r.graph;
    std::map<std::pair<DeviceId, DeviceId>, std::uint32_t> links;
    for (const Link& l : t.links()) {
      const Device& a = t.device(l.a);
      const Device& b = t.device(l.b);
      if (a.kind == DeviceKind::Switch && b.kind == DeviceKind::Switch) ++links[{l.a, l.b}];
    }
    EXPECT_EQ(links.size(), 8u * sus * expect) << sus;
    for (const auto& [pair, n] : links) EXPECT_EQ(n, 32u / expect) << sus;
    // 3 SUs: 16 spines use 24 leaves x 2 links = 48 of their 64 ports, 16 free each.
    if (sus == 3) {
      EXPECT_EQ(test::tier_of(r.inventory, "spine")->ports_free, 16u * 16u);
    }
  }
}

// One SU of the DGX SuperPOD H100 with transceivers per module, by hand. 31 DGX H100 (one
// position for the UFM), 4 UFM links into the free port of rails 0-3. Modules:
//   DGX side: 31 nodes x 4 twin-port OSFP cages (8 NDR ports / 2)        = 124 twin (2xSR4),
//             the flat-top form (NVIDIA LinkX MMA4Z00-NS-FLT), a line of its own
//   UFM side: 4 single-port modules                                       =   4 OSFP 400G SR4
//   leaf down: 4 leaves of 32 ports + 4 of 31 -> 16 cages each            = 128 twin
//   leaf up: 8 leaves x 32 uplinks / 2                                    = 128 twin
//   spine down: 4 spines x 64 ports / 2                                   = 128 twin
// 124 + 384 twin-port 800G 2xSR4 modules + 4 single 400G = 512 transceivers (per link end: 2 x 508
// links = 1,016). Cables: 248 + 4 = 252 to the leaves, 256 leaf-spine = 508 fibres.
TEST(TwinPort, OneH100SuByHand) {
  const ReferenceDesign& ref = reference_design("dgx-superpod-h100-1su", "--reference");
  for (const bool graph : {true, false}) {
    const Inventory inv = build_topology(reference_args(ref), {.want_graph = graph}).inventory;
    EXPECT_EQ(inv.nodes, 31u);
    EXPECT_EQ(inv.cables, 508u);
    EXPECT_EQ(inv.transceivers, 512u);
    std::map<std::string, std::uint64_t> optics;
    for (const InventoryLine& l : inv.lines) {
      if (l.category == "transceiver") optics[l.item] = l.count;
    }
    EXPECT_EQ(optics["OSFP 800G 2xSR4 transceiver, flat top (NIC side)"], 124u);
    EXPECT_EQ(optics["OSFP 800G 2xSR4 transceiver"], 384u);
    EXPECT_EQ(optics["OSFP 400G SR4 transceiver"], 4u);
    EXPECT_EQ(optics.size(), 3u);
    // Leaf ports: 4 x (32 + 32) + 4 x (31 + 32) = 508 of 512 used.
    EXPECT_EQ(test::tier_of(inv, "leaf")->ports_used, 508u);
    EXPECT_EQ(test::tier_of(inv, "leaf")->ports_free, 4u);
    EXPECT_TRUE(inv.feasible);
  }
  // The same fabric counted per link end: every optical link takes two modules.
  test::Kv per_port = ref.args;
  for (auto& [k, v] : per_port) {
    if (k == "optics") v = "per_port";
  }
  EXPECT_EQ(build(per_port).inventory.transceivers, 2u * 508u);
}

// tiers: 2 beyond one spine tier: rail-planed. 16 SUs of DGX H100 = 128 rail leaves, more than
// a 64-port spine reaches, so each rail is its own plane of 16 leaves (one per SU): 16 x 32
// uplinks = 512 ports -> 8 spines per plane (8 divides 32: 4 links from each leaf to each),
// 8 planes x 8 = 64 spines, each full (16 x 4 = 64 ports); 4,096 + 4,096 cables, no core.
// (tiers: auto builds 3 tiers: 4 pods x 32 spines = 128 spines, 32 planes x 2 = 64 cores.)
TEST(RailPlanes, TwoTiersOfSixteenSusByHand) {
  const BuildResult r = build({{"builder", "rail_optimized"}, {"sus", "16"}, {"tiers", "2"}}, true);
  const Inventory& inv = r.inventory;
  EXPECT_TRUE(inv.feasible);
  EXPECT_EQ(switches_in(inv, "leaf"), 128u);
  EXPECT_EQ(switches_in(inv, "spine"), 64u);
  EXPECT_EQ(switches_in(inv, "core"), 0u);
  EXPECT_EQ(test::tier_of(inv, "spine")->ports_free, 0u);
  EXPECT_EQ(inv.cables, 8'192u);
  EXPECT_NE(inv.design.find("rail-planed: 8 planes"), std::string::npos) << inv.design;
  // Every leaf reaches exactly 8 spines, 4 links each, and only spines of its own rail.
  const Topology& t = *r.graph;
  std::map<DeviceId, std::map<DeviceId, std::uint32_t>> up;
  std::map<DeviceId, std::uint32_t> rail_of_leaf;
  for (const Link& l : t.links()) {
    const Device& a = t.device(l.a);
    const Device& b = t.device(l.b);
    if (a.kind == DeviceKind::Nic && b.kind == DeviceKind::Switch)
      rail_of_leaf[l.b] = a.local_index;
    if (a.kind == DeviceKind::Switch && b.kind == DeviceKind::Switch) ++up[l.a][l.b];
  }
  std::map<DeviceId, std::set<std::uint32_t>> rails_of_spine;
  ASSERT_EQ(up.size(), 128u);
  for (const auto& [leaf, spines] : up) {
    EXPECT_EQ(spines.size(), 8u);
    for (const auto& [spine, n] : spines) {
      EXPECT_EQ(n, 4u);
      rails_of_spine[spine].insert(rail_of_leaf.at(leaf));
    }
  }
  for (const auto& [spine, rails] : rails_of_spine) EXPECT_EQ(rails.size(), 1u);
  // The closed form counts the same.
  const Inventory closed =
      build({{"builder", "rail_optimized"}, {"sus", "16"}, {"tiers", "2"}}, false).inventory;
  EXPECT_EQ(switches_in(closed, "spine"), 64u);
  EXPECT_EQ(closed.cables, 8'192u);
  // 65 SUs exceed 64-port spines even rail-planed: infeasible with the reason.
  const Inventory big =
      build({{"builder", "rail_optimized"}, {"sus", "65"}, {"tiers", "2"}}, false).inventory;
  EXPECT_FALSE(big.feasible);
  EXPECT_NE(big.problems.front().find("65 SUs do not fit under rail-planed 64-port spines"),
            std::string::npos);
}

// Rail leaves of 400GbE (the 128-port SN5600 configuration held to 64 ports: 32 servers down,
// 32 up) and 400GbE NICs, `sus` SUs, under the tier switches `more` adds.
test::Kv rail_400gbe(const char* sus, const test::Kv& more) {
  test::Kv kv = {{"builder", "rail_optimized"},
                 {"sus", sus},
                 {"switch", "sn5600_400g"},
                 {"radix", "64"},
                 {"nic", "cx7_400gbe"}};
  kv.insert(kv.end(), more.begin(), more.end());
  return kv;
}

// A spine model of its own: 16 SUs of 400GbE rail leaves (128-port SN5600 held to 64 ports)
// under 128-port SN5600 spines: 128 leaves fit one spine tier; 128 x 32 uplinks / 128 ports
// = 32 spines (32 divides 32: one link from each leaf to each), all 128 ports used.
TEST(SpineSwitch, OneTierOf128PortSpinesByHand) {
  const test::Kv kv = rail_400gbe("16", {{"spine_switch", "sn5600_400g"}});
  const Inventory inv = build(kv, false).inventory;
  EXPECT_TRUE(inv.feasible);
  EXPECT_EQ(switches_in(inv, "leaf"), 128u);
  EXPECT_EQ(switches_in(inv, "spine"), 32u);
  EXPECT_EQ(switches_in(inv, "core"), 0u);
  EXPECT_EQ(test::tier_of(inv, "spine")->ports_used, 4'096u);
  EXPECT_EQ(test::tier_of(inv, "spine")->ports_free, 0u);
  EXPECT_EQ(test::tier_of(inv, "leaf")->ports_free, 0u);
  // The 800G SN5600 splits each port 2 x 400G (switch_breakout): the same 32 spines, each
  // 128 links on 64 ports, so 2,048 ports used and none free.
  test::Kv split = kv;
  split.back().second = "sn5600";
  const Inventory halves = build(split, false).inventory;
  EXPECT_TRUE(halves.feasible);
  EXPECT_EQ(switches_in(halves, "spine"), 32u);
  EXPECT_EQ(test::tier_of(halves, "spine")->ports_used, 2'048u);
  EXPECT_EQ(test::tier_of(halves, "spine")->ports_free, 0u);
  EXPECT_NE(halves.design.find("spines sn5600 radix 64 (2 x 400G a port)"), std::string::npos)
      << halves.design;
  // A spine of another fabric, or with ports slower than the leaves' uplinks, is refused,
  // naming the key.
  auto refused = [](const test::Kv& bad, const char* why) {
    try {
      build(bad, false);
      ADD_FAILURE() << "no error: " << why;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("spine_switch"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  };
  test::Kv bad = kv;
  bad.back().second = "qm9700";
  refused(bad, "infiniband switch");
  bad = {{"builder", "rail_optimized"}, {"sus", "2"},   {"switch", "sn5600"},
         {"nic", "cx8_800gbe"},         {"tiers", "2"}, {"spine_switch", "sn5600_400g"}};
  refused(bad, "slower than the leaves' uplinks at 800 Gb/s");
}

// A core model of its own: 32 SUs of 400GbE rail leaves (64 ports), 128-port SN5600 spines and
// 128-port Tomahawk 5 cores, 3 tiers. Spines split 64 down / 64 up: pods of 64 / 8 rails = 8
// SUs, 4 pods, 4 x 32 leaf uplinks = 128 spines (64 + 64 ports each, full); each of the 32 core
// planes joins 4 pods x 64 uplinks = 256 ports on ceil(256 / 128) = 2 cores: 64 Tomahawk 5,
// full. Cables: 8,192 NIC-leaf + 256 x 32 leaf-spine + 128 x 64 spine-core = 24,576.
TEST(SpineSwitch, CoreSwitchOfItsOwnByHand) {
  const test::Kv kv = rail_400gbe(
      "32", {{"tiers", "3"}, {"spine_switch", "sn5600_400g"}, {"core_switch", "tomahawk5_400g"}});
  const Inventory inv = build(kv, false).inventory;
  test::expect_clos(inv, {.feasible = true,
                          .leaves = 256,
                          .spines = 128,
                          .cores = 64,
                          .spine_ports_free = 0,
                          .core_ports_free = 0,
                          .cables = 24'576});
  std::map<std::string, std::uint64_t> core_lines;
  for (const InventoryLine& l : inv.lines) {
    if (l.tier == "core") core_lines[l.item] = l.count;
  }
  EXPECT_EQ(core_lines,
            (std::map<std::string, std::uint64_t>{{switch_spec("tomahawk5_400g").display, 64}}));
  EXPECT_NE(inv.design.find("cores tomahawk5_400g radix 128"), std::string::npos) << inv.design;
}

// Spine-core links at the rate both switches' ports run: 400GbE rail leaves (32 down / 32 up)
// under 800G SN5600 spines and 800G Tomahawk 5 cores. A spine port takes 2 x 400G leaf links
// (switch_breakout) but one 800G core link, so at 1:1 a spine has 32 ports down (64 leaf links,
// 25.6 Tb/s) and 32 up (32 x 800G): pods of 64 / 8 rails = 8 SUs. 32 SUs: 256 leaves, 4 pods x
// 32 leaf uplinks = 128 spines (64 ports used, full); each of the 32 core planes joins 4 pods x
// 32 links = 128 on ceil(128 / 64) = 2 cores: 64 Tomahawk 5, full. Cables: 8,192 NIC-leaf +
// 256 x 32 leaf-spine + 128 x 32 spine-core = 20,480. Modules: 8,192 NIC 400G SR4; leaves 256 x
// (16 + 16) twin cages = 8,192 and spines 128 x 32 down cages (2 x 400G each) = 4,096 800G
// 2xSR4 (10 and 30 m: 12,288); spines 128 x 32 up and cores 64 x 64 = 8,192 800G 2xDR4 (100 m);
// 28,672 in all. At the leaves' 400G (before) the same spines took 64 core links each, one to an
// 800G core port (Tomahawk 5 splits are not in the catalog): 128 cores, 8,192 spine-core cables.
// Two SUs forced to 3 tiers (two pods of one SU): a spine's 8 leaf links (4 ports) take
// ceil(8 x 400 / 800) = 4 core links (4 ports): 64 spines of 8 ports used (3,584 free); 32
// planes of 2 pods x 4 links on one core each: 32 cores of 8 used (1,792 free). Cables 512 + 512
// + 64 x 4 = 1,280; modules 512 NIC + 16 x 32 leaf + 64 x (4 + 4) spine + 32 x 8 core = 1,792,
// of them 512 800G 2xDR4 (spine up and core). Counted graph and closed form alike.
TEST(SpineSwitch, CoreLinksAtTheSpinesRateByHand) {
  const test::Kv tiers = {{"spine_switch", "sn5600"}, {"core_switch", "tomahawk5"}};
  const Inventory inv = build(rail_400gbe("32", tiers), false).inventory;
  test::expect_clos(inv, {.feasible = true,
                          .leaves = 256,
                          .spines = 128,
                          .cores = 64,
                          .spine_ports_used = 128 * 64,
                          .spine_ports_free = 0,
                          .core_ports_free = 0,
                          .cables = 20'480,
                          .transceivers = 28'672,
                          .lines = {{"OSFP 400G SR4 transceiver, flat top (NIC side)", 8'192},
                                    {"OSFP 800G 2xSR4 transceiver", 12'288},
                                    {"OSFP 800G 2xDR4 transceiver", 8'192}},
                          .design_has = "spine-core links at 800G"});
  EXPECT_DOUBLE_EQ(test::tier_of(inv, "spine")->oversubscription, 1.0);
  test::Kv two = rail_400gbe("2", tiers);
  two.emplace_back("tiers", "3");
  test::expect_clos_both_ways(two, {.feasible = true,
                                    .leaves = 16,
                                    .spines = 64,
                                    .cores = 32,
                                    .spine_ports_used = 512,
                                    .spine_ports_free = 3'584,
                                    .core_ports_used = 256,
                                    .core_ports_free = 1'792,
                                    .cables = 1'280,
                                    .transceivers = 1'792,
                                    .lines = {{"OSFP 800G 2xDR4 transceiver", 512}}});
}

// Every reference reproduces its document's numbers exactly (the numbers and their tables are
// cited in src/topology/reference.cpp next to each design).
TEST(Reference, EachReproducesItsDocument) {
  ASSERT_GE(reference_designs().size(), 4u);
  for (const ReferenceDesign& ref : reference_designs()) {
    const Inventory inv = build_topology(reference_args(ref), {.want_graph = false}).inventory;
    EXPECT_TRUE(inv.feasible) << ref.name;
    std::size_t checked = 0;
    for (const ReferenceFigure& f : ref.figures) {
      if (!f.document) continue;
      ++checked;
      EXPECT_EQ(reference_value(inv, f.what), *f.document) << ref.name << ": " << f.item;
    }
    EXPECT_GE(checked, 4u) << ref.name;
  }
}

// The 4-SU SuperPOD from the document's table: 127 nodes, 32 leaves, 16 spines, 1,020 + 1,024
// cables.
TEST(Reference, FourSuH100Numbers) {
  const ReferenceDesign& ref = reference_design("dgx-superpod-h100-4su", "--reference");
  const Inventory inv = build_topology(reference_args(ref)).inventory;
  EXPECT_EQ(inv.nodes, 127u);
  EXPECT_EQ(inv.gpus, 1'016u);
  EXPECT_EQ(switches_in(inv, "leaf"), 32u);
  EXPECT_EQ(switches_in(inv, "spine"), 16u);
  EXPECT_EQ(reference_value(inv, ReferenceQuantity::NodeLeafCables), 1'020u);
  EXPECT_EQ(reference_value(inv, ReferenceQuantity::LeafSpineCables), 1'024u);
  EXPECT_EQ(inv.cables, 2'044u);
}

TEST(Reference, UnknownNameListsTheKnownOnes) {
  try {
    reference_design("dgx-superpod-h100-9su", "--reference");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "--reference");
    EXPECT_NE(std::string(e.what()).find("dgx-superpod-h100-4su"), std::string::npos);
  }
}

}  // namespace
}  // namespace lockstep
