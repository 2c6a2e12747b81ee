// The step's overlaps and fixed costs, derived by hand on the contention-free reference engine
// with test_cluster.hpp's two-layer model: Megatron-LM's --tp-comm-overlap, the optimizer step
// at the end of the step and --overlap-param-gather.
#include <gtest/gtest.h>

#include "lockstep/core/error.hpp"
#include "lockstep/workload/training.hpp"
#include "test_cluster.hpp"

namespace lockstep {
namespace {

using testing::reference_options;
using testing::star_cluster;
using testing::tiny_config;

constexpr double kMs = 1e-3;

// tp 2, one micro-batch, two layers: a TP rank's layer forward is 0.5 ms = 14 u (u = 1/28 ms).
// FLOPs per token: QKV 2 x 3 Mi, output projection 2 x 1 Mi, core 4 Mi, FC1 and FC2 8 Mi each
// (of 28 Mi): forward QKV 3u, core 2u, out 1u, FC1 4u, FC2 4u; backward twice each; the head
// 14u forward, 28u backward. Each TP collective is a 2-rank ring step of half the 2 MiB
// activation: 1 MiB at 14.680064 GB/s = 2u.
constexpr double kU = kMs / 28;
TrainConfig tp_config(bool overlap) {
  TrainConfig c = tiny_config(2, 1, 1, 1);
  c.tp_comm_overlap = overlap;
  return c;
}
SimulateOptions tp_options() {
  return reference_options(Time::zero(), Bandwidth::bytes_per_second(14'680'064'000));
}

TEST(TpCommOverlap, ExposedCollectivesSitOnTheChain) {
  // Four collectives per layer pass, 8u each pass: forward 2 x (14 + 8) + 14, backward
  // 28 + 2 x (28 + 8): 158u.
  const TrainResult r = simulate_training(star_cluster(1, 2), tp_config(false), tp_options());
  EXPECT_NEAR(r.iteration.seconds(), 158 * kU, 1e-9);
  EXPECT_NEAR(r.breakdown.tp.seconds(), 32 * kU, 1e-9);
}

TEST(TpCommOverlap, EachCollectiveCostsWhatExceedsItsGemm) {
  // Forward per layer: max(AG 2, QKV 3) + core 2 + max(RS 2, out 1) + max(2, FC1 4) +
  // max(2, FC2 4) = 15u (1u exposed); backward: FC2 8, FC1 8, out max(2, 2), core 4, QKV 6 =
  // 28u, nothing exposed. 2 x 15 + 14 + 28 + 2 x 28 = 128u; tp 2u, compute 126u. The
  // userbuffers kernels take no SMs here (below, they do).
  for (Expansion e : {Expansion::Full, Expansion::Reduced}) {
    TrainConfig c = tp_config(true);
    c.tp_comm_overlap_sms = 0;
    c.expansion = e;
    const TrainResult r = simulate_training(star_cluster(1, 2), c, tp_options());
    EXPECT_NEAR(r.iteration.seconds(), 128 * kU, 1e-9) << r.expansion;
    EXPECT_NEAR(r.breakdown.tp.seconds(), 2 * kU, 1e-9) << r.expansion;
    EXPECT_NEAR(r.breakdown.compute.seconds(), 126 * kU, 1e-9) << r.expansion;
  }
}

// The overlapped reduce-scatters' kernels hold 33 of the H100's 132 SMs while the GEMM they drain
// runs on the other 99: that GEMM takes 4/3 as long (Transformer Engine's SM margin), the ones
// beside an all-gather keep every SM. Forward per layer: max(AG 2, QKV 3) + core 2 + max(RS 2,
// out 4/3) + max(2, FC1 4) + max(2, FC2 16/3) = 49/3u (2/3u exposed); backward: max(AG 2, FC2
// 8) + max(RS 2, FC1 32/3) + max(2, out 2) + core 4 + max(2, QKV 8) = 98/3u. 2 x 49/3 + 14 + 28
// + 2 x 98/3 = 140u; tp 4/3u, compute 416/3u.
TEST(TpCommOverlap, ReduceScattersTakeTheirSmsFromTheGemmsTheyDrain) {
  for (Expansion e : {Expansion::Full, Expansion::Reduced}) {
    TrainConfig c = tp_config(true);
    c.tp_comm_overlap_sms = 33;
    c.expansion = e;
    const TrainResult r = simulate_training(star_cluster(1, 2), c, tp_options());
    EXPECT_NEAR(r.iteration.seconds(), 140 * kU, 1e-9) << r.expansion;
    EXPECT_NEAR(r.breakdown.tp.seconds(), 4.0 / 3 * kU, 1e-9) << r.expansion;
    EXPECT_NEAR(r.breakdown.compute.seconds(), 416.0 / 3 * kU, 1e-9) << r.expansion;
  }
  // Every SM held leaves none for the GEMMs: refused by name.
  TrainConfig all = tp_config(true);
  all.tp_comm_overlap_sms = 132;
  try {
    simulate_training(star_cluster(1, 2), all, tp_options());
    ADD_FAILURE() << "132 of 132 SMs accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "tp_comm_overlap_sms");
  }
}

// dp 2, one micro-batch per replica, a bucket per layer (test_cluster.hpp: each 54,525,952 B,
// ready at 7 and 9 ms), ZeRO-1: a 2-rank reduce-scatter or all-gather is one ring step of
// 27,262,976 B, 1 ms at 27.262976 GB/s.
SimulateOptions dp_options() {
  return reference_options(Time::zero(), Bandwidth::bytes_per_second(27'262'976'000));
}
TrainConfig zero1_config(bool optimizer, bool overlap_gather) {
  TrainConfig c = tiny_config(1, 1, 2, 2);
  c.bucket = Bytes(1);
  c.par.zero = ZeroStage::Optimizer;
  c.optimizer_step = optimizer;
  c.overlap_param_gather = overlap_gather;
  return c;
}

// Per rank 2 x 12 Mi + 2 x 14 Mi = 54,525,952 parameters; ZeRO-1 over 2 ranks: a shard of
// 27,262,976, x 38 B = 1,035,993,088 B at 0.9 x 3,350 GB/s (H100 HBM3, BabelStream's fraction).
const double kStep = 1'035'993'088 / (0.9 * 3350e9);

TEST(OptimizerStep, SitsBetweenTheReduceScatterAndTheParameterGather) {
  // Reduce-scatters 7-8 and 9-10 ms, then the step, then both gathers: 12 ms + the step.
  const TrainResult off =
      simulate_training(star_cluster(1, 2), zero1_config(false, false), dp_options());
  EXPECT_NEAR(off.iteration.seconds(), 12 * kMs, 1e-9);
  const TrainResult on =
      simulate_training(star_cluster(1, 2), zero1_config(true, false), dp_options());
  EXPECT_NEAR(on.iteration.seconds(), 12 * kMs + kStep, 1e-9);
  // Reduced expansion schedules the same end of the step after its run.
  TrainConfig reduced = zero1_config(true, false);
  reduced.expansion = Expansion::Reduced;
  EXPECT_NEAR(simulate_training(star_cluster(1, 2), reduced, dp_options()).iteration.seconds(),
              12 * kMs + kStep, 1e-9);
}

TEST(OptimizerStep, WithoutTheDistributedOptimizerUpdatesEveryParameter) {
  // ZeRO-0, one replica: 9 ms of kernels, then 54,525,952 x 38 B at 3,015 GB/s.
  TrainConfig c = tiny_config(1, 1, 1, 1);
  c.optimizer_step = true;
  const TrainResult r = simulate_training(star_cluster(1, 1), c, dp_options());
  EXPECT_NEAR(r.iteration.seconds(), 9 * kMs + 2 * kStep, 1e-9);
}

// The gradient-norm all-reduce (Megatron-LM --clip-grad): one FP32 over both ranks, a 2-rank
// ring of 2 B chunks: reduce-scatter step then all-gather step, each 10 us + 2 B / 27.262976
// GB/s = 10.0000733 us (the engine rounds each to the picosecond): 20.0001467 us between the
// reduce-scatters and the optimizer step.
TEST(GradNorm, OneFp32AllReduceBeforeTheOptimizerStep) {
  const SimulateOptions o =
      reference_options(Time::us(10), Bandwidth::bytes_per_second(27'262'976'000));
  const double norm = 2 * (10e-6 + 2 / 27'262'976'000.0);
  for (Expansion e : {Expansion::Full, Expansion::Reduced}) {
    TrainConfig c = zero1_config(true, false);
    c.expansion = e;
    const double off = simulate_training(star_cluster(1, 2), c, o).iteration.seconds();
    c.clip_grad = 1.0;
    const double on = simulate_training(star_cluster(1, 2), c, o).iteration.seconds();
    EXPECT_NEAR(on - off, norm, 2e-12) << static_cast<int>(e);
  }
}

TEST(GradNorm, TiesTheStagesEndsWithoutMovingTheDrainOutOfTheBubble) {
  // pp 2, one micro-batch: stage 1 ends its backward before stage 0 and waits for it (bubble);
  // with the norm both then pay one 2-rank all-reduce (as above), counted as dp.
  const SimulateOptions o =
      reference_options(Time::us(10), Bandwidth::bytes_per_second(27'262'976'000));
  const double norm = 2 * (10e-6 + 2 / 27'262'976'000.0);
  for (Expansion e : {Expansion::Full, Expansion::Reduced}) {
    TrainConfig c = tiny_config(1, 2, 1, 1);
    c.expansion = e;
    const TrainResult off = simulate_training(star_cluster(1, 2), c, o);
    c.clip_grad = 1.0;
    const TrainResult on = simulate_training(star_cluster(1, 2), c, o);
    EXPECT_NEAR(on.iteration.seconds() - off.iteration.seconds(), norm, 2e-12);
    EXPECT_NEAR(on.breakdown.bubble.seconds(), off.breakdown.bubble.seconds(), 1e-12);
    EXPECT_GT(off.breakdown.bubble.seconds(), 1e-3);  // stage 1 waits for a whole pass
    EXPECT_NEAR(on.breakdown.dp.seconds() - off.breakdown.dp.seconds(), norm, 2e-12);
  }
}

TEST(OverlapParamGather, OnlyTheFirstLayersBucketStaysExposed) {
  // The layer-1 bucket's gather hides behind the next forward pass; the layer-0 bucket's, which
  // the next forward needs first, runs 10-11 ms after the step.
  for (Expansion e : {Expansion::Full, Expansion::Reduced}) {
    TrainConfig c = zero1_config(true, true);
    c.expansion = e;
    const TrainResult r = simulate_training(star_cluster(1, 2), c, dp_options());
    EXPECT_NEAR(r.iteration.seconds(), 11 * kMs + kStep, 1e-9) << r.expansion;
  }
}

}  // namespace
}  // namespace lockstep
