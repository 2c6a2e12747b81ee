// Steady-state fast-forward: a run that skips repeating cycles must equal the full run to the
// picosecond (makespan, every rank's finish), carry the same bytes on every link and draw the
// same link-utilisation series, on uniform rings (the cycle is one step) and on rings mixing
// NVLink-like and network hops (the cycle spans several steps).
#include <gtest/gtest.h>

#include <stdexcept>

#include "fixtures.hpp"
#include "lockstep/collective/collective.hpp"
#include "lockstep/engine/flow/flow_engine.hpp"

namespace lockstep {
namespace {

using flow_test::input_for;
using flow_test::LazyRing;
using flow_test::nodes_and_network;
using flow_test::star;

const Bandwidth kB = Bandwidth::gBps(50);  // 5e10 B/s: 1 MB takes exactly 20 us
const Time kLat = Time::us(1);

struct Runs {
  RunResult skip, full;
  FlowRunStats skip_stats;
};

Runs run_both(const EngineInput& input, FlowEngineConfig config) {
  Runs runs;
  config.fast_forward = true;
  FlowEngine skipping(config);
  runs.skip = skipping.run(input);
  runs.skip_stats = skipping.last_stats();
  config.fast_forward = false;
  FlowEngine full(config);
  runs.full = full.run(input);
  EXPECT_EQ(full.last_stats().fast_forwards, 0u);
  return runs;
}

void expect_same(const Runs& r) {
  EXPECT_EQ(r.skip.makespan, r.full.makespan);
  EXPECT_EQ(r.skip.rank_finish, r.full.rank_finish);
  ASSERT_EQ(r.skip.link_bytes.size(), r.full.link_bytes.size());
  // Byte counts are sums of wire bytes; the skip multiplies a cycle's sum instead of adding its
  // transfers one by one, which may differ in the last bits when wire bytes are not integers.
  for (std::size_t l = 0; l < r.full.link_bytes.size(); ++l)
    EXPECT_NEAR(r.skip.link_bytes[l], r.full.link_bytes[l], 1e-9 * r.full.link_bytes[l]) << l;
  ASSERT_EQ(r.skip.link_series.size(), r.full.link_series.size());
  for (std::size_t k = 0; k < r.full.link_series.size(); ++k) {
    EXPECT_EQ(r.skip.link_series[k].link, r.full.link_series[k].link);
    ASSERT_EQ(r.skip.link_series[k].utilisation.size(), r.full.link_series[k].utilisation.size());
    for (std::size_t b = 0; b < r.full.link_series[k].utilisation.size(); ++b) {
      EXPECT_NEAR(r.skip.link_series[k].utilisation[b], r.full.link_series[k].utilisation[b], 1e-4);
    }
  }
}

// Ring all-reduce on an ideal switch, 2(n-1) steps of a + S/(nB): n = 8, S = 8 MB, a = 2 us,
// so 14 * (2 + 20) = 308 us. The issue window of 4 ops (two steps) keeps most of the program
// out of the window, so there is something to skip; every step repeats the one before.
TEST(FlowFastForward, UniformRingSkipsAndKeepsTheFormula) {
  const Topology t = star(8, kB, kLat);
  auto router = make_router(t, {});
  const LazyRing ring(8, 8'000'000);
  for (const bool aggregate : {true, false}) {
    const Runs r =
        run_both(input_for(t, ring, *router), {.aggregate = aggregate, .issue_window = 4});
    EXPECT_EQ(r.skip.makespan, Time::us(308)) << aggregate;
    EXPECT_GE(r.skip_stats.fast_forwards, 1u);
    EXPECT_GT(r.skip_stats.skipped_ops, 0u);
    EXPECT_LT(r.skip.events, r.full.events);
    expect_same(r);
    // Every up- and downlink carried 14 chunks of 1 MB.
    for (const double bytes : r.skip.link_bytes) EXPECT_DOUBLE_EQ(bytes, 14e6);
  }
}

// Message overhead, a protocol efficiency that makes wire bytes fractional, and link series: the
// skipped run still equals the full one.
TEST(FlowFastForward, OverheadEfficiencyAndLinkSeriesMatchTheFullRun) {
  const Topology t = star(6, kB, kLat);
  auto router = make_router(t, {});
  const LazyRing ring(6, 6'000'000);
  EngineOptions opt;
  opt.per_message_overhead = Time::ns(700);
  opt.transfer_efficiency = 0.92;
  opt.record_link_series = true;
  opt.link_sample_period = Time::us(5);
  const Runs r =
      run_both(input_for(t, ring, *router, opt), {.aggregate = false, .issue_window = 4});
  EXPECT_GE(r.skip_stats.fast_forwards, 1u);
  EXPECT_FALSE(r.skip.link_series.empty());
  expect_same(r);
}

// Nodes of two GPUs: hops inside a node take 0.5 + 0.5 us + 1 MB at 200 GB/s = 6 us, hops
// between nodes 1 + 1 us + 1 MB at 50 GB/s = 22 us, so the ring's steps alternate and the state
// repeats only every few steps. Both the LazyRing and make_collective's ring (snake order,
// two channels one after the other, each with periodic reduce-scatter and all-gather regions).
TEST(FlowFastForward, RingsMixingNvlinkAndNetworkHopsMatchTheFullRun) {
  const Topology t = nodes_and_network(8, 2, kB * 4.0, Time::ns(500), kB, kLat);
  auto router = make_router(t, {});
  const LazyRing lazy(16, 16'000'000);
  for (const std::uint32_t window : {4u, 7u, 16u}) {
    const Runs r =
        run_both(input_for(t, lazy, *router), {.aggregate = false, .issue_window = window});
    EXPECT_GE(r.skip_stats.fast_forwards, 1u) << window;
    expect_same(r);
  }

  CollectiveSpec spec;
  spec.op = CollectiveOp::AllReduce;
  spec.algorithm = Algorithm::Ring;
  spec.ranks = 16;
  spec.ranks_per_node = 2;
  spec.channels = 2;
  spec.bytes = Bytes(16 * 1024 * 1024);
  spec.type = DataType::Float32;
  const auto ring = make_collective(spec);
  const Runs r = run_both(input_for(t, *ring, *router), {.aggregate = false, .issue_window = 8});
  EXPECT_GE(r.skip_stats.fast_forwards, 2u);  // at least one jump per channel's region
  expect_same(r);

  // All-gather and reduce-scatter rings have their own regions.
  for (const CollectiveOp op : {CollectiveOp::AllGather, CollectiveOp::ReduceScatter}) {
    spec.op = op;
    spec.channels = 1;
    const auto other = make_collective(spec);
    const Runs o = run_both(input_for(t, *other, *router), {.aggregate = false, .issue_window = 8});
    EXPECT_GE(o.skip_stats.fast_forwards, 1u) << to_string(op);
    expect_same(o);
  }
}

// NCCL-like rings: 8 and 16 channels interleaved step by step (make_collective), so every GPU's
// NVLink-like port carries several channels at once and the channels drift in and out of phase
// before settling; an efficiency that makes wire bytes fractional, a per-message overhead, a
// network efficiency of its own and an extra network latency. 8 nodes of 4 GPUs, 32 ranks: each
// periodic region is 30 steps long, the issue window two or three steps. The skipping run must
// jump and still equal the full run to the picosecond.
TEST(FlowFastForward, ManyChannelRingsWithNcclOptionsMatchTheFullRun) {
  const Topology t = nodes_and_network(8, 4, kB * 4.0, Time::ns(500), kB, kLat);
  auto router = make_router(t, {});
  CollectiveSpec spec;
  spec.op = CollectiveOp::AllReduce;
  spec.algorithm = Algorithm::Ring;
  spec.ranks = 32;
  spec.ranks_per_node = 4;
  spec.bytes = Bytes(64 * 1024 * 1024);
  spec.type = DataType::Float32;
  EngineOptions opt;
  opt.transfer_efficiency = 0.824;
  opt.network_transfer_efficiency = 0.96;
  opt.per_message_overhead = Time::ns(3400);
  opt.network_message_latency = Time::ns(2100);
  for (const std::uint16_t channels : {8, 16}) {
    spec.channels = channels;
    const auto ring = make_collective(spec);
    const Runs r = run_both(input_for(t, *ring, *router, opt),
                            {.aggregate = false, .issue_window = 2u * 2 * channels});
    EXPECT_GE(r.skip_stats.fast_forwards, 1u) << channels;
    expect_same(r);
  }
}

// A ring whose chunks double from step 20 on while it claims that every step repeats: the jump
// (taken around step 15 on the honest ring) would land on the larger steps, and the engine
// notices the broken promise instead of skipping into a wrong answer.
class LyingRing final : public ProgramSet {
 public:
  Rank num_ranks() const override { return ring_.num_ranks(); }
  OpIndex num_ops(Rank r) const override { return ring_.num_ops(r); }
  Op op(Rank r, OpIndex i) const override {
    Op op = ring_.op(r, i);
    if (i >= 40) op.kind == OpKind::Send ? op.src.bytes *= 2 : op.dst.bytes *= 2;
    return op;
  }
  BufferSizes buffers(Rank r) const override { return ring_.buffers(r); }
  PeriodicRegion periodic_region(Rank r, OpIndex i) const override {
    return ring_.periodic_region(r, i);
  }

 private:
  LazyRing ring_{16, 16'000'000};
};

TEST(FlowFastForward, ABrokenPeriodicityPromiseIsCaught) {
  const Topology t = star(16, kB, kLat);
  auto router = make_router(t, {});
  const LyingRing ring;
  FlowEngine engine({.aggregate = false, .issue_window = 4});
  EXPECT_THROW(engine.run(input_for(t, ring, *router)), std::logic_error);
  FlowEngine full({.aggregate = false, .issue_window = 4, .fast_forward = false});
  EXPECT_NO_THROW(full.run(input_for(t, ring, *router)));
}

}  // namespace
}  // namespace lockstep
