// Flow engine and routing together on leaf-spine fabrics: hash collisions, spraying,
// oversubscription and class aggregation with a period.
#include <gtest/gtest.h>

#include "../../topology/topology_test_util.hpp"
#include "fixtures.hpp"
#include "lockstep/collective/collective.hpp"
#include "lockstep/engine/flow/flow_engine.hpp"

namespace lockstep {
namespace {

using flow_test::input_for;
using flow_test::leaf_spine;

const Bandwidth kB = Bandwidth::gBps(50);
const Time kLat = Time::us(1);

// GPUs 0 -> 2 on channel c0 and 1 -> 3 on channel c1, 1 MB each, across a 2-spine leaf-spine.
Time two_cross_leaf_flows(const Topology& t, const Router& router, std::uint16_t c0,
                          std::uint16_t c1) {
  MaterializedProgramSet p(4);
  p.add(0, make_send(2, {Buffer::Input, 0, 1'000'000}, c0));
  p.add(2, make_recv(0, {Buffer::Output, 0, 1'000'000}, RecvMode::Copy, c0));
  p.add(1, make_send(3, {Buffer::Input, 0, 1'000'000}, c1));
  p.add(3, make_recv(1, {Buffer::Output, 0, 1'000'000}, RecvMode::Copy, c1));
  return make_flow_engine()->run(input_for(t, p, router)).makespan;
}

DeviceId spine_of(const Topology& t, const Router& router, DeviceId src, DeviceId dst,
                  std::uint64_t label) {
  std::vector<PathShare> out;
  router.route({src, dst, label}, nullptr, out);
  return t.target(out[0].hops[1]);
}

// Path: GPU -> leaf -> spine -> leaf -> GPU, 4 links of 1 us. Alone on their spines the flows
// take 4 + 20 = 24 us; hashed onto one spine they share its up- and downlink: 4 + 40 = 44 us.
// Spraying splits each flow over both spines, so each spine link carries half of each flow at
// half rate: the bytes still move at 5e10 B/s per flow, 24 us.
TEST(Fabric, EcmpCollisionHalvesTheRateAndSprayingAvoidsIt) {
  const Topology t = leaf_spine(2, 2, kB, kLat);
  auto ecmp = make_router(t, {});
  int found_shared = -1, found_apart = -1;
  for (int c1 = 0; c1 < 64 && (found_shared < 0 || found_apart < 0); ++c1) {
    const bool same = spine_of(t, *ecmp, 0, 2, 0) == spine_of(t, *ecmp, 1, 3, c1);
    (same ? found_shared : found_apart) = c1;
  }
  ASSERT_GE(found_shared, 0);
  ASSERT_GE(found_apart, 0);
  EXPECT_EQ(two_cross_leaf_flows(t, *ecmp, 0, static_cast<std::uint16_t>(found_shared)),
            Time::us(44));
  EXPECT_EQ(two_cross_leaf_flows(t, *ecmp, 0, static_cast<std::uint16_t>(found_apart)),
            Time::us(24));
  RouterOptions spray;
  spray.policy = RoutingPolicy::Spray;
  auto sprayer = make_router(t, spray);
  EXPECT_EQ(two_cross_leaf_flows(t, *sprayer, 0, static_cast<std::uint16_t>(found_shared)),
            Time::us(24));
}

// Cross-leaf all-to-all: each of the 4 GPUs of leaf A exchanges S with each of the 4 GPUs of
// leaf B, with spraying (so the spines are loaded evenly). With 4 spines (1:1) each GPU link
// carries 4 flows and is the bottleneck: 4 + 4S/B. With 2 spines (2:1) the leaf's 2 uplinks
// carry 16 flows: 4 + 16S/(2B) = 4 + 8S/B. For S = 100 MB, 4S/B = 8000 us: 8004 vs 16004 us, so
// the bus bandwidth halves (up to the 4 us of latency).
TEST(Fabric, OversubscribedLeafSpineHalvesCrossLeafAlltoall) {
  const std::uint64_t s = 100'000'000;
  MaterializedProgramSet p(8);
  for (Rank a = 0; a < 4; ++a) {
    for (Rank b = 4; b < 8; ++b) {
      p.add(a, make_send(b, {Buffer::Input, 0, s}));
      p.add(b, make_send(a, {Buffer::Input, 0, s}));
    }
  }
  for (Rank a = 0; a < 4; ++a) {
    for (Rank b = 4; b < 8; ++b) {
      p.add(b, make_recv(a, {Buffer::Output, 0, s}, RecvMode::Copy));
      p.add(a, make_recv(b, {Buffer::Output, 0, s}, RecvMode::Copy));
    }
  }
  RouterOptions spray;
  spray.policy = RoutingPolicy::Spray;
  const Topology full = leaf_spine(4, 4, kB, kLat);
  const Topology half = leaf_spine(4, 2, kB, kLat);
  auto r_full = make_router(full, spray);
  auto r_half = make_router(half, spray);
  const Time t_full = make_flow_engine()->run(input_for(full, p, *r_full)).makespan;
  const Time t_half = make_flow_engine()->run(input_for(half, p, *r_half)).makespan;
  EXPECT_EQ(t_full, Time::us(8004));
  EXPECT_EQ(t_half, Time::us(16004));
}

// Ring 0 -> 1 -> 2 -> 3 -> 0 over two leaves of two GPUs: 0 -> 1 and 2 -> 3 stay in a leaf,
// 1 -> 2 and 3 -> 0 cross the spine, so rotating by one rank is not a symmetry but rotating by
// two is. The engine must settle on classes of two and agree with the individual run.
TEST(Fabric, AggregationWithAPeriodAgreesWithIndividualRun) {
  const Topology t = leaf_spine(2, 1, kB, kLat);
  auto router = make_router(t, {});
  const flow_test::LazyRing ring(4, 4'000'000);
  FlowEngine aggregated({});
  const RunResult a = aggregated.run(input_for(t, ring, *router));
  EXPECT_EQ(aggregated.last_stats().class_size, 2u);
  FlowEngine individual({.aggregate = false});
  const RunResult b = individual.run(input_for(t, ring, *router));
  EXPECT_EQ(a.makespan, b.makespan);
  EXPECT_EQ(a.rank_finish, b.rank_finish);
  EXPECT_EQ(a.link_bytes, b.link_bytes);
  // Spine crossings: 4 us + 20 us for each of the 6 steps (the in-leaf ones take 22 us but wait
  // for the crossing ones of the previous step): 144 us.
  EXPECT_EQ(a.makespan, Time::us(144));
}

// A dragonfly of 5 groups of 2 routers, one single-GPU node per router, 2 global ports per
// router: its circulant global links (docs/topology.md) make moving every GPU by one group (2
// ranks) a symmetry of the fabric and of its minimal routes, so a direct alltoall runs as 2
// classes of 5 (translation by one rank is not one: a group's two routers differ), and its
// result is the every-rank run's, finish by finish and link by link.
TEST(Fabric, DragonflyAlltoallRunsOneClassPerRouterOfAGroupAndAgreesWithIndividualRun) {
  const Topology t = std::move(*test::build(test::small_dragonfly()).graph);
  auto router = make_router(t, {});
  CollectiveSpec spec;
  spec.op = CollectiveOp::AllToAll;
  spec.algorithm = Algorithm::Direct;
  spec.ranks = 10;
  spec.channels = 2;
  spec.bytes = Bytes(10 * 2 * 100'000);
  const auto programs = make_collective(spec);
  FlowEngine aggregated({});
  const RunResult a = aggregated.run(input_for(t, *programs, *router));
  EXPECT_EQ(aggregated.last_stats().class_size, 5u);
  FlowEngine individual({.aggregate = false});
  const RunResult b = individual.run(input_for(t, *programs, *router));
  EXPECT_EQ(a.makespan, b.makespan);
  EXPECT_EQ(a.rank_finish, b.rank_finish);
  EXPECT_EQ(a.link_bytes, b.link_bytes);
}

}  // namespace
}  // namespace lockstep
