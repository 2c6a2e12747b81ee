// The router's shortcut through a destination's gateway (its leaf switch, DistanceField::
// find_gateway) changes no route: every hop equals that of the router searching towards each
// destination itself, on fabrics with and without gateways, under every per-flow policy, and
// with a failed NIC link (the failover's legs).
#include <gtest/gtest.h>

#include "../../../src/routing/reference_router.hpp"
#include "../topology/topology_test_util.hpp"
#include "lockstep/routing/router.hpp"
#include "lockstep/topology/faults.hpp"

namespace lockstep {
namespace {

// Routes from every `stride`-th GPU to every GPU, two flow labels, compared hop for hop; returns
// how many routes crossed a switch (so that the comparison is not of trivial routes only).
int expect_same_routes(const Topology& t, RoutingPolicy policy, std::uint32_t stride) {
  RouterOptions options;
  options.policy = policy;
  const auto fast = make_router(t, options);
  const auto reference = routing_detail::make_router_without_gateways(t, options);
  std::vector<PathShare> a, b;
  const auto gpus = t.gpus();
  int through_switches = 0;
  for (std::size_t i = 0; i < gpus.size(); i += stride)
    for (std::size_t j = 0; j < gpus.size(); ++j)
      for (std::uint64_t label : {0u, 7u}) {
        fast->route({gpus[i], gpus[j], label}, nullptr, a);
        reference->route({gpus[i], gpus[j], label}, nullptr, b);
        EXPECT_EQ(a.size(), b.size());
        for (std::size_t k = 0; k < std::min(a.size(), b.size()); ++k) {
          EXPECT_EQ(a[k].hops, b[k].hops) << "gpu " << i << " -> gpu " << j << " label " << label;
          EXPECT_EQ(a[k].fraction, b[k].fraction);
        }
        for (const DirLinkId d : a.empty() ? std::vector<DirLinkId>{} : a[0].hops)
          if (t.device(t.target(d)).kind == DeviceKind::Switch) {
            ++through_switches;
            break;
          }
      }
  return through_switches;
}

constexpr RoutingPolicy kPolicies[] = {RoutingPolicy::Ecmp, RoutingPolicy::Adaptive,
                                       RoutingPolicy::DimensionOrder, RoutingPolicy::RailAligned,
                                       RoutingPolicy::DestinationModK};

TEST(Gateways, RailOptimisedFabricsRouteAsWithoutThem) {
  // 40 HGX nodes: more than one leaf per rail, so routes climb to the spines.
  const Topology t = test::hgx_h100(40);
  for (RoutingPolicy p : kPolicies) EXPECT_GT(expect_same_routes(t, p, 13), 1000);
}

TEST(Gateways, AFailedNicLinksFailoverRoutesAsWithoutThem) {
  // GPU 3's NIC loses its leaf: GPU 3 sends and receives through GPU 4's NIC.
  const Topology healthy = test::hgx_h100(40);
  LinkId cut = kNone;
  for (const Port& p : healthy.ports(healthy.gpus()[3]))
    if (healthy.device(p.peer).kind == DeviceKind::Nic)
      for (const Port& q : healthy.ports(p.peer))
        if (healthy.device(q.peer).kind == DeviceKind::Switch) cut = Topology::link_of(q.out);
  ASSERT_NE(cut, kNone);
  const std::vector<FaultSpec> faults = {
      parse_fault("failed-link:link=" + std::to_string(cut), "--fault")};
  const Topology t = apply_link_faults(healthy, faults);
  for (RoutingPolicy p : kPolicies) EXPECT_GT(expect_same_routes(t, p, 3), 1000);
}

TEST(Gateways, OtherBuildersRouteAsWithoutThem) {
  const std::vector<test::Kv> clusters = {
      {{"builder", "leaf_spine"},
       {"gpu", "h100"},
       {"nodes", "16"},
       {"nic", "cx7_ndr"},
       {"switch", "qm9700"},
       {"oversubscription", "4"}},
      {{"builder", "fat_tree"}, {"gpu", "h100"}, {"gpus", "512"}, {"switch", "qm9700"}},
      {{"builder", "dragonfly"},
       {"nodes_per_router", "2"},
       {"routers_per_group", "3"},
       {"global_links_per_router", "1"},
       {"groups", "4"},
       {"gpu", "h100"},
       {"gpus_per_node", "4"}},
      {{"builder", "torus"}, {"dims", "4x4x2"}, {"gpu", "h100"}},
  };
  for (const auto& kv : clusters) {
    SCOPED_TRACE(kv[0].second);
    const Topology t = std::move(*test::build(kv).graph);
    for (RoutingPolicy p : kPolicies) expect_same_routes(t, p, 5);
  }
}

// Spraying follows the same fields as a single path: every sprayed path, in order and with its
// share of the flow, equals the one the search towards each destination gives (the 3-tier fat
// tree's 64 paths per route cross the spines and the cores).
TEST(Gateways, SprayedRoutesAsWithoutThem) {
  EXPECT_GT(expect_same_routes(test::hgx_h100(40), RoutingPolicy::Spray, 37), 1000);
  const Topology fat = std::move(
      *test::build(
           {{"builder", "fat_tree"}, {"gpu", "h100"}, {"gpus", "512"}, {"switch", "qm9700"}})
           .graph);
  EXPECT_GT(expect_same_routes(fat, RoutingPolicy::Spray, 61), 1000);
}

}  // namespace
}  // namespace lockstep
