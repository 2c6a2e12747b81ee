// The multi_site builder: sites built by other builders, joined by gateways and long-haul fibre.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "../core/error_of.hpp"
#include "lockstep/config/json_reader.hpp"
#include "lockstep/scenario/scenario.hpp"
#include "lockstep/topology/builder.hpp"
#include "lockstep/topology/catalog.hpp"
#include "lockstep/topology/graph_json.hpp"

namespace lockstep {
namespace {

BuildResult build_yaml(const std::string& cluster_yaml) {
  return build_topology(parse_scenario("version: 1\ncluster:\n" + cluster_yaml, "m.yaml").cluster);
}

BuildResult fat_tree_k4() {
  return build_yaml("  builder: fat_tree\n  k: 4\n");
}

const char* kTwoSites = R"(  builder: multi_site
  distance: 50km
  capacity: 800Gbps
  sites:
    east: {builder: fat_tree, k: 4}
    west: {builder: fat_tree, k: 4}
)";

TEST(MultiSite, TwoSitesFiftyKilometresApart) {
  const BuildResult site = fat_tree_k4();
  const BuildResult r = build_yaml(kTwoSites);
  ASSERT_TRUE(r.graph.has_value());
  const Topology& t = *r.graph;
  const Inventory& inv = r.inventory;
  EXPECT_EQ(inv.gpus, 2 * site.inventory.gpus);
  EXPECT_EQ(inv.nodes, 2 * site.inventory.nodes);
  EXPECT_EQ(t.num_sites(), 2u);
  EXPECT_EQ(t.num_nodes(), 2 * site.graph->num_nodes());
  // Each k=4 site has 4 core switches; 800 Gb/s over 400 Gb/s gateway ports is 2 ports, spread
  // over 4 cores: one 400G uplink per core (rounded up). Links: both sites, 2 x 4 uplinks, 1
  // long-haul link.
  EXPECT_EQ(t.num_links(), 2 * site.graph->num_links() + 8 + 1);
  EXPECT_EQ(t.num_devices(), 2 * site.graph->num_devices() + 2);
  const Link& longhaul = t.link(static_cast<LinkId>(t.num_links() - 1));
  EXPECT_EQ(longhaul.medium, LinkMedium::LongHaulFibre);
  EXPECT_DOUBLE_EQ(longhaul.length_m, 50'000.0);
  // Light in fibre: 5 ns/m x 50,000 m = 250 us, plus half a gateway latency at each end.
  const Time gateway = switch_spec("qm9700").latency;
  EXPECT_EQ(longhaul.latency, Time::us(250) + gateway);
  // GPU to GPU across sites: about 250 us, the fibre dominating everything inside the sites.
  EXPECT_GE(inv.max_one_way_latency, Time::us(250));
  EXPECT_LT(inv.max_one_way_latency, Time::us(255));
  // The rank-order halves are the two sites; the cut is the 800 Gb/s long-haul link, smaller
  // than the 4 x 400 Gb/s of uplinks on either side.
  EXPECT_DOUBLE_EQ(inv.bisection.gigabits_per_second(), 800.0);
  // Extra optics over the two sites: 8 uplinks of 400G over 100 m (two transceivers each) and
  // one 800G, 50 km long-haul link (one 800ZR pair): 16 + 2.
  EXPECT_EQ(inv.transceivers, 2 * site.inventory.transceivers + 18);
  // Cost: both sites, two gateways, the optics.
  EXPECT_GT(inv.cost_usd, 2 * site.inventory.cost_usd + 2 * switch_spec("qm9700").price_usd);
  ASSERT_FALSE(inv.tiers.empty());
  EXPECT_EQ(inv.tiers.back().tier, "dci");
  EXPECT_EQ(inv.tiers.back().switches, 2u);
  // Gateway ports: 4 uplinks + 2 long-haul ports (800G / 400G) per site.
  EXPECT_EQ(inv.tiers.back().ports_used, 12u);
  // A k-ary fat tree uses every core port, so the uplinks have nowhere to plug in.
  EXPECT_FALSE(inv.feasible);
  ASSERT_EQ(inv.problems.size(), 2u);
  EXPECT_EQ(inv.problems[0],
            "site east: the gateway uplinks need 4 ports of the core tier, which has 0 free; size "
            "the site with spare core ports");
}

// Two leaf-spine sites of 28 nodes x 8 GPUs: 224 hosts on 7 leaves (32 down, 32 up), 224 leaf
// uplinks on ceil(224 / 64) = 4 spines, so 256 - 224 = 32 spine ports stay free per site.
const char* kLeafSpineSites = R"(  builder: multi_site
  distance: 50km
  capacity: 12.8Tbps
  sites:
    east: {builder: leaf_spine, nodes: 28}
    west: {builder: leaf_spine, nodes: 28}
)";

TEST(MultiSite, UplinksUseTheFreeSpinePorts) {
  const BuildResult r = build_yaml(kLeafSpineSites);
  const Inventory& inv = r.inventory;
  // 12.8 Tb/s / 400 Gb/s = 32 gateway ports per site, 8 per spine: exactly the free ones.
  EXPECT_TRUE(inv.feasible) << (inv.problems.empty() ? "" : inv.problems[0]);
  const auto spine = std::find_if(inv.tiers.begin(), inv.tiers.end(),
                                  [](const TierFigures& t) { return t.tier == "spine"; });
  ASSERT_NE(spine, inv.tiers.end());
  EXPECT_EQ(spine->switches, 8u);
  EXPECT_EQ(spine->ports_used, 2 * 256u);
  EXPECT_EQ(spine->ports_free, 0u);
  // Gateways: 32 uplink ports and 32 long-haul ports each, 64 of 64.
  EXPECT_EQ(inv.tiers.back().ports_used, 128u);
  EXPECT_EQ(inv.tiers.back().ports_free, 0u);
  // The cut between the sites is the long-haul link.
  EXPECT_DOUBLE_EQ(inv.bisection.gigabits_per_second(), 12'800.0);
}

TEST(MultiSite, InventoryAgreesWithCountingItsOwnGraph) {
  // Re-reading the merged graph with from_file counts every part from the graph; the figures
  // multi_site derives must match it. Small sites (one 32-port-used leaf each) keep this fast.
  // Per port: a graph holds links, not which link ends share a twin-port module.
  const BuildResult r = build_yaml(R"(  builder: multi_site
  distance: 20km
  capacity: 800Gbps
  sites:
    - {builder: leaf_spine, nodes: 4, optics: per_port}
    - {builder: leaf_spine, nodes: 2, optics: per_port}
)");
  ASSERT_TRUE(r.graph.has_value());
  std::ostringstream json;
  write_graph_json(*r.graph, json);
  const ArgNode graph = parse_json_args(json.str(), "merged.json", "cluster");
  ArgNode args = graph;
  args.set("builder", ArgNode::scalar("from_file", "cluster.builder"));
  const BuildResult counted = build_topology(args);
  EXPECT_EQ(counted.inventory.gpus, r.inventory.gpus);
  EXPECT_EQ(counted.inventory.cables, r.inventory.cables);
  EXPECT_EQ(counted.inventory.transceivers, r.inventory.transceivers);
  EXPECT_DOUBLE_EQ(counted.inventory.cost_usd, r.inventory.cost_usd);
  EXPECT_DOUBLE_EQ(counted.inventory.power_w, r.inventory.power_w);
  EXPECT_EQ(counted.inventory.feasible, r.inventory.feasible);
  ASSERT_EQ(counted.inventory.tiers.size(), r.inventory.tiers.size());
  for (std::size_t i = 0; i < r.inventory.tiers.size(); ++i) {
    EXPECT_EQ(counted.inventory.tiers[i].tier, r.inventory.tiers[i].tier);
    EXPECT_EQ(counted.inventory.tiers[i].ports_used, r.inventory.tiers[i].ports_used)
        << r.inventory.tiers[i].tier;
  }
  EXPECT_DOUBLE_EQ(counted.inventory.bisection.bytes_per_second(),
                   r.inventory.bisection.bytes_per_second());
  EXPECT_EQ(counted.inventory.max_one_way_latency, r.inventory.max_one_way_latency);
}

TEST(MultiSite, DiameterAddsTheGatewayHops) {
  const BuildResult site = fat_tree_k4();
  const BuildResult r = build_yaml(kTwoSites);
  // GPU -> its site's core (half the site diameter in switch-to-switch hops), core -> gateway,
  // gateway -> gateway, gateway -> core, then down: site diameter + 3.
  EXPECT_EQ(r.inventory.diameter_switch_hops, site.inventory.diameter_switch_hops + 3);
}

TEST(MultiSite, ListOfSitesWithNamesAndExplicitLinks) {
  const BuildResult r = build_yaml(R"(  builder: multi_site
  capacity: 400Gbps
  sites:
    - {name: a, builder: fat_tree, k: 4}
    - {name: b, builder: fat_tree, k: 4}
    - {name: c, builder: fat_tree, k: 4}
  links:
    - {a: a, b: b, distance: 10km}
    - {a: b, b: c, distance: 20km}
)");
  ASSERT_TRUE(r.graph.has_value());
  EXPECT_EQ(r.graph->num_sites(), 3u);
  // a to c crosses 10 km + 20 km of fibre: at least 150 us.
  EXPECT_GE(r.inventory.max_one_way_latency, Time::us(150));
  EXPECT_LT(r.inventory.max_one_way_latency, Time::us(155));
}

TEST(MultiSite, Errors) {
  EXPECT_EQ(error_of([] {
              build_yaml(
                  "  builder: multi_site\n  distance: 50\n  capacity: 1Tbps\n  sites:\n"
                  "    a: {builder: fat_tree, k: 4}\n    b: {builder: fat_tree, k: 4}\n");
            }),
            "m.yaml:4:13: cluster.distance: '50' needs a unit (m or km)");
  EXPECT_EQ(error_of([] {
              build_yaml(
                  "  builder: multi_site\n  distance: 5km\n  capacity: 1Tbps\n  sites:\n"
                  "    a: {builder: fat_tree, k: 4}\n");
            }),
            "m.yaml:6:3: cluster.sites: needs at least 2 sites, got 1");
  EXPECT_EQ(error_of([] {
              build_yaml(
                  "  builder: multi_site\n  capacity: 1Tbps\n  sites:\n"
                  "    a: {builder: fat_tree, k: 4}\n    b: {builder: fat_tree, k: 4}\n"
                  "    c: {builder: fat_tree, k: 4}\n  links: [{a: a, b: b, distance: 1km}]\n");
            }),
            "m.yaml:9:3: cluster.links: site 'c' is not joined to site 'a' by any chain of links");
  // Errors inside a site keep the site's path.
  const std::string inner = error_of([] {
    build_yaml(
        "  builder: multi_site\n  distance: 5km\n  capacity: 1Tbps\n  sites:\n"
        "    a: {builder: fat_tree, k: 4}\n    b: {builder: fat_tree, k: 5}\n");
  });
  // '    b: {builder: fat_tree, k: 5}': the 5 is in column 31.
  EXPECT_EQ(inner.rfind("m.yaml:8:31: cluster.sites.b.k: must be even", 0), 0u) << inner;
}

}  // namespace
}  // namespace lockstep
