#include "lockstep/workload/expansion.hpp"

#include <gtest/gtest.h>

namespace lockstep {
namespace {

// Qwen3 235B-A22B as bench/data/training_configs.csv line 88 runs it: 94 layers on 64 GPUs,
// TP 1, PP 8, EP 8, DP 8, 1,024 sequences of micro-batch 1.
TrainConfig moe_line_88() {
  TrainConfig c;
  c.model = model_preset("qwen3-235b-a22b");
  c.par.tp = 1;
  c.par.pp = 8;
  c.par.dp = 8;
  c.par.ep = 8;
  c.global_batch = 1024;
  c.efficiency = 0.5;
  return c;
}

StepPlan plan_of(const TrainConfig& c) {
  return make_step_plan(c, 1e15);
}

TEST(Expansion, CountsExpertAllToAllOpsAtTheirOwnCost) {
  const TrainConfig c = moe_line_88();
  const ExpansionSize s = expansion_size(c, plan_of(c), true);
  // 64 ranks; 1,024 / 8 = 128 micro-batches x ceil(94 / 8) = 12 layers x 2 passes = 3,072
  // layer passes; each 2 kernels (240 B) + 2 all-to-alls of 2 x 7 ops (400 B) + 2 collective
  // instances (700 B): 480 + 11,200 + 1,400 = 13,080 B; 64 x 3,072 x 13,080 = 2,571,632,640 B,
  // 2,452 MiB against the 2,537-2,549 MiB measured (docs/training-configs.md).
  EXPECT_DOUBLE_EQ(s.ranks, 64);
  EXPECT_DOUBLE_EQ(s.units, 3072);
  EXPECT_DOUBLE_EQ(s.ops, 30);
  // Once a step the pipeline transfers, the buckets and the gradient norm add under 2%.
  EXPECT_GT(s.bytes, 2'571'632'640.0);
  EXPECT_LT(s.bytes, 1.02 * 2'571'632'640.0);
}

TEST(Expansion, AutoReducesAMoeJobWhoseFullExpansionExceedsTheBudget) {
  TrainConfig c = moe_line_88();
  // 2.60 GB > 2 GiB (2,147,483,648 B): reduced, though it has only 64 GPUs.
  EXPECT_FALSE(expands_fully(c, plan_of(c)));
  // Half the batch: 1.30 GB, full.
  c.global_batch = 512;
  EXPECT_TRUE(expands_fully(c, plan_of(c)));
  // An explicit choice is kept whatever the memory.
  c.global_batch = 1024;
  c.expansion = Expansion::Full;
  EXPECT_TRUE(expands_fully(c, plan_of(c)));
}

TEST(Expansion, AutoKeepsADense64GpuJobFullAndReducesAbove64) {
  // Llama 3 70B on 64 GPUs, TP 2 (sequence parallel) PP 4 DP 8, 128 sequences: 64 x (16 x 20
  // x 2 = 640) layer passes x (12 ops x 240 B + 4 collectives x 700 B = 5,680 B) = 232.7 MB
  // of layer passes, under 2 GiB with the step's buckets.
  TrainConfig c;
  c.model = model_preset("llama3-70b");
  c.par.tp = 2;
  c.par.sequence_parallel = true;
  c.par.pp = 4;
  c.par.dp = 8;
  c.global_batch = 128;
  c.efficiency = 0.5;
  const ExpansionSize s = expansion_size(c, plan_of(c), true);
  // Single rings of 2: all-gather 1 + 2 ops, reduce-scatter 3, each with its chain's mark,
  // twice a pass: 2 kernels + 2 x (3 + 3 + 2) = 18 ops.
  EXPECT_DOUBLE_EQ(s.ops, 18);
  EXPECT_DOUBLE_EQ(s.units, 640);
  EXPECT_GT(s.bytes, 64.0 * 640 * (18 * 240 + 4 * 700));
  EXPECT_TRUE(expands_fully(c, plan_of(c)));
  // 72 GPUs: above the GPU limit whatever the memory.
  c.par.dp = 9;
  c.global_batch = 144;
  EXPECT_FALSE(expands_fully(c, plan_of(c)));
  c.expansion = Expansion::Reduced;
  c.par.dp = 2;
  c.global_batch = 2;
  EXPECT_FALSE(expands_fully(c, plan_of(c)));
}

}  // namespace
}  // namespace lockstep
