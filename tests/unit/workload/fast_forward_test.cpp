// The steady phase fast-forwarded: a job of many micro-batches runs three short ones and extends
// them by whole schedule periods. Its times must equal the run of every micro-batch exactly.
#include <gtest/gtest.h>

#include "lockstep/topology/faults.hpp"
#include "lockstep/workload/noise.hpp"
#include "lockstep/workload/training.hpp"
#include "test_cluster.hpp"

namespace lockstep {
namespace {

using testing::reference_options;
using testing::star_cluster;
using testing::tiny_config;

TrainConfig four_layer_pipeline(std::uint32_t interleave, std::uint64_t micro_batches) {
  TrainConfig c = tiny_config(1, 2, 1, micro_batches);
  c.model.layers = 4;
  c.par.interleave = interleave;
  return c;
}

void expect_same(const TrainResult& a, const TrainResult& b) {
  EXPECT_EQ(a.iteration, b.iteration);
  EXPECT_EQ(a.breakdown.compute, b.breakdown.compute);
  EXPECT_EQ(a.breakdown.tp, b.breakdown.tp);
  EXPECT_EQ(a.breakdown.pp, b.breakdown.pp);
  EXPECT_EQ(a.breakdown.bubble, b.breakdown.bubble);
  EXPECT_EQ(a.breakdown.dp, b.breakdown.dp);
  EXPECT_EQ(a.breakdown.imbalance, b.breakdown.imbalance);
  EXPECT_EQ(a.waste_gpu_seconds, b.waste_gpu_seconds);
}

// The job on the contention-free engine with an infinite network: fast-forwarded, and with
// every micro-batch.
std::pair<TrainResult, TrainResult> on_an_infinite_network(const TrainConfig& c) {
  const auto opts = reference_options(Time::zero(), Bandwidth::bytes_per_second(1e18));
  auto every = opts;
  every.fast_forward = false;
  const Topology topo = star_cluster(1, 2);
  return {simulate_training(topo, c, opts), simulate_training(topo, c, every)};
}

// Infinite network, stage A = layers 0-1 (F 2 ms, B 4 ms), stage B = layers 2-3 + head (F 3,
// B 6; interleave_test.cpp derives m = 4). Stage B is the bottleneck: it starts after A's first
// forward (2 ms), is then busy 9 ms per micro-batch, and A's last backward follows its last:
// 2 + 9 m + 4 ms, 582 ms at m = 64. The fast-forward runs m = 2 pp = 4, 5 and 6.
TEST(FastForward, OneF1BOf64MicroBatchesFromFour) {
  const auto [fast, all] = on_an_infinite_network(four_layer_pipeline(1, 64));
  EXPECT_NEAR(fast.iteration.seconds(), 0.582, 1e-9);  // + picoseconds of transfers
  EXPECT_EQ(fast.expanded_micro_batches, 4u);
  EXPECT_EQ(all.expanded_micro_batches, 64u);
  expect_same(fast, all);
  // Compute: (2 + 4) x 64 on A and 9 x 64 on B, mean 480 ms.
  EXPECT_EQ(fast.breakdown.compute, Time::ms(480));
}

// DualPipe: a period is one micro-batch from each end, from m = 2 pp = 4 (dualpipe.py's least):
// the runs take m = 4, 6 and 8. Each rank runs 32 micro-batches through each of its two stages:
// 32 x (2 + 4) + 32 x (3 + 6) = 480 ms of compute, as under 1F1B.
TEST(FastForward, DualPipeOf64MicroBatchesFromFour) {
  TrainConfig c = four_layer_pipeline(1, 64);
  c.pipeline = PipelineSchedule::DualPipe;
  const auto [fast, all] = on_an_infinite_network(c);
  EXPECT_EQ(fast.expanded_micro_batches, 4u);
  EXPECT_EQ(all.expanded_micro_batches, 64u);
  expect_same(fast, all);
  EXPECT_EQ(fast.breakdown.compute, Time::ms(480));
}

// Interleaved (v 2): a period is pp micro-batches, from m = 2 pp = 4; B is busy 9 ms per
// micro-batch and waits 1 + 2 ms at the ends as at m = 4 (39 ms): 9 x 64 + 3 = 579 ms.
TEST(FastForward, InterleavedStepsByPpMicroBatches) {
  const auto [fast, all] = on_an_infinite_network(four_layer_pipeline(2, 64));
  EXPECT_NEAR(fast.iteration.seconds(), 0.579, 1e-9);
  EXPECT_EQ(fast.expanded_micro_batches, 4u);
  expect_same(fast, all);
}

// A group of N = 4 micro-batches (microbatch_group_size_per_vp_stage): the period is 4, from
// m = 2 max(pp, N) = 8; the same times as running all 64. B computes 9 ms per micro-batch.
TEST(FastForward, InterleavedStepsByGroupsOfN) {
  TrainConfig c = four_layer_pipeline(2, 64);
  c.par.microbatch_group = 4;
  const auto [fast, all] = on_an_infinite_network(c);
  EXPECT_EQ(fast.expanded_micro_batches, 8u);
  EXPECT_EQ(all.expanded_micro_batches, 64u);
  expect_same(fast, all);
  EXPECT_GE(fast.iteration.seconds(), 9 * 64e-3);
}

// `lockstep run`'s later variants: a timeline only if the step runs every micro-batch anyway.
// At m = 64 the step fast-forwards (582 ms as above, 4 micro-batches run) and records nothing;
// at m = 4 it runs every micro-batch and records the two ranks' timelines.
TEST(FastForward, RecordingUnlessFastForwardedKeepsTheFastForward) {
  auto opts = reference_options(Time::zero(), Bandwidth::bytes_per_second(1e18));
  opts.record_timeline = true;
  opts.record_unless_fast_forwarded = true;
  const Topology topo = star_cluster(1, 2);
  const TrainResult many = simulate_training(topo, four_layer_pipeline(1, 64), opts);
  EXPECT_EQ(many.expanded_micro_batches, 4u);
  EXPECT_NEAR(many.iteration.seconds(), 0.582, 1e-9);
  EXPECT_TRUE(many.timeline.empty());
  EXPECT_TRUE(many.timeline_ranks.empty());
  const TrainResult few = simulate_training(topo, four_layer_pipeline(1, 4), opts);
  EXPECT_EQ(few.expanded_micro_batches, 4u);
  EXPECT_NEAR(few.iteration.seconds(), 0.042, 1e-9);  // interleave_test.cpp's 42 ms
  EXPECT_EQ(few.timeline_ranks.size(), 2u);
  EXPECT_FALSE(few.timeline.empty());
  opts.record_unless_fast_forwarded = false;  // a trace: every micro-batch
  EXPECT_EQ(simulate_training(topo, four_layer_pipeline(1, 64), opts).expanded_micro_batches, 64u);
}

// The flow engine with NCCL's collectives: TP all-gathers and reduce-scatters, pipeline
// transfers and data-parallel buckets over a real network, with a slow GPU (a per-rank factor:
// still periodic). Equal to the picosecond; per-kernel jitter is not periodic: every
// micro-batch runs.
TEST(FastForward, FullExpansionOnTheFlowEngineEqualsEveryMicroBatch) {
  const Topology topo = testing::ndr_h100_nodes(2, 4);
  TrainConfig c = tiny_config(2, 2, 2, 2 * 24);
  c.expansion = Expansion::Full;
  c.engine = "flow";
  c.faults.push_back(parse_fault("slow-gpu:rank=1,x=1.5", "faults"));
  SimulateOptions every;
  every.fast_forward = false;
  const TrainResult fast = simulate_training(topo, c);
  const TrainResult all = simulate_training(topo, c, every);
  EXPECT_EQ(fast.expanded_micro_batches, 4u);
  expect_same(fast, all);
  EXPECT_EQ(fast.trial_times, all.trial_times);

  c.faults.clear();
  c.jitter.push_back(parse_jitter("normal:5%", "jitter"));
  EXPECT_EQ(simulate_training(topo, c).expanded_micro_batches, 24u);
}

// Too few micro-batches to gain (m <= 3 (2 pp + 1) = 15, the three runs' sum): every one runs.
TEST(FastForward, ShortJobsRunEveryMicroBatch) {
  const auto opts = reference_options(Time::zero(), Bandwidth::bytes_per_second(1e18));
  const Topology topo = star_cluster(1, 2);
  EXPECT_EQ(simulate_training(topo, four_layer_pipeline(1, 15), opts).expanded_micro_batches, 15u);
  EXPECT_EQ(simulate_training(topo, four_layer_pipeline(1, 16), opts).expanded_micro_batches, 4u);
}

}  // namespace
}  // namespace lockstep
