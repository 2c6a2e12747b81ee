// Context parallelism (Megatron Core's ring attention): each rank holds s / cp tokens, sends its
// K and V block around the cp ring (cp - 1 steps) beside the attention compute, and reduces its
// gradients with the dp x cp ranks that hold the same weights.
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

TrainConfig cp_config(std::uint32_t tp, std::uint32_t cp, std::uint32_t dp) {
  TrainConfig c = tiny_config(tp, 1, dp, dp);  // one micro-batch per replica
  c.par.cp = cp;
  c.bucket = Bytes(1);  // one gradient bucket per layer
  return c;
}

TEST(ContextParallel, KvBlockAndPerRankWork) {
  // tiny: 1024 tokens, 8 KV heads of 128. cp 4: 256 tokens per rank; K and V in BF16:
  // 2 x 256 x 8 x 128 x 2 B = 1,048,576 B. With tp 2 each rank holds 4 KV heads: half.
  EXPECT_EQ(make_step_plan(cp_config(1, 4, 1), 0).cp_block_bytes.count(), 1'048'576u);
  EXPECT_EQ(make_step_plan(cp_config(2, 4, 1), 0).cp_block_bytes.count(), 524'288u);
  EXPECT_EQ(make_step_plan(cp_config(1, 1, 1), 0).cp_block_bytes.count(), 0u);
  // A layer's forward is 1 ms per 1024 tokens (28 Mi FLOPs per token, attention over the whole
  // sequence included): 256 tokens take 0.25 ms; activations to the next stage are a quarter.
  const TrainConfig c = cp_config(1, 4, 1);
  const StepPlan plan = make_step_plan(c, c.peak_flops);
  EXPECT_EQ(plan.forward[0], Time::us(250));
  EXPECT_EQ(plan.pp_bytes.count(), 256u * 1024 * 2);
}

TEST(ContextParallel, RingSendsCpMinusOneBlocksForwardAndTwiceBackward) {
  // cp 4, one micro-batch, two layers: per layer rank 0 sends 3 blocks of 1 MiB forward and
  // 3 x 2 MiB backward (K, V with dK, dV), all to its ring neighbour, rank 1.
  const TrainConfig c = cp_config(1, 4, 1);
  const StepPrograms p = testing::full_step_programs(c, make_step_plan(c, c.peak_flops));
  const auto sent = testing::sends_of(p, 0, OpRole::CpComm);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent.begin()->first, 1u);
  EXPECT_EQ(sent.begin()->second, 2u * (3 * 1'048'576 + 3 * 2'097'152));
}

TEST(ContextParallel, GradientsReduceOverDpTimesCp) {
  // tp 1, cp 2, dp 2: ranks 0..3, rank = c + 2 d. Gradients all-reduce over all 4 (not over the
  // dp pair {0, 2}): a ring all-reduce sends 2 (4 - 1) / 4 = 1.5 x S per bucket. S per layer: 12 Mi
  // parameters + the embedding (layer 0) or head (layer 1), 14 Mi: 26 Mi x 2 B = 54,525,952 B.
  TrainConfig c = cp_config(1, 2, 2);
  c.par.zero = ZeroStage::None;
  const StepPrograms p = testing::full_step_programs(c, make_step_plan(c, c.peak_flops));
  std::uint64_t dp = 0;
  for (const auto& [peer, bytes] : testing::sends_of(p, 0, OpRole::DpComm)) dp += bytes;
  EXPECT_EQ(dp, 3u * 54'525'952);
  // The KV ring is rank 0's CP pair {0, 1}: one block of 512 tokens, 2 x 512 x 8 x 128 x 2 B,
  // per layer forward, twice that backward.
  const auto ring = testing::sends_of(p, 0, OpRole::CpComm);
  ASSERT_EQ(ring.size(), 1u);
  EXPECT_EQ(ring.begin()->first, 1u);
  EXPECT_EQ(ring.begin()->second, 2u * 3 * 2'097'152);
  // The distributed optimizer shards 12 B per parameter over the 4: 52 Mi x 12 / 4 B.
  c.par.zero = ZeroStage::Optimizer;
  EXPECT_EQ(make_step_plan(c, c.peak_flops).memory.optimizer.count(), 52u * 1024 * 1024 * 3);
}

TEST(ContextParallel, ExposedRingIsWhatTheAttentionCoreDoesNotHide) {
  // Reference engine, 700 ns + S / 50 GB/s per transfer. cp 4: forward ring 3 steps of 1 MiB,
  // 3 x 21.67152 us = 65.01456 us; backward 3 x (0.7 + 41.94304) = 127.92912 us. A layer's
  // forward is 250 us, its attention core (4 Mi of 28 Mi FLOPs) 250 / 7 us, of which 3 / 4 run
  // beside the ring: exposed 65.01456 - 26.78571 = 38.22885 us forward, 127.92912 - 53.57143 =
  // 74.35769 us backward, per layer; two layers: 225.17308 us.
  const auto opts = reference_options(Time::ns(700), Bandwidth::gBps(50));
  TrainConfig c = cp_config(1, 4, 1);
  c.overlap_dp = false;
  for (Expansion e : {Expansion::Full, Expansion::Reduced}) {
    c.expansion = e;
    const TrainResult r = simulate_training(star_cluster(1, 4), c, opts);
    EXPECT_NEAR(r.breakdown.cp.microseconds(), 225.17308, 0.01) << r.expansion;
  }
}

TEST(ContextParallel, WorldIsTpCpPpDpAndSequenceSplitsIntoTwoCpChunks) {
  const auto opts = reference_options(Time::ns(700), Bandwidth::gBps(50));
  try {
    simulate_training(star_cluster(1, 4), cp_config(1, 2, 1), opts);
    FAIL() << "2 ranks on 4 GPUs";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "dp");
    EXPECT_NE(std::string(e.what()).find("tp x cp x pp x dp = 1 x 2 x 1 x 1 = 2 ranks but the "
                                         "cluster has 4 GPUs"),
              std::string::npos);
  }
  // Megatron gives each CP rank 2 of 2 x cp chunks: 8192 tokens do not split into 6.
  ArgNode job = ArgNode::map("job", {"s.yaml", 3, 1});
  job.set("model", ArgNode::scalar("llama3-8b", "job.model", {"s.yaml", 4, 3}));
  job.set("global_batch", ArgNode::scalar("8", "job.global_batch", {"s.yaml", 5, 3}));
  job.set("cp", ArgNode::scalar("3", "job.cp", {"s.yaml", 6, 3}));
  try {
    parse_train_config(job);
    FAIL() << "cp 3 on 8192 tokens";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("s.yaml:6:3"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("cp"), std::string::npos);
  }
  job.set("cp", ArgNode::scalar("4", "job.cp", {"s.yaml", 6, 3}));
  EXPECT_EQ(parse_train_config(job).par.world(), 4u);
}

}  // namespace
}  // namespace lockstep
