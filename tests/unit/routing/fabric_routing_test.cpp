// Routing by technology on a rail-optimised fat tree: InfiniBand's D-mod-K routes a shift
// permutation with no two flows on one link; RoCE's per-flow ECMP hash puts several on some
// uplinks, and splitting each connection over more queue pairs spreads them more evenly.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "../topology/topology_test_util.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/routing/router.hpp"

namespace lockstep {
namespace {

// 64 HGX H100 nodes on NDR: two SUs of 32, 16 rail leaves of 32 hosts and 32 uplinks, 8 spines
// of 64 ports, so every leaf has 4 parallel cables to every spine.
const Topology& fabric() {
  static const Topology t = test::hgx_h100(64);
  return t;
}

// Bytes per directed switch-to-switch link (1 per flow) when GPU rank i sends to rank i + shift.
std::map<DirLinkId, double> shift_loads(const Topology& t, const RouterOptions& options,
                                        std::size_t shift) {
  const auto router = make_router(t, options);
  const auto gpus = t.gpus();
  std::map<DirLinkId, double> loads;
  std::vector<PathShare> paths;
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    router->route({gpus[i], gpus[(i + shift) % gpus.size()], 0}, nullptr, paths);
    for (const PathShare& p : paths)
      for (const DirLinkId d : p.hops)
        if (t.device(t.source(d)).kind == DeviceKind::Switch &&
            t.device(t.target(d)).kind == DeviceKind::Switch)
          loads[d] += p.fraction;
  }
  return loads;
}

double busiest(const std::map<DirLinkId, double>& loads) {
  double most = 0;
  for (const auto& [link, load] : loads) most = std::max(most, load);
  return most;
}

TEST(FabricRouting, DModKRoutesShiftPermutationsWithoutCollisions) {
  // Rank i + 256 is the same rail 32 nodes on, in the other SU: all 512 flows cross the spines,
  // each leaf's 32 flows over its 32 uplinks and into the other leaf over its 32. Shifts that
  // change rail or stay mostly inside an SU put fewer flows on the spines, none sharing either.
  for (const std::size_t shift : {256u, 8u, 3u, 77u, 300u}) {
    const auto loads = shift_loads(fabric(), {RoutingPolicy::DestinationModK, 1, 0}, shift);
    EXPECT_FALSE(loads.empty()) << shift;
    EXPECT_EQ(busiest(loads), 1.0) << "shift " << shift;
  }
  // 512 flows, each up a leaf uplink and down a spine downlink: 1,024 links carry one each.
  EXPECT_EQ(shift_loads(fabric(), {RoutingPolicy::DestinationModK, 1, 0}, 256).size(), 1024u);
}

TEST(FabricRouting, EcmpHashCollidesAndMoreQueuePairsCollideLess) {
  // 32 flows hashed onto 32 uplinks: all distinct with probability 32!/32^32 ~ 1e-13 per leaf.
  // Split into q subflows of 1/q, a link's load is a sum of q-times more, q-times smaller
  // shares, closer to its mean of 1.
  double one = 0, four = 0;
  for (std::uint64_t seed = 0; seed < 4; ++seed) {
    const double b1 = busiest(shift_loads(fabric(), {RoutingPolicy::Ecmp, 1, seed}, 256));
    const double b4 = busiest(shift_loads(fabric(), {RoutingPolicy::Ecmp, 4, seed}, 256));
    EXPECT_GE(b1, 2.0) << "seed " << seed;
    EXPECT_GT(b4, 1.0) << "seed " << seed;
    one += b1;
    four += b4;
  }
  EXPECT_LT(four, one);
}

TEST(FabricRouting, DModKIsDestinationBased) {
  // Every source and label reaches a destination over the same spine links: the forwarding
  // tables hold one entry per destination (LID), not per flow.
  const Topology& t = fabric();
  const auto router = make_router(t, {RoutingPolicy::DestinationModK, 1, 0});
  const auto gpus = t.gpus();
  std::vector<PathShare> a, b;
  router->route({gpus[0], gpus[300], 0}, nullptr, a);
  router->route({gpus[0], gpus[300], 9}, nullptr, b);
  EXPECT_EQ(a[0].hops, b[0].hops);
  // Two sources on one leaf (rail 4 of nodes 0 and 1): the same path from the leaf on.
  router->route({gpus[4], gpus[300], 0}, nullptr, a);
  router->route({gpus[12], gpus[300], 0}, nullptr, b);
  ASSERT_EQ(a[0].hops.size(), b[0].hops.size());
  EXPECT_TRUE(std::equal(a[0].hops.end() - 4, a[0].hops.end(), b[0].hops.end() - 4));
}

Topology preset(const std::string& fabric, std::uint32_t qps, const std::string& routing = "") {
  PresetRequest request;
  request.system = "hgx-h100";
  request.fabric = fabric;
  request.nodes = 2;
  request.qps_per_connection = qps;
  request.routing = routing;
  return std::move(*build_topology(rail_optimized_args(resolve_preset(request))).graph);
}

TEST(FabricRouting, PolicyFollowsTheTechnology) {
  const RouterOptions ib = fabric_routing(preset("ib-ndr", 0));
  EXPECT_EQ(ib.policy, RoutingPolicy::DestinationModK);
  EXPECT_EQ(ib.queue_pairs, 1u);
  const RouterOptions roce = fabric_routing(preset("roce-400g", 4));
  EXPECT_EQ(roce.policy, RoutingPolicy::Ecmp);
  EXPECT_EQ(roce.queue_pairs, 4u);
  EXPECT_EQ(fabric_routing(preset("efa", 0)).policy, RoutingPolicy::Ecmp);
  EXPECT_EQ(fabric_routing(preset("tcp", 0)).policy, RoutingPolicy::Ecmp);
  // Spectrum-X: RoCE whose switches spread packets, named by the routing key.
  EXPECT_EQ(fabric_routing(preset("roce-400g", 0, "spray")).policy, RoutingPolicy::Spray);
}

TEST(FabricRouting, BadKeysAreInputErrorsNamingThem) {
  auto field_of = [](const test::Kv& kv) {
    try {
      preset_request(test::args(kv));
    } catch (const InputError& e) {
      return std::string(e.field());
    }
    return std::string("no error");
  };
  EXPECT_NE(
      field_of({{"system", "hgx-h100"}, {"qps_per_connection", "0"}}).find("qps_per_connection"),
      std::string::npos);
  EXPECT_NE(field_of({{"system", "hgx-h100"}, {"routing", "random"}}).find("routing"),
            std::string::npos);
}

}  // namespace
}  // namespace lockstep
