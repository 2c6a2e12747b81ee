// Invariants of docs/flow-engine.md that no other test pins down: the order of the events of one
// instant and zero-time ops done as they are loaded; and two ways the coefficients of class flows
// on link orbits are known to miscount (disabled until fixed). Times derived by hand.
#include <gtest/gtest.h>

#include "fixtures.hpp"
#include "lockstep/engine/flow/flow_engine.hpp"

namespace lockstep {
namespace {

using flow_test::input_for;

const Time kLat = Time::us(1);  // per link: GPU - switch - GPU is 2 us

Op after(Op op, OpIndex dependency) {
  op.add_dep(dependency);
  return op;
}
BufferRange in(std::uint64_t bytes) {
  return {Buffer::Input, 0, bytes};
}
BufferRange out(std::uint64_t bytes) {
  return {Buffer::Output, 0, bytes};
}

// Runs `programs` on 2 GPUs of a star (1 us per link) at `bandwidth`, keeping every op's times.
RunResult run_on_two_gpus(Bandwidth bandwidth, const ProgramSet& programs) {
  const Topology t = flow_test::star(2, bandwidth, kLat);
  auto router = make_router(t, {});
  EngineOptions opt;
  opt.record_ops = true;
  return make_flow_engine()->run(input_for(t, programs, *router, opt));
}

// Runs `programs` with classes (the default) and with every rank on its own.
struct Runs {
  RunResult aggregated, individual;
  FlowRunStats stats;
};
Runs run_both_ways(const Topology& t, const Router& router, const ProgramSet& programs) {
  FlowEngine aggregated({});
  FlowEngine individual({.aggregate = false});
  Runs runs{aggregated.run(input_for(t, programs, router)),
            individual.run(input_for(t, programs, router)),
            {}};
  runs.stats = aggregated.last_stats();
  return runs;
}

// E1: events of one instant run in the order they were pushed. Rank 0's two computes end
// at 1 us, pushed in program order; each releases one send to rank 1 (1,000 B, then 3,000 B),
// which rank 1 receives in that order on one connection. At 1 GB/s the first message streams
// from 1 to 2 us and arrives at 4 us; the second streams after it, from 2 to 5 us, and arrives
// at 7 us. Were the instant's events run in another order, the 3,000 B send would post first and
// meet the 1,000 B recv: an InputError.
TEST(FlowInvariants, EventsOfOneInstantRunInTheOrderTheyWerePushed) {
  MaterializedProgramSet p(2);
  const OpIndex first = p.add(0, make_compute(Time::us(1)));
  const OpIndex second = p.add(0, make_compute(Time::us(1)));
  p.add(0, after(make_send(1, in(1'000)), first));
  p.add(0, after(make_send(1, in(3'000)), second));
  p.add(1, make_recv(0, out(1'000), RecvMode::Copy));
  p.add(1, make_recv(0, out(3'000), RecvMode::Copy));
  const RunResult r = run_on_two_gpus(Bandwidth::gBps(1), p);
  EXPECT_EQ(r.ops[1][0].end, Time::us(4));
  EXPECT_EQ(r.ops[1][1].end, Time::us(7));
}

// E3: a zero-length Compute whose dependencies are done finishes as it is loaded, at the
// load's instant and without an event; one that waits for an op finishes when that op does.
// Rank 0: two zero computes, a 1 MB send to rank 1, a zero compute after the send and a second
// 1 MB send after it; rank 1 receives both. At 50 GB/s over 2 us: the first send streams 0-20 us
// and arrives at 22 us, which finishes the third compute; the second send starts then (the
// connection is idle since 20 us) and arrives at 22 + 22 = 44 us. Events: FlowDone and Delivered
// per transfer, and the third compute's OpDone: 5 (7 if the first two had events; the second
// send would arrive at 42 us if the third compute ignored its dependency).
TEST(FlowInvariants, ZeroTimeComputesFinishAsTheyAreLoaded) {
  MaterializedProgramSet p(2);
  p.add(0, make_compute(Time::zero()));
  p.add(0, make_compute(Time::zero()));
  const OpIndex send = p.add(0, make_send(1, in(1'000'000)));
  const OpIndex joined = p.add(0, after(make_compute(Time::zero()), send));
  p.add(0, after(make_send(1, in(1'000'000)), joined));
  for (int k = 0; k < 2; ++k) p.add(1, make_recv(0, out(1'000'000), RecvMode::Copy));
  const RunResult r = run_on_two_gpus(Bandwidth::gBps(50), p);
  EXPECT_EQ(r.ops[0][0].end, Time::zero());
  EXPECT_EQ(r.ops[0][1].end, Time::zero());
  EXPECT_EQ(r.ops[0][3].start, Time::us(22));
  EXPECT_EQ(r.ops[0][3].end, Time::us(22));
  EXPECT_EQ(r.ops[0][4].end, Time::us(44));
  EXPECT_EQ(r.makespan, Time::us(44));
  EXPECT_EQ(r.events, 5u);
}

// Two leaves (GPUs 0, 1 on leaf A; 2, 3 on leaf B) and two spines. GPU links 100 GB/s, spine
// links 50 GB/s, 1 us per link. Directed link ids: GPU i -> its leaf 2i; leaf A -> spine k
// 2(4 + 2k); leaf B -> spine k 2(5 + 2k); spine -> leaf the next id.
Topology two_leaves_slow_spines() {
  TopologyBuilder b("two_leaves_slow_spines");
  for (std::uint32_t i = 0; i < 4; ++i) b.add_device(flow_test::gpu(i));
  const DeviceId a = b.add_device(flow_test::sw(0)), bl = b.add_device(flow_test::sw(0));
  for (std::uint32_t i = 0; i < 4; ++i)
    b.add_link(Link{i, i < 2 ? a : bl, Bandwidth::gBps(100), kLat});
  for (std::uint32_t k = 0; k < 2; ++k) {
    const DeviceId s = b.add_device(flow_test::sw(1));
    b.add_link(Link{a, s, Bandwidth::gBps(50), kLat});
    b.add_link(Link{bl, s, Bandwidth::gBps(50), kLat});
  }
  return std::move(b).build();
}

// Two path shares per connection (queue pairs), share k over spine k, except from GPU 3, whose
// share k takes spine 1 - k: ECMP as it may fall.
class TwoShareRouter final : public Router {
 public:
  void route(const FlowKey& key, const LinkLoadView*, std::vector<PathShare>& out) const override {
    out.clear();
    for (std::uint32_t k = 0; k < 2; ++k) {
      const std::uint32_t spine = key.src == 3 ? 1 - k : k;
      const bool from_a = key.src < 2;
      const LinkId a_side = 4 + 2 * spine, b_side = a_side + 1;
      const LinkId up = from_a ? a_side : b_side, down = from_a ? b_side : a_side;
      out.push_back(PathShare{{2 * key.src, 2 * up, 2 * down + 1, 2 * key.dst + 1}, 0.5});
    }
  }
  RoutingPolicy policy() const override { return RoutingPolicy::Ecmp; }
};

// Ranks r and r + 2 form a class (period 2). Rank r sends 1 MB to r + 2 and receives 1 MB from
// it; ranks 1 and 3 first compute for 5 us.
class LateSecondClass final : public MaterializedProgramSet {
 public:
  LateSecondClass() : MaterializedProgramSet(4) {
    for (Rank r = 0; r < 4; ++r) {
      const Op send = make_send((r + 2) % 4, in(1'000'000));
      add(r, r % 2 == 1 ? after(send, add(r, make_compute(Time::us(5)))) : send);
      add(r, make_recv((r + 2) % 4, out(1'000'000), RecvMode::Copy));
    }
  }
  Rank symmetry_period() const override { return 2; }
};

// C3, known defect: orbits joined while flows are live. Class 0's transfer (0 -> 2, and its member
// 2 -> 0) starts at 0: its two shares cross leaf-spine links whose orbits, {A->S0, B->S0} and
// {A->S1, B->S1}, are two solver constraints. Class 1's transfer (1 -> 3 and 3 -> 1) starts at
// 5 us; its member's shares take the other spines, which joins the two orbits into one whose
// every link carries one share of each class (an even orbit). By hand: until 5 us class 0's
// shares run at 50 GB/s (the spine links bind), 0.25 MB of each 0.5 MB share left; then every
// spine link carries two shares at 25 GB/s: class 0 streams until 15 us and arrives at 19 us;
// class 1 has 0.25 MB per share left at 15 us, alone at 50 GB/s until 20 us, and arrives at
// 24 us. The individual run gives exactly that. The aggregated run keeps each share's
// coefficient (1: members on one link of the old orbit) on the joined constraint, which then
// counts four shares per link instead of two, and finishes at 29 and 39 us: a known defect,
// reported with issue 18 and kept out of this restructuring; enable when it is fixed.
TEST(FlowInvariants, DISABLED_OrbitsJoinedEvenlyDuringTheRunCountOneLinksShares) {
  const Topology t = two_leaves_slow_spines();
  const TwoShareRouter router;
  // Whether the classes hold is the fix's choice; the times are not.
  const Runs runs = run_both_ways(t, router, LateSecondClass{});
  const std::vector<Time> expected = {Time::us(19), Time::us(24), Time::us(19), Time::us(24)};
  EXPECT_EQ(runs.individual.rank_finish, expected);
  EXPECT_EQ(runs.aggregated.rank_finish, expected);
}

// Four GPUs in a ring of links (i, i + 1), every path clockwise.
class Clockwise final : public Router {
 public:
  void route(const FlowKey& key, const LinkLoadView*, std::vector<PathShare>& out) const override {
    PathShare path{{}, 1.0};
    for (std::uint32_t d = key.src; d != key.dst; d = (d + 1) % 4) path.hops.push_back(2 * d);
    out.assign(1, path);
  }
  RoutingPolicy policy() const override { return RoutingPolicy::Ecmp; }
};

// Every rank sends 1 MB to rank r + 2 and receives 1 MB from it: one class of four (period 1).
class SendTwoOn final : public MaterializedProgramSet {
 public:
  SendTwoOn() : MaterializedProgramSet(4) {
    for (Rank r = 0; r < 4; ++r) {
      add(r, make_send((r + 2) % 4, in(1'000'000)));
      add(r, make_recv((r + 2) % 4, out(1'000'000), RecvMode::Copy));
    }
  }
  Rank symmetry_period() const override { return 1; }
};

// C3, known defect: a class flow's coefficient on an orbit is the member count on ONE link of it.
// Rank r's path r -> r+1 -> r+2 crosses two clockwise links, and every clockwise link carries two
// of the four flows: 25 GB/s each, 2 us + 1 MB / 25 GB/s = 42 us. The aggregated run sums the
// two links' crossings (coefficient 4 on the orbit) and finishes at 82 us: a known defect,
// reported with issue 18 and kept out of this restructuring; enable when it is fixed.
TEST(FlowInvariants, DISABLED_APathOverTwoLinksOfOneOrbitCountsOneLinksCrossings) {
  TopologyBuilder b("ring_of_four");
  for (std::uint32_t i = 0; i < 4; ++i) b.add_device(flow_test::gpu(i));
  for (std::uint32_t i = 0; i < 4; ++i) b.add_link(Link{i, (i + 1) % 4, Bandwidth::gBps(50), kLat});
  const Topology t = std::move(b).build();
  const Clockwise router;
  const Runs runs = run_both_ways(t, router, SendTwoOn{});
  EXPECT_EQ(runs.stats.simulated_ranks, 1u);
  EXPECT_EQ(runs.individual.makespan, Time::us(42));
  EXPECT_EQ(runs.aggregated.makespan, Time::us(42));
}

}  // namespace
}  // namespace lockstep
