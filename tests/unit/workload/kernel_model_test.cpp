// The kernel model (docs/kernel-model.md) on the catalog's H100 SXM: 132 SMs, HBM3 3.35 TB/s of
// which streaming kernels reach 0.9 (3.015 TB/s), large BF16 GEMMs at 0.80 of 989 TFLOP/s
// (791.2), FP8 at 0.72 of 1,979, FlashAttention-3 forward at
// 0.75 of 989 and backward at 0.75 x 63 / 73. Output tiles 128 x 256, attention blocks of 128
// query rows. Every expected figure below is derived by hand from those numbers.
#include "lockstep/workload/kernel_model.hpp"

#include <gtest/gtest.h>

#include "lockstep/config/arg_node.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/topology/catalog.hpp"
#include "lockstep/workload/step_plan.hpp"
#include "test_cluster.hpp"

namespace lockstep {
namespace {

const GpuSpec& h100() {
  return gpu_spec("h100");
}
KernelModel bf16() {
  return KernelModel(h100(), 989e12, 1979e12, Precision::Bf16);
}
KernelModel fp8() {
  return KernelModel(h100(), 989e12, 1979e12, Precision::Fp8);
}

// One layer of hidden 4096 with 32 heads of 128 (SwiGLU 11008), one 4096-token sequence.
TrainConfig one_layer_of_32_heads() {
  TrainConfig c = testing::tiny_config(1, 1, 1, 1);
  c.model.layers = 1;
  c.model.hidden = 4096;
  c.model.heads = c.model.kv_heads = 32;
  c.model.head_dim = 128;
  c.model.ffn = 11008;
  c.seq = 4096;
  c.micro_batch = 1;
  return c;
}

TEST(KernelModel, CatalogFiguresOfH100) {
  const KernelRates& k = h100().kernels;
  EXPECT_EQ(k.sms, 132u);
  EXPECT_DOUBLE_EQ(k.hbm_bandwidth.bytes_per_second(), 3.35e12);
  EXPECT_DOUBLE_EQ(k.gemm_bf16, 0.80);
  EXPECT_DOUBLE_EQ(k.hbm_fraction, 0.9);
  EXPECT_DOUBLE_EQ(gpu_spec("a100").kernels.gemm_bf16, 0.86);
  EXPECT_DOUBLE_EQ(k.gemm_fp8, 0.72);
  EXPECT_NEAR(k.attention_bwd, 0.75 * 63 / 73, 1e-12);
  EXPECT_EQ(gpu_spec("a100").kernels.sms, 108u);
  EXPECT_EQ(gpu_spec("b200").kernels.sms, 148u);
}

TEST(KernelModel, LargeSquareGemmOnH100) {
  // 8192^3 BF16: 2 x 8192^3 = 1.0995e12 FLOPs; 64 x 32 = 2048 tiles, ceil(2048 / 132) = 16
  // waves, 2048 / 2112 of the SMs busy; 1.0995e12 / (989e12 x 0.80 x 2048 / 2112) = 1.433103 ms.
  // Bytes: A and B 2 x 8192^2 x 2 B, C 8192^2 x 2 B = 402.65 MB / 3.015 TB/s = 133.55 us.
  const GemmTime g = bf16().gemm(8192, 8192, 8192, true);
  EXPECT_DOUBLE_EQ(g.flops, 2.0 * 8192 * 8192 * 8192);
  EXPECT_DOUBLE_EQ(g.tiles, 2048);
  EXPECT_DOUBLE_EQ(g.waves, 16);
  EXPECT_NEAR(g.compute, 1.433103e-3, 1e-9);
  EXPECT_NEAR(g.memory, 133.55e-6, 1e-8);
  EXPECT_DOUBLE_EQ(g.seconds(), g.compute);
  // FP8: 1.0995e12 / (1979e12 x 0.72 x 2048 / 2112) = 0.795766 ms; A and B at 1 byte:
  // (2 x 67.1 M x 1 + 67.1 M x 2) B = 268.4 MB / 3.015 TB/s = 89.03 us.
  const GemmTime f = fp8().gemm(8192, 8192, 8192, true);
  EXPECT_NEAR(f.compute, 0.795766e-3, 1e-9);
  EXPECT_NEAR(f.memory, 89.03e-6, 1e-8);
  // A GEMM that is not a layer weight (the LM head, the router) stays BF16.
  EXPECT_DOUBLE_EQ(fp8().gemm(8192, 8192, 8192, false).compute, g.compute);
}

TEST(KernelModel, SmallGemmLosesToWaveQuantisation) {
  // 2048 x 1024 x 4096: 16 x 4 = 64 tiles on 132 SMs, one wave with 64 / 132 busy:
  // 1.718e10 / (791.2e12 x 64 / 132) = 44.78 us, against 21.71 us for the same FLOPs at the
  // large-GEMM rate. Bytes (8.39 M + 4.19 M) x 2 + 2.10 M x 2 = 29.36 MB: 9.738 us.
  const GemmTime g = bf16().gemm(2048, 1024, 4096, true);
  EXPECT_DOUBLE_EQ(g.tiles, 64);
  EXPECT_DOUBLE_EQ(g.waves, 1);
  EXPECT_NEAR(g.compute, 44.78e-6, 1e-8);
  EXPECT_NEAR(g.memory, 9.738e-6, 1e-9);
  // A router GEMM to 8 experts: 16 tiles, compute 1.34e8 / (791.2e12 x 16 / 132) = 1.40 us,
  // but (2048 x 4096 + 4096 x 8) x 2 + 2048 x 8 x 2 = 16.88 MB: 5.597 us at 3.015 TB/s.
  const GemmTime r = bf16().gemm(2048, 8, 4096, false);
  EXPECT_NEAR(r.compute, 1.3995e-6, 1e-9);
  EXPECT_NEAR(r.seconds(), 5.597e-6, 1e-9);
}

TEST(KernelModel, GroupedExpertGemmWithFewTokensPerExpert) {
  // 8 experts of 96 rows each: ceil(96 / 128) = 1 row of tiles, 4096 / 256 = 16 columns:
  // 8 x 16 = 128 tiles, one wave at 128 / 132 busy. FLOPs 8 x 2 x 96 x 4096 x 4096 = 2.577e10:
  // 2.577e10 / (791.2e12 x 128 / 132) = 33.59 us. (The padded rows of each 128-row tile are not
  // charged: the model's rate is per tile, not per padded FLOP; docs/kernel-model.md.)
  const GemmTime g = bf16().gemm(96, 4096, 4096, true, 8);
  EXPECT_DOUBLE_EQ(g.tiles, 128);
  EXPECT_DOUBLE_EQ(g.waves, 1);
  EXPECT_NEAR(g.compute, 33.59e-6, 1e-8);
}

TEST(KernelModel, FlashAttentionForwardAndBackward) {
  // One 4096-token sequence, 32 heads of 128, causal: each query sees 2048 keys on average.
  // FLOPs 2 x 32 x 4096 x 2048 x 256 = 1.3744e11; 32 heads x 32 blocks = 1024 blocks, 8 waves
  // with 1024 / 1056 busy: 1.3744e11 / (989e12 x 0.75 x 1024 / 1056) = 191.1 us.
  EXPECT_NEAR(bf16().attention_forward(1, 32, 4096, 2048, 128, 128), 191.08e-6, 1e-8);
  TrainConfig c = one_layer_of_32_heads();
  const LayerKernelTimes t = bf16().layer(c, 0, 4096);
  EXPECT_NEAR(t.core_fwd, 191.08e-6, 1e-8);
  // Backward: 2.5 x the FLOPs at 0.75 x 63 / 73 of the peak: 191.08 x 2.5 x 73 / 63 = 553.5 us.
  EXPECT_NEAR(t.core_bwd, 553.52e-6, 1e-8);
}

TEST(KernelModel, UnfusedAttentionMovesTheScoresThroughHbm) {
  // The same sequence (4096 tokens, 32 heads of 128) through Megatron's pre-FlashAttention core:
  // the whole 4096 x 4096 square per head (the mask is the softmax's). Each of the four batched
  // GEMM shapes (Q K^T 4096 x 4096 x 128, P V 4096 x 128 x 4096 and their gradients) moves
  // (4096 x 128 + 128 x 4096) x 2 + 4096^2 x 2 = 35,651,584 B (or the transposed equivalent)
  // per head, x 32 = 1,140,850,688 B = 378.39 us at 3.015 TB/s, above its compute (at most
  // 1.3744e11 / (791.2e12 x 0.969697) = 179.1 us): memory-bound. The softmax reads and writes
  // 2 B per score: 32 x 4096^2 x 4 = 2,147,483,648 B = 712.27 us.
  // Forward 2 x 378.39 + 712.27 = 1,469.05 us (FlashAttention-3: 191.08 us);
  // backward 4 x 378.39 + 2 x 712.27 = 2,938.10 us.
  TrainConfig c = one_layer_of_32_heads();
  c.model.dropout = false;
  c.unfused_attention = true;
  const LayerKernelTimes t = bf16().layer(c, 0, 4096);
  EXPECT_NEAR(t.core_fwd, 1469.05e-6, 0.01e-6);
  EXPECT_NEAR(t.core_bwd, 2938.10e-6, 0.01e-6);
  // Attention dropout adds 2 + 2 + 1 (mask) B per score: 5 x 536,870,912 B = 890.33 us forward.
  c.model.dropout = true;
  EXPECT_NEAR(bf16().layer(c, 0, 4096).core_fwd - t.core_fwd, 890.33e-6, 0.01e-6);
}

TEST(KernelModel, UnfusedAttentionNeedsTheKernelModel) {
  ArgNode job = ArgNode::map("job");
  job.set("model", ArgNode::scalar("llama3-8b", "job.model"));
  job.set("global_batch", ArgNode::scalar("8", "job.global_batch"));
  job.set("attention_kernel", ArgNode::scalar("unfused", "job.attention_kernel"));
  EXPECT_THROW(parse_train_config(job), InputError);
  job.set("efficiency", ArgNode::scalar("kernels", "job.efficiency"));
  EXPECT_TRUE(parse_train_config(job).unfused_attention);
}

TEST(KernelModel, LayerOfLlama2_7B) {
  // Llama 2 7B (hidden 4096, 32 heads, SwiGLU 11008), 4096 tokens, tp 1, BF16, forward:
  // QKV 4096 x 12288 x 4096: 32 x 48 = 1536 tiles, 12 waves (1536 / 1584): 4.1232e11 /
  //   (791.2e12 x 0.969697) = 537.4 us;
  // output 4096 x 4096 x 4096: 512 tiles, 4 waves (512 / 528): 1.3744e11 / 767.22e12 = 179.1 us;
  // up + gate 4096 x 22016 x 4096: 32 x 86 = 2752 tiles, 21 waves (2752 / 2772):
  //   7.3870e11 / (791.2e12 x 0.992785) = 940.5 us;
  // down 4096 x 4096 x 11008: 512 tiles: 3.6935e11 / 767.22e12 = 481.4 us;
  // core 191.1 us (above);
  // element-wise bytes per token: 2 norms (2 x 4096 x 2 B each), 2 residual adds (3 x 4096 x
  //   2 B each), rotary on 64 heads x 128 (read and write 2 B), SwiGLU 3 x 11008 x 2 B:
  //   32,768 + 49,152 + 32,768 + 66,048 = 180,736 B x 4096 = 740.3 MB: 245.5 us at 3.015 TB/s.
  // Forward = 537.4 + 179.1 + 940.5 + 481.4 + 191.1 + 245.5 = 2,575.1 us.
  TrainConfig c = testing::tiny_config(1, 1, 1, 1);
  c.model = model_preset("llama2-7b");
  c.seq = 4096;
  c.micro_batch = 1;
  const LayerKernelTimes t = bf16().layer(c, 0, 4096);
  EXPECT_NEAR(t.forward(), 2575.1e-6, 0.2e-6);
  // Attention block: norm + residual (5 x 4096 x 2 B), rotary (32,768 B) per token: 73,728 B x
  // 4096 = 302.0 MB = 100.2 us; + QKV + output + core = 1,007.8 us.
  EXPECT_NEAR(t.attention_fwd, 1007.8e-6, 0.2e-6);
  // Backward: data- and weight-gradient GEMMs of each; the element-wise kernels twice the
  // forward's bytes; the core 553.5 us. Dgrad of QKV 4096 x 4096 x 12288 (512 tiles):
  // 4.1232e11 / 767.22e12 = 537.4 us; wgrad 4096 x 12288 x 4096 the forward's shape, 537.4 us.
  // Hence backward > 2 x the GEMMs' forward; total (GEMMs 2 x 2012.6 + shape changes) checked
  // against the bound: between 2 x forward and 3 x forward.
  EXPECT_GT(t.backward(), 2.0 * t.forward());
  EXPECT_LT(t.backward(), 3.0 * t.forward());
}

TEST(KernelModel, MoeLayerRoutesTokensToGroupedExpertGemms) {
  // hidden 4096, 8 experts of SwiGLU 4096, top 2, ep 2, tp 1, 2048 tokens: the rank's 4 experts
  // get 2048 x 2 x 2 / 8 = 1024 rows each. Up: 4 x 8 x 32 = 1024 tiles, 8 waves (1024 / 1056):
  // 2.749e11 / (791.2e12 x 0.9697) = 358.3 us; down: 512 tiles, 4 waves: 179.1 us; router
  // 2048 x 8 x 4096 at HBM bandwidth 5.60 us; bytes: norm and residual 5 x 4096 x 2 x 2048
  // (83.9 MB), router softmax 2 x 8 x 4 x 2048, permutation 4 x 2 x 4096 x 2 x 2048 (134.2 MB),
  // SwiGLU 3 x 4096 x 2 x 4096 rows (100.7 MB): 318.9 MB = 105.77 us. MLP forward 648.8 us.
  TrainConfig c = testing::tiny_config(1, 1, 1, 1);
  c.model.hidden = 4096;
  c.model.heads = c.model.kv_heads = 32;
  c.model.head_dim = 128;
  c.model.experts = 8;
  c.model.top_k = 2;
  c.model.expert_ffn = 4096;
  c.model.gated_mlp = true;
  c.par.ep = 2;
  c.seq = 2048;
  const LayerKernelTimes t = bf16().layer(c, 0, 2048);
  EXPECT_NEAR(t.mlp_fwd, 648.78e-6, 0.01e-6);
}

TEST(KernelModel, TensorParallelShardsRunBelowLargeGemmRates) {
  // Llama 2 7B at tp 8: every GEMM an eighth, but shards of 1536 (QKV) and 512 (output) columns
  // leave SMs idle: the layer takes more than an eighth of tp 1's time.
  TrainConfig c = testing::tiny_config(1, 1, 1, 1);
  c.model = model_preset("llama2-7b");
  c.seq = 4096;
  const double one = bf16().layer(c, 0, 4096).forward();
  c.par.tp = 8;
  const double eight = bf16().layer(c, 0, 4096).forward();
  EXPECT_GT(eight, one / 8 * 1.05);
  EXPECT_LT(eight, one / 4);
}

TEST(KernelModel, Fp8CastsAndTransposesTheGemmInputs) {
  // gemm_pass at FP8 adds the cast of the input (m x k) forward and of the output gradient
  // (m x n) backward, each 2 B read + 2 x 1 B written: 8192^2 x 4 B = 268.4 MB = 89.03 us.
  double f8 = 0, b8 = 0, f16 = 0, b16 = 0;
  fp8().gemm_pass(8192, 8192, 8192, true, f8, b8);
  bf16().gemm_pass(8192, 8192, 8192, true, f16, b16);
  EXPECT_NEAR(f8, 0.795766e-3 + 89.03e-6, 1e-8);
  EXPECT_NEAR(b8, 2 * 0.795766e-3 + 89.03e-6, 1e-8);
  EXPECT_NEAR(f16, 1.433103e-3, 1e-9);
  EXPECT_NEAR(b16, 2 * 1.433103e-3, 2e-9);
}

TEST(KernelModel, ParsedJobsUseTheKernelModelOnlyWhenEfficiencyIsKernels) {
  ArgNode job = ArgNode::map("job", {"s.yaml", 1, 1});
  int line = 2;
  for (const auto& [k, v] :
       {std::pair{"model", "llama2-7b"}, {"global_batch", "8"}, {"seq", "4096"}})
    job.set(k, ArgNode::scalar(v, std::string("job.") + k, {"s.yaml", line++, 3}));
  // Opt-in (docs/kernel-model.md): without `efficiency` one fraction 0.5 prices every kernel.
  EXPECT_DOUBLE_EQ(parse_train_config(job).efficiency, 0.5);
  job.set("efficiency", ArgNode::scalar("kernel", "job.efficiency", {"s.yaml", line++, 3}));
  EXPECT_THROW(parse_train_config(job), InputError);  // a typo is not the kernel model
  job.set("efficiency", ArgNode::scalar("kernels", "job.efficiency", {"s.yaml", line++, 3}));
  const TrainConfig c = parse_train_config(job);
  EXPECT_DOUBLE_EQ(c.efficiency, 0.0);
  const StepPlan plan = make_step_plan(c, 989e12, 0, &h100());
  double embed_fwd = 0, embed_bwd = 0;
  bf16().embedding(c, 4096, embed_fwd, embed_bwd);
  EXPECT_NEAR(plan.forward[0].seconds(), bf16().layer(c, 0, 4096).forward() + embed_fwd, 1e-12);
  EXPECT_NEAR(plan.forward[1].seconds(), bf16().layer(c, 1, 4096).forward(), 1e-12);
  // Without a GPU the kernel model has no figures: an error naming efficiency.
  EXPECT_THROW(make_step_plan(c, 989e12), InputError);
  // efficiency: 0.5 restores one fraction for every kernel: 2 x active weights + 4 x seq x
  // hidden FLOPs per token over 989e12 x 0.5.
  TrainConfig e = c;
  e.efficiency = 0.5;
  const ModelSpec& m = e.model;
  const double flops =
      (2.0 * static_cast<double>(m.layer_active_params(0)) + 4.0 * 4096 * 4096) * 4096;
  EXPECT_NEAR(make_step_plan(e, 989e12).forward[0].seconds(), flops / (989e12 * 0.5), 1e-12);
}

// A multi-token-prediction module's own kernels (DeepSeek-V3 section 2.2), hidden 4096, one
// 4096-token sequence, tp 1, BF16. Element-wise at 3.015 TB/s: the embedding's lookup 2 x 4096 x
// 2 B x 4096 = 67.1 MB (22.258 us) and its FP32 gradient scatter 4096 x 10 B x 4096 = 167.8 MB
// (55.646 us); two RMSNorms 2 x 67.1 MB = 44.517 us, backward twice: 89.033 us; the
// concatenation reads both halves and writes 2h: 134.2 MB = 44.517 us, backward views (none).
// The projection M, 4096 x 4096 x 8192: 2.749e11 FLOPs, 512 tiles in 4 waves (512 / 528 busy):
// 2.749e11 / (791.2e12 x 512 / 528) = 358.276 us; backward its data gradient (4096 x 8192 out,
// 1024 tiles, 8 waves) and weight gradient (8192 x 4096) the same: 716.552 us. Forward 469.567 us,
// backward 861.231 us; the plan adds them and the head once more to the head's time.
TEST(KernelModel, MtpModulePricesItsLookupNormsConcatenationAndProjection) {
  TrainConfig c = one_layer_of_32_heads();
  double fwd = 0, bwd = 0;
  bf16().mtp_module(c, 4096, fwd, bwd);
  EXPECT_NEAR(fwd, 469.567e-6, 1e-9);
  EXPECT_NEAR(bwd, 861.231e-6, 1e-9);
  c.efficiency = 0;  // the kernel model
  const StepPlan without = make_step_plan(c, 989e12, 1979e12, &h100());
  c.model.mtp_layers = 1;
  const StepPlan with = make_step_plan(c, 989e12, 1979e12, &h100());
  EXPECT_NEAR(with.head_forward.seconds(), 2 * without.head_forward.seconds() + fwd, 1e-11);
  EXPECT_NEAR(with.head_backward.seconds(), 2 * without.head_backward.seconds() + bwd, 1e-11);
  // One efficiency: M's 4 h^2 FLOPs per token at the weight GEMMs' rate, FP8's twice BF16's.
  c.efficiency = 0.5;
  c.precision = Precision::Fp8;
  const StepPlan single = make_step_plan(c, 989e12, 1979e12, &h100());
  c.model.mtp_layers = 0;
  const StepPlan plain = make_step_plan(c, 989e12, 1979e12, &h100());
  const double projection = 4.0 * 4096 * 4096 * 4096 / (989e12 * 0.5 * 1979 / 989);
  EXPECT_NEAR(single.head_forward.seconds(), 2 * plain.head_forward.seconds() + projection, 1e-11);
}

}  // namespace
}  // namespace lockstep
