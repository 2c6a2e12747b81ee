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

using flow_test::gpu;
using flow_test::sw;

// n GPUs, those with on_a(i) on leaf A and the others on leaf B (100 GB/s), both leaves to
// `spines` spines at `spine` GB/s, 1 us per link. Link ids: GPU i - its leaf is link i; leaf A -
// spine k is n + 2k, leaf B - spine k is n + 2k + 1.
Topology two_leaves(std::uint32_t n, std::uint32_t spines, double spine,
                    const std::function<bool(std::uint32_t)>& on_a) {
  TopologyBuilder b("two_leaves");
  for (std::uint32_t i = 0; i < n; ++i) b.add_device(gpu(i));
  const DeviceId a = b.add_device(sw(0)), bl = b.add_device(sw(0));
  const Bandwidth g = Bandwidth::gBps(100), x = Bandwidth::gBps(spine);
  for (std::uint32_t i = 0; i < n; ++i) b.add_link(Link{i, on_a(i) ? a : bl, g, Time::us(1)});
  for (std::uint32_t k = 0; k < spines; ++k) {
    const DeviceId s = b.add_device(sw(1));
    b.add_link(Link{a, s, x, Time::us(1)});
    b.add_link(Link{bl, s, x, Time::us(1)});
  }
  return std::move(b).build();
}

// ECMP as it may fall on such a topology (or flow_test::leaf_spine, which numbers its links the
// same way): flow key -> spine, the path GPU -> leaf -> spine -> the other leaf -> GPU.
class SpineRouter final : public Router {
 public:
  SpineRouter(std::uint32_t gpus, std::function<bool(std::uint32_t)> on_a,
              std::function<std::uint32_t(const FlowKey&)> spine_of)
      : gpus_(gpus), on_a_(std::move(on_a)), spine_of_(std::move(spine_of)) {}
  void route(const FlowKey& key, const LinkLoadView*, std::vector<PathShare>& out) const override {
    const LinkId a_side = gpus_ + 2 * spine_of_(key), b_side = a_side + 1;
    const bool from_a = on_a_(key.src);
    const LinkId up = from_a ? a_side : b_side, down = from_a ? b_side : a_side;
    out.assign(1, PathShare{{2 * key.src, 2 * up, 2 * down + 1, 2 * key.dst + 1}, 1.0});
  }
  RoutingPolicy policy() const override { return RoutingPolicy::Ecmp; }

 private:
  std::uint32_t gpus_;
  std::function<bool(std::uint32_t)> on_a_;
  std::function<std::uint32_t(const FlowKey&)> spine_of_;
};

// Every rank sends S = 1 MB on channels 0 and 1 to rank r + 2 and receives the same from it;
// ranks r and r + 2 form a class (period 2).
class CrossLeafExchange final : public MaterializedProgramSet {
 public:
  CrossLeafExchange() : MaterializedProgramSet(4) {
    for (Rank r = 0; r < 4; ++r) {
      for (std::uint16_t ch = 0; ch < 2; ++ch)
        add(r, make_send((r + 2) % 4, {Buffer::Input, 0, 1'000'000}, ch));
      for (std::uint16_t ch = 0; ch < 2; ++ch)
        add(r, make_recv((r + 2) % 4, {Buffer::Output, 0, 1'000'000}, RecvMode::Copy, ch));
    }
  }
  Rank symmetry_period() const override { return 2; }
};

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
// GPUs 0, 1 on leaf A, GPUs 2, 3 on leaf B, two spines. Hashing as it may fall: GPUs 0 and 1 put
// both channels on spine 0, GPUs 2 and 3 put channel c on spine c.
Runs run_both(double spine) {
  const auto on_a = [](std::uint32_t i) { return i < 2; };
  const SpineRouter skewed(4, on_a, [](const FlowKey& key) {
    return key.src < 2 ? 0u : static_cast<std::uint32_t>(key.label);
  });
  return run_aggregated_and_individual(two_leaves(4, 2, spine, on_a), skewed, CrossLeafExchange{});
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
