// Clos builders (fat_tree, leaf_spine, single_switch): counts derived by hand in the comments.
#include <gtest/gtest.h>

#include <tuple>

#include "clos_expect.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/topology/catalog.hpp"
#include "topology_test_util.hpp"

namespace lockstep {
namespace {

using test::build;
using test::switches_in;

// One GPU per node, no scale-up: "hosts" are GPUs, each with its own NIC.
constexpr std::pair<const char*, const char*> kHost[] = {{"gpus_per_node", "1"},
                                                         {"scale_up", "none"}};

// The count of the bill of materials' line `item` (0 without one).
constexpr auto* line = &test::line_count;

BuildResult fat_tree(const std::string& k, bool graph = true) {
  return build({{"builder", "fat_tree"}, kHost[0], kHost[1], {"k", k}}, graph);
}

// Network-only cost of the k = 4 fat tree from catalog prices, one transceiver per link end
// (optics: per_port): 16 ConnectX-7 NDR at $2,000 = $32,000; 20 QM9700 at $30,000 = $600,000;
// 64 OSFP 400G SR4 at $700 = $44,800 and 32 DR4 at $900 = $28,800 (two per optical link); 48 MPO
// patch cords at $50 = $2,400. Sum $708,000, $44,250 per GPU; the 16 H100s ($480,000) are the
// rest of the $1,188,000.
TEST(FatTree, K4NetworkCostFromCatalogPrices) {
  const Inventory inv =
      build({{"builder", "fat_tree"}, kHost[0], kHost[1], {"k", "4"}, {"optics", "per_port"}})
          .inventory;
  EXPECT_EQ(inv.transceivers, 96u);
  EXPECT_DOUBLE_EQ(network_cost_usd(inv), 708'000.0);
  EXPECT_DOUBLE_EQ(network_cost_per_gpu_usd(inv), 44'250.0);
  EXPECT_DOUBLE_EQ(inv.cost_usd - network_cost_usd(inv), 16 * 30'000.0);
}

// The same k = 4 fat tree with transceivers per module (QM9700 cages are twin-port): each
// switch's 2 down and 2 up ports share one module each. NIC end: 16 single OSFP 400G SR4; leaf
// down 8, leaf up 8, spine down 8 x 1 = 24 OSFP 800G 2xSR4 (10 m and 30 m); spine up 8 and
// core 4 x 2 = 16 OSFP 800G 2xDR4 (100 m): 56 modules, against 96 per link end. Network cost:
// $32,000 NICs + $600,000 switches + 16 x $700 + 24 x $1,100 + 16 x $1,500 = $61,600 optics +
// $2,400 patch cords = $696,000, $43,500 per GPU. Per module is the default for QM9700 (no
// optics key) and the same as asking for it.
TEST(FatTree, K4PerModuleOpticsByHand) {
  for (const bool graph : {true, false}) {
    for (const char* optics : {"", "per_module"}) {
      test::Kv args = {{"builder", "fat_tree"}, kHost[0], kHost[1], {"k", "4"}};
      if (*optics != '\0') args.emplace_back("optics", optics);
      const Inventory inv = build(args, graph).inventory;
      EXPECT_EQ(inv.transceivers, 56u) << optics;
      EXPECT_EQ(inv.cables, 48u);
      EXPECT_DOUBLE_EQ(network_cost_usd(inv), 696'000.0);
      EXPECT_DOUBLE_EQ(network_cost_per_gpu_usd(inv), 43'500.0);
      EXPECT_EQ(inv.graph_built, graph);
    }
  }
}

TEST(FatTree, K4CountsByHand) {
  // k = 4: k^3/4 = 16 hosts; k pods x k/2 = 8 edge and 8 aggregation switches, (k/2)^2 = 4 cores.
  // Links: 16 host-edge + 8 edge x 2 up = 16 edge-agg + 8 agg x 2 up = 16 agg-core = 48.
  const BuildResult r = fat_tree("4");
  const Inventory& inv = r.inventory;
  EXPECT_EQ(inv.gpus, 16u);
  EXPECT_EQ(inv.nics, 16u);
  EXPECT_EQ(switches_in(inv, "leaf"), 8u);
  EXPECT_EQ(switches_in(inv, "spine"), 8u);
  EXPECT_EQ(switches_in(inv, "core"), 4u);
  EXPECT_EQ(inv.cables, 48u);
  ASSERT_TRUE(r.graph.has_value());
  const Topology& t = *r.graph;
  std::uint64_t switch_links = 0;
  for (const Link& l : t.links()) {
    if (t.device(l.a).kind == DeviceKind::Switch || t.device(l.b).kind == DeviceKind::Switch) {
      ++switch_links;
    }
  }
  EXPECT_EQ(switch_links, 48u);
  EXPECT_EQ(t.num_links(), 48u + 16u);  // plus one PCIe link GPU-NIC per host
  EXPECT_TRUE(t.connected());
  // Every switch uses all k = 4 ports.
  for (const auto& tier : inv.tiers) EXPECT_EQ(tier.ports_free, 0u) << tier.tier;
  EXPECT_TRUE(inv.feasible);
  // Edge-agg-core-agg-edge: 4 switch-to-switch hops.
  EXPECT_EQ(inv.diameter_switch_hops, 4u);
  // Non-blocking: bisection = 16 / 2 hosts x 400 Gb/s = 8 x 50 GB/s.
  EXPECT_DOUBLE_EQ(inv.bisection.bytes_per_second(), 8 * 50e9);
  // 48 optical cables (10/30/100 m): 96 link ends, in 56 modules by default since QM9700 cages
  // are twin-port (K4PerModuleOpticsByHand; 96 with optics: per_port).
  EXPECT_EQ(inv.transceivers, 56u);
}

TEST(FatTree, K64IsCountedWithoutBuilding) {
  // k = 64: 64^3 / 4 = 65,536 hosts; 64 x 32 edge + 64 x 32 aggregation + 32^2 core = 5,120.
  const Inventory inv = fat_tree("64", false).inventory;
  EXPECT_FALSE(inv.graph_built);
  EXPECT_EQ(inv.gpus, 65'536u);
  EXPECT_EQ(switches_in(inv, "leaf") + switches_in(inv, "spine") + switches_in(inv, "core"),
            5'120u);
  EXPECT_EQ(switches_in(inv, "core"), 1'024u);
  EXPECT_TRUE(inv.feasible);
  EXPECT_EQ(inv.cables, 3u * 65'536u);
}

TEST(FatTree, TooManyLinksGivesTheInventoryWithoutAGraph) {
  // k = 8: 128 hosts, 3 x 128 cables + 128 PCIe links, far above a limit of 10 links, so the
  // inventory is computed in closed form.
  // Switches: 5 k^2 / 4 = 80 (32 edge, 32 aggregation, 16 core).
  BuildOptions options;
  options.max_links = 10;
  const BuildResult r = build_topology(
      test::args({{"builder", "fat_tree"}, kHost[0], kHost[1], {"k", "8"}}), options);
  EXPECT_FALSE(r.graph.has_value());
  EXPECT_FALSE(r.inventory.graph_built);
  EXPECT_EQ(r.inventory.gpus, 128u);
  EXPECT_EQ(switches_in(r.inventory, "leaf") + switches_in(r.inventory, "spine") +
                switches_in(r.inventory, "core"),
            80u);
}

TEST(FatTree, ThreeTierOf64PortSwitchesHoldsAtMost65536Hosts) {
  // Non-blocking 3-tier with radix 64: 64 pods x 32 leaves x 32 hosts = 65,536.
  auto tier3 = [](const char* nodes) {
    return build({{"builder", "fat_tree"},
                  kHost[0],
                  kHost[1],
                  {"switch", "qm9700"},
                  {"nodes", nodes}},
                 false)
        .inventory;
  };
  EXPECT_TRUE(tier3("65536").feasible);
  const Inventory over = tier3("65537");
  EXPECT_FALSE(over.feasible);
  ASSERT_FALSE(over.problems.empty());
  EXPECT_NE(over.problems.front().find("at most 65536 hosts"), std::string::npos)
      << over.problems.front();
}

TEST(LeafSpine, TwoTierOf64PortSwitchesHoldsAtMost2048Hosts) {
  // Non-blocking 2-tier with radix 64: 64 leaves x 32 hosts = 2,048; spines = 64 x 32 / 64 = 32.
  auto tier2 = [](const char* nodes) {
    return build({{"builder", "leaf_spine"}, kHost[0], kHost[1], {"nodes", nodes}}, false)
        .inventory;
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
    return build({{"builder", "leaf_spine"},
                  kHost[0],
                  kHost[1],
                  {"nodes", "168"},
                  {"oversubscription", ratio}})
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
    return build({{"builder", "leaf_spine"},
                  kHost[0],
                  kHost[1],
                  {"switch", "qm9700"},
                  {"nodes", nodes},
                  {"dual_tor", "true"},
                  {"optics", optics}},
                 false)
        .inventory;
  };
  // 64 NICs: 128 ports, 64 per plane, one leaf per plane (its 32 down ports split), no spines.
  // Leaf ports used 2 x 64 / 2 = 64 of 128; 64 cables (a 1:2 splitter fibre per split port,
  // NVIDIA LinkX MFP7E20); modules: 128 NIC ports + a leaf's 64 ends at 4 to a twin-port cage
  // (2 ports x 2 ways) = 16 a leaf: 160.
  const Inventory big = dual("64", "per_module");
  EXPECT_TRUE(big.feasible);
  EXPECT_EQ(switches_in(big, "leaf"), 2u);
  EXPECT_EQ(switches_in(big, "spine"), 0u);
  EXPECT_EQ(test::tier_of(big, "leaf")->ports_used, 64u);
  EXPECT_EQ(test::tier_of(big, "leaf")->ports_free, 64u);
  EXPECT_EQ(big.cables, 64u);
  EXPECT_EQ(line(big, "MPO 1:2 splitter fibre (estimate)"), 64u);
  EXPECT_EQ(line(big, "MPO fibre patch cord"), 0u);
  EXPECT_EQ(big.transceivers, 160u);
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
  EXPECT_TRUE(two_leaves.feasible);
  EXPECT_EQ(switches_in(two_leaves, "leaf"), 4u);
  EXPECT_EQ(switches_in(two_leaves, "spine"), 2u);
  EXPECT_EQ(test::tier_of(two_leaves, "leaf")->ports_used, 256u);
  EXPECT_EQ(test::tier_of(two_leaves, "leaf")->ports_free, 0u);
  EXPECT_EQ(test::tier_of(two_leaves, "spine")->ports_free, 0u);
  EXPECT_DOUBLE_EQ(test::tier_of(two_leaves, "leaf")->oversubscription, 1.0);
  EXPECT_EQ(two_leaves.cables, 256u);
  EXPECT_EQ(line(two_leaves, "MPO fibre patch cord"), 128u);
  EXPECT_EQ(two_leaves.transceivers, 448u);
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

// fat_tree k = 4 with QM9700 cores (64 ports): 16 hosts, 8 leaves and 8 spines of 2 down / 2 up
// as in the k-ary tree, 4 pods; each of the 2 core planes joins 4 pods x 2 spine uplinks = 8
// links on ceil(8 / 64) = 1 core (k = 4 cores: 2 per plane of 4 ports). Cores 2, 16 ports used,
// 2 x 64 - 16 = 112 free; cables 16 + 16 + 16 = 48 as before.
// A core's radix decides how many pods it joins: 200 hosts on 8-port switches make 50 leaves of
// 4 down, pods of 4 leaves, 13 pods: beyond 8-port cores, not 64-port ones (4 planes of
// ceil(13 x 4 / 64) = 1 core, 52 ports used each).
TEST(FatTree, CoreSwitchOfItsOwnByHand) {
  test::expect_clos_both_ways(
      {{"builder", "fat_tree"}, kHost[0], kHost[1], {"k", "4"}, {"core_switch", "qm9700"}},
      {.feasible = true,
       .leaves = 8,
       .spines = 8,
       .cores = 2,
       .core_ports_used = 16,
       .core_ports_free = 112,
       .cables = 48,
       .design_has = "cores qm9700 radix 64"});
  test::Kv wide = {{"builder", "fat_tree"}, kHost[0], kHost[1], {"radix", "8"}, {"nodes", "200"}};
  EXPECT_FALSE(build(wide, false).inventory.feasible);
  wide.push_back({"core_switch", "qm9700"});
  const Inventory inv = build(wide, false).inventory;
  EXPECT_TRUE(inv.feasible);
  EXPECT_EQ(switches_in(inv, "core"), 4u);
  EXPECT_EQ(test::tier_of(inv, "core")->ports_used, 208u);
}

// spine_switch on fat_tree sets the pod: 8-port QM9700 leaves (4 down / 4 up) under 64-port
// spines hold 32 leaves a pod: 512 hosts are 128 leaves, 4 pods of 4 spines each (16 spines of
// 32 down + 32 up), and one core plane per leaf uplink joins 4 pods x 32 = 128 links on 2
// 64-port cores (the spine model's too): 8 cores.
TEST(FatTree, SpineSwitchSetsThePodByHand) {
  const Inventory inv = build({{"builder", "fat_tree"},
                               kHost[0],
                               kHost[1],
                               {"radix", "8"},
                               {"nodes", "512"},
                               {"spine_switch", "qm9700"}},
                              false)
                            .inventory;
  EXPECT_TRUE(inv.feasible);
  EXPECT_EQ(switches_in(inv, "leaf"), 128u);
  EXPECT_EQ(switches_in(inv, "spine"), 16u);
  EXPECT_EQ(switches_in(inv, "core"), 8u);
  EXPECT_EQ(test::tier_of(inv, "spine")->ports_free, 0u);
  EXPECT_EQ(test::tier_of(inv, "core")->ports_free, 0u);
}

TEST(SingleSwitch, TwoHundredThousandGpusDoNotFitA64PortSwitch) {
  // 200,000 H100s in 8-GPU nodes: 25,000 nodes, 200,000 NICs, one switch of 64 ports.
  const Inventory inv =
      build({{"builder", "single_switch"}, {"gpus", "200000"}, {"switch", "qm9700"}}, false)
          .inventory;
  EXPECT_EQ(inv.gpus, 200'000u);
  EXPECT_EQ(inv.nics, 200'000u);
  EXPECT_FALSE(inv.feasible);
  bool says_why = false;
  for (const auto& p : inv.problems) {
    says_why |=
        p.find("200000 NICs need 200000 switch ports but a qm9700 has 64") != std::string::npos;
  }
  EXPECT_TRUE(says_why);
  // 64 GPUs fit: 8 nodes x 8 NICs on 64 ports.
  EXPECT_TRUE(build({{"builder", "single_switch"}, {"gpus", "64"}}).inventory.feasible);
}

// Every switch line of a tier, with its tier's free ports.
std::uint64_t bom_switches(const Inventory& inv, const std::string& tier) {
  std::uint64_t n = 0;
  for (const auto& l : inv.lines)
    if (l.category == "switch" && l.tier == tier) n += l.count;
  return n;
}

TEST(FatTree, ForcedThreeTiersCountedByHand) {
  // 64 single-GPU hosts on 16-port switches: a leaf takes 8 hosts and 8 uplinks, so 8 leaves,
  // which one pod of k / 2 = 8 leaves holds (two tiers would do). tiers 3 splits them into 2
  // pods of 4 leaves; each pod has 8 spines (one per leaf uplink) of 4 down + 4 up, 8 of 16 ports
  // free; 8 core planes (one per spine position) of ceil(2 pods x 4 / 16) = 1 core using 2 x 4 =
  // 8 ports, 8 free. Leaves 8 x 16 used, 0 free; spines 16 x 8 used, 128 free; cores 8 x 8 used,
  // 64 free. Links: 64 host + 8 x 8 leaf-spine + 16 x 4 spine-core = 192 cables.
  const test::Kv design = {{"builder", "fat_tree"}, kHost[0],        kHost[1],
                           {"gpus", "64"},          {"radix", "16"}, {"tiers", "3"}};
  const BuildResult r = build(design);
  const Inventory& inv = r.inventory;
  ASSERT_TRUE(inv.feasible);
  const std::tuple<const char*, std::uint64_t, std::uint64_t, std::uint64_t> want[] = {
      {"leaf", 8, 128, 0}, {"spine", 16, 128, 128}, {"core", 8, 64, 64}};
  for (const auto& [tier, switches, used, free] : want) {
    const TierFigures* t = test::tier_of(inv, tier);
    ASSERT_NE(t, nullptr) << tier;
    EXPECT_EQ(t->switches, switches) << tier;
    EXPECT_EQ(t->ports_used, used) << tier;
    EXPECT_EQ(t->ports_free, free) << tier;
    EXPECT_EQ(bom_switches(inv, tier), switches) << tier;  // every tier is bought
  }
  EXPECT_EQ(inv.cables, 192u);
  EXPECT_EQ(inv.diameter_switch_hops, 4u);
  // The built graph counts the same (the closed form is what larger designs get).
  const Inventory closed = build(design, false).inventory;
  ASSERT_TRUE(r.graph.has_value());
  EXPECT_EQ(closed.cables, 192u);
  for (const auto& [tier, switches, used, free] : want) {
    EXPECT_EQ(test::tier_of(closed, tier)->switches, switches) << tier;
    EXPECT_EQ(test::tier_of(closed, tier)->ports_free, free) << tier;
  }
  // Two tiers of 16-port switches hold at most 16 leaves x 8 hosts = 128: 256 are refused with
  // that reason; a single pod cannot be split (8 hosts on one leaf).
  const Inventory big = build({{"builder", "fat_tree"},
                               kHost[0],
                               kHost[1],
                               {"gpus", "256"},
                               {"radix", "16"},
                               {"tiers", "2"}},
                              false)
                            .inventory;
  EXPECT_FALSE(big.feasible);
  ASSERT_FALSE(big.problems.empty());
  EXPECT_EQ(big.problems[0],
            "2 tiers of 16-port switches hold at most 128 hosts (16 leaves x 8 hosts); 256 "
            "requested: use tiers: 3");
  EXPECT_THROW(build({{"builder", "fat_tree"},
                      kHost[0],
                      kHost[1],
                      {"gpus", "8"},
                      {"radix", "16"},
                      {"tiers", "3"}}),
               InputError);
}

const InventoryLine* scale_up_line(const Inventory& inv) {
  for (const auto& l : inv.lines)
    if (l.tier == "scale_up") return &l;
  return nullptr;
}

TEST(FatTree, NvSwitchChipsComeWithTheHgxGpusAndNvl72ChipsAreAnEstimate) {
  // 16 HGX H100 nodes: 4 NVSwitch gen3 chips each = 64 chips on the HGX baseboards, which the
  // H100's per-GPU price pays for: $0 on their own line, named as included in the GPU.
  const Inventory hgx = build({{"builder", "fat_tree"}, {"gpus", "128"}}, false).inventory;
  const InventoryLine* chips = scale_up_line(hgx);
  ASSERT_NE(chips, nullptr);
  EXPECT_EQ(chips->count, 64u);
  EXPECT_EQ(chips->unit_price_usd, 0.0);
  EXPECT_EQ(chips->price_note,
            "included in NVIDIA H100 SXM5 80GB (on the HGX baseboard, sold with its 8 GPUs: "
            "NVIDIA HGX H100 datasheet)");
  for (const auto& l : hgx.lines) {
    if (&l != chips) {
      EXPECT_EQ(l.price_note, "") << l.item;  // catalog prices of their own
    }
  }
  // GB200 NVL72, 2 racks of 18 chips: priced at the catalog's estimate, which says so.
  const Inventory nvl =
      build({{"builder", "fat_tree"}, {"gpu", "gb200"}, {"gpus", "144"}}, false).inventory;
  chips = scale_up_line(nvl);
  ASSERT_NE(chips, nullptr);
  EXPECT_EQ(chips->count, 36u);
  EXPECT_EQ(chips->unit_price_usd, 10'000.0);
  EXPECT_EQ(chips->price_note.rfind("estimate: ", 0), 0u) << chips->price_note;
}

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

TEST(Clos, RejectsBadArgumentsNamingTheKey) {
  auto message = [](const test::Kv& kv) {
    try {
      build(kv);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({{"builder", "fat_tree"}, {"k", "5"}}).find("cluster.k: must be even"),
            std::string::npos);
  for (const char* bad : {"0", "-4", "1000000", "four", "4.5"}) {
    EXPECT_NE(message({{"builder", "fat_tree"}, {"k", bad}}).find("cluster.k"), std::string::npos)
        << bad;
  }
  EXPECT_NE(message({{"builder", "leaf_spine"}, {"nodes", "0"}}).find("cluster.nodes"),
            std::string::npos);
  EXPECT_NE(message({{"builder", "leaf_spine"}}).find("nodes"), std::string::npos);
  EXPECT_NE(message({{"builder", "leaf_spine"}, {"nodes", "4"}, {"switch", "qm1"}})
                .find("cluster.switch: unknown switch 'qm1' (known: qm8700"),
            std::string::npos);
  EXPECT_NE(message({{"builder", "leaf_spine"}, {"nodes", "4"}, {"oversubscription", "1:0"}})
                .find("cluster.oversubscription"),
            std::string::npos);
  EXPECT_NE(message({{"builder", "leaf_spine"}, {"nodes", "4"}, {"port_speed", "0Gbps"}})
                .find("cluster.port_speed"),
            std::string::npos);
  EXPECT_NE(message({{"builder", "leaf_spine"}, {"nodes", "4"}, {"nic", "cx7_400gbe"}})
                .find("cluster.nic: NIC 'cx7_400gbe' speaks roce but switch 'qm9700'"),
            std::string::npos);
  EXPECT_NE(message({{"builder", "leaf_spine"}, {"gpus", "12"}}).find("cluster.gpus"),
            std::string::npos);
  EXPECT_NE(message({{"builder", "leaf_spine"}, {"nodes", "4"}, {"nodez", "4"}})
                .find("cluster.nodez: unknown key"),
            std::string::npos);
  EXPECT_NE(message({{"builder", "fat_tree"}, {"k", "4"}, {"radix", "8"}}).find("cluster.k"),
            std::string::npos);
}

}  // namespace
}  // namespace lockstep
