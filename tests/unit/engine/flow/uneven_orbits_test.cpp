// Link orbits whose links carry different class routes (docs/flow-engine.md "Link orbits"):
// under ECMP a representative's two channels can hash onto one uplink while a member's land on
// two, or two members of one class hash onto one uplink while a third has its own. The aggregated
// run is kept while such an uplink limits nothing (a tie included) and given up for finer classes
// the moment it would, so every run below gives the individual run's times.
#include <gtest/gtest.h>

#include <functional>

#include "fixtures.hpp"

namespace lockstep {
namespace {

using flow_test::CrossLeafExchange;
using flow_test::SpineRouter;
using flow_test::two_leaves;

struct Runs {
  RunResult aggregated, individual;
  FlowRunStats stats;
};
Runs run_aggregated_and_individual(const Topology& t, const Router& router,
                                   const ProgramSet& programs) {
  FlowEngine aggregated({});
  FlowEngine individual({.aggregate = false});
  Runs runs;
  runs.aggregated = aggregated.run(flow_test::input_for(t, programs, router));
  runs.individual = individual.run(flow_test::input_for(t, programs, router));
  runs.stats = aggregated.last_stats();
  return runs;
}
// Every rank's finish and every link's bytes equal the individual run's.
void expect_same_figures(const Runs& runs) {
  EXPECT_EQ(runs.aggregated.rank_finish, runs.individual.rank_finish);
  EXPECT_EQ(runs.aggregated.link_bytes, runs.individual.link_bytes);
}
// flow_test::skewed_exchange: GPUs 0, 1 on leaf A, GPUs 2, 3 on leaf B, two spines, GPUs 0 and 1
// putting both channels on spine 0, GPUs 2 and 3 channel c on spine c.
Runs run_both(double spine) {
  return run_aggregated_and_individual(flow_test::skewed_exchange_topology(spine),
                                       flow_test::skewed_spines(), CrossLeafExchange{});
}

// Spines at 200 GB/s: A -> S0 carries the four flows of GPUs 0 and 1, each held to 50 GB/s by its
// GPU's uplink (two channels on 100 GB/s), 200 GB/s in all: a tie, not a limit. Every send takes
// 4 us + 1 MB / 50 GB/s = 24 us, and the two classes stay aggregated.
TEST(FlowUnevenOrbits, AnUplinkThatLimitsNothingKeepsTheClasses) {
  const Runs runs = run_both(200);
  EXPECT_EQ(runs.stats.simulated_ranks, 2u);
  EXPECT_EQ(runs.aggregated.makespan, Time::us(24));
  EXPECT_EQ(runs.individual.makespan, Time::us(24));
  expect_same_figures(runs);
}

// Spines at 100 GB/s: the four flows on A -> S0 get 25 GB/s each (4 + 40 = 44 us) while GPUs 2
// and 3 send at 50 GB/s (24 us), and 0, 1 receive theirs in 24 us: members of one class differ.
// The engine sees the uplink limit a flow and runs every rank on its own.
TEST(FlowUnevenOrbits, AnUplinkThatLimitsAFlowSplitsTheClasses) {
  const Runs runs = run_both(100);
  EXPECT_EQ(runs.stats.simulated_ranks, 4u);
  EXPECT_EQ(runs.aggregated.makespan, Time::us(44));
  EXPECT_EQ(runs.aggregated.rank_finish[0], Time::us(44));
  expect_same_figures(runs);
}

// Every rank sends S = 1 MB to rank r + 1 and receives S from rank r - 1 (one channel); ranks r,
// r + 2, r + 4 form a class (period 2).
class ShiftByOne final : public MaterializedProgramSet {
 public:
  ShiftByOne() : MaterializedProgramSet(6) {
    for (Rank r = 0; r < 6; ++r) {
      add(r, make_send((r + 1) % 6, {Buffer::Input, 0, 1'000'000}, 0));
      add(r, make_recv((r + 5) % 6, {Buffer::Output, 0, 1'000'000}, RecvMode::Copy, 0));
    }
  }
  Rank symmetry_period() const override { return 2; }
};

// Even GPUs 0, 2, 4 on leaf A, odd GPUs 1, 3, 5 on leaf B, three spines. GPUs 0 and 2 hash onto
// spine 0 and GPU 4 onto spine 1: two members of the class {0, 2, 4} share an uplink, the third
// has one of its own. GPUs 1, 3, 5 take spines 0, 1, 2.
Runs run_member_collision(double spine) {
  const auto on_a = [](std::uint32_t i) { return i % 2 == 0; };
  const SpineRouter router(6, on_a, [](const FlowKey& key) {
    constexpr std::uint32_t kSpineOf[6] = {0, 0, 0, 1, 1, 2};
    return kSpineOf[key.src];
  });
  return run_aggregated_and_individual(two_leaves(6, 3, spine, on_a), router, ShiftByOne{});
}

// Spines at 200 GB/s: A -> S0 and S0 -> B carry the flows of GPUs 0 and 2, each held to 100 GB/s
// by its GPU's link: 200 GB/s, a tie. Every send takes 4 us + 1 MB / 100 GB/s = 14 us and the
// two classes of three stay aggregated.
TEST(FlowUnevenOrbits, TwoMembersOnOneUplinkThatLimitsNothingKeepTheClasses) {
  const Runs runs = run_member_collision(200);
  EXPECT_EQ(runs.stats.simulated_ranks, 2u);
  EXPECT_EQ(runs.aggregated.makespan, Time::us(14));
  expect_same_figures(runs);
}

// Spines at 100 GB/s: GPUs 0 and 2 share A -> S0 at 50 GB/s each, 4 + 20 = 24 us, while GPU 4
// sends in 14 us: the class's members differ, and the engine splits it.
TEST(FlowUnevenOrbits, TwoMembersOnOneUplinkThatLimitsThemSplitTheClasses) {
  const Runs runs = run_member_collision(100);
  EXPECT_EQ(runs.stats.simulated_ranks, 6u);
  EXPECT_EQ(runs.aggregated.makespan, Time::us(24));
  EXPECT_EQ(runs.aggregated.rank_finish[4], Time::us(14));
  expect_same_figures(runs);
}

// GPU l of each node exchanges S = 1 MB with GPU l of the other on channel l, so rotating the
// GPUs of both nodes (and the channels with them) maps the programs onto themselves.
class ExchangeAcrossNodes final : public MaterializedProgramSet {
 public:
  ExchangeAcrossNodes() : MaterializedProgramSet(8) {
    for (Rank r = 0; r < 8; ++r) {
      const auto ch = static_cast<std::uint16_t>(r % 4);
      add(r, make_send((r + 4) % 8, {Buffer::Input, 0, 1'000'000}, ch));
      add(r, make_recv((r + 4) % 8, {Buffer::Output, 0, 1'000'000}, RecvMode::Copy, ch));
    }
  }
  Rank local_symmetry() const override { return 4; }
};

// The spine-0 links carry three flows at 100 / 3 GB/s each: 4 us + 1 MB / (100/3 GB/s) = 34 us,
// while GPUs 3 and 7 finish in 4 + 10 = 14 us. The full rotation (2 classes of 4) finds the
// overloaded uplink during its run; the rotation by 2 GPUs (4 classes of 2) would find the same
// one, so it is skipped: two attempts, the second with every rank on its own.
TEST(FlowUnevenOrbits, ACollisionFoundDuringTheRunSkipsTheFinerRotations) {
  // Two "nodes" of four GPUs on leaves A and B, all links 100 GB/s. GPUs 0, 1, 2 and 4, 5, 6 hash
  // onto spine 0, GPUs 3 and 7 onto spine 1.
  const Topology t = flow_test::leaf_spine(4, 2, Bandwidth::gBps(100), Time::us(1));
  const SpineRouter router(
      8, [](std::uint32_t i) { return i < 4; },
      [](const FlowKey& key) { return key.src % 4 == 3 ? 1u : 0u; });
  const Runs runs = run_aggregated_and_individual(t, router, ExchangeAcrossNodes{});
  EXPECT_EQ(runs.stats.attempts, 2u);
  EXPECT_EQ(runs.stats.simulated_ranks, 8u);
  EXPECT_EQ(runs.aggregated.makespan, Time::us(34));
  EXPECT_EQ(runs.aggregated.rank_finish[3], Time::us(14));
  expect_same_figures(runs);
}

}  // namespace
}  // namespace lockstep
