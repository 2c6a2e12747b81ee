// Expert tensor parallelism between 1 and tp (Megatron-Core's --expert-tensor-parallel-size under
// MoE parallel folding): each expert TP group is etp consecutive ranks of one attention TP group,
// the dispatched tokens are gathered over it and the experts' outputs reduce-scattered back.
#include <gtest/gtest.h>

#include <map>

#include "lockstep/topology/catalog.hpp"
#include "lockstep/workload/kernel_model.hpp"
#include "lockstep/workload/step_builder.hpp"
#include "lockstep/workload/training.hpp"
#include "test_cluster.hpp"

namespace lockstep {
namespace {

using testing::reference_options;
using testing::sent_by;
using testing::star_cluster;
using testing::tiny_config;

// tiny_config's model with 4 layers, all MoE: 16 GELU experts of inner size 4096 (2 x 1,024 x
// 4,096 = 8 Mi parameters each), top-2. 32 GPUs: TP 4, DP 2, PP 4 (one layer per stage), EP 4
// with expert TP `etp`; global batch 2: one micro-batch of 1,024 tokens per replica.
TrainConfig etp_config(std::uint32_t etp) {
  TrainConfig c = tiny_config(4, 4, 2, 2);
  c.model.layers = 4;
  c.model.experts = 16;
  c.model.top_k = 2;
  c.model.expert_ffn = 4096;
  c.par.ep = 4;
  c.par.etp = etp;
  c.bucket = Bytes(1);
  return c;
}

TEST(ExpertTp, GroupsOfTp4Etp2Ep4Dp2) {
  // Stage-local rank r = t + 4 d (attention) = i + 2 (e + 4 k) (experts); ETP x EP = 8 = TP x
  // DP, so EDP = 1 (k = 0). Expert TP group e: {2e, 2e + 1}, half of replica e / 2's TP group;
  // EP group i: {i, i + 2, i + 4, i + 6}, across both replicas; expert-DP groups: one rank.
  const ParallelConfig p = etp_config(2).par;
  EXPECT_EQ(p.expert_dp(), 1u);
  EXPECT_EQ(p.expert_rank(0, 0, 0), 0u);
  EXPECT_EQ(p.expert_rank(1, 0, 0), 1u);
  EXPECT_EQ(p.expert_rank(0, 3, 0), 6u);
  EXPECT_EQ(p.expert_rank(1, 3, 0), 7u);
  EXPECT_EQ(p.ep_group(0, 0), (std::vector<std::uint32_t>{0, 2, 4, 6}));
  EXPECT_EQ(p.ep_group(1, 0), (std::vector<std::uint32_t>{1, 3, 5, 7}));
  EXPECT_EQ(p.expert_dp_group(1, 2), std::vector<std::uint32_t>{5});
  // DP 4 (16 ranks a stage): EDP 2; expert-DP group (1, 2) is ranks 5 and 5 + 8 = 13.
  ParallelConfig wide = p;
  wide.dp = 4;
  EXPECT_EQ(wide.expert_dp(), 2u);
  EXPECT_EQ(wide.ep_group(1, 1), (std::vector<std::uint32_t>{9, 11, 13, 15}));
  EXPECT_EQ(wide.expert_dp_group(1, 2), (std::vector<std::uint32_t>{5, 13}));
}

TEST(ExpertTp, CollectivesRunOverTheGroupsOfTheLayout) {
  // Activation of a micro-batch 1,024 x 1,024 x 2 B = 2 MiB; each rank dispatches its
  // sequence-parallel share x top-2: 2 MiB x 2 / 4 = 1 MiB; the expert TP all-gather of the
  // dispatched tokens over 2 ranks is 2 x 1 MiB (its reduce-scatter the same).
  const TrainConfig c = etp_config(2);
  const StepPlan plan = make_step_plan(c, c.peak_flops);
  EXPECT_EQ(plan.ep_bytes.count(), 1u << 20);
  EXPECT_EQ(plan.expert_tp_bytes.count(), 2u << 20);
  // Rank 1 of stage 0 (its one layer, one micro-batch): to rank 0, its expert TP peer, the ring
  // all-gather and reduce-scatter of 2 MiB over 2 ranks send 1 MiB each, forward and backward:
  // 4 MiB. To rank 2, its TP ring's next, attention's sequence-parallel all-gather and
  // reduce-scatter of 2 MiB over 4 ranks, 3/4 x 2 MiB each, forward and backward: 6 MiB. The
  // routed experts (etp < tp, no shared experts) gather nothing over the whole TP group.
  const auto tp = sent_by(c, 1, OpRole::TpComm);
  ASSERT_EQ(tp.size(), 2u);
  EXPECT_EQ(tp.at(0), 4u << 20);
  EXPECT_EQ(tp.at(2), 6u << 20);
  // EP: rank 1 sends 1/4 of its 1 MiB to each of ranks 3, 5, 7 per all-to-all, 4 all-to-alls.
  const auto ep = sent_by(c, 1, OpRole::EpComm);
  ASSERT_EQ(ep.size(), 3u);
  for (Rank peer : {3u, 5u, 7u}) EXPECT_EQ(ep.at(peer), 1u << 20) << peer;
  // EDP 1: no expert-gradient reduction; dense gradients over the replica pair {1, 5}.
  const auto dp = sent_by(c, 1, OpRole::DpComm);
  ASSERT_EQ(dp.size(), 1u);
  EXPECT_EQ(dp.count(5), 1u);
}

TEST(ExpertTp, ExpertWeightsPerGpuShardOverEtpTimesEp) {
  // Per rank and MoE layer (one per stage): 16 experts x 8 Mi / (etp x 4) parameters at 2 B:
  // ETP 1 64 MiB, ETP 2 32 MiB, ETP 4 16 MiB (ETP 4 x EP 4 = 16 needs DP 4). Everything else on
  // the rank is the same, so the differences are the expert weights'.
  auto weights = [](std::uint32_t etp, std::uint32_t dp) {
    TrainConfig c = etp_config(etp);
    c.par.dp = dp;
    c.global_batch = dp;
    return make_step_plan(c, c.peak_flops).memory.weights.count();
  };
  EXPECT_EQ(weights(1, 2) - weights(2, 2), 32u << 20);
  EXPECT_EQ(weights(1, 4) - weights(4, 4), 48u << 20);
  EXPECT_EQ(weights(2, 4) - weights(4, 4), 16u << 20);
}

TEST(ExpertTp, ExpertInputsKeptAreGatheredOverEtp) {
  // The routed FC1 input kept for the backward pass: 1,024 tokens x top-2 x 1,024 x 2 B / tp 4
  // = 1 MiB per layer and micro-batch of the rank's own share, gathered over ETP 2: 2 MiB. One
  // layer per stage, one micro-batch in flight: 1 MiB more than at ETP 1. (FP32 gradients, so
  // that the estimate's peak is the backward pass's, not the BF16 gradients' cast at the step.)
  auto activations = [](std::uint32_t etp) {
    TrainConfig c = etp_config(etp);
    c.grad_reduce_in_fp32 = true;
    return make_step_plan(c, c.peak_flops).memory.activations.count();
  };
  EXPECT_EQ(activations(2) - activations(1), 1u << 20);
}

TEST(ExpertTp, ExpertGemmTimeOnH100AtEtp1To4) {
  // H100: 132 SMs, GEMMs at 0.80 x 989 = 791.2 TFLOP/s, HBM 0.9 x 3.35 = 3.015 TB/s; tiles 128
  // x 256 (kernel_model_test.cpp). Hidden 4096, 8 SwiGLU experts of 4096, top 2, TP 4, EP 2,
  // 1,024 tokens: the rank's 4 experts get 1,024 x 2 x 2 x etp / (4 x 8) = 128 etp rows each.
  // Up (n = 8192 / etp, k 4096): 128 tiles, one wave, compute 3.436e10 / (791.2e12 x 128 / 132)
  // = 44.78 us; bytes 4 x 2 x (128 etp x 4096 + 4096 x 8192 / etp + 128 x 8192):
  // ETP 1 281.0 MB = 93.21 us, ETP 2 151.0 MB = 50.08 us, ETP 4 92.27 MB = 30.61 -> 44.78 us.
  // Down (n 4096, k = 4096 / etp): 64 etp tiles (ETP 4: 2 waves of 132), compute 1.718e10 FLOP
  // at 64 / 132, 128 / 132, 256 / 264 busy: 44.78, 22.39, 22.39 us; bytes 4 x 2 x (128 etp x
  // 4096 / etp + 4096 x 4096 / etp + 128 etp x 4096): 142.6 MB = 47.30 us, 79.69 MB = 26.43 us,
  // 54.53 MB = 18.08 -> 22.39 us. Forward GEMMs: 140.51, 76.51, 67.18 us; the rest of the MoE
  // block (router, permutation, the activation over 128 etp x 4096 / etp) does not change.
  TrainConfig c = tiny_config(4, 1, 1, 1);
  c.model.hidden = 4096;
  c.model.heads = c.model.kv_heads = 32;
  c.model.head_dim = 128;
  c.model.experts = 8;
  c.model.top_k = 2;
  c.model.expert_ffn = 4096;
  c.model.gated_mlp = true;
  c.par.ep = 2;
  const KernelModel bf16(gpu_spec("h100"), 989e12, 1979e12, Precision::Bf16);
  auto mlp_fwd = [&](std::uint32_t etp) {
    c.par.etp = etp;
    return bf16.layer(c, 0, 1024).mlp_fwd;
  };
  EXPECT_NEAR(mlp_fwd(1) - mlp_fwd(2), (140.506 - 76.513) * 1e-6, 0.002e-6);
  EXPECT_NEAR(mlp_fwd(2) - mlp_fwd(4), (76.513 - 67.177) * 1e-6, 0.002e-6);
}

TEST(ExpertTp, ReducedAndFullExpansionsAgree) {
  // Expert TP 2 under TP 4 on two 16-GPU stars (DP 4, PP 2, EDP 2): the reduced expansion
  // measures the expert TP pair on replica 0's two groups at once, as the full one runs them.
  const auto opts = reference_options(Time::ns(700), Bandwidth::gBps(50));
  TrainConfig c = etp_config(2);
  c.par.dp = 4;
  c.par.pp = 2;
  c.global_batch = 4;
  c.par.zero = ZeroStage::Optimizer;
  c.expansion = Expansion::Full;
  const TrainResult full = simulate_training(star_cluster(2, 16), c, opts);
  c.expansion = Expansion::Reduced;
  const TrainResult reduced = simulate_training(star_cluster(2, 16), c, opts);
  EXPECT_GT(full.breakdown.tp, Time::zero());
  EXPECT_EQ(full.iteration, reduced.iteration);
  EXPECT_EQ(full.breakdown.tp, reduced.breakdown.tp);
  EXPECT_EQ(full.breakdown.ep, reduced.breakdown.ep);
}

}  // namespace
}  // namespace lockstep
