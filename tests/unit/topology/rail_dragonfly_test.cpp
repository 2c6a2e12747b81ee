// rail_optimized and dragonfly builders, and the builder registry.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "clos_expect.hpp"
#include "lockstep/core/error.hpp"
#include "topology_test_util.hpp"

namespace lockstep {
namespace {

using test::build;
using test::switches_in;

TEST(RailOptimized, OneScalableUnitByHand) {
  // 1 SU = 32 DGX H100 nodes x 8 GPUs = 256 GPUs and 256 ConnectX-7 NICs, 32 x 4 = 128 NVSwitch
  // chips. One leaf per rail: 8 leaves, each 32 servers down + 32 up (64 of 64 ports). Spines:
  // 8 x 32 uplinks / 64 ports = 4, each full. Cables: 256 NIC-leaf + 256 leaf-spine = 512, all
  // optical (10 m and 30 m): 1,024 link ends. QM9700 cages are twin-port, so by default modules:
  // 256 single at the NICs (nic_ports_per_module 1), 8 leaves x (32 / 2 down + 32 / 2 up) = 256
  // and 4 spines x 64 / 2 = 128 twin modules: 640 (1,024 with optics: per_port).
  const BuildResult r = build({{"builder", "rail_optimized"}, {"sus", "1"}});
  const Inventory& inv = r.inventory;
  EXPECT_EQ(inv.gpus, 256u);
  EXPECT_EQ(inv.nics, 256u);
  EXPECT_EQ(inv.nodes, 32u);
  EXPECT_EQ(switches_in(inv, "scale_up"), 128u);
  test::expect_clos(inv, {.feasible = true,
                          .leaves = 8,
                          .spines = 4,
                          .leaf_ports_free = 0,
                          .spine_ports_free = 0,
                          .cables = 512,
                          .transceivers = 640});
  EXPECT_EQ(build({{"builder", "rail_optimized"}, {"sus", "1"}, {"optics", "per_port"}})
                .inventory.transceivers,
            1'024u);
  // Bisection: min(128 GPUs x 50 GB/s, 8 x 32 x 50 GB/s / 2) = 6.4 TB/s.
  EXPECT_DOUBLE_EQ(inv.bisection.bytes_per_second(), 6.4e12);
  EXPECT_DOUBLE_EQ(inv.injection_per_gpu.gigabits_per_second(), 400);
  // Cross-rail traffic crosses leaf-spine-leaf: 2 hops.
  EXPECT_EQ(inv.diameter_switch_hops, 2u);
  // Worst GPU pair (different node, different rail): through the fabric PCIe 250 + NIC-leaf
  // (50 + 65) + leaf-spine (150 + 65 + 65) twice + ... = 1,290 ns; through NVLink to the right
  // rail first (PXN): 500 + 250 + 115 + 115 + 250 = 1,230 ns, which is the lowest.
  EXPECT_EQ(inv.max_one_way_latency, Time::ns(1'230));

  // GPU i of every node sits on rail leaf i: one distinct leaf per local index.
  const Topology& t = *r.graph;
  std::map<std::uint32_t, std::set<DeviceId>> leaves_of_rail;
  for (DeviceId d = 0; d < t.num_devices(); ++d) {
    if (t.device(d).kind != DeviceKind::Nic) continue;
    for (const Port& p : t.ports(d)) {
      if (t.device(p.peer).kind == DeviceKind::Switch) {
        leaves_of_rail[t.device(d).local_index].insert(p.peer);
      }
    }
  }
  ASSERT_EQ(leaves_of_rail.size(), 8u);
  std::set<DeviceId> all;
  for (const auto& [rail, leaves] : leaves_of_rail) {
    EXPECT_EQ(leaves.size(), 1u) << "rail " << rail;
    all.insert(leaves.begin(), leaves.end());
  }
  EXPECT_EQ(all.size(), 8u);
  // Ranks are node-major.
  EXPECT_EQ(t.device(t.gpus()[9]).node, 1u);
  EXPECT_EQ(t.device(t.gpus()[9]).local_index, 1u);
}

TEST(RailOptimized, PresetKeysGiveTheFourSuSuperPod) {
  // The DGX SuperPOD H100 reference: 4 SUs, 32 rail leaves, 32 x 32 / 64 = 16 spines.
  const BuildResult r = build({{"builder", "rail_optimized"},
                               {"sus", "4"},
                               {"gpu", "h100"},
                               {"nic", "cx7_ndr"},
                               {"switch", "qm9700"},
                               {"scale_up", "nvswitch"},
                               {"gpus_per_node", "8"},
                               {"nics_per_node", "8"},
                               {"nodes_per_su", "32"},
                               {"oversubscription", "1"},
                               {"link_latency", "100ns"},
                               {"switch_latency", "200ns"}});
  EXPECT_EQ(r.inventory.gpus, 1'024u);
  EXPECT_EQ(switches_in(r.inventory, "leaf"), 32u);
  EXPECT_EQ(switches_in(r.inventory, "spine"), 16u);
  const ClusterTraits& traits = r.graph->traits();
  EXPECT_EQ(traits.fabric, "infiniband");
  EXPECT_EQ(traits.scale_up, "nvswitch");
  EXPECT_TRUE(traits.sharp);
  EXPECT_TRUE(traits.nvls);
  EXPECT_EQ(traits.gpus_per_node, 8u);
  // A NIC-leaf cable: 100 ns fixed + half the leaf's 200 ns.
  for (const Link& l : r.graph->links()) {
    if (r.graph->device(l.a).kind == DeviceKind::Nic) {
      EXPECT_EQ(l.latency, Time::ns(200));
    }
  }
}

TEST(RailOptimized, NicBySpeed) {
  // On a 128 x 400GbE Spectrum-4 a 400 Gb/s NIC is the ConnectX-7 in Ethernet (RoCE) mode.
  const BuildResult r = build({{"builder", "rail_optimized"},
                               {"sus", "1"},
                               {"switch", "sn5600_400g"},
                               {"nic_speed", "400Gbps"}});
  EXPECT_EQ(r.graph->traits().nic, "cx7_400gbe");
  EXPECT_EQ(r.graph->traits().fabric, "roce");
  EXPECT_FALSE(r.graph->traits().sharp);
  // 128-port leaves with 32 servers and 32 uplinks leave 64 ports free each: 8 x 64 = 512.
  EXPECT_EQ(test::tier_of(r.inventory, "leaf")->ports_free, 512u);
  // The transport over Ethernet can be named; InfiniBand cannot run over an Ethernet switch.
  EXPECT_EQ(build({{"builder", "rail_optimized"},
                   {"sus", "1"},
                   {"switch", "sn5600_400g"},
                   {"transport", "tcp"}})
                .graph->traits()
                .fabric,
            "tcp");
  EXPECT_THROW(build({{"builder", "rail_optimized"},
                      {"sus", "1"},
                      {"switch", "sn5600_400g"},
                      {"transport", "infiniband"}}),
               InputError);
  // InfiniBand at 100 Gb/s is EDR's ConnectX-5; no InfiniBand NIC of the catalog runs 50 Gb/s.
  EXPECT_EQ(build({{"builder", "rail_optimized"}, {"sus", "1"}, {"nic_speed", "100Gbps"}})
                .graph->traits()
                .nic,
            "cx5_edr");
  try {
    build({{"builder", "rail_optimized"}, {"sus", "1"}, {"nic_speed", "50Gbps"}});
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "cluster.nic_speed");
  }
}

TEST(RailOptimized, ThreeTiersWhenLeavesOutgrowOneSpineTier) {
  // radix 16, 4 nodes per SU: leaves 4 down / 4 up; 3 SUs x 8 rails = 24 leaves > 16, so three
  // tiers. Spines split 8 down / 8 up: one SU (8 leaves) per pod, 3 pods x 4 spines = 12;
  // cores per plane ceil(3 x 8 / 16) = 2, 4 planes: 8 cores. Leaf-spine-core-spine-leaf: 4 hops.
  const Inventory inv =
      build({{"builder", "rail_optimized"}, {"sus", "3"}, {"nodes_per_su", "4"}, {"radix", "16"}})
          .inventory;
  EXPECT_EQ(switches_in(inv, "leaf"), 24u);
  EXPECT_EQ(switches_in(inv, "spine"), 12u);
  EXPECT_EQ(switches_in(inv, "core"), 8u);
  EXPECT_EQ(inv.diameter_switch_hops, 4u);
  EXPECT_TRUE(inv.feasible);
  EXPECT_THROW(build({{"builder", "rail_optimized"}, {"sus", "1"}, {"nodes", "32"}}), InputError);
  EXPECT_THROW(build({{"builder", "rail_optimized"}, {"sus", "1"}, {"nodes_per_su", "0"}}),
               InputError);
  EXPECT_THROW(build({{"builder", "rail_optimized"}, {"sus", "1"}, {"tiers", "4"}}), InputError);
}

TEST(Dragonfly, SmallestBalanced) {
  // p = 1: a = 2 routers per group, h = 1 global link each, g = a h + 1 = 3 groups; 6 routers,
  // 6 single-GPU nodes. Links: 6 host + 3 local + 3 global (one per group pair) = 12 cables.
  // Cut {group 0} | {1, 2}: 2 global links x 50 GB/s < 3 hosts x 50 GB/s.
  const BuildResult r = build({{"builder", "dragonfly"},
                               {"nodes_per_router", "1"},
                               {"gpus_per_node", "1"},
                               {"scale_up", "none"}});
  EXPECT_EQ(r.inventory.gpus, 6u);
  EXPECT_EQ(switches_in(r.inventory, "leaf"), 6u);
  EXPECT_EQ(r.inventory.cables, 12u);
  EXPECT_EQ(r.inventory.diameter_switch_hops, 3u);  // local, global, local
  EXPECT_DOUBLE_EQ(r.inventory.bisection.bytes_per_second(), 2 * 50e9);
  EXPECT_TRUE(r.inventory.feasible);
  // p = 2: a = 4, h = 2, g = 9, 36 global links; groups 0-3 vs 4-8: 4 x 5 = 20 cross.
  const BuildResult big = build({{"builder", "dragonfly"},
                                 {"nodes_per_router", "2"},
                                 {"gpus_per_node", "1"},
                                 {"scale_up", "none"}});
  EXPECT_EQ(switches_in(big.inventory, "leaf"), 36u);
  EXPECT_DOUBLE_EQ(big.inventory.bisection.bytes_per_second(), 20 * 50e9);
  // More groups than global ports can reach directly.
  EXPECT_FALSE(build({{"builder", "dragonfly"},
                      {"nodes_per_router", "1"},
                      {"groups", "5"},
                      {"gpus_per_node", "1"},
                      {"scale_up", "none"}})
                   .inventory.feasible);
}

// The circulant ("palm tree") global links: group i's global port k (router k / h) joins group
// i + k + 1 at that group's port g - 2 - k. With a = 2 routers of h = 2 global ports and g = 5
// groups: router 0 of group i (ports 0, 1) joins router 1 of groups i + 1 and i + 2 (their ports
// 3 and 2); router 1's ports reach groups i + 3 and i + 4, i.e. are those links seen from the
// other end. 10 global links, one per pair of groups.
template <class T>
std::pair<T, T> ends(T x, T y) {
  return {std::min(x, y), std::max(x, y)};
}

TEST(Dragonfly, GlobalLinksAreCirculantAndTranslationByOneGroupMapsLinksOntoLinks) {
  const std::uint32_t a = 2, g = 5;
  const Topology t = std::move(*build(test::small_dragonfly()).graph);
  std::vector<DeviceId> routers;  // in build order: group-major
  for (DeviceId d = 0; d < t.num_devices(); ++d)
    if (t.device(d).kind == DeviceKind::Switch) routers.push_back(d);
  ASSERT_EQ(routers.size(), a * g);
  std::map<DeviceId, std::uint32_t> router_index;
  for (std::uint32_t r = 0; r < routers.size(); ++r) router_index[routers[r]] = r;
  std::set<std::pair<std::uint32_t, std::uint32_t>> global, expected;
  for (const Link& l : t.links()) {
    if (!router_index.count(l.a) || !router_index.count(l.b)) continue;
    const std::uint32_t x = router_index[l.a], y = router_index[l.b];
    if (x / a != y / a) global.insert(ends(x, y));
  }
  for (std::uint32_t i = 0; i < g; ++i) {
    for (std::uint32_t d : {1u, 2u}) expected.insert(ends(i * a + 0, (i + d) % g * a + 1));
  }
  EXPECT_EQ(global, expected);
  // Every device moved by one group (routers by a, the rest by one group's nodes' devices):
  // every link lands on a link of the same bandwidth and latency.
  const DeviceId node_devices = routers.front();  // nodes come first, then routers
  const auto next_group = [&](DeviceId d) -> DeviceId {
    if (router_index.count(d)) return routers[(router_index[d] + a) % routers.size()];
    return (d + node_devices / g) % node_devices;
  };
  std::map<std::pair<DeviceId, DeviceId>, const Link*> by_ends;
  for (const Link& l : t.links()) by_ends[ends(l.a, l.b)] = &l;
  for (const Link& l : t.links()) {
    const auto it = by_ends.find(ends(next_group(l.a), next_group(l.b)));
    ASSERT_NE(it, by_ends.end()) << l.a << "-" << l.b;
    EXPECT_EQ(it->second->bandwidth.bytes_per_second(), l.bandwidth.bytes_per_second());
    EXPECT_EQ(it->second->latency, l.latency);
  }
}

// Where the circulant arrangement would wire another number of global links than dealing pairs
// greedily, the greedy deal is kept: g = 3 groups of 3 global ports (a = 3, h = 1) leave one
// port free per group in a circulant (offsets +1, -1, and the third port has no partner: 3
// links), where the greedy deal joins (0,1), (0,2), (1,2), then (0,1) again: 4 links.
TEST(Dragonfly, KeepsTheGreedyCountWhereTheCirculantDiffers) {
  const BuildResult r = build({{"builder", "dragonfly"},
                               {"nodes_per_router", "1"},
                               {"routers_per_group", "3"},
                               {"global_links_per_router", "1"},
                               {"groups", "3"},
                               {"gpus_per_node", "1"},
                               {"scale_up", "none"}});
  // 9 host links + 3 x 3 local + 4 global.
  EXPECT_EQ(r.inventory.cables, 9u + 9u + 4u);
}

TEST(Dragonfly, RejectsBadShapes) {
  EXPECT_THROW(build({{"builder", "dragonfly"}}), InputError);  // nodes_per_router is required
  for (const char* bad : {"0", "-1", "99999", "x"}) {
    try {
      build({{"builder", "dragonfly"}, {"nodes_per_router", bad}});
      FAIL() << bad;
    } catch (const InputError& e) {
      EXPECT_EQ(e.field(), "cluster.nodes_per_router") << bad;
    }
  }
  // A router of 64 ports cannot hold 20 NICs + 39 local + 20 global links (79 ports).
  EXPECT_FALSE(build({{"builder", "dragonfly"},
                      {"nodes_per_router", "20"},
                      {"groups", "2"},
                      {"gpus_per_node", "1"},
                      {"scale_up", "none"}})
                   .inventory.feasible);
}

TEST(Registry, NamesAndErrors) {
  std::set<std::string> names;
  for (const BuilderInfo* b : all_builders()) names.insert(b->name);
  for (const char* n : {"full_mesh", "single_switch", "leaf_spine", "fat_tree", "rail_optimized",
                        "torus", "dragonfly", "scale_up"}) {
    EXPECT_TRUE(names.count(n)) << n;
    EXPECT_NE(find_builder(n), nullptr);
  }
  try {
    build({{"builder", "fat_tre"}});
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown builder 'fat_tre' (known: "), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("fat_tree"), std::string::npos);
  }
  EXPECT_THROW(build({{"k", "4"}}), InputError);
  EXPECT_EQ(build({{"type", "torus"}, {"dims", "3x3"}}).inventory.gpus, 9u);
}

}  // namespace
}  // namespace lockstep
