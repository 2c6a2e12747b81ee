// Memory per GPU: Megatron-LM's bytes per parameter with and without the distributed optimizer,
// Korthikanti et al.'s activation bytes per layer for each recomputation policy, and the keys
// that select them. Every number is derived by hand in the comment above it.
#include <gtest/gtest.h>

#include "job_node.hpp"
#include "lockstep/config/arg_node.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/topology/catalog.hpp"
#include "lockstep/workload/model.hpp"
#include "lockstep/workload/step_plan.hpp"
#include "lockstep/workload/train_config.hpp"

namespace lockstep {
namespace {

// Llama 3 8B as its config.json gives it: 32 layers, hidden 4096, intermediate 14336, 32 heads,
// 8 KV heads, vocabulary 128256, SwiGLU, untied embeddings.
ModelSpec llama3_8b() {
  ModelSpec m;
  m.name = "llama3-8b";
  m.layers = 32;
  m.hidden = 4096;
  m.ffn = 14336;
  m.heads = 32;
  m.kv_heads = 8;
  m.vocab = 128256;
  m.seq = 8192;
  m.gated_mlp = true;
  m.tied_embeddings = false;
  return m;
}

// GPT-3 175B, Korthikanti et al.'s example: s = 2048, h = 12288, 96 heads, 96 layers.
TrainConfig gpt3(std::uint32_t tp, bool sp, Recompute r) {
  TrainConfig c;
  c.model.name = "gpt3-175b";
  c.model.layers = 96;
  c.model.hidden = 12288;
  c.model.ffn = 4 * 12288;
  c.model.heads = c.model.kv_heads = 96;
  c.model.vocab = 50257;
  c.model.seq = 2048;
  c.model.gated_mlp = false;
  c.model.tied_embeddings = true;
  c.model.dropout = true;  // Korthikanti et al.'s layer keeps two dropout masks
  c.par.tp = tp;
  c.par.sequence_parallel = sp;
  c.global_batch = 1;
  c.recompute = r;
  return c;
}

TEST(Memory, DistributedOptimizerShardsTheTwelveOptimizerBytesOverDp) {
  // N = 2 x 128256 x 4096 (embeddings) + 32 x (4096 x 128 x (2 x 32 + 2 x 8) + 3 x 4096 x 14336)
  //   = 1,050,673,152 + 32 x 218,103,808 = 8,029,995,008 parameters, all on the one stage.
  // Megatron-LM (docs, "Distributed Optimizer"), BF16 parameters and FP32 gradients: 18 bytes
  // per parameter without the distributed optimizer, 6 + 12/d with it: 144.54 GB vs 60.22 GB.
  const double n = 8'029'995'008.0;
  TrainConfig c;
  c.model = llama3_8b();
  c.par.dp = 8;
  c.global_batch = 8;
  c.par.zero = ZeroStage::None;
  const MemoryEstimate none = make_step_plan(c, 1e15).memory;
  EXPECT_NEAR(none.weights.as_double(), 2 * n, 1);
  EXPECT_NEAR(none.gradients.as_double(), 4 * n, 1);
  EXPECT_NEAR(none.optimizer.as_double(), 12 * n, 1);
  EXPECT_NEAR((none.weights + none.gradients + none.optimizer).as_double(), 144'539'910'144.0, 3);
  c.par.zero = ZeroStage::Optimizer;
  const MemoryEstimate dist = make_step_plan(c, 1e15).memory;
  EXPECT_NEAR(dist.optimizer.as_double(), 12 * n / 8, 1);
  EXPECT_NEAR((dist.weights + dist.gradients + dist.optimizer).as_double(), 60'224'962'560.0, 3);
  // Activations do not depend on the optimizer. Per token and layer (tp 1, no dropout): norms'
  // and GEMM inputs 2h x 4 = 8h; Q, K, V 2 (32 x 128 + 8 x 256) = 3h; the output projection's
  // input 2h; SwiGLU's input 2 x 2 x 14336 and FC2's 2 x 14336 = 86,016 = 21h: 34 h, GPT's
  // count by another split. 32 layers x 34 s h = 32 x 34 x 8192 x 4096
  // = 36,507,222,016 B, plus FP32 logits 8192 x 128256 x 4 = 4,202,692,608 B.
  EXPECT_NEAR(dist.activations.as_double(), 36'507'222'016.0 + 4'202'692'608.0, 2);
  EXPECT_EQ(dist.activations, none.activations);
}

TEST(Memory, TpBeyondTheKvHeadsKeepsOneKvHeadPerRank) {
  // Llama 3 8B at tp 16 with SP, one 8192-token micro-batch: 2 query heads and ceil(8 / 16) = 1
  // KV head per rank (Megatron replicates KV heads). Per token over all ranks: norms' and GEMM
  // inputs 8h = 32,768 B; Q, K, V 2 (32 x 128 + 16 x 256) = 16,384; the output projection's
  // input 2 x 32 x 128 = 8,192; SwiGLU 86,016: 143,360 / 16 = 8,960 B per rank and token
  // (8,704 if the half KV head were counted). 32 layers x 8192 x 8960 = 2,348,810,240 B, plus
  // FP32 logits 8192 x 128256 x 4 / 16 = 262,668,288 B.
  TrainConfig c;
  c.model = llama3_8b();
  c.par.tp = 16;
  c.global_batch = 1;
  EXPECT_NEAR(make_step_plan(c, 1e15).memory.activations.as_double(),
              2'348'810'240.0 + 262'668'288.0, 2);
}

TEST(Memory, ActivationsPerLayerFollowKorthikantiTableTwo) {
  // One micro-batch on one stage: 96 layers x the per-layer bytes + FP32 logits
  // s v 4 / t = 2048 x 50257 x 4 / 8 = 51,463,168 B (tp 8).
  const double sbh = 2048.0 * 12288;  // 25,165,824
  const double logits = 51'463'168.0;
  auto act = [](const TrainConfig& c) { return make_step_plan(c, 1e15).memory.activations; };
  // Selective, TP + SP: 34 sbh / t = 106,954,752 B per layer.
  EXPECT_NEAR(act(gpt3(8, true, Recompute::Selective)).as_double(), 96 * 106'954'752.0 + logits, 2);
  // Selective, TP alone: sbh (10 + 24 / 8) = 13 sbh = 327,155,712 B per layer.
  EXPECT_NEAR(act(gpt3(8, false, Recompute::Selective)).as_double(), 96 * 327'155'712.0 + logits,
              2);
  // Full: the layer's input, 2 sbh = 50,331,648 B, sharded over t by SP: 6,291,456 B.
  EXPECT_NEAR(act(gpt3(8, false, Recompute::Full)).as_double(), 96 * 2 * sbh + logits, 2);
  EXPECT_NEAR(act(gpt3(8, true, Recompute::Full)).as_double(), 96 * 2 * sbh / 8 + logits, 2);
  // No recomputation with FlashAttention keeps what selective keeps (no s^2 scores).
  EXPECT_EQ(act(gpt3(8, true, Recompute::None)), act(gpt3(8, true, Recompute::Selective)));
}

TEST(Memory, Fp8KeepsTheLinearLayersInputsInOneByte) {
  // The QKV, output-projection, FC1 (2 sbh each) and FC2 (8 sbh) inputs in FP8: 7 sbh less.
  // TP + SP: 27 sbh / 8 = 84,934,656 B per layer; TP alone: sbh (8 + 19 / 8) = 10.375 sbh =
  // 261,095,424 B; full recomputation keeps the layer's BF16 input as before.
  const double sbh = 2048.0 * 12288;
  const double logits = 51'463'168.0;
  auto act = [](TrainConfig c) {
    c.precision = Precision::Fp8;
    return make_step_plan(c, 1e15).memory.activations.as_double();
  };
  EXPECT_NEAR(act(gpt3(8, true, Recompute::Selective)), 96 * 84'934'656.0 + logits, 2);
  EXPECT_NEAR(act(gpt3(8, false, Recompute::Selective)), 96 * 261'095'424.0 + logits, 2);
  EXPECT_NEAR(act(gpt3(8, true, Recompute::Full)), 96 * 2 * sbh / 8 + logits, 2);
}

TEST(Memory, SelectiveRecomputationRerunsTheAttentionCoreOnly) {
  // The attention core's forward: 4 s h FLOPs per token (QK^T and attention over V, 2 s h
  // each) = 4 x 2048 x 12288 = 100,663,296, x 2048 tokens over tp x peak x efficiency =
  // 8 x 1e15 x 0.5 FLOP/s: 51.539607552 us more backward per layer than 2 x forward.
  const StepPlan none = make_step_plan(gpt3(8, true, Recompute::None), 1e15);
  const StepPlan sel = make_step_plan(gpt3(8, true, Recompute::Selective), 1e15);
  const StepPlan full = make_step_plan(gpt3(8, true, Recompute::Full), 1e15);
  // Times round to the picosecond.
  EXPECT_NEAR(none.backward[0].microseconds(), 2 * none.forward[0].microseconds(), 2e-6);
  EXPECT_NEAR((sel.backward[0] - none.backward[0]).microseconds(), 51.539607552, 2e-6);
  EXPECT_NEAR(full.backward[0].microseconds(), 3 * full.forward[0].microseconds(), 3e-6);
}

TEST(Memory, Nemotron4On128H100FitsWithBf16GradientsAsNemoRanIt) {
  // NeMo 24.07's Nemotron-4 340B: 128 H100, TP 8, PP 8, VP 12, DP 2, GBS 32, MBS 1, seq 4096,
  // FP8, distributed optimizer. 96 layers over 8 x 12 chunks: one layer per chunk, stage 0
  // holds layers 0, 8, ..., 88 and the input embedding. Per layer: attention 18432 x 192 x
  // (2 x 96 + 2 x 8) = 736,100,352, squared-ReLU MLP 2 x 18432 x 73728 = 2,717,908,992, in all
  // 3,454,009,344; N = 12 x 3,454,009,344 / 8 + 256000 x 18432 / 8 = 5,770,838,016 per rank.
  const double n = 5'770'838'016.0;
  TrainConfig c;
  c.model = model_preset("nemotron4-340b");
  c.par.tp = 8;
  c.par.pp = 8;
  c.par.dp = 2;
  c.par.interleave = 12;
  c.par.zero = ZeroStage::Optimizer;  // NeMo's distributed optimizer
  c.global_batch = 32;
  c.seq = 4096;
  c.precision = Precision::Fp8;
  // Activations per token and layer, all over t = 8 (sequence parallelism), FP8 GEMM inputs in
  // 1 B: norms' inputs 2h + 2h, QKV's and FC1's inputs h + h; Q, K, V 2 (96 x 192 + 8 x 384) =
  // 43,008; the output projection's input 96 x 192 = 18,432; the squared ReLU's input 2 x
  // 73,728 and FC2's 73,728; no dropout (Korthikanti's GPT layer would be 27 h): 6 h + 43,008 +
  // 18,432 + 221,184 = 393,216 B = 21.33 h. x 4096 tokens / 8 = 201,326,592 B per layer. Stage
  // 0's interleaved warm-up (pp - 1) x 2 + (v - 1) x pp = 14 + 88 = 102 chunks, plus the one in
  // its backward: 103 layers in flight of 16 x 12 = 192 (the 16 micro-batches of GBS 32 / DP 2
  // do not bind): 20,736,638,976 B.
  const double act = 103 * 201'326'592.0;
  const MemoryEstimate fp32 = make_step_plan(c, 1e15).memory;
  EXPECT_NEAR(fp32.weights.as_double(), 2 * n, 1);
  EXPECT_NEAR(fp32.gradients.as_double(), 4 * n, 1);
  EXPECT_NEAR(fp32.optimizer.as_double(), 12 * n / 2, 1);
  EXPECT_NEAR(fp32.activations.as_double(), act, 1);
  // 12 N + act = 89,986,695,168 B: over the 85,899,345,920 B (80 GiB) of an H100.
  EXPECT_NEAR(fp32.total().as_double(), 89'986'695'168.0, 4);
  // BF16 gradient buffer: 2 + 2 + 12 / 2 = 10 B per parameter = 57,708,380,160 B, + act =
  // 78,445,019,136 B, 7.45 GB under 80 GiB. The step's FP32 copy of the rank's half of the
  // gradients (4 x N / 2 = 11,541,676,032 B) comes after the activations are freed: 69.25 GB.
  c.grad_reduce_in_fp32 = false;
  const MemoryEstimate bf16 = make_step_plan(c, 1e15).memory;
  EXPECT_NEAR(bf16.gradients.as_double(), 2 * n, 1);
  EXPECT_NEAR(bf16.activations.as_double(), act, 1);
  EXPECT_NEAR(bf16.total().as_double(), 78'445'019'136.0, 4);
  EXPECT_LT(bf16.total(), Bytes::gib(80));
  // Without the distributed optimizer the step casts every gradient: 2 + 2 + 12 + 4 = 20 N =
  // 115.4 GB, against the backward's 16 N + activations (92.3 + 20.7 GB); with full
  // recomputation (2 s b h / t = 18,874,368 B per layer, x 103 = 1.94 GB) the backward's is
  // 94.3 GB and the step's wins.
  c.par.zero = ZeroStage::None;
  c.recompute = Recompute::Full;
  const MemoryEstimate step = make_step_plan(c, 1e15).memory;
  EXPECT_NEAR(step.gradients.as_double(), 2 * n + 4 * n, 1);
  EXPECT_EQ(step.activations.count(), 0u);
  EXPECT_NEAR(step.total().as_double(), 20 * n, 4);
}

// llama3-8b with a global batch of 8 (lines 4 and 5), then the keys given.
ArgNode job(testing::JobKeys keys) {
  keys.insert(keys.begin(), {{"model", "llama3-8b"}, {"global_batch", "8"}});
  return testing::job_node(keys);
}

TEST(Memory, DistributedOptimizerByDefaultAndRecomputeByName) {
  EXPECT_EQ(parse_train_config(job({})).par.zero, ZeroStage::Optimizer);
  EXPECT_EQ(parse_train_config(job({{"zero", "0"}})).par.zero, ZeroStage::None);
  EXPECT_EQ(parse_train_config(job({})).recompute, Recompute::None);
  EXPECT_EQ(parse_train_config(job({{"recompute", "selective"}})).recompute, Recompute::Selective);
  EXPECT_EQ(parse_train_config(job({{"recompute", "full"}})).recompute, Recompute::Full);
  EXPECT_EQ(parse_train_config(job({{"recompute", "true"}})).recompute, Recompute::Full);
  EXPECT_EQ(parse_train_config(job({{"recompute", "false"}})).recompute, Recompute::None);
  try {
    parse_train_config(job({{"recompute", "some"}}));
    FAIL() << "'some' is not a policy";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("job.recompute"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("s.yaml:6:3"), std::string::npos);
  }
}

// DeepSeek-V3 as its report ran it (arXiv:2412.19437, sections 3.2 and 3.3): 2,048 H800, PP 16, EP
// 64, DP 128, ZeRO-1, seq 4096, micro-batch 1, FP8, RMSNorm and MLA up-projections recomputed,
// the MoE SwiGLU's output recomputed from its cached input (section 3.3.3: moe_act).
TrainConfig deepseek_v3(std::uint8_t modules) {
  TrainConfig c;
  c.model = model_preset("deepseek-v3");
  c.par.pp = 16;
  c.par.dp = 128;
  c.par.ep = 64;
  c.par.zero = ZeroStage::Optimizer;
  c.global_batch = 15360;
  c.seq = 4096;
  c.precision = Precision::Fp8;
  if (modules != 0) {
    c.recompute = Recompute::Selective;
    c.recompute_modules = modules;
  }
  return c;
}

// The MTP module (section 2.2) follows layer 60 on the last stage as layer 61: its block's
// gradients there with the output head's (the bucket it completes), the head's time once more
// plus the projection's, and its FLOPs in the MFU numerator. Layer 61 on one rank: the MoE
// layer's dense 232,980,480 + the head 7168 x 129,280 = 926,679,040 + the projection 2 x 7168^2
// = 102,760,448: 1,262,419,968 x 2 B = 2,524,839,936 B; routed 4 x 44,040,192 x 2 B =
// 352,321,536 B. The head's time x (1 + 1 + 2 x 7168 / 129,280). The FLOPs: 3 x 3,565,027,328
// more per token (Model.DeepSeekV3MtpModuleFlops) x 15,360 x 4,096 tokens.
TEST(Memory, DeepSeekV3MtpModuleRunsOnTheLastStage) {
  const TrainConfig with =
      deepseek_v3(kRecomputeLayernorm | kRecomputeMlaUpProj | kRecomputeMoeAct);
  TrainConfig without = with;
  without.model.mtp_layers = 0;
  const StepPlan a = make_step_plan(with, 1e15), b = make_step_plan(without, 1e15);
  EXPECT_EQ(a.chunk_first_layer.back(), 62u);
  EXPECT_EQ(a.first_layer(15, 0), 58u);  // the split of the 61 layers is as before
  EXPECT_EQ(b.chunk_first_layer.back(), 61u);
  ASSERT_EQ(a.forward.size(), 62u);
  EXPECT_EQ(a.forward[61], a.forward[60]);  // a block like the last layer
  EXPECT_EQ(a.layer_grad_bytes[61].count(), 2'524'839'936ull);
  EXPECT_EQ(a.layer_expert_grad_bytes[61].count(), 352'321'536ull);
  EXPECT_NEAR(a.head_forward.seconds() / b.head_forward.seconds(), 2 + 2 * 7168.0 / 129'280, 1e-6);
  EXPECT_NEAR(a.model_flops_per_iteration - b.model_flops_per_iteration,
              3 * 3'565'027'328.0 * 15'360 * 4'096, 1e6);
  // Stage 1 (four MoE layers, 15 micro-batches in flight) stays the peak under 1F1B: the last
  // stage's module holds one micro-batch (below).
  EXPECT_EQ(a.memory.total(), b.memory.total());
}

TEST(Memory, DeepSeekV3FitsWithItsReportsRecomputation) {
  // 61 layers over 16 stages: 3 each, the 13 left to stages 1-13, so stage 1 holds layers 3-6,
  // four MoE layers, and keeps min(pp - 1, m) = 15 micro-batches in flight (1F1B); it is the
  // peak (stage 0's 3 dense layers x 16 micro-batches keep less).
  // Parameters per MoE layer on one rank (tp 1): MLA 7168 x 1536 + 1536 x 128 x 192 +
  // 7168 x 576 + 512 x 128 x 256 + 128 x 128 x 7168 = 187,105,280; router 7168 x 256 =
  // 1,835,008; shared expert 3 x 7168 x 2048 = 44,040,192: dense 232,980,480; routed 256 / 64
  // experts x 44,040,192 = 176,160,768. Four layers: dense 931,921,920, expert 704,643,072.
  const double dense = 931'921'920.0, expert = 704'643'072.0;
  // Per token and MoE layer, FP8 GEMM inputs in 1 B: norms' inputs 2h + 2h = 28,672; MLA's
  // latents: the latent norms' inputs 2 (1536 + 512) = 4,096 (their outputs, 2,048 in FP8, and
  // QKV's and the router's inputs, 7,168 each, go with the norms); Q, K, V 2 (128 x 192 + 128 x
  // (192 + 128)) = 131,072 go with mla_up_proj; the output projection's input 128 x 128 =
  // 16,384; the 8 routed copies 8 x 7168 = 57,344 and their SwiGLU inputs 8 x 2 x 2 x 2048 =
  // 65,536 (FC2's inputs, 8 x 2048, go with moe_act); the shared expert 2 x 2 x 2048 + 2048 =
  // 10,240. Kept: 28,672 + 4,096 + 16,384 + 57,344 + 65,536 + 10,240 = 182,272 B; all of them
  // without recomputation: 182,272 + 14,336 + 2,048 + 131,072 + 16,384 = 346,112 B.
  const double act = 15 * 4 * 4096 * 182'272.0, act_none = 15 * 4 * 4096 * 346'112.0;
  const MemoryEstimate e =
      make_step_plan(deepseek_v3(kRecomputeLayernorm | kRecomputeMlaUpProj | kRecomputeMoeAct),
                     1e15)
          .memory;
  EXPECT_NEAR(e.weights.as_double(), 2 * (dense + expert), 1);
  EXPECT_NEAR(e.gradients.as_double(), 4 * (dense + expert), 1);
  // ZeRO-1 over dp 128 for the dense part, over dp / ep = 2 for the routed experts.
  EXPECT_NEAR(e.optimizer.as_double(), 12 * dense / 128 + 12 * expert / 2, 1);
  EXPECT_NEAR(e.activations.as_double(), act, 1);
  // 3,273,129,984 + 6,546,259,968 + 4,315,226,112 + 44,795,166,720 = 58,929,782,784 B
  // (54.9 GiB) of the H800's 80 GiB; without recomputation 99,195,101,184 B (92.4 GiB).
  EXPECT_NEAR(e.total().as_double(), 58'929'782'784.0, 4);
  const MemoryEstimate none = make_step_plan(deepseek_v3(0), 1e15).memory;
  EXPECT_NEAR(none.activations.as_double(), act_none, 1);
  EXPECT_NEAR(none.total().as_double(), 99'195'101'184.0, 4);
}

TEST(Memory, RecomputedModulesCostTheirForwardGemmsInTheBackward) {
  // mla_up_proj alone, BF16, one 4096-token micro-batch at 1e15 x 0.5 FLOP/s (tp 1): the
  // up-projections W_UQ (1536 x 128 x 192) and W_UK, W_UV (512 x 128 x (128 + 128)) are
  // 2 x 128 x (294,912 + 131,072) = 109,051,904 FLOPs per token, x 4096 / 5e14 = 893.353197568
  // us more than 2 x forward in every layer's backward; the attention core (not named) is not
  // rerun. moe adds a MoE layer's router and 8 + 1 experts: 2 (7168 x 256 + 9 x 44,040,192) =
  // 796,393,472 FLOPs per token, 6,524.055322624 us; a dense layer's is mlp's, not moe's.
  auto extra = [](std::uint8_t modules, std::uint32_t layer) {
    TrainConfig c = deepseek_v3(modules);
    c.precision = Precision::Bf16;
    const StepPlan p = make_step_plan(c, 1e15);
    return (p.backward[layer] - p.forward[layer] - p.forward[layer]).microseconds();
  };
  EXPECT_NEAR(extra(kRecomputeMlaUpProj, 3), 893.353197568, 2e-6);
  EXPECT_NEAR(extra(kRecomputeMlaUpProj, 0), 893.353197568, 2e-6);
  EXPECT_NEAR(extra(kRecomputeMoe, 3), 6'524.055322624, 2e-6);
  EXPECT_NEAR(extra(kRecomputeMoe, 0), 0.0, 2e-6);
  // Element-wise reruns (norms, the activation) add no FLOPs in this count.
  EXPECT_NEAR(extra(kRecomputeLayernorm | kRecomputeMoeAct, 3), 0.0, 2e-6);
}

TEST(Memory, Bf16MomentsKeepEightOptimizerBytesPerParameter) {
  // Llama 3 8B's N = 8,029,995,008 parameters on one stage, dp 8, ZeRO-1 (above). DeepSeek-V3's
  // AdamW (arXiv:2412.19437, section 3.3.3): FP32 master weights (4 B) and BF16 moments (2 + 2):
  // 8 B per parameter over dp, so 2 + 4 + 8/8 = 7 B per parameter, 56,209,965,056 B, against
  // 6 + 12/8 = 7.5 B (60,224,962,560 B) with FP32 moments.
  const double n = 8'029'995'008.0;
  TrainConfig c;
  c.model = llama3_8b();
  c.par.dp = 8;
  c.global_batch = 8;
  c.par.zero = ZeroStage::Optimizer;
  c.bf16_moments = true;
  const MemoryEstimate e = make_step_plan(c, 1e15).memory;
  EXPECT_NEAR(e.optimizer.as_double(), 8 * n / 8, 1);
  EXPECT_NEAR((e.weights + e.gradients + e.optimizer).as_double(), 56'209'965'056.0, 3);
  // Without ZeRO: 2 + 4 + 8 = 14 B per parameter, 112,419,930,112 B.
  c.par.zero = ZeroStage::None;
  const MemoryEstimate none = make_step_plan(c, 1e15).memory;
  EXPECT_NEAR((none.weights + none.gradients + none.optimizer).as_double(), 112'419'930'112.0, 3);
}

TEST(Memory, Bf16MomentsStreamThirtyBytesPerShardParameterInTheOptimizerStep) {
  // The optimizer step over the rank's shard N / 8 = 1,003,749,376 parameters at an HBM rate of
  // B: FP32 moments stream 4 (norm) + 16 (read p, g, m, v) + 12 (write p, m, v) + 6 (BF16 copy)
  // = 38 B, BF16 moments 4 + (4 + 4 + 2 + 2) + (4 + 2 + 2) + 6 = 30 B: a ratio of 30 / 38.
  TrainConfig c;
  c.model = llama3_8b();
  c.par.dp = 8;
  c.global_batch = 8;
  c.par.zero = ZeroStage::Optimizer;
  const GpuSpec* gpu = &gpu_spec("h100");
  const double fp32 = make_step_plan(c, 1e15, 0, gpu).optimizer_step[0].seconds();
  c.bf16_moments = true;
  const double bf16 = make_step_plan(c, 1e15, 0, gpu).optimizer_step[0].seconds();
  const double rate = gpu->kernels.hbm_bandwidth.bytes_per_second() * gpu->kernels.hbm_fraction;
  EXPECT_NEAR(fp32, 38 * 1'003'749'376.0 / rate, 1e-12);
  EXPECT_NEAR(bf16, 30 * 1'003'749'376.0 / rate, 1e-12);
}

TEST(Memory, OptimizerMomentsByMapOrFlagText) {
  EXPECT_FALSE(parse_train_config(job({})).bf16_moments);
  EXPECT_TRUE(parse_train_config(job({{"optimizer", "moments=bf16"}})).bf16_moments);
  EXPECT_FALSE(parse_train_config(job({{"optimizer", "moments=fp32"}})).bf16_moments);
  ArgNode j = job({});
  ArgNode opt = ArgNode::map("job.optimizer", {"s.yaml", 6, 3});
  opt.set("moments", ArgNode::scalar("bf16", "job.optimizer.moments", {"s.yaml", 7, 5}));
  j.set("optimizer", std::move(opt));
  EXPECT_TRUE(parse_train_config(j).bf16_moments);
  for (const char* bad : {"moments=fp16", "momentz=bf16", "bf16"}) {
    try {
      parse_train_config(job({{"optimizer", bad}}));
      FAIL() << bad;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("job.optimizer"), std::string::npos) << e.what();
    }
  }
}

TEST(Memory, DualPipeHoldsTwoStagesAndPpPlusOneMicroBatches) {
  // Llama 3 8B on PP 4 (8 layers a stage), dp 1, no ZeRO, 8 micro-batches of 8192 tokens (the
  // 2 pp DualPipe needs; with 4 a rank would hold at most 4 at once). A layer
  // holds 218,103,808 parameters, the embedding and the output layer 525,336,576 each. Under 1F1B
  // stage 0 holds 8 layers and the embedding: 2,270,167,040. Under DualPipe rank 0 also holds
  // stage 3 (8 layers and the output layer): 4,540,334,080, twice as many (Table 2's "2x").
  TrainConfig c;
  c.model = llama3_8b();
  c.par.pp = 4;
  c.global_batch = 8;
  c.seq = 8192;
  c.par.zero = ZeroStage::None;
  const MemoryEstimate one = make_step_plan(c, 1e15).memory;
  c.pipeline = PipelineSchedule::DualPipe;
  const MemoryEstimate dual = make_step_plan(c, 1e15).memory;
  EXPECT_NEAR(dual.weights.as_double(), 2 * 4'540'334'080.0, 1);
  EXPECT_NEAR(dual.weights.as_double(), 2 * one.weights.as_double(), 1);
  EXPECT_NEAR(dual.gradients.as_double(), 4 * 4'540'334'080.0, 1);
  EXPECT_NEAR(dual.optimizer.as_double(), 12 * 4'540'334'080.0, 1);
  // Activations: pp + 1 = 5 micro-batches of a stage's 8 layers x 34 s h (Memory test above;
  // rank 0's schedule peaks at 4 of direction 0 and 1 of direction 1, DualPipe tests):
  // 5 x 8 x 34 x 8192 x 4096 = 45,634,027,520 B, plus the FP32 logits of the output layer rank 0
  // holds, 8192 x 128256 x 4 = 4,202,692,608 B. (1F1B's stage 0: 4 micro-batches, no logits.)
  EXPECT_NEAR(dual.activations.as_double(), 45'634'027'520.0 + 4'202'692'608.0, 2);
  EXPECT_NEAR(one.activations.as_double(), 4 * 8 * 34 * 8192 * 4096.0, 2);
}

TEST(Memory, DualPipeShardsTheOptimizerOverBothCopies) {
  // DualPipeHoldsTwoStagesAndPpPlusOneMicroBatches' Llama 3 8B on PP 4, now dp 2 (16 sequences,
  // 8 micro-batches a replica). Rank 0 holds 4,540,334,080 parameters (stages 0 and 3), 1F1B's
  // stage 0 2,270,167,040 (stage 3 as many: 8 layers and the output layer, as large as the
  // embedding). Each DualPipe stage's gradients are reduce-scattered over its 2 x dp = 4 holders,
  // so ZeRO-1's 12 B shard over 4: 13,621,002,240 B, what 1F1B's stage 0 keeps over dp 2
  // (12 x 2,270,167,040 / 2).
  TrainConfig c;
  c.model = llama3_8b();
  c.par.pp = 4;
  c.par.dp = 2;
  c.global_batch = 16;
  c.seq = 8192;
  c.par.zero = ZeroStage::Optimizer;
  const GpuSpec* gpu = &gpu_spec("h100");
  const StepPlan one = make_step_plan(c, 1e15, 0, gpu);
  c.pipeline = PipelineSchedule::DualPipe;
  const StepPlan dual = make_step_plan(c, 1e15, 0, gpu);
  EXPECT_NEAR(dual.memory.optimizer.as_double(), 13'621'002'240.0, 1);
  EXPECT_NEAR(one.memory.optimizer.as_double(), 13'621'002'240.0, 1);
  // The weights (2 B) and FP32 gradients (4 B) are whole copies under ZeRO-1: both stages'.
  EXPECT_NEAR(dual.memory.weights.as_double(), 2 * 4'540'334'080.0, 1);
  EXPECT_NEAR(dual.memory.gradients.as_double(), 4 * 4'540'334'080.0, 1);
  // The optimizer step streams 38 B per shard parameter: 4,540,334,080 / 4 = 1,135,083,520 on
  // rank 0, as many as 1F1B's stage 0 over dp 2.
  const double rate = gpu->kernels.hbm_bandwidth.bytes_per_second() * gpu->kernels.hbm_fraction;
  EXPECT_NEAR(dual.optimizer_step[0].seconds(), 38 * 1'135'083'520.0 / rate, 1e-12);
  EXPECT_NEAR(dual.optimizer_step[0].seconds(), one.optimizer_step[0].seconds(), 1e-12);
  // ZeRO-2 shards the FP32 gradients over the same 4: 4 x 1,135,083,520 B.
  c.par.zero = ZeroStage::Gradients;
  EXPECT_NEAR(make_step_plan(c, 1e15).memory.gradients.as_double(), 4 * 1'135'083'520.0, 1);
  // ZeRO-3's per-layer gather runs over the same 4 holders (issue 21), so the weights shard
  // over them too: 2 B x 4,540,334,080 / 4 = 2,270,167,040 B, what 1F1B's stage 0 keeps over
  // dp 2 (2 x 2,270,167,040 / 2); gradients and optimizer state over the 4 as before.
  c.par.zero = ZeroStage::Parameters;
  const MemoryEstimate z3 = make_step_plan(c, 1e15).memory;
  EXPECT_NEAR(z3.weights.as_double(), 2'270'167'040.0, 1);
  EXPECT_NEAR(z3.gradients.as_double(), 4 * 1'135'083'520.0, 1);
  EXPECT_NEAR(z3.optimizer.as_double(), 13'621'002'240.0, 1);
  // dp 1: the two copies are a group of 2, ZeRO-1's state halves (12 x 4,540,334,080 / 2);
  // before it was the whole 12 B per parameter.
  c.par.dp = 1;
  c.global_batch = 8;
  c.par.zero = ZeroStage::Optimizer;
  EXPECT_NEAR(make_step_plan(c, 1e15).memory.optimizer.as_double(), 6 * 4'540'334'080.0, 1);
}

TEST(Memory, DualPipeNeedsAnEvenPpAndEvenMicroBatches) {
  EXPECT_EQ(parse_train_config(job({{"pipeline", "dualpipe"}, {"pp", "2"}})).pipeline,
            PipelineSchedule::DualPipe);
  // dualpipe.py's step() asserts an even pp and an even number of micro-batches, at least 2 pp.
  ArgNode ok = job({{"pipeline", "dualpipe"}, {"pp", "4"}});
  ok.set("global_batch", ArgNode::scalar("8", "job.global_batch", {"s.yaml", 5, 3}));
  EXPECT_EQ(parse_train_config(ok).micro_batches(), 8u);
  for (auto [pp, batch] :
       {std::pair{"3", "8"}, std::pair{"4", "2"}, std::pair{"2", "3"}, std::pair{"4", "6"}}) {
    try {
      ArgNode j = job({{"pipeline", "dualpipe"}, {"pp", pp}});
      j.set("global_batch", ArgNode::scalar(batch, "job.global_batch", {"s.yaml", 5, 3}));
      parse_train_config(j);
      FAIL() << "pp " << pp << ", batch " << batch;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("job.pipeline"), std::string::npos) << e.what();
    }
  }
}

TEST(Memory, LoraKeepsGradientsAndAdamStateForItsAdaptersOnly) {
  // Llama 2 70B, MLPerf Training's LoRA benchmark shape: rank 16 on the fused QKV (8192 ->
  // 64 x 128 + 2 x 8 x 128 = 10,240) and the output projection (8192 -> 8192): 16 x (8192 +
  // 10,240) + 16 x (8192 + 8192) = 557,056 adapter parameters per layer, 44,564,480 in 80
  // layers, / tp 4 = 11,141,120 per rank. Adam's 12 B over dp 2 (ZeRO-1): 66,846,720 B; FP32
  // gradients 4 B: 44,564,480 B. The frozen base stays in BF16: 80 x (150,994,944 + 3 x 8192 x
  // 28,672) + 2 x 32,000 x 8192 = 68,975,329,280 parameters / 4 x 2 B, plus the adapters' 2 B:
  // 34,509,946,880 B. (Full training's Adam state alone would be 12 x 17.2 G / 2 = 103.5 GB.)
  TrainConfig c;
  c.model = model_preset("llama2-70b");
  c.par.tp = 4;
  c.par.dp = 2;
  c.par.zero = ZeroStage::Optimizer;
  c.global_batch = 2;
  c.seq = 8192;
  c.lora_rank = 16;
  const StepPlan plan = make_step_plan(c, 1e15);
  EXPECT_NEAR(plan.memory.optimizer.as_double(), 66'846'720.0, 1);
  EXPECT_NEAR(plan.memory.gradients.as_double(), 44'564'480.0, 1);
  EXPECT_NEAR(plan.memory.weights.as_double(), 34'509'946'880.0, 2);
  // The DP buckets carry the adapters' BF16 gradients only: 2 x 11,141,120 B in all.
  std::uint64_t dp_bytes = 0;
  for (const GradientBucket& b : plan.buckets[0]) dp_bytes += b.bytes.count();
  EXPECT_EQ(dp_bytes, 2u * 11'141'120u);
  // Time (BF16, 1e15 x 0.5 per GPU, tp 4: 2e15 FLOP/s per layer): the backward runs the data
  // gradients (the weight GEMMs' forward FLOPs once), the attention core twice and the adapters
  // twice, so backward - forward = (core + adapters) x tokens / rate = (2 x 8192 x 64 x 256 +
  // 2 x 557,056) x 8192 / 2e15 = 1,104.075030528 us.
  EXPECT_NEAR((plan.backward[0] - plan.forward[0]).microseconds(), 1'104.075030528, 2e-6);
}

}  // namespace
}  // namespace lockstep
