// Expert parallelism: routed-expert gradients are shared by the dp / ep ranks that hold the same
// experts, so they reduce over that group, not over all data-parallel ranks.
#include <gtest/gtest.h>

#include <map>

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

// tiny_config's two layers made MoE: 4 GELU experts of inner size 4096 (2 x 1024 x 4096 = 8 Mi
// parameters each), top-1. dp 4, ep 2: each rank holds 2 of the 4 experts, 16 Mi parameters =
// 33,554,432 B of gradients per layer; ranks d = 0, 2 hold the same experts, as do d = 1, 3.
// Dense per layer: attention 4 Mi + router 1024 x 4 = 4,198,400 parameters, plus the embedding
// (layer 0) or the head (layer 1), 14 Mi each: 18,878,464 parameters = 37,756,928 B.
TrainConfig moe_config() {
  TrainConfig c = tiny_config(1, 1, 4, 4);
  c.model.experts = 4;
  c.model.top_k = 1;
  c.model.expert_ffn = 4096;
  c.par.ep = 2;
  c.bucket = Bytes(1);  // one bucket per layer and kind
  return c;
}

constexpr std::uint64_t kExpertBytes = 33'554'432;
constexpr std::uint64_t kDenseBytes = 37'756'928;

TEST(Expert, GradientsSplitIntoDenseAndExpertBuckets) {
  const StepPlan plan = make_step_plan(moe_config(), 1e15);
  ASSERT_EQ(plan.buckets[0].size(), 4u);
  std::uint64_t dense = 0, expert = 0;
  for (const GradientBucket& b : plan.buckets[0]) (b.expert ? expert : dense) += b.bytes.count();
  EXPECT_EQ(expert, 2 * kExpertBytes);
  EXPECT_EQ(dense, 2 * kDenseBytes);
  // Backward order: layer 1's buckets first.
  EXPECT_EQ(plan.buckets[0][0].ready_after_layer, 1u);
  EXPECT_EQ(plan.buckets[0][3].ready_after_layer, 0u);
}

TEST(Expert, ExpertGradientsAllReduceOverDpOverEpRanks) {
  // Full expansion, rank 0's gradient sends. Dense buckets ring-all-reduce over d = 0..3:
  // 2 (4 - 1) / 4 x S = 1.5 S each, all to its ring neighbour. Expert buckets ring-all-reduce
  // over {0, 2}: 2 (2 - 1) / 2 x E = E each, all to rank 2, which is not rank 0's dense neighbour.
  auto sent = testing::sent_by(moe_config(), 0, OpRole::DpComm);
  EXPECT_EQ(sent[2], 2 * kExpertBytes);
  std::uint64_t dense = 0;
  for (const auto& [peer, bytes] : sent)
    if (peer != 2) dense += bytes;
  EXPECT_EQ(dense, 3 * kDenseBytes);  // 1.5 x 2 buckets
}

TEST(Expert, ReducedAndFullExpansionsAgreeWithExpertParallelism) {
  // The reduced expansion schedules expert buckets over their own groups after the run.
  const auto opts = reference_options(Time::ns(700), Bandwidth::gBps(50));
  TrainConfig c = moe_config();
  c.par.zero = ZeroStage::Optimizer;
  c.expansion = Expansion::Full;
  const TrainResult full = simulate_training(star_cluster(1, 4), c, opts);
  c.expansion = Expansion::Reduced;
  const TrainResult reduced = simulate_training(star_cluster(1, 4), c, opts);
  EXPECT_GT(full.breakdown.ep, Time::zero());
  EXPECT_EQ(full.iteration, reduced.iteration);
  EXPECT_EQ(full.breakdown.dp, reduced.breakdown.dp);
}

// Load imbalance: the busiest of ep = 2 ranks gets 1.5 x the mean tokens. Its routed expert
// (top-1, 2 x 1024 x 4096 = 8 Mi parameters) does 0.5 x 2 x 8 Mi x 1024 tokens = 8 Gi FLOP more
// per layer forward, at 28 Gi FLOP per ms: 2/7 ms, backward twice that; each rank's all-to-all
// buffer (tokens x hidden x 2 B x top-1 = 2 MiB) is taken at the busiest rank's 3 MiB.
TEST(Expert, ImbalanceSlowsTheRoutedExpertsAndTheAllToAll) {
  TrainConfig c = moe_config();
  const StepPlan even = make_step_plan(c, c.peak_flops);
  c.moe_imbalance = 1.5;
  const StepPlan skewed = make_step_plan(c, c.peak_flops);
  for (std::uint32_t l = 0; l < 2; ++l) {
    EXPECT_NEAR((skewed.forward[l] - even.forward[l]).seconds(), 2.0 / 7 * 1e-3, 1e-12);
    EXPECT_NEAR((skewed.backward[l] - even.backward[l]).seconds(), 4.0 / 7 * 1e-3, 1e-12);
  }
  EXPECT_EQ(even.ep_bytes.count(), 2u * 1024 * 1024);
  EXPECT_EQ(skewed.ep_bytes.count(), 3u * 1024 * 1024);
}

TEST(Expert, ImbalanceAboveEpIsRefused) {
  ArgNode job = ArgNode::map("job", {"s.yaml", 3, 1});
  job.set("model", ArgNode::scalar("mixtral-8x7b", "job.model", {"s.yaml", 4, 3}));
  job.set("dp", ArgNode::scalar("2", "job.dp", {"s.yaml", 5, 3}));
  job.set("ep", ArgNode::scalar("2", "job.ep", {"s.yaml", 6, 3}));
  job.set("global_batch", ArgNode::scalar("8", "job.global_batch", {"s.yaml", 7, 3}));
  job.set("moe_imbalance", ArgNode::scalar("2.5", "job.moe_imbalance", {"s.yaml", 8, 3}));
  try {
    parse_train_config(job);
    FAIL() << "2.5 x the mean over 2 ranks";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("s.yaml:8:3"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("moe_imbalance"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("exceeds ep=2"), std::string::npos) << e.what();
  }
  job.set("moe_imbalance", ArgNode::scalar("2", "job.moe_imbalance", {"s.yaml", 8, 3}));
  EXPECT_EQ(parse_train_config(job).moe_imbalance, 2.0);
}

}  // namespace
}  // namespace lockstep
