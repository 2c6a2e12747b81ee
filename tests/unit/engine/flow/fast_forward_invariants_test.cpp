// Fast-forward invariants of docs/flow-engine.md not pinned down elsewhere: a jump moves the clock
// of the flows live across it, and the engine does not skip what it could not replay (per-op
// times recorded, NetReduce rounds).
#include <gtest/gtest.h>

#include "fixtures.hpp"
#include "lockstep/engine/flow/flow_engine.hpp"

namespace lockstep {
namespace {

using flow_test::input_for;

// A star of 8 GPUs, 50 GB/s and 1 us per link: 1 MB between two GPUs takes 2 + 20 us.
Topology star_of_eight() {
  return flow_test::star(8, Bandwidth::gBps(50), Time::us(1));
}

// A ring of n ranks whose every step sends two chunks to the next rank on two channels, S and
// S / 2 bytes, and waits for both of the step before: 4 ops per step [send 0, send 1, recv 0,
// recv 1]. On a star both chunks share the sender's uplink and the receiver's downlink: 25 GB/s
// each until the small one is done (S / B), then the large one alone at 50 GB/s (S / 2B more).
// Its rate changes in the middle of every step, after the step's flows began.
class TwoChunkRing final : public ProgramSet {
 public:
  TwoChunkRing(Rank n, std::uint64_t chunk, OpIndex steps) : n_(n), chunk_(chunk), steps_(steps) {}
  Rank num_ranks() const override { return n_; }
  OpIndex num_ops(Rank) const override { return 4 * steps_; }
  Op op(Rank r, OpIndex i) const override {
    const OpIndex step = i / 4, slot = i % 4;
    const auto channel = static_cast<std::uint16_t>(slot % 2);
    const std::uint64_t bytes = channel == 0 ? chunk_ : chunk_ / 2;
    Op op = slot < 2
                ? make_send((r + 1) % n_, {Buffer::Input, 0, bytes}, channel)
                : make_recv((r + n_ - 1) % n_, {Buffer::Output, 0, bytes}, RecvMode::Copy, channel);
    if (step > 0) {
      op.add_dep(4 * step - 2);
      op.add_dep(4 * step - 1);
    }
    return op;
  }
  BufferSizes buffers(Rank) const override { return {chunk_, chunk_, 0, false}; }
  Rank symmetry_period() const override { return 1; }
  PeriodicRegion periodic_region(Rank, OpIndex i) const override {
    if (i < 4) return {};
    return {4, 4, steps_ - 1};
  }

 private:
  Rank n_;
  std::uint64_t chunk_;
  OpIndex steps_;
};

// F2: after a jump, the flows live across it settle their bytes against the moved clock.
// 8 ranks, S = 1 MB, 14 steps of 2 us + 20 us + 10 us = 32 us: 448 us, with and without
// skipping, aggregated or not. A jump that left the live flows' last-update times behind would
// take the skipped time off their remaining bytes at the next rate change, and end steps early.
TEST(FlowFastForward, FlowsLiveAcrossAJumpKeepTheirBytes) {
  const Topology t = star_of_eight();
  auto router = make_router(t, {});
  const TwoChunkRing ring(8, 1'000'000, 14);
  for (const bool aggregate : {true, false}) {
    FlowEngine skipping({.aggregate = aggregate, .issue_window = 8});
    FlowEngine full({.aggregate = aggregate, .issue_window = 8, .fast_forward = false});
    const RunResult a = skipping.run(input_for(t, ring, *router));
    const RunResult b = full.run(input_for(t, ring, *router));
    EXPECT_GE(skipping.last_stats().fast_forwards, 1u) << aggregate;
    EXPECT_EQ(a.makespan, Time::us(448)) << aggregate;
    EXPECT_EQ(b.makespan, Time::us(448)) << aggregate;
    EXPECT_EQ(a.rank_finish, b.rank_finish) << aggregate;
  }
}

// F1: with record_ops every op keeps its own start and end, which a skipped cycle would
// not have: no jump, and every op has its time. flow_test::LazyRing of 8 on the star: step k (ops
// 2k, 2k+1) ends at (k + 1) x 22 us on every rank.
TEST(FlowFastForward, RecordingEveryOpTurnsItOff) {
  const Topology t = star_of_eight();
  auto router = make_router(t, {});
  const flow_test::LazyRing ring(8, 8'000'000);
  EngineOptions opt;
  opt.record_ops = true;
  FlowEngine engine({.issue_window = 4});
  const RunResult r = engine.run(input_for(t, ring, *router, opt));
  EXPECT_EQ(engine.last_stats().fast_forwards, 0u);
  ASSERT_EQ(r.ops.size(), 8u);
  for (Rank rank = 0; rank < 8; ++rank) {
    ASSERT_EQ(r.ops[rank].size(), 28u);
    for (OpIndex i = 0; i < 28; ++i)
      EXPECT_EQ(r.ops[rank][i].end, Time::us(22) * static_cast<std::int64_t>(i / 2 + 1))
          << rank << " " << i;
  }
}

// flow_test::LazyRing that also declares one NetReduce group (which no op uses): the engine keys
// NetReduce rounds by group, not by op, so it does not skip programs that have groups.
class RingWithAGroup final : public ProgramSet {
 public:
  Rank num_ranks() const override { return ring_.num_ranks(); }
  OpIndex num_ops(Rank r) const override { return ring_.num_ops(r); }
  Op op(Rank r, OpIndex i) const override { return ring_.op(r, i); }
  BufferSizes buffers(Rank r) const override { return ring_.buffers(r); }
  PeriodicRegion periodic_region(Rank r, OpIndex i) const override {
    return ring_.periodic_region(r, i);
  }
  std::uint32_t num_groups() const override { return 1; }
  std::span<const Rank> group(std::uint32_t) const override { return members_; }

 private:
  flow_test::LazyRing ring_{8, 8'000'000};
  std::vector<Rank> members_{0, 1, 2, 3, 4, 5, 6, 7};
};

// F1: NetReduce rounds are keyed by group, not by op, and the canonical state does not hold
// them: a program with groups is not skipped, even where no op uses them. The ring still takes
// 14 x 22 = 308 us; the same ring without the group does skip.
TEST(FlowFastForward, NetReduceGroupsTurnItOff) {
  const Topology t = star_of_eight();
  auto router = make_router(t, {});
  FlowEngine engine({.aggregate = false, .issue_window = 4});
  const RingWithAGroup grouped;
  EXPECT_EQ(engine.run(input_for(t, grouped, *router)).makespan, Time::us(308));
  EXPECT_EQ(engine.last_stats().fast_forwards, 0u);
  const flow_test::LazyRing ring(8, 8'000'000);
  EXPECT_EQ(engine.run(input_for(t, ring, *router)).makespan, Time::us(308));
  EXPECT_GE(engine.last_stats().fast_forwards, 1u);
}

}  // namespace
}  // namespace lockstep
