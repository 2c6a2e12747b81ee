// Link orbits whose links carry different class routes (docs/flow-engine.md "Link orbits"):
// under ECMP a representative's two channels can hash onto one uplink while a member's land on
// two. The aggregated run is kept while that uplink limits nothing (a tie included) and given up
// for finer classes the moment it would, so both runs below give the individual run's times.
#include <gtest/gtest.h>

#include "fixtures.hpp"

namespace lockstep {
namespace {

using flow_test::gpu;
using flow_test::sw;

// GPUs 0, 1 on leaf A, GPUs 2, 3 on leaf B (100 GB/s), leaves to spines S0 and S1 at `spine`
// GB/s, 1 us per link. Link ids: GPU i - leaf is link i; A-S0 4, B-S0 5, A-S1 6, B-S1 7.
Topology two_leaves(double spine) {
  TopologyBuilder b("two_leaves");
  for (std::uint32_t i = 0; i < 4; ++i) b.add_device(gpu(i));
  const DeviceId a = b.add_device(sw(0)), bl = b.add_device(sw(0));
  const DeviceId s0 = b.add_device(sw(1)), s1 = b.add_device(sw(1));
  const Bandwidth g = Bandwidth::gBps(100), x = Bandwidth::gBps(spine);
  for (std::uint32_t i = 0; i < 4; ++i) b.add_link(Link{i, i < 2 ? a : bl, g, Time::us(1)});
  b.add_link(Link{a, s0, x, Time::us(1)});
  b.add_link(Link{bl, s0, x, Time::us(1)});
  b.add_link(Link{a, s1, x, Time::us(1)});
  b.add_link(Link{bl, s1, x, Time::us(1)});
  return std::move(b).build();
}

// Hashing as it may fall: GPUs 0 and 1 put both channels on spine 0, GPUs 2 and 3 put channel c
// on spine c.
class SkewedRouter final : public Router {
 public:
  void route(const FlowKey& key, const LinkLoadView*, std::vector<PathShare>& out) const override {
    const std::uint32_t spine = key.src < 2 ? 0 : static_cast<std::uint32_t>(key.label);
    const bool from_a = key.src < 2;
    const LinkId up = spine == 0 ? (from_a ? 4 : 5) : (from_a ? 6 : 7);
    const LinkId down = spine == 0 ? (from_a ? 5 : 4) : (from_a ? 7 : 6);
    out.assign(1, PathShare{{2 * key.src, 2 * up, 2 * down + 1, 2 * key.dst + 1}, 1.0});
  }
  RoutingPolicy policy() const override { return RoutingPolicy::Ecmp; }
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
Runs run_both(double spine) {
  const Topology t = two_leaves(spine);
  const SkewedRouter router;
  const CrossLeafExchange programs;
  FlowEngine aggregated({});
  FlowEngine individual({.aggregate = false});
  Runs runs;
  runs.aggregated = aggregated.run(flow_test::input_for(t, programs, router));
  runs.individual = individual.run(flow_test::input_for(t, programs, router));
  runs.stats = aggregated.last_stats();
  return runs;
}

// Spines at 200 GB/s: A -> S0 carries the four flows of GPUs 0 and 1, each held to 50 GB/s by its
// GPU's uplink (two channels on 100 GB/s), 200 GB/s in all: a tie, not a limit. Every send takes
// 4 us + 1 MB / 50 GB/s = 24 us, and the two classes stay aggregated.
TEST(FlowUnevenOrbits, AnUplinkThatLimitsNothingKeepsTheClasses) {
  const Runs runs = run_both(200);
  EXPECT_EQ(runs.stats.simulated_ranks, 2u);
  EXPECT_EQ(runs.aggregated.makespan, Time::us(24));
  EXPECT_EQ(runs.individual.makespan, Time::us(24));
  EXPECT_EQ(runs.aggregated.rank_finish, runs.individual.rank_finish);
  EXPECT_EQ(runs.aggregated.link_bytes, runs.individual.link_bytes);
}

// Spines at 100 GB/s: the four flows on A -> S0 get 25 GB/s each (4 + 40 = 44 us) while GPUs 2
// and 3 send at 50 GB/s (24 us), and 0, 1 receive theirs in 24 us: members of one class differ.
// The engine sees the uplink limit a flow and runs every rank on its own.
TEST(FlowUnevenOrbits, AnUplinkThatLimitsAFlowSplitsTheClasses) {
  const Runs runs = run_both(100);
  EXPECT_EQ(runs.stats.simulated_ranks, 4u);
  EXPECT_EQ(runs.aggregated.makespan, Time::us(44));
  EXPECT_EQ(runs.aggregated.rank_finish, runs.individual.rank_finish);
  EXPECT_EQ(runs.aggregated.rank_finish[0], Time::us(44));
  EXPECT_EQ(runs.aggregated.link_bytes, runs.individual.link_bytes);
}

}  // namespace
}  // namespace lockstep
