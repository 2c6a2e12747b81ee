// Clos builders (fat_tree, single_switch; leaf_spine in clos_leaf_spine_test.cpp, the counted
// graph against the closed form in clos_agreement_test.cpp): counts derived by hand in the
// comments.
#include <gtest/gtest.h>

#include <tuple>

#include "clos_expect.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/topology/catalog.hpp"
#include "topology_test_util.hpp"

namespace lockstep {
namespace {

using test::build;
using test::kHost;
using test::switches_in;

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
    return build(test::one_gpu_hosts("fat_tree", {{"switch", "qm9700"}, {"nodes", nodes}}), false)
        .inventory;
  };
  EXPECT_TRUE(tier3("65536").feasible);
  const Inventory over = tier3("65537");
  EXPECT_FALSE(over.feasible);
  ASSERT_FALSE(over.problems.empty());
  EXPECT_NE(over.problems.front().find("at most 65536 hosts"), std::string::npos)
      << over.problems.front();
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

TEST(Clos, RejectsBadArgumentsNamingTheKey) {
  auto message = [](const test::Kv& kv) {
    try {
      build(kv);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  for (const char* bad : {"0", "-4", "1000000", "four", "4.5"}) {
    EXPECT_NE(message({{"builder", "fat_tree"}, {"k", bad}}).find("cluster.k"), std::string::npos)
        << bad;
  }
  // Each bad design and what its message says, the key first. QM9700's ports are NDR 400G
  // (datasheet): a port_speed of 800G is refused naming the key, 200G (ports trained down) is a
  // design of its own.
  const test::Kv four = {{"builder", "leaf_spine"}, {"nodes", "4"}};
  auto with = [&](const char* key, const char* value) {
    test::Kv kv = four;
    kv.emplace_back(key, value);
    return kv;
  };
  const std::pair<test::Kv, std::string> refused[] = {
      {{{"builder", "fat_tree"}, {"k", "5"}}, "cluster.k: must be even"},
      {{{"builder", "leaf_spine"}, {"nodes", "0"}}, "cluster.nodes"},
      {{{"builder", "leaf_spine"}}, "nodes"},
      {with("switch", "qm1"), "cluster.switch: unknown switch 'qm1' (known: qm8700"},
      {with("oversubscription", "1:0"), "cluster.oversubscription"},
      {with("port_speed", "0Gbps"), "cluster.port_speed"},
      {with("port_speed", "800Gbps"),
       "cluster.port_speed: 800 Gb/s is above switch 'qm9700''s ports of 400 Gb/s"},
      {{{"builder", "rail_optimized"}, {"sus", "1"}, {"port_speed", "401Gbps"}},
       "cluster.port_speed"},
      {{{"builder", "leaf_spine"},
        {"nodes", "4"},
        {"nic_ports_fused", "2"},
        {"port_speed", "801Gbps"}},
       "cluster.port_speed: 801 Gb/s is above 2 fused ports of switch 'qm9700''s ports of 400 "
       "Gb/s"},
      {with("nic_ports_fused", "0"), "cluster.nic_ports_fused"},
      {with("nic", "cx7_400gbe"), "cluster.nic: NIC 'cx7_400gbe' speaks roce but switch 'qm9700'"},
      {{{"builder", "leaf_spine"}, {"gpus", "12"}}, "cluster.gpus"},
      {with("nodez", "4"), "cluster.nodez: unknown key"},
      {{{"builder", "fat_tree"}, {"k", "4"}, {"radix", "8"}}, "cluster.k"},
  };
  for (const auto& [kv, text] : refused) {
    EXPECT_NE(message(kv).find(text), std::string::npos) << message(kv);
  }
  EXPECT_EQ(message(with("port_speed", "200Gbps")), "no error");
  // A host port that stands for two fused NIC ports (NCCL fuses a GPU's NICs; a GB300 tray's 2 x
  // 400G per GPU) may run at twice the switch's port: 2 x 400 = 800 Gb/s is accepted.
  EXPECT_EQ(message({{"builder", "leaf_spine"},
                     {"nodes", "4"},
                     {"nic_ports_fused", "2"},
                     {"port_speed", "800Gbps"}}),
            "no error");
}

}  // namespace
}  // namespace lockstep
