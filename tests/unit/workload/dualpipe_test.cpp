// DeepSeek-V3's DualPipe (arXiv:2412.19437, section 3.2.1, Table 2): the bubble and the
// iteration from a 1F1B step's breakdown, derived by hand in the comments.
#include "lockstep/workload/dualpipe.hpp"

#include <gtest/gtest.h>

#include <array>
#include <set>

#include "lockstep/workload/step_builder.hpp"
#include "lockstep/workload/training.hpp"
#include "test_cluster.hpp"

namespace lockstep {
namespace {

TEST(DualPipe, BubbleOfTableTwoForSixteenStages) {
  // PP 16, F = 10 ms, B = 20 ms, W = 8 ms, a pair bound by its compute (F&B = F + B = 30 ms):
  // (16 / 2 - 1)(F&B + B - 3W) = 7 x (30 + 20 - 24) = 182 ms; 1F1B's (PP - 1)(F + B) = 450 ms.
  EXPECT_EQ(dualpipe_bubble(16, Time::ms(30), Time::ms(20), Time::ms(8)), Time::ms(182));
  EXPECT_EQ(one_f_one_b_bubble(16, Time::ms(10), Time::ms(20)), Time::ms(450));
  // Two stages (one pair of ranks, fed from both ends): no bubble term; a W so large that
  // F&B + B - 3W < 0 is none either.
  EXPECT_EQ(dualpipe_bubble(2, Time::ms(30), Time::ms(20), Time::ms(8)), Time::zero());
  EXPECT_EQ(dualpipe_bubble(16, Time::ms(30), Time::ms(20), Time::ms(20)), Time::zero());
}

TEST(DualPipe, PairsHideTheAllToAllUpToTheirCompute) {
  // 120 micro-batches, PP 16: compute 10.8 s (C = 90 ms a pair), all-to-all 14.4 s (E = 120
  // ms): F&B = max(90, 120) = 120 ms, 30 ms of each pair exposed: 3.6 s of EP. Bubble with B =
  // 2/3 C = 60 ms and W = 1/3 C = 30 ms: 7 x (120 + 60 - 90) = 630 ms. The rest is kept.
  TrainBreakdown b;
  b.compute = Time::ms(10'800);
  b.ep = Time::ms(14'400);
  b.bubble = Time::ms(5'000);
  b.pp = Time::ms(100);
  b.dp = Time::ms(40);
  const TrainBreakdown d = dualpipe_breakdown(b, 120, 16, {2.0 / 3.0, 1.0 / 3.0});
  EXPECT_EQ(d.compute, Time::ms(10'800));
  EXPECT_NEAR(d.ep.seconds(), 3.6, 1e-9);
  EXPECT_NEAR(d.bubble.seconds(), 0.630, 1e-9);
  EXPECT_EQ(d.pp, Time::ms(100));
  EXPECT_EQ(d.dp, Time::ms(40));
  // A pair whose compute exceeds its all-to-all hides all of it: E = 60 ms < C = 90 ms, F&B =
  // 90 ms, bubble 7 x (90 + 60 - 90) = 420 ms.
  b.ep = Time::ms(7'200);
  const TrainBreakdown hidden = dualpipe_breakdown(b, 120, 16, {2.0 / 3.0, 1.0 / 3.0});
  EXPECT_EQ(hidden.ep, Time::zero());
  EXPECT_NEAR(hidden.bubble.seconds(), 0.420, 1e-9);
}

// DeepSeek-V3 gives its all-to-all 20 of the H800's 132 SMs (section 3.2.2; 3.5.1): a pair's
// compute runs on the other 112 while the transfer is in flight.
TEST(DualPipe, CommunicationSmsSlowThePairedCompute) {
  const double share = 20.0 / 132.0;
  // C = 10 ms, E = 6 ms: 10 x 132 / 112 = 11.79 ms of compute outlasts E; during E it does 6 x
  // 112 / 132 = 5.09 ms of its work, the other 4.91 ms at full speed: 6 + 4.91 = 10 + 6 x 20 /
  // 132 = 10.909 ms (10 ms with no SMs taken).
  EXPECT_NEAR(dualpipe_pair(Time::ms(10), Time::ms(6), share).seconds(), 0.010 + 0.006 * share,
              1e-12);
  EXPECT_EQ(dualpipe_pair(Time::ms(10), Time::ms(6), 0), Time::ms(10));
  // E = 11 ms, above C but below C x 132 / 112 = 11.79 ms: still bound by the slowed compute,
  // 10 + 11 x 20 / 132 = 11.667 ms (11 ms with no SMs taken).
  EXPECT_NEAR(dualpipe_pair(Time::ms(10), Time::ms(11), share).seconds(), 0.010 + 0.011 * share,
              1e-12);
  EXPECT_EQ(dualpipe_pair(Time::ms(10), Time::ms(11), 0), Time::ms(11));
  // E = 13.6 ms = 1.36 C (DeepSeek-V3 on lockstep's all-to-all): the compute ends on 112 SMs
  // at 11.79 ms, within E: the pair takes E whatever the SMs.
  EXPECT_EQ(dualpipe_pair(Time::ms(10), Time::us(13'600), share), Time::us(13'600));
  // In the breakdown: 10 micro-batches of C = 10 ms and E = 6 ms, pp 2 (no bubble term): the
  // 0.909 ms each pair's compute loses shows as exposed EP, 9.09 ms in all.
  TrainBreakdown b;
  b.compute = Time::ms(100);
  b.ep = Time::ms(60);
  const TrainBreakdown d = dualpipe_breakdown(b, 10, 2, {2.0 / 3.0, 1.0 / 3.0}, share);
  EXPECT_EQ(d.compute, Time::ms(100));
  EXPECT_NEAR(d.ep.seconds(), 10 * 0.006 * share, 1e-9);
  EXPECT_EQ(dualpipe_breakdown(b, 10, 2, {2.0 / 3.0, 1.0 / 3.0}).ep, Time::zero());
}

// A rank's order as text: F (forward), B (full backward), b (inputs only), W (the deferred
// weight gradients), then direction.micro-batch; "&" joins a pair.
std::string order_text(std::uint32_t pp, std::uint64_t m, std::uint32_t rank) {
  auto unit = [](const DualPipeUnit& u) {
    const char* pass[] = {"F", "B", "b", "W"};
    return pass[static_cast<int>(u.pass)] + std::to_string(u.direction) + "." +
           std::to_string(u.micro);
  };
  std::string out;
  for (const DualPipeStep& s : dualpipe_order(pp, m, rank))
    out += unit(s.first) + (s.paired ? "&" + unit(s.second) : "") + " ";
  return out;
}

TEST(DualPipe, OrderOfFourRanksAndEightMicroBatches) {
  // pp 4, m 8 (4 per direction), dualpipe.py's eight phases. Rank 0 (h = 0, 2 - h - 1 = 1 rank
  // to the middle), its chunk 0 direction 0: phase 1, 2 x 1 forwards F0; phase 2, h + 1 = 1
  // round F0, F1; phase 3, 1 round b1 (weights deferred), W, F1; phase 4, m / 2 - pp + h + 1 = 1
  // round of the pairs F0&B1, F1&B0; phase 5, 1 round B1, F1&B0; phase 6, h + 1 = 1 round B1,
  // B0, deferring B0's weights (h even: from the middle round's second pass, (h + 1) / 2 = 0);
  // phase 7, 1 round W, b0; phase 8, h + 1 = 1 W. Micro-batches count per direction.
  EXPECT_EQ(order_text(4, 8, 0),
            "F0.0 F0.1 F0.2 F1.0 b1.0 W1.0 F1.1 F0.3&B1.1 F1.2&B0.0 B1.2 F1.3&B0.1 B1.3 b0.2 "
            "W0.2 b0.3 W0.3 ");
  // Rank 1, a middle rank (h = 1, none to the middle): phase 2, 2 rounds F0, F1; phase 4, 2
  // rounds, the first's F0 and B1 unpaired; phase 6, 2 rounds B1, B0, both deferred from the
  // second round on (h odd: before its B1); phase 8, 2 W in the order deferred.
  EXPECT_EQ(order_text(4, 8, 1),
            "F0.0 F1.0 F0.1 F1.1 F0.2 B1.0 F1.2&B0.0 F0.3&B1.1 F1.3&B0.1 B1.2 B0.2 b1.3 b0.3 "
            "W1.3 W0.3 ");
  // Ranks 2 and 3 mirror ranks 1 and 0: their chunk 0 is direction 1.
  EXPECT_EQ(order_text(4, 8, 3),
            "F1.0 F1.1 F1.2 F0.0 b0.0 W0.0 F0.1 F1.3&B0.1 F0.2&B1.0 B0.2 F0.3&B1.1 B0.3 b1.2 "
            "W1.2 b1.3 W1.3 ");
  EXPECT_EQ(order_text(4, 8, 2),
            "F1.0 F0.0 F1.1 F0.1 F1.2 B0.0 F0.2&B1.0 F1.3&B0.1 F0.3&B1.1 B0.2 B1.2 b0.3 b1.3 "
            "W0.3 W1.3 ");
}

// The activation peak walks each rank's order (OrderOfFourRanksAndEightMicroBatches), counting
// the micro-batches held per direction (d0, d1) with a forward of direction 0 keeping a0 bytes
// and one of direction 1 a1, until its full backward B or its deferred weight pass W (b keeps
// them). Rank 0: F0.0-F0.2 (3, 0), F1.0 (3, 1), b1.0 W1.0 (3, 0), F1.1 (3, 1), the pair
// F0.3&B1.1 (4, 1) then (4, 0), F1.2&B0.0 (4, 1), (3, 1), and fewer after: 4 a0 + a1. Rank 1
// (middle): F0.0 F1.0 F0.1 F1.1 F0.2 (3, 2), B1.0 (3, 1), F1.2&B0.0 (3, 2), F0.3&B1.1 (3, 2),
// F1.3&B0.1 (3, 2), then down: 3 a0 + 2 a1. Ranks 3 and 2 mirror them with the directions
// swapped. With equal stages every rank holds pp + 1 micro-batches (Table 2).
TEST(DualPipe, ActivationPeakFollowsTheSchedule) {
  const std::array<double, 2> a = {3, 5};
  EXPECT_EQ(dualpipe_activation_peak(4, 8, 0, a), 4 * 3 + 5);
  EXPECT_EQ(dualpipe_activation_peak(4, 8, 1, a), 3 * 3 + 2 * 5);
  EXPECT_EQ(dualpipe_activation_peak(4, 8, 2, a), 2 * 3 + 3 * 5);
  EXPECT_EQ(dualpipe_activation_peak(4, 8, 3, a), 3 + 4 * 5);
  for (std::uint32_t pp : {2u, 4u, 8u, 16u})
    for (std::uint64_t m : {2ull * pp, 4ull * pp + 2})
      for (std::uint32_t r = 0; r < pp; ++r)
        EXPECT_EQ(dualpipe_activation_peak(pp, m, r, {1, 1}), pp + 1)
            << "pp " << pp << " m " << m << " rank " << r;
}

TEST(DualPipe, EveryRankRunsEachMicroBatchOnceEachWay) {
  // Property: on every rank of pp 8 with 20 micro-batches (Figure 5's shape), each direction's
  // 10 micro-batches pass forward once and backward once, in order, and each deferred weight
  // pass follows its backward.
  for (std::uint32_t r = 0; r < 8; ++r) {
    std::uint32_t next_f[2] = {0, 0}, next_b[2] = {0, 0}, weights = 0, deferred = 0;
    for (const DualPipeStep& s : dualpipe_order(8, 20, r)) {
      for (int k = 0; k < (s.paired ? 2 : 1); ++k) {
        const DualPipeUnit& u = k ? s.second : s.first;
        switch (u.pass) {
          case DualPass::Forward:
            EXPECT_EQ(u.micro, next_f[u.direction]++);
            break;
          case DualPass::BackwardInput:
            ++deferred;
            [[fallthrough]];
          case DualPass::Backward:
            EXPECT_LT(u.micro, next_f[u.direction]);
            EXPECT_EQ(u.micro, next_b[u.direction]++);
            break;
          case DualPass::Weight:
            EXPECT_LT(u.micro, next_b[u.direction]);
            ++weights;
            break;
        }
      }
    }
    EXPECT_EQ(next_f[0] + next_f[1] + next_b[0] + next_b[1], 40u) << r;
    EXPECT_EQ(weights, deferred) << r;
  }
}

// Four one-layer stages, the layers' times set by hand: F 10 ms, B 20 ms (W of it: the weight
// GEMMs' share, 1 - attention share x core share of F), no output layer, no communication.
StepPlan hand_plan(const TrainConfig& c, double core_share) {
  StepPlan plan = make_step_plan(c, c.peak_flops);
  for (std::uint32_t l = 0; l < 4; ++l) {
    plan.forward[l] = Time::ms(10);
    plan.backward[l] = Time::ms(20);
    plan.split[l] = {0.5, 0.5, core_share, core_share};
  }
  plan.head_forward = plan.head_backward = Time::zero();
  return plan;
}

// The full expansion's step on a reference engine: no latency, every transfer at
// `bytes_per_second`.
Time full_step(const TrainConfig& c, const StepPlan& plan, double bytes_per_second) {
  StepBuildOptions o;
  o.full = true;
  o.collectives = default_collective_factory();
  const StepPrograms programs = build_step_programs(c, plan, o);
  testing::ReferenceEngine engine(Time::zero(), Bandwidth::bytes_per_second(bytes_per_second));
  EngineInput in;
  in.programs = programs.programs.get();
  return engine.run(in).makespan;
}

TrainConfig four_stage_dualpipe(std::uint32_t dp) {
  TrainConfig c = testing::tiny_config(1, 4, dp, 8 * dp);
  c.model.layers = 4;
  c.pipeline = PipelineSchedule::DualPipe;
  return c;
}

Time dualpipe_step(double core_share) {
  const TrainConfig c = four_stage_dualpipe(1);
  return full_step(c, hand_plan(c, core_share), 1e18);
}

TEST(DualPipe, SimulatedBubbleOfTableTwo) {
  // 8 micro-batches on each rank: 8 x (F + B) = 240 ms of kernels. No attention core: W = F =
  // 10 ms, a pair F&B = F + B = 30 ms (nothing to hide); Table 2: (4 / 2 - 1)(30 + 20 - 30) =
  // 20 ms of bubble, 260 ms.
  EXPECT_EQ(dualpipe_bubble(4, Time::ms(30), Time::ms(20), Time::ms(10)), Time::ms(20));
  EXPECT_NEAR(dualpipe_step(0.0).seconds(), 0.260, 1e-9);
  // An attention core of 0.4 of the attention block, half the layer: W = 10 (1 - 0.2) = 8 ms,
  // an inputs-only backward b = 12 ms. In OrderOfFourRanksAndEightMicroBatches' order (a pair
  // starts once both its inputs are in), rank 1 runs B1.0 60-80, F1.2&B0.0 80-110, F0.3&B1.1
  // 110-140, F1.3&B0.1 140-170, ..., b0.3 232-244; rank 0 runs F0.0-F1.0 0-40, b1.0 40-52, W1.0
  // 52-60, F1.1 60-70, F0.3&B1.1 70-100, waits for B0.0 until 110, F1.2&B0.0 110-140, B1.2
  // 140-160, waits for B0.1 until 170, F1.3&B0.1 170-200, B1.3 200-220, b0.2 220-232, W0.2
  // 232-240, waits for b0.3 until 244, b0.3 244-256, W0.3 256-264: a bubble of 10 + 10 + 4 = 24
  // ms, 2 ms (F - W) under Table 2's (30 + 20 - 24) = 26.
  EXPECT_EQ(dualpipe_bubble(4, Time::ms(30), Time::ms(20), Time::ms(8)), Time::ms(26));
  EXPECT_NEAR(dualpipe_step(0.4).seconds(), 0.264, 1e-9);
}

// DualPipe's two copies of each stage (rank s holds stage s of direction 0 and stage 3 - s of
// direction 1, rank 3 - s the same two swapped) sum their gradients: per rank, an all-reduce of
// both its stages' buckets over the 2 x dp ranks holding them. SimulatedBubbleOfTableTwo's
// four one-layer stages (8 micro-batches per replica, no attention core: 260 ms of schedule),
// one 2 MB bucket per stage, reduced after the backward passes (no overlap), every transfer at
// 1 GB/s and no latency. A ring all-reduce over n ranks sends 2 (n - 1) steps of 2 MB / n.
Time dualpipe_reduced_step(std::uint32_t dp) {
  TrainConfig c = four_stage_dualpipe(dp);
  c.overlap_dp = false;
  StepPlan plan = hand_plan(c, 0.0);
  plan.pp_bytes = Bytes(0);
  for (std::uint32_t s = 0; s < 4; ++s) {
    plan.buckets[s].assign(1, GradientBucket{Bytes(2'000'000), Bytes(2'000'000), s, false});
  }
  return full_step(c, plan, 1e9);
}

TEST(DualPipe, BothCopiesOfAStageReduceTheirGradientsTogether) {
  // dp 1: the pairs (0, 3) and (1, 2), each a group of 2 x 1 = 2 ranks; each bucket 2 steps
  // of 1 MB = 2 ms, two buckets per rank (its two stages): 4 ms after the 260 ms schedule (the
  // pairs reduce at once, on links of their own). Before, dp 1 reduced nothing.
  EXPECT_NEAR(dualpipe_reduced_step(1).seconds(), 0.264, 1e-9);
  // dp 2: groups of 2 x 2 = 4 ranks, each bucket 6 steps of 0.5 MB = 3 ms, 6 ms for both (one
  // copy over dp alone, as before, was a 2-rank ring: 2 ms for its one bucket).
  EXPECT_NEAR(dualpipe_reduced_step(2).seconds(), 0.266, 1e-9);
}

// The reduced expansion runs one replica and schedules the buckets after it over the same
// groups of 2 x dp ranks: tiny_config's two stages, each 12 Mi layer and 14 Mi embedding or
// output-layer parameters, 54,525,952 B of BF16 gradients in one bucket. dp 2: a 4-rank ring
// all-reduce, 6 steps of 13,631,488 B at 13.631488 GB/s = 6 ms per bucket, 12 ms for a rank's
// two, after its backward passes; ZeRO-1 a reduce-scatter and an all-gather of 3 steps each, 3
// + 3 ms per bucket, 12 ms too. (One copy over dp alone, as before: 2 steps, 4 ms.) Overlap
// hides none of it here (the same 12 ms).
TEST(DualPipe, ReducedExpansionReducesBothCopiesAsTheFullOne) {
  for (ZeroStage zero : {ZeroStage::None, ZeroStage::Optimizer}) {
    for (bool overlap : {false, true}) {
      TrainConfig c = testing::tiny_config(1, 2, 2, 8);
      c.pipeline = PipelineSchedule::DualPipe;
      c.overlap_dp = overlap;
      c.par.zero = zero;
      const SimulateOptions o =
          testing::reference_options(Time::zero(), Bandwidth::bytes_per_second(13'631'488'000));
      c.expansion = Expansion::Full;
      const TrainResult full = simulate_training(testing::star_cluster(1, 4), c, o);
      c.expansion = Expansion::Reduced;
      const TrainResult reduced = simulate_training(testing::star_cluster(1, 4), c, o);
      EXPECT_NEAR(reduced.iteration.seconds(), full.iteration.seconds(), 1e-9);
      EXPECT_NEAR(full.breakdown.dp.seconds(), 0.012, 1e-9) << overlap;
      EXPECT_NEAR(reduced.breakdown.dp.seconds(), 0.012, 1e-9) << overlap;
    }
  }
}

// ZeRO-3 under DualPipe (issue 21): each layer's parameters are sharded over the 2 x dp ranks
// holding its two copies, and each pass gathers them over those ranks. four_stage_dualpipe(2):
// rank 0 (global 0) holds stage 0 (layer 0 and the embedding) and stage 3 (layer 3 and the
// output layer), with global ranks 1 (dp 1), 6 and 7 (stage 3's copies): layers 0 and 3 are
// 12 Mi + 14 Mi = 27,262,976 parameters, 54,525,952 B in BF16 each.
TEST(DualPipe, ZeroThreeGathersOverBothCopiesHolders) {
  TrainConfig c = four_stage_dualpipe(2);
  c.par.zero = ZeroStage::Parameters;
  const StepPlan plan = make_step_plan(c, c.peak_flops);
  StepBuildOptions o;
  o.full = true;
  o.collectives = default_collective_factory();
  const StepPrograms programs = build_step_programs(c, plan, o);
  std::vector<double> sent(8, 0.0);
  std::set<std::uint32_t> peers;
  for (std::uint32_t r = 0; r < 8; ++r) {
    for (OpIndex i = 0; i < programs.programs->num_ops(r); ++i) {
      const Op& op = programs.programs->op(r, i);
      if (programs.tags[r][i].role != OpRole::ParamGather || op.kind != OpKind::Send) continue;
      sent[r] += static_cast<double>(op.src.bytes);
      if (r == 0) peers.insert(programs.global_rank[op.peer]);
    }
  }
  // 8 micro-batches a replica, 4 in each direction: rank 0 runs each of layers 0 and 3 forward
  // and backward 4 times (a deferred weight pass gathers nothing), 16 gathers of 54,525,952 B.
  // A ring all-gather over the 4 holders sends 3 steps of a quarter: 16 x 3 / 4 x 54,525,952 =
  // 654,311,424 B (over dp alone, as before, a 2-rank ring: 436,207,616 B).
  EXPECT_DOUBLE_EQ(sent[0], 654'311'424.0);
  // Its ring's neighbour is the next holder in global rank order, 1 (and 7 sends to 0).
  EXPECT_EQ(peers, (std::set<std::uint32_t>{1}));
  // Stage 3's ranks take part in the same gathers, as many bytes each; ranks 2 to 5 hold layers
  // 1 and 2, 12 Mi parameters each: 16 x 3 / 4 x 25,165,824 = 301,989,888 B.
  for (std::uint32_t r : {1u, 6u, 7u}) EXPECT_DOUBLE_EQ(sent[r], 654'311'424.0) << r;
  for (std::uint32_t r : {2u, 3u, 4u, 5u}) EXPECT_DOUBLE_EQ(sent[r], 301'989'888.0) << r;
  // The memory check keeps a quarter of rank 0's 54,525,952 parameters' BF16 weights:
  // 2 x 54,525,952 / 4 = 27,262,976 B (over dp alone: twice that).
  EXPECT_DOUBLE_EQ(plan.memory.weights.as_double(), 27'262'976.0);
}

// pp 2, m 4 per replica, dp 2 = ep 2: two MoE layers, one a stage, F 10 ms (attention 5, MoE 5),
// B 20 ms (MoE 10, attention 10), W = F, no output layer, no DP buckets, free pipeline
// transfers; each all-to-all sends half of 8 MB to the other EP rank at 1 GB/s: E = 4 ms.
TEST(DualPipe, PairsHideTheirAllToAllBehindTheOtherPassKernels) {
  TrainConfig c = testing::tiny_config(1, 2, 2, 8);
  c.model.experts = 2;
  c.model.top_k = 1;
  c.model.expert_ffn = 4096;
  c.par.ep = 2;
  c.pipeline = PipelineSchedule::DualPipe;
  StepPlan plan = make_step_plan(c, c.peak_flops);
  for (std::uint32_t l = 0; l < 2; ++l) {
    plan.forward[l] = Time::ms(10);
    plan.backward[l] = Time::ms(20);
    plan.split[l] = {0.5, 0.5, 0.0, 0.0};
    plan.buckets[l].clear();
  }
  plan.head_forward = plan.head_backward = Time::zero();
  plan.pp_bytes = Bytes(0);
  plan.ep_bytes = Bytes(8'000'000);
  StepBuildOptions o;
  o.full = true;
  o.collectives = default_collective_factory();
  const StepPrograms programs = build_step_programs(c, plan, o);
  testing::ReferenceEngine engine(Time::zero(), Bandwidth::bytes_per_second(1e9));
  EngineInput in;
  in.programs = programs.programs.get();
  // Rank 0 runs F0.0 F1.0 F0.1 B1.0 F1.1&B0.0 B1.1 b0.1 W0.1 (rank 1 the mirror image). A pass
  // alone exposes its two all-to-alls per layer: F 5 + 4 + 5 + 4 = 18 ms, B 4 + 10 + 4 + 10 =
  // 28, b (W deferred: 10 ms, 5 + 5) 18. F0.0 0-18, F1.0 18-36 (after rank 1's F1.0), F0.1
  // 36-54, B1.0 54-82, then the pair once rank 1's B0.0 is in at 82: F's attention 82-87 beside
  // B's first all-to-all 82-86; B's MoE 87-97 beside F's dispatch 87-91; F's MoE 97-102 beside
  // B's second all-to-all 97-101; B's attention 102-112 beside F's combine 102-106: 30 ms =
  // F + B, nothing exposed. B1.1 112-140, b0.1 140-158 (after rank 1's B0.1), W0.1 158-168.
  EXPECT_NEAR(engine.run(in).makespan.seconds(), 0.168, 1e-9);
}

}  // namespace
}  // namespace lockstep
