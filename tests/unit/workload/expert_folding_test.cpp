// Megatron-Core's MoE parallel folding: the expert layers take ETP x EP x EDP over the same ranks
// as the attention's TP x CP x DP, in Megatron-Core's rank order (expert TP fastest, then EP,
// then expert DP), so an EP group may span TP ranks.
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
using testing::sent_by;
using testing::star_cluster;
using testing::tiny_config;

// tiny_config's two layers made MoE on 16 GPUs, TP 2, DP 8: 16 GELU experts of inner size 4096
// (2 x 1024 x 4096 = 8 Mi parameters each), top-2, EP 16 with expert TP 1: EDP = 2 x 8 / 16 = 1,
// one expert per rank. Batch 8: one micro-batch of 1,024 tokens per replica.
TrainConfig folded_config(std::uint32_t ep, std::uint32_t etp) {
  TrainConfig c = tiny_config(2, 1, 8, 8);
  c.model.experts = 16;
  c.model.top_k = 2;
  c.model.expert_ffn = 4096;
  c.par.ep = ep;
  c.par.etp = etp;
  c.bucket = Bytes(1);  // one bucket per layer and kind
  return c;
}

TEST(ExpertFolding, GroupsFollowMegatronCoresExpertRankOrder) {
  // r = i + etp (e + ep k). EP 16, ETP 1 over TP 2 x DP 8: one EP group of all 16 ranks (both
  // TP ranks of every replica), and 16 expert-DP groups of one rank each.
  ParallelConfig p = folded_config(16, 1).par;
  EXPECT_EQ(p.expert_dp(), 1u);
  std::vector<std::uint32_t> all(16);
  for (std::uint32_t r = 0; r < 16; ++r) all[r] = r;
  EXPECT_EQ(p.ep_group(0, 0), all);
  EXPECT_EQ(p.expert_dp_group(0, 5), std::vector<std::uint32_t>{5});
  // EP 4, ETP 1: EDP 4; EP group k is ranks 4k..4k+3 (replicas 2k and 2k + 1, both TP ranks);
  // expert-DP group e is e, e + 4, e + 8, e + 12.
  p.ep = 4;
  EXPECT_EQ(p.expert_dp(), 4u);
  EXPECT_EQ(p.ep_group(0, 1), (std::vector<std::uint32_t>{4, 5, 6, 7}));
  EXPECT_EQ(p.expert_dp_group(0, 3), (std::vector<std::uint32_t>{3, 7, 11, 15}));
  // Expert TP = TP (etp 0, Megatron-Core's default): the unfolded layout, EP inside one TP
  // rank's replicas: TP rank 1's first EP group is replicas 0-3 = ranks 1, 3, 5, 7.
  p.etp = 0;
  EXPECT_EQ(p.expert_dp(), 2u);
  EXPECT_EQ(p.ep_group(1, 0), (std::vector<std::uint32_t>{1, 3, 5, 7}));
  EXPECT_EQ(p.expert_dp_group(1, 2), (std::vector<std::uint32_t>{5, 13}));
}

TEST(ExpertFolding, AllToAllCrossesTpRanksAndExpertGradientsAreNotReduced) {
  // Each rank dispatches its sequence-parallel share, 1,024 / 2 tokens x top-2 x 1,024 x 2 B =
  // 2 MiB, in equal parts to the 16 ranks of its EP group: 128 KiB to each of 15 peers per
  // all-to-all, among them rank 1, its own TP peer. Dispatch and combine, forward and backward,
  // 2 layers: 8 all-to-alls, 1 MiB to every peer.
  const TrainConfig c = folded_config(16, 1);
  EXPECT_EQ(make_step_plan(c, c.peak_flops).ep_bytes.count(), 2u * 1024 * 1024);
  const auto ep = sent_by(c, 0, OpRole::EpComm);
  ASSERT_EQ(ep.size(), 15u);
  for (Rank peer = 1; peer < 16; ++peer) EXPECT_EQ(ep.at(peer), 1024u * 1024) << peer;
  // EDP 1: no expert-gradient reduction. Dense buckets ring-all-reduce over TP rank 0's
  // replicas 0, 2, ..., 14: 2 (8 - 1) / 8 = 1.75 x S each. Per layer and rank S = (attention 4
  // Mi + router 1,024 x 16 + table 14 Mi) / tp 2 = 9,445,376 parameters = 18,890,752 B.
  std::uint64_t dp = 0;
  for (const auto& [peer, bytes] : sent_by(c, 0, OpRole::DpComm)) dp += bytes;
  EXPECT_EQ(dp, 2 * 18'890'752u * 7 / 4);
}

TEST(ExpertFolding, ExpertTpOneDropsTheMoeBlocksTpCollectives) {
  // Sequence parallelism's all-gather and reduce-scatter of the full activation, 1,024 x 1,024
  // x 2 B = 2 MiB, over TP 2: rank 0 sends 1 MiB in each. Expert TP = TP: around attention and
  // the MoE block, forward and backward, 2 layers: 16 collectives, 16 MiB. Expert TP 1: the
  // routed experts take the shard as it is, only attention's: 8 MiB.
  std::uint64_t with_etp_tp = 0, with_etp_1 = 0;
  for (const auto& [peer, bytes] : sent_by(folded_config(8, 0), 0, OpRole::TpComm))
    with_etp_tp += bytes;
  for (const auto& [peer, bytes] : sent_by(folded_config(16, 1), 0, OpRole::TpComm))
    with_etp_1 += bytes;
  EXPECT_EQ(with_etp_tp, 16u << 20);
  EXPECT_EQ(with_etp_1, 8u << 20);
}

TEST(ExpertFolding, ExpertWeightsShardOverEtpTimesEp) {
  // Expert weights per rank: 16 experts x 8 Mi / (etp x ep) per layer, 2 layers, 2 B: EP 16
  // 32 MiB, EP 8 64 MiB, as are the BF16 gradients. With ZeRO-1 the 12 B of optimizer state
  // per expert parameter shard over EDP = 1 and 2: 16 x 8 Mi x 2 x 12 / 16 either way.
  TrainConfig c16 = folded_config(16, 1), c8 = folded_config(8, 1);
  c16.par.zero = c8.par.zero = ZeroStage::Optimizer;
  const MemoryEstimate m16 = make_step_plan(c16, c16.peak_flops).memory;
  const MemoryEstimate m8 = make_step_plan(c8, c8.peak_flops).memory;
  EXPECT_EQ(m8.weights.count() - m16.weights.count(), 32u << 20);
  EXPECT_EQ(m8.gradients.count() - m16.gradients.count(), 32u << 20);
  EXPECT_EQ(m8.optimizer.count(), m16.optimizer.count());
  EXPECT_EQ(m8.activations.count(), m16.activations.count());
  // Expert TP 2 halves the shard of EP 8 again: the layout EP 16 x ETP 1 holds.
  const MemoryEstimate m8tp = make_step_plan(folded_config(8, 2), c8.peak_flops).memory;
  EXPECT_EQ(m8.weights.count() - m8tp.weights.count(), 32u << 20);
}

TEST(ExpertFolding, ExplicitEtpEqualToTpIsTheDefault) {
  const auto opts = reference_options(Time::ns(700), Bandwidth::gBps(50));
  TrainConfig c = folded_config(8, 0);
  c.par.zero = ZeroStage::Optimizer;
  const TrainResult implicit = simulate_training(star_cluster(2, 8), c, opts);
  c.par.etp = 2;
  const TrainResult explicit_etp = simulate_training(star_cluster(2, 8), c, opts);
  EXPECT_EQ(implicit.iteration, explicit_etp.iteration);
  EXPECT_EQ(implicit.breakdown.ep, explicit_etp.breakdown.ep);
}

TEST(ExpertFolding, ReducedAndFullExpansionsAgreeOnAFoldedLayout) {
  const auto opts = reference_options(Time::ns(700), Bandwidth::gBps(50));
  TrainConfig c = folded_config(16, 1);
  c.par.zero = ZeroStage::Optimizer;
  c.expansion = Expansion::Full;
  const TrainResult full = simulate_training(star_cluster(2, 8), c, opts);
  c.expansion = Expansion::Reduced;
  const TrainResult reduced = simulate_training(star_cluster(2, 8), c, opts);
  EXPECT_GT(full.breakdown.ep, Time::zero());
  EXPECT_EQ(full.iteration, reduced.iteration);
  EXPECT_EQ(full.breakdown.ep, reduced.breakdown.ep);
}

// A job map of Qwen3 30B-A3B (128 experts) on tp x dp ranks with `ep` and optionally `etp`.
ArgNode folded_job(const char* tp, const char* dp, const char* ep, const char* etp) {
  ArgNode job = ArgNode::map("job", {"s.yaml", 3, 1});
  job.set("model", ArgNode::scalar("qwen3-30b-a3b", "job.model", {"s.yaml", 4, 3}));
  job.set("tp", ArgNode::scalar(tp, "job.tp", {"s.yaml", 5, 3}));
  job.set("dp", ArgNode::scalar(dp, "job.dp", {"s.yaml", 6, 3}));
  job.set("ep", ArgNode::scalar(ep, "job.ep", {"s.yaml", 7, 3}));
  if (etp) job.set("etp", ArgNode::scalar(etp, "job.etp", {"s.yaml", 8, 3}));
  job.set("global_batch", ArgNode::scalar("64", "job.global_batch", {"s.yaml", 9, 3}));
  return job;
}

std::string refusal(const ArgNode& job) {
  try {
    parse_train_config(job);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(ExpertFolding, LayoutsThatDoNotFoldAreRefusedNamingTheField) {
  // EP 16 over TP 2 x DP 8 folds with expert TP 1 (EDP 1), not with the default expert TP 2.
  EXPECT_EQ(parse_train_config(folded_job("2", "8", "16", "1")).par.expert_dp(), 1u);
  const std::string default_etp = refusal(folded_job("2", "8", "16", nullptr));
  EXPECT_NE(default_etp.find("s.yaml:7:3"), std::string::npos) << default_etp;
  EXPECT_NE(default_etp.find("ep=16 x etp=2 = 32 does not divide tp x cp x dp = 2 x 1 x 8"),
            std::string::npos)
      << default_etp;
  // With etp given the error names it.
  const std::string too_wide = refusal(folded_job("2", "8", "32", "1"));
  EXPECT_NE(too_wide.find("s.yaml:8:3"), std::string::npos) << too_wide;
  EXPECT_NE(too_wide.find("ep=32 x etp=1 = 32 does not divide"), std::string::npos) << too_wide;
  // Expert TP must divide tp (each expert TP group inside one TP group); 0 is out of range, at
  // its line and column.
  const std::string above = refusal(folded_job("2", "8", "4", "4"));
  EXPECT_NE(above.find("s.yaml:8:3"), std::string::npos) << above;
  EXPECT_NE(above.find("etp=4 does not divide tp=2"), std::string::npos) << above;
  EXPECT_EQ(parse_train_config(folded_job("4", "4", "4", "2")).par.expert_dp(), 2u);
  EXPECT_NE(refusal(folded_job("8", "2", "4", "3")).find("etp=3 does not divide tp=8"),
            std::string::npos);
  EXPECT_NE(refusal(folded_job("2", "8", "4", "0")).find("s.yaml:8:3"), std::string::npos);
  ArgNode unsharded = folded_job("2", "8", "16", "1");
  unsharded.set("sequence_parallel", ArgNode::scalar("false", "job.sp", {"s.yaml", 10, 3}));
  EXPECT_NE(refusal(unsharded).find("needs sequence_parallel"), std::string::npos);
}

}  // namespace
}  // namespace lockstep
