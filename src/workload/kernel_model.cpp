#include "lockstep/workload/kernel_model.hpp"

#include <fmt/format.h>

#include <cmath>

#include "lockstep/core/error.hpp"

namespace lockstep {
namespace {

constexpr double kBf16 = 2.0, kFp32 = 4.0;

// Bytes per element of a weight GEMM's operands at the precision (E4M3 / E5M2: 1; NVFP4: 4 bits).
double operand_bytes(Precision p) {
  return p == Precision::Fp8 ? 1.0 : p == Precision::Fp4 ? 0.5 : kBf16;
}

}  // namespace

KernelModel::KernelModel(const GpuSpec& gpu, double bf16_peak, double gemm_peak,
                         Precision precision)
    : rates_(gpu.kernels),
      bf16_peak_(bf16_peak),
      gemm_peak_(precision != Precision::Bf16 && gemm_peak > 0 ? gemm_peak : bf16_peak),
      gemm_bytes_(operand_bytes(precision)),
      low_precision_(precision != Precision::Bf16) {
  gemm_fraction_ = precision == Precision::Fp8   ? rates_.gemm_fp8
                   : precision == Precision::Fp4 ? rates_.gemm_fp4
                                                 : rates_.gemm_bf16;
  if (rates_.sms == 0 || hbm() <= 0 || gemm_fraction_ <= 0 || rates_.gemm_bf16 <= 0 ||
      rates_.attention_fwd <= 0 || rates_.attention_bwd <= 0) {
    throw InputError("gpu", fmt::format("the {} ({}) has no kernel-model figures for {} in the "
                                        "catalog (give efficiency: a fraction of the peak)",
                                        gpu.display, gpu.name, to_string(precision)));
  }
}

GemmTime KernelModel::gemm(double m, double n, double k, bool weights, double groups) const {
  GemmTime g;
  const double sms = rates_.sms;
  g.flops = 2.0 * m * n * k * groups;
  g.tiles = std::ceil(m / kGemmTileRows) * std::ceil(n / kGemmTileCols) * groups;
  g.waves = std::ceil(g.tiles / sms);
  const double peak = weights ? gemm_peak_ : bf16_peak_;
  const double fraction = weights ? gemm_fraction_ : rates_.gemm_bf16;
  g.compute = g.flops / (peak * fraction * g.tiles / (g.waves * sms));
  // A and B read once, C written once in BF16 (the roofline's lower bound on traffic).
  const double in = weights ? gemm_bytes_ : kBf16;
  g.memory = ((m * k + k * n) * in + m * n * kBf16) * groups / hbm();
  return g;
}

void KernelModel::gemm_pass(double m, double n, double k, bool weights, double& fwd, double& bwd,
                            double groups) const {
  fwd += gemm(m, n, k, weights, groups).seconds();
  bwd += gemm(m, k, n, weights, groups).seconds() + gemm(k, n, m, weights, groups).seconds();
  if (!weights || !low_precision_) return;
  // Transformer Engine casts an FP8 (FP4) GEMM's BF16 input and, in backward, the output
  // gradient, each with a transposed copy: Hopper's FP8 tensor-core GEMMs take only the TN
  // layout, so the weight- and data-gradient GEMMs need the transposes (TE's cast_transpose
  // kernels, "Using FP8 with Transformer Engine"): read 2 bytes, write two copies per element.
  // The weights' casts are cached across micro-batches (Megatron's is_first_microbatch).
  const double cast = kBf16 + 2.0 * gemm_bytes_;
  fwd += memory(m * k * cast * groups);
  bwd += memory(m * n * cast * groups);
}

double KernelModel::attention_forward(double sequences, double heads, double queries, double keys,
                                      double qk, double v) const {
  const double flops = 2.0 * sequences * heads * queries * keys * (qk + v);
  const double blocks = sequences * heads * std::ceil(queries / kAttentionQueryBlock);
  const double sms = rates_.sms;
  const double waves = std::ceil(blocks / sms);
  return flops / (bf16_peak_ * rates_.attention_fwd * blocks / (waves * sms));
}

double KernelModel::memory(double bytes) const {
  return bytes / hbm();
}

LayerKernelTimes KernelModel::layer(const TrainConfig& c, std::uint32_t layer,
                                    double tokens) const {
  const ModelSpec& m = c.model;
  const double tp = c.par.tp, h = static_cast<double>(m.hidden);
  // Sequence parallelism runs norms and residual adds on the rank's 1/tp of the tokens; without
  // it every TP rank runs them on all (Korthikanti et al. 2022, section 4.2.2).
  const double local = c.par.sequence_parallel && c.par.tp > 1 ? tokens / tp : tokens;
  LayerKernelTimes t;
  // Element-wise kernels: bytes in BF16 read and written per token; the backward pass of each
  // reads the output gradient and the saved input and writes the input gradient: twice the
  // forward's bytes (assumption, docs/kernel-model.md).
  auto elementwise = [&](double bytes, double& fwd, double& bwd) {
    fwd += memory(bytes);
    bwd += 2.0 * memory(bytes);
  };
  const double norm = 2.0 * h * kBf16 * local;      // read x, write norm(x)
  const double residual = 3.0 * h * kBf16 * local;  // read x and the residual, write the sum

  // Attention block: norm, QKV, rotary, core, output projection, residual.
  const double v_size = static_cast<double>(m.v_head_size());
  const double qk_size = static_cast<double>(m.qk_head_size());
  const double out_params = static_cast<double>(m.heads) * v_size * h;
  const double qkv_cols = (static_cast<double>(m.attention_params_per_layer()) - out_params) / h;
  elementwise(norm + residual, t.attention_fwd, t.attention_bwd);
  gemm_pass(tokens, qkv_cols / tp, h, true, t.attention_fwd, t.attention_bwd);
  gemm_pass(tokens, h, m.heads * v_size / tp, true, t.attention_fwd, t.attention_bwd);
  // Rotary embedding on the queries and keys (MLA: on their rotary part, one shared key head).
  const double rope = m.is_mla() ? m.qk_rope_head_dim : static_cast<double>(m.head_size());
  const double key_heads = m.is_mla() ? 1.0 : static_cast<double>(m.kv_heads);
  elementwise(2.0 * (m.heads / tp + key_heads / tp) * rope * kBf16 * tokens, t.attention_fwd,
              t.attention_bwd);
  // The core: each of the rank's heads, every query against the keys it attends to; a causal
  // mask over the whole sequence halves them on average (with context parallelism too:
  // Megatron gives each CP rank two mirrored chunks so the halves balance), a sliding window
  // keeps about the window.
  const std::uint64_t seq = c.sequence_length();
  const std::uint64_t span = m.attention_span(layer, seq);
  const double keys = span == seq ? static_cast<double>(seq) / 2.0 : static_cast<double>(span);
  const double sequences = static_cast<double>(c.micro_batch);
  const double heads = std::max(1.0, m.heads / tp);
  if (c.unfused_attention) {
    // Megatron-LM's core before FlashAttention (Korthikanti et al. 2022, section 4.1, the
    // activations it names): Q K^T by baddbmm into a [queries x seq] score matrix per head in
    // HBM (the causal mask is applied by the softmax, so the whole square is computed), a fused
    // scale-mask-softmax (reads 2 B, writes 2 B per score), dropout (reads 2, writes 2 and a 1-B
    // mask) when the model has it, then P V by bmm. The batched GEMMs price their own operand
    // traffic; the backward moves twice the element-wise bytes, as every element-wise kernel here.
    const double full = static_cast<double>(seq), groups = sequences * heads;
    const double queries = tokens / sequences;
    gemm_pass(queries, full, qk_size, false, t.core_fwd, t.core_bwd, groups);
    gemm_pass(queries, v_size, full, false, t.core_fwd, t.core_bwd, groups);
    const double per_score = 2.0 * kBf16 + (m.dropout ? 2.0 * kBf16 + 1.0 : 0.0);
    elementwise(groups * queries * full * per_score, t.core_fwd, t.core_bwd);
  } else {
    t.core_fwd = attention_forward(sequences, heads, tokens / sequences, keys, qk_size, v_size);
    t.core_bwd = t.core_fwd * kAttentionBackwardFlops * rates_.attention_fwd / rates_.attention_bwd;
  }
  t.attention_fwd += t.core_fwd;
  t.attention_bwd += t.core_bwd;

  // MLP block: norm, up (and gate), activation, down, residual; an MoE layer routes each token
  // to top_k experts of `experts`, the rank holding experts / ep of them, and adds the shared
  // experts as a dense MLP.
  elementwise(norm + residual, t.mlp_fwd, t.mlp_bwd);
  const double up = m.gated_mlp ? 2.0 : 1.0;
  const double act_bytes = (m.gated_mlp ? 3.0 : 2.0) * kBf16;  // SwiGLU reads 2, writes 1
  auto mlp = [&](double rows, double inner, double groups, double split) {
    gemm_pass(rows, up * inner / split, h, true, t.mlp_fwd, t.mlp_bwd, groups);
    gemm_pass(rows, h, inner / split, true, t.mlp_fwd, t.mlp_bwd, groups);
    elementwise(act_bytes * inner / split * rows * groups, t.mlp_fwd, t.mlp_bwd);
  };
  if (!m.is_moe_layer(layer)) {
    mlp(tokens, static_cast<double>(m.ffn), 1, tp);
    return t;
  }
  const double experts = m.experts, top_k = m.top_k, ep = c.par.ep;
  const double inner = static_cast<double>(m.expert_ffn ? m.expert_ffn : m.ffn);
  // Router: a BF16 GEMM to one logit per expert, softmax and top-k over FP32 logits.
  gemm_pass(tokens, experts, h, false, t.mlp_fwd, t.mlp_bwd);
  elementwise(2.0 * experts * kFp32 * tokens, t.mlp_fwd, t.mlp_bwd);
  // Permutation before dispatch and after combine: each routed copy read and written.
  elementwise(2.0 * 2.0 * top_k * h * kBf16 * tokens, t.mlp_fwd, t.mlp_bwd);
  // Grouped GEMM: the rank's experts / ep experts receive the tokens / tp (sequence parallel)
  // of ep ranks, top_k copies each, gathered over the etp ranks that split their weights:
  // tokens x top_k x ep x etp / (tp x experts) rows per expert on average (etp = tp: tokens x
  // top_k x ep / experts), moe_imbalance times that on the busiest rank, which every rank waits
  // for at the combine.
  const double imbalance = c.par.ep > 1 ? c.moe_imbalance : 1.0;
  const double etp = c.par.expert_tp();
  double rows = tokens * top_k * ep / experts * imbalance;
  if (etp != tp) rows = rows * etp / tp;
  mlp(rows, inner, experts / ep, etp);
  if (m.shared_experts > 0) mlp(tokens, inner * m.shared_experts, 1, tp);
  return t;
}

void KernelModel::head(const TrainConfig& c, double tokens, double& fwd, double& bwd) const {
  const ModelSpec& m = c.model;
  const double tp = c.par.tp, h = static_cast<double>(m.hidden);
  const double local = c.par.sequence_parallel && c.par.tp > 1 ? tokens / tp : tokens;
  fwd = bwd = 0;
  fwd += memory(2.0 * h * kBf16 * local);  // final norm
  bwd += memory(4.0 * h * kBf16 * local);
  // Megatron's output layer is not a Transformer Engine module: BF16 whatever the precision.
  gemm_pass(tokens, static_cast<double>(m.vocab) / tp, h, false, fwd, bwd);
  // Vocab-parallel cross-entropy in FP32: read the BF16 logits, keep the FP32 softmax; backward
  // reads it and writes the BF16 logit gradients.
  const double logits = tokens * static_cast<double>(m.vocab) / tp;
  fwd += memory(logits * (kBf16 + kFp32));
  bwd += memory(logits * (kFp32 + kBf16));
}

void KernelModel::embedding(const TrainConfig& c, double tokens, double& fwd, double& bwd) const {
  const double h = static_cast<double>(c.model.hidden);
  fwd = memory(2.0 * h * kBf16 * tokens);  // gather rows, write the activations
  // Read the output gradient, add it into the FP32 gradient rows (read and write).
  bwd = memory(h * (kBf16 + 2.0 * kFp32) * tokens);
}

void KernelModel::mtp_module(const TrainConfig& c, double tokens, double& fwd, double& bwd) const {
  const double tp = c.par.tp, h = static_cast<double>(c.model.hidden);
  const double local = c.par.sequence_parallel && c.par.tp > 1 ? tokens / tp : tokens;
  embedding(c, tokens, fwd, bwd);
  // Two RMSNorms (read x, write norm(x)); backward twice the bytes, as every element-wise kernel.
  fwd += memory(2.0 * 2.0 * h * kBf16 * local);
  bwd += memory(2.0 * 4.0 * h * kBf16 * local);
  // The concatenation reads both normalised halves and writes M's 2h-wide input; its backward
  // hands M's input gradient back as two views of it (no kernel).
  fwd += memory(2.0 * 2.0 * h * kBf16 * local);
  gemm_pass(tokens, h / tp, 2.0 * h, true, fwd, bwd);
}

}  // namespace lockstep
