// leaf_spine (2-tier Clos): capacity, oversubscription, dual-ToR pairs, split ports and
// splitter cables, twin-port modules, a switch model for the spines; counts derived by hand in
// the comments.
#include <gtest/gtest.h>

#include <algorithm>

#include "clos_expect.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/topology/catalog.hpp"
#include "topology_test_util.hpp"

namespace lockstep {
namespace {

using test::build;
using test::kHost;
using test::switches_in;

// The count of the bill of materials' line `item` (0 without one).
constexpr auto* line = &test::line_count;

TEST(LeafSpine, TwoTierOf64PortSwitchesHoldsAtMost2048Hosts) {
  // Non-blocking 2-tier with radix 64: 64 leaves x 32 hosts = 2,048; spines = 64 x 32 / 64 = 32.
  auto tier2 = [](const char* nodes) {
    return build(test::one_gpu_hosts("leaf_spine", {{"nodes", nodes}}), false).inventory;
  };
  const Inventory full = tier2("2048");
  EXPECT_TRUE(full.feasible);
  EXPECT_EQ(switches_in(full, "leaf"), 64u);
  EXPECT_EQ(switches_in(full, "spine"), 32u);
  EXPECT_EQ(test::tier_of(full, "spine")->ports_free, 0u);
  const Inventory over = tier2("2049");
  EXPECT_FALSE(over.feasible);
  EXPECT_NE(over.problems.front().find("at most 2048 hosts"), std::string::npos);
}

TEST(LeafSpine, TwoToOneOversubscriptionHalvesBisection) {
  // 168 hosts. 1:1: 32 down / 32 up, ceil(168/32) = 6 leaves, bisection
  // min(84 hosts x 50 GB/s, 6 x 32 uplinks x 50 GB/s / 2) = 4,200 GB/s.
  // 2:1: 42 down / 21 up, 4 leaves, min(4,200, 4 x 21 x 50 / 2 = 2,100) GB/s: half.
  auto ls = [](const char* ratio) {
    return build(test::one_gpu_hosts("leaf_spine", {{"nodes", "168"}, {"oversubscription", ratio}}))
        .inventory;
  };
  const Inventory one = ls("1");
  const Inventory two = ls("2:1");
  EXPECT_DOUBLE_EQ(one.bisection.bytes_per_second(), 4'200e9);
  EXPECT_DOUBLE_EQ(two.bisection.bytes_per_second(), 2'100e9);
  EXPECT_DOUBLE_EQ(test::tier_of(two, "leaf")->oversubscription, 2.0);
  EXPECT_DOUBLE_EQ(test::tier_of(one, "leaf")->oversubscription, 1.0);
}

// Dual-ToR (Alibaba HPN, SIGCOMM 2024): every 400G NIC's two 200G ports to a pair of leaves,
// leaf 2k in plane 0 and 2k + 1 in plane 1, each plane with its own spines.
// 64 NICs on QM9700 (32 down / 32 up): 2 pairs = 4 leaves; each plane 2 leaves x 32 uplinks on
// one 64-port spine (equal links: 32 from each leaf), so 2 spines, full. Cables: 128 NIC ports
// + 4 x 32 uplinks = 256. Modules (QM9700 twin-port cages, one per NIC port): 128 at the NICs,
// 4 x 16 down and 4 x 16 up at the leaves, 2 x 32 at the spines = 320. Bisection: half the
// 128 host ports at 25 GB/s = 1,600 GB/s (the leaves' 4 x 32 x 50 / 2 = 3,200 is more).
// 4 NICs: one leaf per plane, which joins its hosts without a spine: 2 leaves, 8 cables, 8 NIC
// modules + 2 x 2 leaf modules = 12.
// One-NIC nodes on QM9700 leaves (64 x 400G; datasheet: "or 128 x 200G" by splitting each port
// 2 x 200G), every NIC's two 200G ports to a leaf pair. A 1:1 leaf splits its 32 down ports
// into 64 x 200G NIC ports (12.8 Tb/s) under 32 x 400G uplinks (12.8 Tb/s): 1 down:up.
TEST(LeafSpine, DualTorPairsCountedByHand) {
  auto dual = [](const char* nodes, const char* optics) {
    return build(test::one_gpu_hosts("leaf_spine", {{"switch", "qm9700"},
                                                    {"nodes", nodes},
                                                    {"dual_tor", "true"},
                                                    {"optics", optics}}),
                 false)
        .inventory;
  };
  // 64 NICs: 128 ports, 64 per plane, one leaf per plane (its 32 down ports split), no spines.
  // Leaf ports used 2 x 64 / 2 = 64 of 128; 64 cables (a 1:2 splitter fibre per split port,
  // NVIDIA LinkX MFP7E20); modules: 128 NIC ports + a leaf's 64 ends at 4 to a twin-port cage
  // (2 ports x 2 ways) = 16 a leaf: 160.
  const Inventory big = dual("64", "per_module");
  test::expect_clos(
      big, {.feasible = true,
            .leaves = 2,
            .spines = 0,
            .leaf_ports_free = 64,
            .cables = 64,
            .transceivers = 160,
            .lines = {{"MPO 1:2 splitter fibre (estimate)", 64}, {"MPO fibre patch cord", 0}}});
  EXPECT_EQ(test::tier_of(big, "leaf")->ports_used, 64u);
  // 128 ports x 25 GB/s / 2.
  EXPECT_DOUBLE_EQ(big.bisection.bytes_per_second(), 1'600e9);
  // One transceiver per link end: 2 x 128.
  EXPECT_EQ(dual("64", "per_port").transceivers, 256u);
  // 128 NICs: 128 ports a plane, 2 leaves each (4), and one 64-port spine a plane (2 leaves x
  // 32 uplinks), 64 x 200G down over 32 x 400G up: 1.0 (0.5 with a 400G port per 200G one).
  // Leaf ports 4 x (32 + 32) = 256, spine 2 x 64, none free; cables: 4 x 32 splitters + 128
  // leaf-spine = 256; modules
  // 256 NIC + 4 x 64 / 4 leaf down + 4 x 32 / 2 leaf up + 2 x 64 / 2 spine = 448.
  const Inventory two_leaves = dual("128", "per_module");
  test::expect_clos(two_leaves, {.feasible = true,
                                 .leaves = 4,
                                 .spines = 2,
                                 .leaf_ports_free = 0,
                                 .spine_ports_free = 0,
                                 .cables = 256,
                                 .transceivers = 448,
                                 .lines = {{"MPO fibre patch cord", 128}}});
  EXPECT_EQ(test::tier_of(two_leaves, "leaf")->ports_used, 256u);
  EXPECT_DOUBLE_EQ(test::tier_of(two_leaves, "leaf")->oversubscription, 1.0);
  // 4 NICs: 2 leaves of 4 ends on 2 ports (2 splitters), one cage each: 8 + 2 modules.
  const Inventory small = dual("4", "per_module");
  EXPECT_EQ(switches_in(small, "leaf"), 2u);
  EXPECT_EQ(switches_in(small, "spine"), 0u);
  EXPECT_EQ(test::tier_of(small, "leaf")->ports_used, 4u);
  EXPECT_EQ(small.cables, 4u);
  EXPECT_EQ(small.transceivers, 10u);
}

// Copper host links (2 m, in the rack) into a QM9700's twin-port cages: the cage's OSFP takes
// one passive splitter DAC to single-port NICs, 1:2 to 400G (NVIDIA LinkX MCP7Y00) or 1:4 to
// 200G (MCP7Y10), not a straight DAC per link.
TEST(LeafSpine, CopperHostLinksTakeOneSplitterDacPerCageByHand) {
  auto copper = [](const char* nodes, const char* optics, bool dual_tor, bool graph) {
    test::Kv kv = {{"builder", "leaf_spine"}, kHost[0],         kHost[1],
                   {"switch", "qm9700"},      {"nodes", nodes}, {"host_link_m", "2"},
                   {"optics", optics}};
    if (dual_tor) kv.emplace_back("dual_tor", "true");
    return build(kv, graph).inventory;
  };
  const std::string two = "OSFP 800G to 2x400G passive copper splitter DAC (estimate)";
  const std::string four = "OSFP 800G to 4x200G passive copper splitter DAC (estimate)";
  const std::string straight = "OSFP 800G passive copper DAC";
  for (const bool graph : {true, false}) {
    SCOPED_TRACE(graph);
    // 64 NICs: 2 leaves of 32 down / 32 up, one spine. 64 host links on 16 down cages a leaf:
    // 32 1:2 DACs (64 straight before); 64 leaf-spine fibres at 30 m: 96 cables (128).
    // Modules: the copper ends take none; 2 x 16 leaf up + 32 spine = 64. Network cost of the
    // host cables: 32 x $400 = $12,800 (64 x $300 = $19,200 before).
    const Inventory inv = copper("64", "per_module", false, graph);
    EXPECT_EQ(line(inv, two), 32u);
    EXPECT_EQ(line(inv, straight), 0u);
    EXPECT_EQ(line(inv, "MPO fibre patch cord"), 64u);
    EXPECT_EQ(inv.cables, 96u);
    EXPECT_EQ(inv.transceivers, 64u);
    // One transceiver (and cable) per link end: no cages, a straight DAC per link.
    const Inventory ports = copper("64", "per_port", false, graph);
    EXPECT_EQ(line(ports, straight), 64u);
    EXPECT_EQ(line(ports, two), 0u);
    EXPECT_EQ(ports.cables, 128u);
    // Per port: 64 straight DACs at $300 and 128 OSFP 400G SR4 at $700; per module: 32 1:2
    // DACs at $400 and 64 OSFP 800G 2xSR4 at $1,100.
    EXPECT_DOUBLE_EQ(network_cost_usd(ports) - network_cost_usd(inv),
                     (64 * 300.0 + 128 * 700.0) - (32 * 400.0 + 64 * 1'100.0));
    // 5 NICs on one leaf, no spine: 5 ports on ceil(5 / 2) = 3 cages, 3 DACs (one leg unused).
    const Inventory five = copper("5", "per_module", false, graph);
    EXPECT_EQ(line(five, two), 3u);
    EXPECT_EQ(five.cables, 3u);
    EXPECT_EQ(five.transceivers, 0u);
    // Dual-ToR, 64 NICs: 128 200G ports (3 m copper at 200G), one leaf a plane, its 64 ends
    // 4 to a cage (2 ports split 2 x 200G): 16 cages a leaf, 32 1:4 DACs (128 straight before),
    // no splitter fibre, no module.
    const Inventory dual = copper("64", "per_module", true, graph);
    EXPECT_EQ(line(dual, four), 32u);
    EXPECT_EQ(line(dual, "QSFP56 200G passive copper DAC"), 0u);
    EXPECT_EQ(line(dual, "MPO 1:2 splitter fibre (estimate)"), 0u);
    EXPECT_EQ(dual.cables, 32u);
    EXPECT_EQ(dual.transceivers, 0u);
  }
}

// Spectrum-4 SN5600 (64 x 800GbE OSFP; datasheet: "128 x 400GbE or 256 x 200GbE" by splitting
// each port 2 x 400G or 4 x 200G): 400G NICs take half a port and 200G NIC ports a quarter, and
// the split port's module is one 800G 2xSR4 (two MPO-12 of 400G each).
TEST(LeafSpine, Sn5600PortsSplitForFourAndTwoHundredGigabitEndsByHand) {
  auto sn5600 = [](const char* nodes, bool dual_tor, bool graph) {
    test::Kv kv = {{"builder", "leaf_spine"}, kHost[0],        kHost[1], {"switch", "sn5600"},
                   {"nic", "cx7_400gbe"},     {"nodes", nodes}};
    if (dual_tor) kv.emplace_back("dual_tor", "true");
    return build(kv, graph).inventory;
  };
  for (const bool graph : {true, false}) {
    SCOPED_TRACE(graph);
    // 64 x 400G NICs: 2 leaves of 32 down / 32 up, 32 x 800G uplinks each on one spine. A
    // leaf's 32 NICs on 16 ports: 48 of 64 used a leaf (64 before), the spine 64. Cables: 64
    // host + 64 leaf-spine patch cords, no splitter (a 400G end has its MPO). Modules (per
    // module by default now that ports split): 64 NIC SR4 + 2 x 16 leaf 2xSR4 down + 2 x 32
    // up + 64 spine = 224 (2 x 128 = 256 per link end before).
    const Inventory inv = sn5600("64", false, graph);
    EXPECT_EQ(switches_in(inv, "leaf"), 2u);
    EXPECT_EQ(switches_in(inv, "spine"), 1u);
    EXPECT_EQ(test::tier_of(inv, "leaf")->ports_used, 96u);
    EXPECT_EQ(test::tier_of(inv, "leaf")->ports_free, 32u);
    EXPECT_EQ(test::tier_of(inv, "spine")->ports_used, 64u);
    EXPECT_EQ(inv.cables, 128u);
    EXPECT_EQ(line(inv, "MPO fibre patch cord"), 128u);
    EXPECT_EQ(line(inv, "OSFP 400G SR4 transceiver, flat top (NIC side)"), 64u);
    EXPECT_EQ(line(inv, "OSFP 400G SR4 transceiver"), 0u);
    EXPECT_EQ(line(inv, "OSFP 800G 2xSR4 transceiver"), 160u);
    EXPECT_EQ(inv.transceivers, 224u);
    // Dual-ToR, 128 NICs: 256 x 200G ports, 128 a plane; a 1:1 leaf splits its 32 down ports
    // 4 ways (128 x 200G = 25.6 Tb/s under 32 x 800G), so one leaf a plane, no spine: 32 of 64
    // ports used a leaf. Cables: 128 ends a leaf in pairs on 1:2 splitter fibres, 128. Modules:
    // 256 NIC-port QSFP56 200G SR4 + 128 / 4 = 32 2xSR4 a leaf: 320.
    const Inventory dual = sn5600("128", true, graph);
    EXPECT_EQ(switches_in(dual, "leaf"), 2u);
    EXPECT_EQ(switches_in(dual, "spine"), 0u);
    EXPECT_EQ(test::tier_of(dual, "leaf")->ports_used, 64u);
    EXPECT_EQ(test::tier_of(dual, "leaf")->ports_free, 64u);
    EXPECT_EQ(line(dual, "MPO 1:2 splitter fibre (estimate)"), 128u);
    EXPECT_EQ(dual.cables, 128u);
    EXPECT_EQ(line(dual, "QSFP56 200G SR4 transceiver (NIC side)"), 256u);
    EXPECT_EQ(dual.transceivers, 320u);
  }
}

// Quantum-X800 Q3400 (datasheet: 144 XDR 800G ports on 72 OSFP cages): a twin-port 1.6T module
// per cage. 144 x 800G NICs: 2 leaves of 72 down / 72 up on one spine (144 ports). Modules: 144
// NIC 800G + (2 x 36 leaf down + 2 x 36 leaf up + 72 spine) = 216 1.6T 2xDR4 = 360 (576 per
// link end, the default before); 288 patch cords either way.
TEST(LeafSpine, Q3400CagesTakeOneTwinPortModuleByHand) {
  test::expect_clos_both_ways(
      {{"builder", "leaf_spine"}, kHost[0], kHost[1], {"switch", "q3400"}, {"nodes", "144"}},
      {.leaves = 2,
       .spines = 1,
       .cables = 288,
       .transceivers = 360,
       .lines = {{"OSFP 1.6T 2xDR4 transceiver (estimate)", 216}}});
}

// The NIC's end of those links: a ConnectX-8's 800G XDR port faces Q3400 cages whose 1.6T 2xDR4
// modules run 200G lanes on single-mode fibre, so its cage takes the single-port half, an OSFP
// 800G DR4 of 4 x 200G lanes (dr4_800g_xdr, ~13 W and ~$1,500: estimates), not the multimode
// 800G 2xSR4 of 100G lanes the reach alone gives (which cannot talk to the switch's module).
// Network cost of the 144 hosts above: 144 ConnectX-8 x $3,000 = $432,000, 3 Q3400 x $120,000 =
// $360,000, 144 NIC modules x $1,500 = $216,000, 216 1.6T x $3,000 = $648,000, 288 patch cords
// x $50 = $14,400: $1,670,400 (with 2xSR4 at the NICs, 144 x $1,100: $1,612,800). Their optics'
// power: 144 x 13 W = 1,872 W at the NICs.
// The same ConnectX-8 on a QM9700 port trains to 400G and takes the ConnectX-7's 400G SR4 flat
// top by reach; in 800GbE mode on an SN5600 (100G lanes, 800G 2xSR4 cages) its cage takes the
// 2xSR4 flat top, as the switch's cage does: 64 hosts are 2 leaves and a spine, 64 NIC modules.
TEST(LeafSpine, ConnectX8XdrCagesTakeTheXdrDr4ByHand) {
  const std::string dr4 =
      "OSFP 800G DR4 transceiver (4 x 200G lanes, estimate), flat top (NIC side)";
  const std::string sr8 = "OSFP 800G 2xSR4 transceiver, flat top (NIC side)";
  test::expect_clos_both_ways(
      test::one_gpu_hosts("leaf_spine", {{"switch", "q3400"}, {"nodes", "144"}}),
      {.transceivers = 360, .lines = {{dr4, 144}, {sr8, 0}}});
  const Inventory xdr =
      build(test::one_gpu_hosts("leaf_spine", {{"switch", "q3400"}, {"nodes", "144"}}), false)
          .inventory;
  EXPECT_DOUBLE_EQ(network_cost_usd(xdr), 1'670'400.0);
  const auto nic_side = std::find_if(xdr.lines.begin(), xdr.lines.end(),
                                     [&](const InventoryLine& l) { return l.item == dr4; });
  ASSERT_NE(nic_side, xdr.lines.end());
  EXPECT_DOUBLE_EQ(nic_side->unit_power_w * static_cast<double>(nic_side->count), 1'872.0);
  test::expect_clos_both_ways(
      test::one_gpu_hosts("leaf_spine",
                          {{"switch", "qm9700"}, {"nic", "cx8_xdr"}, {"nodes", "64"}}),
      {.leaves = 2,
       .spines = 1,
       .lines = {{"OSFP 400G SR4 transceiver, flat top (NIC side)", 64}, {dr4, 0}}});
  test::expect_clos_both_ways(
      test::one_gpu_hosts("leaf_spine", {{"switch", "sn5600"}, {"nodes", "64"}}),
      {.leaves = 2, .spines = 1, .lines = {{sr8, 64}, {dr4, 0}}});
}

// A switch model per tier: QM9700 leaves under 800G Quantum-X800 Q3400 spines. 1,024 single-NIC
// hosts make 32 leaves of 32 down / 32 up (1,024 uplinks at 400G). The Q3400's split is not in
// the catalog, so each 400G uplink takes one of its 144 ports: ceil(1,024 / 144) = 8 spines,
// and 8 divides 32, so 8 spines with 4 links from each leaf, 128 of 144 ports used (1,024 used,
// 128 free); QM9700 spines would take 16 full ones. Cables: 1,024 host + 1,024 leaf-spine patch
// cords (10 m and 30 m: optical). Modules: 1,024 NIC 400G SR4 + leaves 32 x (16 down + 16 up)
// twin 800G 2xSR4 + spines 8 x 128 / 2 ports a cage = 512 twin: 1,024 + 1,536 = 2,560.
TEST(LeafSpine, QuantumTwoLeavesUnderXdrSpinesByHand) {
  const test::Kv kv = {
      {"builder", "leaf_spine"}, kHost[0], kHost[1], {"nodes", "1024"}, {"spine_switch", "q3400"}};
  test::expect_clos_both_ways(
      kv, {.feasible = true,
           .leaves = 32,
           .spine_ports_used = 1'024,
           .spine_ports_free = 128,
           .cables = 2'048,
           .transceivers = 2'560,
           .lines = {{switch_spec("q3400").display, 8}, {"OSFP 800G 2xSR4 transceiver", 1'536}}});
  // A spine's radix decides how many leaves it joins: 3,200 hosts are 100 leaves, beyond 64
  // QM9700 spines' ports but not 144: 3,200 uplinks need ceil(3,200 / 144) = 23 spines, whose
  // smallest divisor of 32 at least 23 is 32: one link from each leaf to each, 100 ports used a
  // spine (3,200 used, 32 x 44 = 1,408 free). 145 leaves (4,640 hosts) exceed 144.
  test::Kv more = kv;
  more[3].second = "3200";
  const Inventory hundred = build(more, false).inventory;
  EXPECT_TRUE(hundred.feasible);
  EXPECT_EQ(switches_in(hundred, "spine"), 32u);
  EXPECT_EQ(test::tier_of(hundred, "spine")->ports_free, 1'408u);
  more.pop_back();
  EXPECT_FALSE(build(more, false).inventory.feasible);
  more = kv;
  more[3].second = "4640";
  const Inventory over = build(more, false).inventory;
  EXPECT_FALSE(over.feasible);
  EXPECT_NE(over.problems.front().find("q3400 spines of 144 links holds at most 4608 hosts"),
            std::string::npos)
      << over.problems.front();
}

// 400GbE leaves (128-port SN5600 configuration) under 800G SN5600 spines, each port split
// 2 x 400G (switch_breakout): 2,048 single-NIC hosts are 32 leaves of 64 down / 64 up, 2,048
// uplinks; a spine takes 64 x 2 = 128 links, so 16 spines (16 divides 64), 4 links from each
// leaf, all 64 ports used (1,024 used, 0 free). Modules: 2,048 NIC + leaves 32 x (32 + 32) twin
// cages + spines 16 x 64 ports, one 800G module each for its 2 x 400G = 5,120.
TEST(LeafSpine, SplitSpinePortsTakeTwoUplinksByHand) {
  const test::Kv kv = {{"builder", "leaf_spine"},
                       kHost[0],
                       kHost[1],
                       {"switch", "sn5600_400g"},
                       {"nic", "cx7_400gbe"},
                       {"nodes", "2048"},
                       {"spine_switch", "sn5600"}};
  test::expect_clos_both_ways(kv, {.feasible = true,
                                   .leaves = 32,
                                   .spine_ports_used = 1'024,
                                   .spine_ports_free = 0,
                                   .cables = 4'096,
                                   .transceivers = 5'120,
                                   .lines = {{switch_spec("sn5600").display, 16}}});
}

// A chassis spine (Arista 7816R3: 16 line-card slots x 36 x 400GbE = 576 ports, the 7800R3
// data sheet): 16,384 GPUs in 8-GPU nodes with 400GbE NICs on 64-port leaves (32 down / 32 up)
// are 512 leaves, 16,384 uplinks; ceil(16,384 / 576) = 29 spines by ports, whose smallest
// divisor of 32 at least 29 is 32: 32 chassis, one link from each leaf, 512 of 576 ports used
// (16,384 used, 32 x 64 = 2,048 free). Two tiers: 512 leaves exceed a 64- or 128-port spine
// (infeasible with those), not 576. Cables 16,384 + 16,384.
TEST(LeafSpine, ChassisSpinesHoldFiveHundredLeavesByHand) {
  EXPECT_EQ(switch_spec("arista_7816r3").radix, 16u * 36u);
  test::Kv kv = {{"builder", "leaf_spine"}, {"switch", "sn5600_400g"},
                 {"radix", "64"},           {"nic", "cx7_400gbe"},
                 {"gpus", "16384"},         {"spine_switch", "arista_7816r3"}};
  const Inventory inv = build(kv, false).inventory;
  EXPECT_TRUE(inv.feasible);
  EXPECT_EQ(switches_in(inv, "leaf"), 512u);
  EXPECT_EQ(line(inv, switch_spec("arista_7816r3").display), 32u);
  EXPECT_EQ(test::tier_of(inv, "spine")->ports_used, 16'384u);
  EXPECT_EQ(test::tier_of(inv, "spine")->ports_free, 2'048u);
  EXPECT_EQ(inv.cables, 32'768u);
  kv.back().second = "sn5600_400g";
  EXPECT_FALSE(build(kv, false).inventory.feasible);
}

}  // namespace
}  // namespace lockstep
