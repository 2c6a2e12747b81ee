// Interleaved 1F1B (Megatron-LM's virtual pipeline stages): the schedule's order, its iteration
// time derived by hand on the contention-free reference engine, its extra pipeline transfers,
// its memory, and the configuration it requires.
#include <gtest/gtest.h>

#include "job_node.hpp"
#include "lockstep/config/arg_node.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/workload/step_builder.hpp"
#include "lockstep/workload/training.hpp"
#include "test_cluster.hpp"

namespace lockstep {
namespace {

using testing::reference_options;
using testing::star_cluster;
using testing::tiny_config;

constexpr double kMs = 1e-3;

std::string order_text(std::uint32_t pp, std::uint32_t v, std::uint64_t m, std::uint32_t s,
                       std::uint32_t group = 0) {
  std::string out;
  for (const PipelineUnit& u : pipeline_order(pp, v, m, s, group)) {
    out += (u.forward ? "F" : "B") + std::to_string(u.chunk) + "." + std::to_string(u.micro) + " ";
  }
  return out;
}

TEST(Interleave, ScheduleFollowsMegatron) {
  // pp 2, v 2, m 4: 8 units per direction. Forward unit k runs chunk (k / 2) % 2 on micro-batch
  // (k / 4) x 2 + k % 2; backward unit k chunk 1 - (k / 2) % 2. Warm-up: stage 0
  // (2 - 0 - 1) x 2 + (2 - 1) x 2 = 4 forwards, stage 1 2; then one forward, one backward.
  EXPECT_EQ(order_text(2, 2, 4, 0),
            "F0.0 F0.1 F1.0 F1.1 F0.2 B1.0 F0.3 B1.1 F1.2 B0.0 F1.3 B0.1 B1.2 B1.3 B0.2 B0.3 ");
  EXPECT_EQ(order_text(2, 2, 4, 1),
            "F0.0 F0.1 F1.0 B1.0 F1.1 B1.1 F0.2 B0.0 F0.3 B0.1 F1.2 B1.2 F1.3 B1.3 B0.2 B0.3 ");
  // m == pp: Megatron runs every forward first.
  EXPECT_EQ(order_text(2, 2, 2, 1), "F0.0 F0.1 F1.0 F1.1 B1.0 B1.1 B0.0 B0.1 ");
  // v = 1 is plain 1F1B: stage 0 of 3 warms up with 2 forwards.
  EXPECT_EQ(order_text(3, 1, 3, 0), "F0.0 F0.1 F0.2 B0.0 B0.1 B0.2 ");
  EXPECT_EQ(order_text(3, 1, 4, 0), "F0.0 F0.1 F0.2 B0.0 F0.3 B0.1 B0.2 B0.3 ");
}

TEST(Interleave, MicroBatchesNotAMultipleOfPpEndWithAShorterGroup) {
  // pp 2, v 2, m 3: Megatron-core's table runs micro-batches 0-1 through chunks 0 and 1, then
  // the last group, micro-batch 2, through both: F0.0 F0.1 F1.0 F1.1 F0.2 F1.2; backward
  // entries on the mirrored chunk: B1.0 B1.1 B0.0 B0.1 B1.2 B0.2. Warm-up: stage 0
  // (2 - 0 - 1) x 2 + (2 - 1) x 2 = 4 forwards, stage 1 2, then one forward, one backward.
  EXPECT_EQ(order_text(2, 2, 3, 0), "F0.0 F0.1 F1.0 F1.1 F0.2 B1.0 F1.2 B1.1 B0.0 B0.1 B1.2 B0.2 ");
  EXPECT_EQ(order_text(2, 2, 3, 1), "F0.0 F0.1 F1.0 B1.0 F1.1 B1.1 F0.2 B0.0 F1.2 B0.1 B1.2 B0.2 ");
  // m = 5, pp 2: groups {0, 1}, {2, 3}, {4}.
  EXPECT_EQ(order_text(2, 2, 5, 1),
            "F0.0 F0.1 F1.0 B1.0 F1.1 B1.1 F0.2 B0.0 F0.3 B0.1 F1.2 B1.2 F1.3 B1.3 F0.4 B0.2 "
            "F1.4 B0.3 B1.4 B0.4 ");
}

// Forwards before the first backward: the warm-up, plus the first steady forward when any.
std::size_t leading_forwards(std::uint32_t pp, std::uint32_t v, std::uint64_t m, std::uint32_t s,
                             std::uint32_t group) {
  std::size_t n = 0;
  for (const PipelineUnit& u : pipeline_order(pp, v, m, s, group)) {
    if (!u.forward) break;
    ++n;
  }
  return n;
}

TEST(Interleave, GroupsOfNSetTheWarmUp) {
  // Megatron-Core's microbatch_group_size_per_vp_stage N: warm-up (pp - s - 1) x 2 + (v - 1) x N,
  // then one steady forward before the first backward. pp 4, v 2, m 8: N = 4 (the default)
  // 6 + 4 = 10 on stage 0, 4 + 4, 2 + 4, 0 + 4 = 4 on stage 3; N = 8 (one group, breadth-first)
  // 6 + 8 = 14 down to 8.
  for (std::uint32_t s = 0; s < 4; ++s) {
    EXPECT_EQ(leading_forwards(4, 2, 8, s, 4), (3 - s) * 2 + 4 + 1u) << s;
    EXPECT_EQ(leading_forwards(4, 2, 8, s, 8), (3 - s) * 2 + 8 + 1u) << s;
  }
  EXPECT_EQ(order_text(4, 2, 8, 0, 0), order_text(4, 2, 8, 0, 4));  // 0: pp
  // pp 2, v 2, m 4, N 4: the table runs micro-batches 0-3 through chunk 0, then chunk 1. Stage 0
  // warms up (2 - 1) x 2 + 4 = 6, stage 1 4; backward entry k on chunk 1 - its chunk.
  EXPECT_EQ(order_text(2, 2, 4, 0, 4),
            "F0.0 F0.1 F0.2 F0.3 F1.0 F1.1 F1.2 B1.0 F1.3 B1.1 B1.2 B1.3 B0.0 B0.1 B0.2 B0.3 ");
  EXPECT_EQ(order_text(2, 2, 4, 1, 4),
            "F0.0 F0.1 F0.2 F0.3 F1.0 B1.0 F1.1 B1.1 F1.2 B1.2 F1.3 B1.3 B0.0 B0.1 B0.2 B0.3 ");
}

TrainConfig four_layer_pipeline(std::uint32_t interleave) {
  TrainConfig c = tiny_config(1, 2, 1, 4);
  c.model.layers = 4;
  c.par.interleave = interleave;
  c.grad_reduce_in_fp32 = true;  // Megatron-LM's FP32 buffer, as the memory tests count it
  return c;
}

// Infinite network: only the compute and the schedule matter. Layers take F 1 ms, B 2 ms; the
// head F 1, B 2 sits on the last stage.
//  v = 1: stage A = layers 0-1 (F 2, B 4), stage B = layers 2-3 + head (F 3, B 6). 1F1B:
//    A: F0 0-2 F1 2-4 B0 11-15 F2 15-17 B1 20-24 F3 24-26 B2 29-33 B3 38-42
//    B: F0 2-5 B0 5-11 F1 11-14 B1 14-20 F2 20-23 B2 23-29 F3 29-32 B3 32-38
//    42 ms; B is busy 4 x 9 = 36 ms, its bubble 2 + 4 = 6 ms.
//  v = 2: virtual stages 0..3 = layers 0..3; A holds layers 0 and 2 (each F 1, B 2), B holds
//    layer 1 (F 1, B 2) and layer 3 + head (F 2, B 4). In the order of ScheduleFollowsMegatron:
//    A: F0.0 0-1 F0.1 1-2 F1.0 2-3 F1.1 3-4 F0.2 4-5 B1.0 9-11 F0.3 11-12 B1.1 15-17
//       F1.2 17-18 B0.0 18-20 F1.3 20-21 B0.1 21-23 B1.2 27-29 B1.3 33-35 B0.2 35-37 B0.3 37-39
//    B: F0.0 1-2 F0.1 2-3 F1.0 3-5 B1.0 5-9 F1.1 9-11 B1.1 11-15 F0.2 15-16 B0.0 16-18
//       F0.3 18-19 B0.1 19-21 F1.2 21-23 B1.2 23-27 F1.3 27-29 B1.3 29-33 B0.2 33-35 B0.3 35-37
//    39 ms: B's bubble is 1 + 2 = 3 ms, half of 1F1B's, as (pp - 1) / (v m) says it shrinks.
TEST(Interleave, TwoChunksHalveTheBubbleOfAFourLayerPipeline) {
  const auto opts = reference_options(Time::zero(), Bandwidth::bytes_per_second(1e18));
  const Topology topo = star_cluster(1, 2);
  const TrainResult plain = simulate_training(topo, four_layer_pipeline(1), opts);
  const TrainResult inter = simulate_training(topo, four_layer_pipeline(2), opts);
  EXPECT_NEAR(plain.iteration.seconds(), 42 * kMs, 1e-9);
  EXPECT_NEAR(inter.iteration.seconds(), 39 * kMs, 1e-9);
  EXPECT_NEAR((plain.iteration - Time::ms(36)).seconds(),
              2 * (inter.iteration - Time::ms(36)).seconds(), 1e-9);
  // Means over the two GPUs: compute (24 + 36) / 2 = 30 ms either way; the rest is waiting on
  // the other stage: (18 + 6) / 2 = 12 ms and (15 + 3) / 2 = 9 ms.
  EXPECT_NEAR(plain.breakdown.compute.seconds(), 30 * kMs, 1e-9);
  EXPECT_NEAR(inter.breakdown.compute.seconds(), 30 * kMs, 1e-9);
  EXPECT_NEAR((plain.breakdown.bubble + plain.breakdown.pp).seconds(), 12 * kMs, 1e-9);
  EXPECT_NEAR((inter.breakdown.bubble + inter.breakdown.pp).seconds(), 9 * kMs, 1e-9);
}

// The pipeline above with N = m = 4 (GroupsOfNSetTheWarmUp's order):
//  A: F0.0 0-1 F0.1 1-2 F0.2 2-3 F0.3 3-4 F1.0 4-5 F1.1 5-6 F1.2 6-7 B1.0 11-13 F1.3 13-14
//     B1.1 17-19 B1.2 23-25 B1.3 29-31 B0.0 31-33 B0.1 33-35 B0.2 35-37 B0.3 37-39
//  B: F0.0 1-2 F0.1 2-3 F0.2 3-4 F0.3 4-5 F1.0 5-7 B1.0 7-11 F1.1 11-13 B1.1 13-17 F1.2 17-19
//     B1.2 19-23 F1.3 23-25 B1.3 25-29 B0.0 29-31 B0.1 31-33 B0.2 33-35 B0.3 35-37
//  39 ms again: B waits 1 ms at the start and 2 at the end, the bubble (pp - 1) / (v m) of N = 2;
//  N moves the transfers and the memory, not the ideal bubble. Stage A holds 6 warm-up chunks + 1
//  = 7 one-layer chunks (N = 2: 4 + 1 = 5); B 4 + 1 = 5 and its FP32 logits, 1024 x 14336 x 4 B
//  = 1.75 layers: A is the most loaded, 7 x 32 x 1024 x 1024 B.
TEST(Interleave, AGroupOfAllMicroBatchesKeepsTheBubbleAndHoldsMore) {
  const auto opts = reference_options(Time::zero(), Bandwidth::bytes_per_second(1e18));
  TrainConfig c = four_layer_pipeline(2);
  c.par.microbatch_group = 4;
  const TrainResult r = simulate_training(star_cluster(1, 2), c, opts);
  EXPECT_NEAR(r.iteration.seconds(), 39 * kMs, 1e-9);
  EXPECT_NEAR(r.breakdown.compute.seconds(), 30 * kMs, 1e-9);
  const double per_layer = 32.0 * 1024 * 1024;
  EXPECT_NEAR(make_step_plan(c, 1e15).memory.activations.as_double(), 7 * per_layer, 2);
  c.par.microbatch_group = 2;
  EXPECT_NEAR(make_step_plan(c, 1e15).memory.activations.as_double(), 5 * per_layer, 2);
}

// Even stages (no output layer: vocab 0), every chunk of one layer F 1 ms, B 2 ms, m 4, so the
// ideal is 4 x (2 + 4) = 24 ms per stage. By hand:
//  1F1B: A F0 0-2 F1 2-4 B0 8-12 F2 12-14 B1 14-18 F3 18-20 B2 20-24 B3 26-30; 30 ms, bubble
//    6 = 24 (pp - 1) / m.
//  v 2, N 2: A F0.0 0-1 F0.1 1-2 F1.0 2-3 F1.1 3-4 F0.2 4-5 B1.0 6-8 F0.3 8-9 B1.1 9-11 F1.2
//    11-12 B0.0 12-14 F1.3 14-15 B0.1 15-17 B1.2 18-20 B1.3 21-23 B0.2 23-25 B0.3 25-27
//  v 2, N 4: A F0.0-F0.3 0-4 F1.0 4-5 F1.1 5-6 F1.2 6-7 B1.0 8-10 F1.3 10-11 B1.1 11-13 B1.2
//    14-16 B1.3 17-19 B0.0 19-21 B0.1 21-23 B0.2 23-25 B0.3 25-27
//  27 ms either way: bubble 3 = 24 (pp - 1) / (v m).
TEST(Interleave, EvenStagesLoseThePublishedBubble) {
  const auto opts = reference_options(Time::zero(), Bandwidth::bytes_per_second(1e18));
  const Topology topo = star_cluster(1, 2);
  auto even = [](std::uint32_t v, std::uint32_t group) {
    TrainConfig c = four_layer_pipeline(v);
    c.model.vocab = 0;
    c.par.microbatch_group = group;
    return c;
  };
  const double ideal = 24 * kMs, pp = 2, m = 4;
  EXPECT_NEAR(simulate_training(topo, even(1, 0), opts).iteration.seconds(),
              ideal * (1 + (pp - 1) / m), 1e-9);
  for (std::uint32_t group : {2u, 4u}) {
    EXPECT_NEAR(simulate_training(topo, even(2, group), opts).iteration.seconds(),
                ideal * (1 + (pp - 1) / (2 * m)), 1e-9)
        << group;
  }
}

// N below pp with Megatron-Core's warm-up deadlocks: pp 4, v 2, N 2, m 8. Stage 0 warms up
// (4 - 1) x 2 + 2 = 8 entries, through F1.3 (micro-batch 3, chunk 1), and runs its first
// backward B1.0 after them; stage 3 warms up 2 (F0.0 F0.1), then pairs entry 2 + i with backward
// entry i: (F1.0 B1.0) (F1.1 B1.1) (F0.2 B0.0) (F0.3 B0.1). Stage 0's F1.3 needs stage 3's F0.3,
// which follows stage 3's B0.0, which needs stage 0's B1.0 (virtual stage 4 feeds 3's
// gradient), which follows F1.3: a cycle. parse_train_config refuses N < pp as Megatron-Core does.
TEST(Interleave, AGroupBelowPpDeadlocksAndIsRefused) {
  TrainConfig c = tiny_config(1, 4, 1, 8);
  c.model.layers = 8;
  c.par.interleave = 2;
  c.par.microbatch_group = 2;
  const auto opts = reference_options(Time::zero(), Bandwidth::bytes_per_second(1e18));
  try {
    simulate_training(star_cluster(1, 4), c, opts);
    ADD_FAILURE() << "N = 2 below pp = 4 ran";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("deadlock"), std::string::npos) << e.what();
  }
  c.par.microbatch_group = 4;
  EXPECT_NO_THROW(simulate_training(star_cluster(1, 4), c, opts));
}

// The pipeline above with 3 micro-batches (not a multiple of pp = 2), in the order of
// MicroBatchesNotAMultipleOfPpEndWithAShorterGroup; "x<-y" marks waiting for the other stage:
//  A: F0.0 0-1 F0.1 1-2 F1.0 2-3 F1.1 3-4 F0.2 4-5 B1.0 9-11 (<-B.B1.0) F1.2 16-17 (<-B.F0.2)
//     B1.1 17-19 B0.0 19-21 B0.1 22-24 (<-B.B0.1) B1.2 26-28 (<-B.B1.2) B0.2 30-32 (<-B.B0.2)
//  B: F0.0 1-2 F0.1 2-3 F1.0 3-5 B1.0 5-9 F1.1 9-11 B1.1 11-15 F0.2 15-16 B0.0 16-18
//     F1.2 18-20 B0.1 20-22 B1.2 22-26 B0.2 28-30 (<-A.B1.2)
//  32 ms; compute (3 x 6 + 3 x 9) / 2 = 22.5 ms per GPU.
TEST(Interleave, ThreeMicroBatchesOverTwoStagesByHand) {
  const auto opts = reference_options(Time::zero(), Bandwidth::bytes_per_second(1e18));
  TrainConfig c = four_layer_pipeline(2);
  c.global_batch = 3;
  const TrainResult r = simulate_training(star_cluster(1, 2), c, opts);
  EXPECT_NEAR(r.iteration.seconds(), 32 * kMs, 1e-9);
  EXPECT_NEAR(r.breakdown.compute.seconds(), 22.5 * kMs, 1e-9);
}

std::size_t pipeline_sends(const TrainConfig& c) {
  const StepPlan plan = make_step_plan(c, c.peak_flops);
  StepBuildOptions o;
  o.full = true;
  o.collectives = default_collective_factory();
  const StepPrograms programs = build_step_programs(c, plan, o);
  std::size_t sends = 0;
  for (const auto& tags : programs.tags)
    for (const OpTag& t : tags) sends += t.role == OpRole::PpSend;
  return sends;
}

TEST(Interleave, EveryVirtualStageBoundaryCarriesTwoTransfersPerMicroBatch) {
  // pp x v virtual stages have pp v - 1 boundaries, each crossed by an activation and a gradient
  // per micro-batch: m = 4 gives 2 x 4 x 1 = 8 sends without interleaving, 2 x 4 x 3 = 24 with
  // v = 2 (the wrap from the last stage back to stage 0 included).
  EXPECT_EQ(pipeline_sends(four_layer_pipeline(1)), 8u);
  EXPECT_EQ(pipeline_sends(four_layer_pipeline(2)), 24u);
  EXPECT_EQ(pipeline_sends(four_layer_pipeline(4)), 2u * 4 * 7);
}

TEST(Interleave, StageZeroHoldsAQuarterMoreActivationsAtPpTwoVTwo) {
  // Narayanan et al. 2021: interleaving keeps pp (1 + (pp - 1) / (pp v)) micro-batches' worth of
  // activations on stage 0: 2 x 1.25 = 2.5 vs 1F1B's 2. A layer keeps Korthikanti's GPT layer
  // without its two dropout masks (the tiny model has none): 34 - 2 = 32 s b h =
  // 32 x 1024 x 1024 B per micro-batch (tp = 1, sequence parallelism's formula).
  // Each stage holds 2 layers and the same weights; stage 1 adds FP32 logits
  // (1024 x 14336 x 4 B = 58.7 MB) but keeps fewer micro-batches, so stage 0 is the most loaded.
  const double per_layer = 32.0 * 1024 * 1024;
  const StepPlan plain = make_step_plan(four_layer_pipeline(1), 1e15);
  const StepPlan inter = make_step_plan(four_layer_pipeline(2), 1e15);
  EXPECT_EQ(inter.layers_in(0), 2u);
  EXPECT_EQ(inter.first_layer(0, 1), 2u);
  // 1F1B: min(pp - 0, m) = 2 micro-batches x 2 layers.
  EXPECT_NEAR(plain.memory.activations.as_double(), 4 * per_layer, 2);
  // Interleaved: 4 warm-up chunks + 1 in flight = 5 chunks of 1 layer = 1.25 x 1F1B's.
  EXPECT_NEAR(inter.memory.activations.as_double(), 5 * per_layer, 2);
}

ArgNode job(const testing::JobKeys& keys) {
  return testing::job_node(keys);
}

std::string error_of(const ArgNode& node) {
  return testing::train_config_error(node);
}

TEST(Interleave, MicroBatchesPerReplicaAgainstPp) {
  // 6 sequences / dp 2 = 3 micro-batches, fewer than pp = 4: Megatron-Core refuses (N in [pp,
  // m]); lockstep runs them as Llama 3 does, one group of 3 (FewerMicroBatchesThanStages...).
  EXPECT_EQ(parse_train_config(job({{"model", "llama3-8b"},
                                    {"pp", "4"},
                                    {"dp", "2"},
                                    {"interleave", "2"},
                                    {"global_batch", "6"}}))
                .par.microbatch_group,
            3u);
  // 6 micro-batches, not a multiple of 4: Megatron-Core refuses the last group of 2 (schedules.py:
  // 0 < M mod N < pp "introduces dependency bubbles"); 8 are two whole groups.
  EXPECT_EQ(error_of(job({{"model", "llama3-8b"},
                          {"pp", "4"},
                          {"dp", "2"},
                          {"interleave", "2"},
                          {"global_batch", "12"}})),
            "s.yaml:7:3: job.interleave: 6 micro-batches per replica are not a multiple of pp (4): "
            "Megatron-Core's interleaved schedule refuses a last group of 2");
  EXPECT_EQ(parse_train_config(job({{"model", "llama3-8b"},
                                    {"pp", "4"},
                                    {"dp", "2"},
                                    {"interleave", "2"},
                                    {"global_batch", "16"}}))
                .par.interleave,
            2u);
  EXPECT_THROW(
      parse_train_config(job({{"model", "llama3-8b"}, {"interleave", "2"}, {"global_batch", "8"}})),
      InputError);  // no pipeline to interleave
  EXPECT_EQ(parse_train_config(job({{"model", "llama3-8b"},
                                    {"pp", "4"},
                                    {"dp", "2"},
                                    {"interleave", "2"},
                                    {"global_batch", "16"}}))
                .par.interleave,
            2u);
}

TEST(Interleave, TheGroupSizeLiesBetweenPpAndTheMicroBatches) {
  auto with = [](const char* batch, const char* group) {
    return job({{"model", "llama3-8b"},
                {"pp", "4"},
                {"dp", "1"},
                {"interleave", "2"},
                {"global_batch", batch},
                {"microbatch_group_size_per_vp_stage", group}});
  };
  EXPECT_EQ(
      error_of(with("8", "2")),
      "s.yaml:9:3: job.microbatch_group_size_per_vp_stage: 2 is below pp (4): Megatron-Core's "
      "interleaved schedule needs N in [pp, micro-batches per replica]");
  EXPECT_EQ(
      error_of(with("8", "9")),
      "s.yaml:9:3: job.microbatch_group_size_per_vp_stage: a group of 9 micro-batches is more "
      "than the 8 per replica");
  // 13 = 2 x 5 + 3: a last group of 3 < pp; 9 = 5 + 4 leaves 4 = pp, which Megatron-Core runs.
  EXPECT_EQ(
      error_of(with("13", "5")),
      "s.yaml:9:3: job.microbatch_group_size_per_vp_stage: 13 micro-batches per replica leave "
      "a last group of 3 (N = 5), fewer than pp (4): Megatron-Core's interleaved schedule "
      "refuses it");
  EXPECT_EQ(parse_train_config(with("9", "5")).par.microbatch_group, 5u);
  EXPECT_EQ(
      parse_train_config(
          job({{"model", "llama3-8b"}, {"pp", "4"}, {"interleave", "2"}, {"global_batch", "8"}}))
          .par.microbatch_group,
      4u);  // the default, pp
  EXPECT_NE(error_of(job({{"model", "llama3-8b"},
                          {"pp", "4"},
                          {"global_batch", "8"},
                          {"microbatch_group_size_per_vp_stage", "4"}}))
                .find("job.microbatch_group_size_per_vp_stage: groups micro-batches over model "
                      "chunks: needs interleave > 1"),
            std::string::npos);
}

// Fewer micro-batches than stages (the Llama 3 paper runs them, arXiv:2407.21783 section
// 3.3.2): one group of all m (N = m), Megatron-Core's warm-up clipped at every unit. pp 3, v 2,
// m 2, six one-layer virtual stages (F 1 ms, B 2 ms; the output layer doubles virtual stage 5's:
// F 2, B 4). Stages A, B run every forward first (warm-up (3 - s - 1) x 2 + 2 >= 4 units), C
// warms up 2. "<-" marks what a unit waits for:
//  A: F0.0 0-1 F0.1 1-2 F1.0 3-4 (<-C.F0.0) F1.1 4-5 B1.0 13-15 (<-B.B1.0) B1.1 19-21
//     (<-B.B1.1) B0.0 21-23 B0.1 25-27 (<-B.B0.1)
//  B: F0.0 1-2 F0.1 2-3 F1.0 4-5 F1.1 5-6 B1.0 11-13 (<-C.B1.0) B1.1 17-19 (<-C.B1.1) B0.0
//     19-21 B0.1 23-25 (<-C.B0.1)
//  C: F0.0 2-3 F0.1 3-4 F1.0 5-7 B1.0 7-11 F1.1 11-13 B1.1 13-17 B0.0 17-19 B0.1 21-23
//     (<-A.B1.1)
// 27 ms. Without interleaving (stages F 2, 2, 3 ms, B 4, 4, 6), 1F1B: C runs F0 4-7 B0 7-13 F1
// 13-16 B1 16-22, B's B1 22-26, A's B1 26-30: 30 ms.
TEST(Interleave, FewerMicroBatchesThanStagesRunAsOneGroup) {
  TrainConfig c = tiny_config(1, 3, 1, 2);
  c.model.layers = 6;
  const auto opts = reference_options(Time::zero(), Bandwidth::bytes_per_second(1e18));
  const Topology topo = star_cluster(1, 3);
  EXPECT_NEAR(simulate_training(topo, c, opts).iteration.seconds(), 30 * kMs, 1e-9);
  c.par.interleave = 2;
  EXPECT_NEAR(simulate_training(topo, c, opts).iteration.seconds(), 27 * kMs, 1e-9);
  // Property: no deadlock for any m < pp (pp 2-6, v 2-3, a layer per virtual stage).
  for (std::uint32_t pp = 2; pp <= 6; ++pp) {
    for (std::uint32_t v = 2; v <= 3; ++v) {
      for (std::uint32_t m = 1; m < pp; ++m) {
        TrainConfig few = tiny_config(1, pp, 1, m);
        few.model.layers = pp * v;
        few.par.interleave = v;
        EXPECT_NO_THROW(simulate_training(star_cluster(1, pp), few, opts)) << pp << v << m;
      }
    }
  }
  // The job takes it, N = m; a smaller N or a larger one is refused, naming the key.
  auto with = [](const char* group) {
    ArgNode j =
        job({{"model", "llama3-8b"}, {"pp", "4"}, {"interleave", "2"}, {"global_batch", "2"}});
    if (group) {
      j.set("microbatch_group_size_per_vp_stage",
            ArgNode::scalar(group, "job.microbatch_group_size_per_vp_stage", {"s.yaml", 9, 3}));
    }
    return j;
  };
  EXPECT_EQ(parse_train_config(with(nullptr)).par.microbatch_group, 2u);
  EXPECT_EQ(parse_train_config(with("2")).par.microbatch_group, 2u);
  EXPECT_EQ(error_of(with("1")),
            "s.yaml:9:3: job.microbatch_group_size_per_vp_stage: 1 is below the 2 micro-batches "
            "per replica: with fewer than pp (4) they run as one group (N = 2)");
  EXPECT_EQ(error_of(with("3")),
            "s.yaml:9:3: job.microbatch_group_size_per_vp_stage: a group of 3 micro-batches is "
            "more than the 2 per replica");
}

TEST(Interleave, EmbeddingAndLossCountAsALayerInTheSplit) {
  // 6 layers + embedding + loss = 8 units over pp 2 x v 2 = 4 virtual stages, 2 each: virtual
  // stage 0 = the embedding and layer 0, 1 = layers 1-2, 2 = layers 3-4, 3 = layer 5 and the
  // loss. Stage 0 holds virtual stages 0 and 2, stage 1 holds 1 and 3.
  TrainConfig c = four_layer_pipeline(2);
  c.model.layers = 6;
  c.embedding_in_pipeline_split = c.loss_in_pipeline_split = true;
  const StepPlan plan = make_step_plan(c, 1e15);
  EXPECT_EQ(plan.chunk_first_layer, (std::vector<std::uint32_t>{0, 1, 3, 5, 6}));
  // Without: 6 over 4, the 2 left to virtual stages 1 and 2: 1, 2, 2, 1 layers, the same here.
  c.embedding_in_pipeline_split = c.loss_in_pipeline_split = false;
  EXPECT_EQ(make_step_plan(c, 1e15).chunk_first_layer, (std::vector<std::uint32_t>{0, 1, 3, 5, 6}));
  // Llama 3 405B as the Llama 3 paper split it (section 3.3.2): 126 layers + 2 over 16 x 8
  // virtual stages, one unit each: the first chunk of stage 0 holds the embedding alone, the
  // last of stage 15 the output layer alone (refused without the two units: 126 < 128).
  TrainConfig l = c;
  l.model = model_preset("llama3-405b");
  l.par.tp = 8;
  l.par.pp = 16;
  l.par.interleave = 8;
  l.par.dp = 128;
  l.par.zero = ZeroStage::Optimizer;  // Megatron's distributed optimizer
  l.global_batch = 2048;
  l.embedding_in_pipeline_split = l.loss_in_pipeline_split = true;
  const StepPlan meta = make_step_plan(l, 1e15);
  EXPECT_EQ(meta.first_layer(0, 0), meta.end_layer(0, 0));  // the embedding only
  EXPECT_EQ(meta.first_layer(15, 7), 126u);                 // the loss only
  EXPECT_EQ(meta.layers_in(0), 7u);
  EXPECT_EQ(meta.layers_in(1), 8u);
  EXPECT_EQ(meta.stage_first_layer(0), 15u);  // chunk 1's layer: virtual stage 16 - 1
  // Memory on a middle stage, 16 micro-batches per replica (dp 128). Per layer and rank (tp 8):
  // attention 16384 x 128 x (2 x 128 + 2 x 8) = 570,425,344 and SwiGLU 3 x 16384 x 53248 =
  // 2,617,245,696 parameters, / 8 = 398,458,880; 8 layers 3,187,671,040 x (2 + 4 + 12 / 128)
  // = 19,424,870,400 B. Activations per token and layer over the 8 ranks (SP): norms' inputs
  // 4h, QKV's and FC1's inputs 4h, Q 2h, K and V 2 x 8 x 256 = 4,096 B, the output projection's
  // input 2h, SwiGLU's input 4 x 53248, FC2's 2 x 53248 (31.75 h = 520,192 B), / 8 x 8192
  // tokens = 532,676,608 B per layer and micro-batch. With m = pp = 16, Megatron-core runs every
  // forward first (warm-up = m v = 128 chunks of one layer): 68,182,605,824 B. Total
  // 87,607,476,224 B = 81.6 GiB: over an H100's 80 GiB by 1,708,130,304 B.
  EXPECT_NEAR(meta.memory.activations.as_double(), 128 * 532'676'608.0, 4);
  EXPECT_NEAR(meta.memory.total().as_double(), 87'607'476'224.0, 8);
  // 8,192 GPUs (dp 64, m = 32): stage 1's warm-up (pp - 2) x 2 + (v - 1) pp = 140 chunks + the
  // one in flight = 141 layers: 75,107,401,728 B, the optimizer's 12 / 64: 94,831,116,288 B.
  l.par.dp = 64;
  EXPECT_NEAR(make_step_plan(l, 1e15).memory.total().as_double(), 94'831'116'288.0, 8);
}

TEST(Interleave, AnUnevenSplitWithTheEmbeddingAsALayerNamesTheKey) {
  try {
    parse_train_config(job({{"model", "llama3-405b"},
                            {"pp", "16"},
                            {"interleave", "8"},
                            {"global_batch", "16"},
                            {"account_for_embedding_in_pipeline_split", "true"}}));
    FAIL() << "127 units over 128 virtual stages";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "s.yaml:8:3: job.account_for_embedding_in_pipeline_split: 126 layers with the "
              "embedding / loss make 127 units, which do not split evenly over pp=16 x "
              "interleave=8 = 128 virtual stages");
  }
}

}  // namespace
}  // namespace lockstep
