#include "lockstep/workload/step_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "lockstep/core/error.hpp"
#include "lockstep/workload/dualpipe.hpp"
#include "lockstep/workload/kernel_model.hpp"

namespace lockstep {
namespace {

constexpr double kBf16 = 2.0, kFp32 = 4.0;
// Per shard parameter, streamed by the optimizer step (make_step_plan below): FP32 moments, and
// BF16 ones (reads 4 + 4 + 2 + 2, writes 4 + 2 + 2).
constexpr double kOptimizerBytes = 4 + 16 + 12 + 4 + 2;
constexpr double kOptimizerBytesBf16Moments = 4 + 12 + 8 + 4 + 2;

// Parameters one rank holds of layers [first, last) (TP shards every matrix; EP shards routed
// experts), split into what all dp ranks share and the routed experts only dp / ep ranks share.
struct RankParams {
  double dense = 0;
  double expert = 0;
};
RankParams layer_params_per_rank(const ModelSpec& m, const ParallelConfig& p, std::uint32_t first,
                                 std::uint32_t last, bool has_embedding, bool has_head) {
  RankParams params;
  for (std::uint32_t l = first; l < last; ++l) {
    if (m.is_moe_layer(l)) {
      const double routed = static_cast<double>(m.experts) * static_cast<double>(m.expert_params());
      params.dense += (static_cast<double>(m.layer_params(l)) - routed) / p.tp;
      params.expert += routed / (p.expert_tp() * p.ep);  // ETP x EP shards (parallel folding)
    } else {
      params.dense += static_cast<double>(m.layer_params(l)) / p.tp;
    }
  }
  const double table = static_cast<double>(m.vocab * m.hidden) / p.tp;
  if (has_embedding) params.dense += table;
  if (has_head) params.dense += table;  // Megatron keeps a copy on the last stage even when tied
  return params;
}

// With 1 < etp < tp each rank's experts take the dispatched tokens of its expert TP group's etp
// ranks (Megatron-Core's all-to-all dispatcher gathers them); otherwise its own: 1.
std::uint32_t dispatch_gather(const ParallelConfig& p) {
  return p.expert_tp() > 1 && p.expert_tp() < p.tp ? p.expert_tp() : 1;
}

// Activation bytes one layer keeps per micro-batch on one rank, Korthikanti et al. 2022
// ("Reducing Activation Recomputation in Large Transformer Models", section 4 and Table 2)
// tensor by tensor for the layer's own shape, 2 bytes per element unless said (b s tokens):
//   replicated over TP without SP: the two norms' inputs 2h + 2h, QKV's input 2h, FC1's input
//   2h, the two dropout masks h + h (1 byte; only with dropout);
//   sharded over TP: Q, K, V for the core 2 (heads x qk + kv_heads x (qk + v)) (multi-head
//   attention: 6h), the output projection's input 2 heads x v (2h), the activation's input
//   2 ffn (x 2 when gated) and FC2's input 2 ffn; a MoE layer's routed experts see top_k
//   copies of each token (their FC1 inputs too), its shared experts one.
// A GPT layer (MHA, ffn 4h, dropout) gives Table 2's sbh (10 + 24/t), 34 sbh/t with sequence
// parallelism (which shards the replicated part too). Without recomputation Table 2 adds
// 5as^2b/t for the attention scores, softmax and dropout; FlashAttention never stores them (Dao
// et al. 2022: the output and the softmax's row statistics only), so none keeps what selective
// keeps. Full recomputation keeps the layer's input, 2 sbh, sharded over t by SP.
// With FP8 (or FP4) weight GEMMs Transformer Engine saves the linear layers' inputs for the
// weight-gradient GEMMs in that format, 1 byte instead of 2 (TE's Linear, LayerNormLinear and
// LayerNormMLP keep the casted input; fp4 counted as 1 byte too, an assumption): QKV's, the
// output projection's, FC1's and FC2's inputs (GPT: 7 sbh less, 27 sbh/t with SP).
double layer_activation_bytes(const TrainConfig& c, std::uint32_t layer, double tokens) {
  const ModelSpec& m = c.model;
  const double t = c.par.tp;
  const bool sp = c.par.sequence_parallel || c.par.tp == 1;
  const double h = static_cast<double>(m.hidden);
  if (c.recompute == Recompute::Full) return 2.0 * tokens * h / (sp ? t : 1.0);
  const double in = c.precision != Precision::Bf16 ? 1.0 : 2.0;  // a GEMM input's bytes
  // Megatron replicates a KV head over the TP ranks when tp exceeds the KV heads: each rank keeps
  // ceil(kv / tp) of them, i.e. kv rounded up to a multiple of tp over all t ranks.
  const std::uint64_t kv_heads = m.kv_heads ? m.kv_heads : m.heads;
  const double heads = m.heads,
               kv = static_cast<double>((kv_heads + c.par.tp - 1) / c.par.tp * c.par.tp);
  const double qk = static_cast<double>(m.qk_head_size()), v = static_cast<double>(m.v_head_size());
  // Selective recomputation by module (Megatron-Core's recompute_modules): a module rerun in the
  // backward pass keeps only its input, which the tensors below already count.
  const bool norms = c.recomputes(kRecomputeLayernorm);
  // The two norms' inputs; their outputs are QKV's and FC1's inputs (the router's and shared
  // experts' in a MoE layer), not kept when the norms are recomputed.
  double replicated = 2 * h + 2 * h + (norms ? 0.0 : in * h) + (m.dropout ? 2 * h : 0.0);
  const bool moe = m.is_moe_layer(layer);
  const bool mlp_rerun = moe ? c.recomputes(kRecomputeMoe) : c.recomputes(kRecomputeMlp);
  // A recomputed MLP or MoE block keeps its input, the norm's BF16 output, whatever the norms do.
  replicated += mlp_rerun ? 2 * h : norms ? 0.0 : in * h;
  double sharded = in * heads * v;  // the output projection's input
  if (!c.recomputes(kRecomputeMlaUpProj) || !m.is_mla())
    sharded += 2 * (heads * qk + kv * (qk + v));  // Q, K, V for the core
  if (m.is_mla()) {
    // MLA's latents (DeepSeek-V2, arXiv:2405.04434, section 2.1): the down-projections' outputs
    // are the latent norms' inputs (2 B), the norms' outputs the up-projections' inputs; the
    // shared rotary key goes through RoPE, which keeps nothing. Counted like the replicated
    // part over TP (an assumption: Megatron-Core's down-projections are not TP-split).
    const double latent = static_cast<double>(m.q_lora_rank + m.kv_lora_rank);
    replicated += 2 * latent + (norms ? 0.0 : in * latent);
  }
  auto mlp = [&](double ffn, double copies, bool act_rerun) {
    return copies * ((m.gated_mlp ? 2.0 : 1.0) * 2 * ffn + (act_rerun ? 0.0 : in * ffn));
  };
  if (moe) {
    const double expert_ffn = static_cast<double>(m.expert_ffn ? m.expert_ffn : m.ffn);
    // The routed experts' inputs are top_k permuted copies of each token (FC1's input above is
    // the router's and shared experts' one); moe_act reruns their activation, so FC2's input
    // is not kept.
    // With 1 < etp < tp that input is gathered over the expert TP group; FC1's output stays
    // top_k ffn_e / tp per token (ffn_e / etp columns of etp times the rows).
    const double gathered = dispatch_gather(c.par);
    if (!mlp_rerun) {
      sharded +=
          in * h * m.top_k * gathered + mlp(expert_ffn, m.top_k, c.recomputes(kRecomputeMoeAct));
      if (!c.recomputes(kRecomputeSharedExperts))
        sharded += mlp(expert_ffn, m.shared_experts, false);
    }
  } else if (!mlp_rerun) {
    sharded += mlp(static_cast<double>(m.ffn), 1, false);
  }
  return tokens * (replicated / (sp ? t : 1.0) + sharded / t);
}

// In GiB, as `train` prints memory and as GPU memory is sold (an "80 GB" H100 holds 80 GiB).
std::string gb(double bytes) {
  return fmt::format("{:.1f} GiB", bytes / (1024.0 * 1024 * 1024));
}

}  // namespace

std::vector<PipelineUnit> pipeline_order(std::uint32_t pp, std::uint32_t interleave,
                                         std::uint64_t micro_batches, std::uint32_t stage,
                                         std::uint32_t group) {
  const std::uint64_t v = interleave, m = micro_batches, total = m * v;
  // Fewer micro-batches than stages (the Llama 3 paper's schedule allows it) form one group.
  const std::uint64_t n = std::min<std::uint64_t>(group ? group : pp, m);
  std::uint64_t warmup = 0;
  if (v == 1) {
    warmup = std::min<std::uint64_t>(pp - stage - 1, m);
  } else if (m == pp) {
    // Megatron-Core warms up every unit when num_microbatches == pipeline_parallel_size (N then
    // equals pp: it lies in [pp, m]).
    warmup = total;
  } else {
    warmup = std::min<std::uint64_t>((pp - stage - 1) * 2 + (v - 1) * n, total);
  }
  // Megatron-core's schedule table: (micro-batch, chunk) of each virtual micro-batch, in groups
  // of n micro-batches.
  std::vector<PipelineUnit> table;
  table.reserve(total);
  for (std::uint64_t first = 0; first < m; first += (v == 1 ? m : n)) {
    const std::uint64_t end = v == 1 || first + n >= m ? m : first + n;
    for (std::uint32_t chunk = 0; chunk < v; ++chunk) {
      for (std::uint64_t mb = first; mb < end; ++mb)
        table.push_back({true, chunk, static_cast<std::uint32_t>(mb)});
    }
  }
  auto unit = [&](std::uint64_t k, bool forward) {
    PipelineUnit u = table[k];
    u.forward = forward;
    if (!forward) u.chunk = static_cast<std::uint32_t>(v - 1 - u.chunk);
    return u;
  };
  std::vector<PipelineUnit> order;
  order.reserve(2 * total);
  for (std::uint64_t k = 0; k < warmup; ++k) order.push_back(unit(k, true));
  for (std::uint64_t i = 0; i + warmup < total; ++i) {
    order.push_back(unit(warmup + i, true));
    order.push_back(unit(i, false));
  }
  for (std::uint64_t k = total - warmup; k < total; ++k) order.push_back(unit(k, false));
  return order;
}

namespace {

// Forward FLOPs per token the busiest of the ep ranks adds over the mean: its routed experts
// see moe_imbalance times the mean tokens (2 FLOPs per parameter of top_k experts).
double expert_imbalance_flops_per_token(const TrainConfig& c, std::uint32_t layer) {
  const ModelSpec& m = c.model;
  if (c.par.ep < 2 || !m.is_moe_layer(layer)) return 0;
  return (c.moe_imbalance - 1.0) * 2.0 * m.top_k * static_cast<double>(m.expert_params());
}

// Weight-GEMM forward FLOPs per token that selective recomputation reruns in the backward pass,
// by block (Megatron-Core's recompute_modules; core_attn is the attention core, counted apart):
// mla_up_proj the up-projections W_UQ, W_UK, W_UV (DeepSeek-V2 section 2.1); mlp a dense layer's
// MLP; moe the router, the routed experts on the busiest rank and the shared experts;
// shared_experts these alone. Norms and the activation (layernorm, moe_act) are element-wise
// kernels without FLOPs in this count.
struct RerunFlops {
  double attention = 0, mlp = 0;
};
RerunFlops rerun_flops_per_token(const TrainConfig& c, std::uint32_t layer) {
  const ModelSpec& m = c.model;
  RerunFlops r;
  if (c.recompute != Recompute::Selective) return r;
  if (c.recomputes(kRecomputeMlaUpProj) && m.is_mla()) {
    const double heads = m.heads;
    r.attention = 2.0 * heads *
                  static_cast<double>(m.q_lora_rank * m.qk_head_size() +
                                      m.kv_lora_rank * (m.head_size() + m.v_head_size()));
  }
  const double expert = 2.0 * static_cast<double>(m.expert_params());
  if (!m.is_moe_layer(layer)) {
    if (c.recomputes(kRecomputeMlp)) r.mlp = 2.0 * static_cast<double>(m.dense_mlp_params());
  } else if (c.recomputes(kRecomputeMoe)) {
    r.mlp = 2.0 * static_cast<double>(m.hidden * m.experts) +
            expert * (m.top_k + m.shared_experts) + expert_imbalance_flops_per_token(c, layer);
  } else if (c.recomputes(kRecomputeSharedExperts)) {
    r.mlp = expert * m.shared_experts;
  }
  return r;
}

// Kernel times from one efficiency: FLOPs / (tp x peak x efficiency), the weight GEMMs at the
// precision's peak (the `efficiency` override, docs/kernel-model.md).
void single_efficiency_times(const TrainConfig& c, StepPlan& plan) {
  const ModelSpec& m = c.model;
  const std::uint64_t seq = c.sequence_length();
  const double tokens = static_cast<double>(plan.tokens_per_rank);
  const double rate = plan.achieved_flops * c.par.tp;  // a TP group's FLOP/s on one micro-batch
  const double saved = 1.0 - 1.0 / plan.gemm_speedup;  // of the GEMMs' BF16 time (0 at BF16)
  for (std::uint32_t l = 0; l < m.layers; ++l) {
    const double core_flops = m.attention_score_flops_per_token(l, seq) * tokens;
    const double core = core_flops / rate;
    // The busiest expert-parallel rank's extra routed tokens: weight GEMMs too.
    const double extra = expert_imbalance_flops_per_token(c, l) * tokens;
    const double flops = m.layer_forward_flops_per_token(l, seq) * tokens + extra;
    double fwd = (flops - (flops - core_flops) * saved) / rate;
    // LoRA: the frozen base computes no weight gradients (its weight GEMMs' forward time less in
    // the backward pass); the BF16 adapters run forward, data- and weight-gradient GEMMs.
    const double frozen = c.lora_rank > 0 ? (flops - core_flops) * (1.0 - saved) / rate : 0.0;
    const double adapters = c.lora_rank > 0 ? 2.0 * c.lora_params(l) * tokens / rate : 0.0;
    fwd += adapters;
    plan.forward.push_back(Time::s(fwd));
    double redo = 0;  // the forward work the backward pass reruns
    if (c.recompute == Recompute::Full) {
      redo = fwd;
    } else if (c.recompute == Recompute::Selective) {
      if (c.recomputes(kRecomputeCoreAttn)) redo += core;
      const RerunFlops rerun = rerun_flops_per_token(c, l);
      if (rerun.attention + rerun.mlp > 0)
        redo += (rerun.attention + rerun.mlp) * tokens / plan.gemm_speedup / rate;
    }
    plan.backward.push_back(Time::s(2.0 * fwd + redo - frozen));
    // The attention block's share: its weight GEMMs scaled down by their speed-up, and the core.
    const double per_token = m.attention_score_flops_per_token(l, seq);
    const double attn =
        2.0 * static_cast<double>(m.attention_params_per_layer()) / plan.gemm_speedup + per_token;
    const double layer = m.layer_forward_flops_per_token(l, seq) + extra / tokens;
    const double total = layer - (layer - per_token) * saved;
    plan.split.push_back({attn / total, attn / total, per_token / attn, per_token / attn});
  }
  const double head = m.head_forward_flops_per_token() * tokens / rate;
  plan.head_forward = Time::s(head);
  plan.head_backward = Time::s(c.lora_rank > 0 ? head : 2.0 * head);  // LoRA: no weight gradient
}

// Kernel times from the per-operation kernel model (kernel_model.hpp).
void kernel_model_times(const TrainConfig& c, const KernelModel& km, StepPlan& plan) {
  const double tokens = static_cast<double>(plan.tokens_per_rank);
  double embed_fwd = 0, embed_bwd = 0;
  km.embedding(c, tokens, embed_fwd, embed_bwd);
  for (std::uint32_t l = 0; l < c.model.layers; ++l) {
    LayerKernelTimes t = km.layer(c, l, tokens);
    // Selective recomputation's modules: their weight GEMMs' share of the block's forward time,
    // by FLOPs (taken before the embedding joins the first layer's attention block).
    const RerunFlops rerun = rerun_flops_per_token(c, l);
    const ModelSpec& m = c.model;
    const double attention_flops = 2.0 * static_cast<double>(m.attention_params_per_layer());
    const double mlp_flops =
        2.0 * static_cast<double>(m.layer_active_params(l) - m.attention_params_per_layer()) +
        expert_imbalance_flops_per_token(c, l);
    const double attention_rerun =
        rerun.attention > 0 ? (t.attention_fwd - t.core_fwd) * rerun.attention / attention_flops
                            : 0.0;
    const double mlp_rerun = rerun.mlp > 0 ? t.mlp_fwd * rerun.mlp / mlp_flops : 0.0;
    if (l == 0) {  // the lookup precedes the first layer's attention on the first stage
      t.attention_fwd += embed_fwd;
      t.attention_bwd += embed_bwd;
    }
    // Full recomputation reruns the layer's forward before its backward, selective the core
    // (Korthikanti et al. 2022, section 5) when core_attn is named, and the modules above.
    if (c.recompute == Recompute::Full) {
      t.attention_bwd += t.attention_fwd;
      t.mlp_bwd += t.mlp_fwd;
      t.core_bwd += t.core_fwd;
    } else if (c.recompute == Recompute::Selective) {
      if (c.recomputes(kRecomputeCoreAttn)) {
        t.attention_bwd += t.core_fwd;
        t.core_bwd += t.core_fwd;
      }
      t.attention_bwd += attention_rerun;
      t.mlp_bwd += mlp_rerun;
    }
    plan.forward.push_back(Time::s(t.forward()));
    plan.backward.push_back(Time::s(t.backward()));
    plan.split.push_back({t.attention_fwd / t.forward(), t.attention_bwd / t.backward(),
                          t.core_fwd / t.attention_fwd, t.core_bwd / t.attention_bwd});
  }
  double head_fwd = 0, head_bwd = 0;
  km.head(c, tokens, head_fwd, head_bwd);
  plan.head_forward = Time::s(head_fwd);
  plan.head_backward = Time::s(head_bwd);
}

}  // namespace

StepPlan make_step_shapes(const TrainConfig& config) {
  // Multi-token prediction (DeepSeek-V3, arXiv:2412.19437 section 2.2): each module's block runs
  // as one more layer after the main model's last, on the last stage, so the per-layer figures
  // below (kernel times, EP all-to-all, activations, parameters, gradient buckets) cover layers +
  // mtp_layers; the pipeline split, the FLOP count and the head's extras take the model as given.
  const std::uint32_t mtp = config.model.mtp_layers;
  TrainConfig c = config;
  c.model.layers += mtp;
  const ModelSpec& m = c.model;
  const ParallelConfig& p = c.par;
  StepPlan plan;
  plan.stages = p.pp;
  plan.chunks = p.interleave;
  // Layers split evenly over the pp x v virtual stages; the remainder goes to the middle ones
  // (from virtual stage 1), since stage 0 holds the most activations and the last stage computes
  // the output layer (the Llama 3 paper removes one layer each from the first and last stages
  // for the same reason).
  // With the embedding or the loss counted as a layer (Megatron-LM's account_for_*_in_pipeline_
  // _split; parse_train_config checks the even split) the first / last virtual stage holds one
  // layer fewer.
  const std::uint32_t vstages = p.pp * p.interleave;
  const std::uint32_t e = c.embedding_in_pipeline_split ? 1 : 0,
                      l = c.loss_in_pipeline_split ? 1 : 0;
  const bool accounted = e + l > 0;
  const std::uint32_t main_layers = config.model.layers;
  const std::uint32_t units = main_layers + e + l;
  const std::uint32_t base = units / vstages, extra = accounted ? 0 : main_layers % vstages;
  plan.chunk_first_layer.push_back(0);
  for (std::uint32_t k = 0; k < vstages; ++k) {
    const bool bigger = k >= 1 && k <= extra;
    const std::uint32_t fewer = (k == 0 ? e : 0) + (k + 1 == vstages ? l : 0);
    plan.chunk_first_layer.push_back(plan.chunk_first_layer.back() + base + (bigger ? 1 : 0) -
                                     fewer);
  }
  plan.chunk_first_layer.back() += mtp;  // the MTP blocks follow the last layer
  plan.micro_batches = c.micro_batches();
  const std::uint64_t seq = c.sequence_length();
  plan.tokens_per_micro = c.micro_batch * seq;
  // Context parallelism splits each sequence over cp ranks: each computes, keeps and sends the
  // activations of its s / cp tokens, whose queries still attend to the whole sequence.
  plan.tokens_per_rank = plan.tokens_per_micro / p.cp;
  const double tokens = static_cast<double>(plan.tokens_per_rank);
  const double hidden = static_cast<double>(m.hidden);
  const double projection = mtp * 2.0 * hidden * hidden / p.tp;  // MTP parameters per rank

  const double act = tokens * static_cast<double>(m.hidden) * kBf16;
  plan.tp_bytes = Bytes(static_cast<std::uint64_t>(act));
  plan.pp_bytes = Bytes(static_cast<std::uint64_t>(act / p.tp));
  // The busiest rank receives (dispatch) and sends back (combine) moe_imbalance times the mean;
  // an all-to-all ends with its busiest rank, so every rank's buffer is taken at that size.
  plan.ep_bytes = Bytes(static_cast<std::uint64_t>(act * std::max(1u, m.top_k) / p.tp *
                                                   (p.ep > 1 ? c.moe_imbalance : 1.0)));
  // 1 < etp < tp: the received tokens all-gathered over the expert TP group, the experts'
  // outputs reduce-scattered back (docs/training.md, "Expert parallel").
  if (m.is_moe() && dispatch_gather(p) > 1)
    plan.expert_tp_bytes = Bytes(plan.ep_bytes.count() * dispatch_gather(p));
  // K and V of the rank's tokens, of the KV heads of its TP rank (Megatron replicates a KV head
  // over TP ranks when tp exceeds the KV heads, so at least one): 2 x head_dim per head, or
  // with MLA the decompressed key (qk_head_size) and value (v_head_size) heads.
  const std::uint64_t kv = m.kv_heads ? m.kv_heads : m.heads;
  const std::uint64_t kv_per_rank = (kv + p.tp - 1) / p.tp;
  plan.cp_block_bytes =
      Bytes(p.cp > 1 ? plan.tokens_per_rank * kv_per_rank * (m.qk_head_size() + m.v_head_size()) *
                           static_cast<std::uint64_t>(kBf16)
                     : 0);

  // Gradient bytes per layer and rank; the embedding counts with the first layer, the output
  // layer with the last (that is when their gradients are complete).
  for (std::uint32_t l = 0; l < m.layers; ++l) {
    const RankParams params = layer_params_per_rank(m, p, l, l + 1, l == 0, l + 1 == m.layers);
    // LoRA: only the adapters have gradients (the embedding and output layer are frozen too).
    const double own = params.dense + (l + 1 == m.layers ? projection : 0.0);
    const double dense = c.lora_rank > 0 ? c.lora_params(l) / p.tp : own;
    const double expert = c.lora_rank > 0 ? 0.0 : params.expert;
    plan.layer_grad_bytes.push_back(Bytes(static_cast<std::uint64_t>(dense * kBf16)));
    plan.layer_expert_grad_bytes.push_back(Bytes(static_cast<std::uint64_t>(expert * kBf16)));
  }
  // Megatron-LM's DDP bucket: max(40M, 1M x dp) parameters (distributed/distributed_data_parallel
  // _config.py, bucket_size default, over the data-parallel group with context parallel). Dense and
  // expert gradients live in separate buffers, each bucketed the same way; a stage's layers
  // complete in backward order: chunk v - 1 first.
  const std::uint64_t bucket =
      c.bucket.count() ? c.bucket.count()
                       : std::max<std::uint64_t>(40'000'000, 1'000'000ULL * p.replicas()) * 2;
  // The reduction sends the gradient buffer's dtype: FP32 (twice the BF16 bytes) with
  // grad_reduce_in_fp32, Megatron-LM's default with --bf16.
  const std::uint64_t grad_scale = c.grad_reduce_in_fp32 ? 2 : 1;
  plan.buckets.resize(p.pp);
  for (std::uint32_t s = 0; s < p.pp; ++s) {
    std::uint64_t dense = 0, expert = 0;
    const std::uint32_t stage_first = plan.stage_first_layer(s);
    for (std::uint32_t ch = p.interleave; ch-- > 0;) {
      const std::uint32_t first = plan.first_layer(s, ch);
      for (std::uint32_t l = plan.end_layer(s, ch); l-- > first;) {
        dense += plan.layer_grad_bytes[l].count();
        expert += plan.layer_expert_grad_bytes[l].count();
        const bool last = l == stage_first;
        if (dense > 0 && (dense >= bucket || last)) {
          plan.buckets[s].push_back({Bytes(dense), Bytes(dense * grad_scale), l, false});
          dense = 0;
        }
        if (expert > 0 && (expert >= bucket || last)) {
          plan.buckets[s].push_back({Bytes(expert), Bytes(expert * grad_scale), l, true});
          expert = 0;
        }
      }
    }
  }

  return plan;
}

StepPlan make_step_plan(const TrainConfig& config, double peak_flops, double gemm_peak_flops,
                        const GpuSpec* gpu) {
  StepPlan plan = make_step_shapes(config);
  const std::uint32_t mtp = config.model.mtp_layers;
  TrainConfig c = config;
  c.model.layers += mtp;
  const ModelSpec& m = c.model;
  const ParallelConfig& p = c.par;
  const std::uint32_t main_layers = config.model.layers;
  const std::uint64_t seq = c.sequence_length();
  plan.gemm_speedup = gemm_peak_flops > 0 ? gemm_peak_flops / peak_flops : 1.0;
  if (gpu && c.communication_sms > 0 && gpu->kernels.sms > c.communication_sms)
    plan.comm_sm_share = static_cast<double>(c.communication_sms) / gpu->kernels.sms;
  if (gpu && c.tp_comm_overlap && p.tp > 1 && gpu->kernels.sms > c.tp_comm_overlap_sms)
    plan.tp_overlap_sm_share = static_cast<double>(c.tp_comm_overlap_sms) / gpu->kernels.sms;
  const double tokens = static_cast<double>(plan.tokens_per_rank);
  const double hidden = static_cast<double>(m.hidden), vocab = static_cast<double>(m.vocab);
  // Each MTP module (DeepSeek-V3 section 2.2) runs, besides its block (a layer above), the shared
  // head once more and its own kernels, on the last stage with the head: with one efficiency the
  // projection M's FLOPs (2h x h: 4 h^2 per token) at the weight GEMMs' rate, its element-wise
  // kernels (the lookup, two norms, the concatenation) within the efficiency as every layer's
  // are; with the kernel model each of them priced (KernelModel::mtp_module).
  double mtp_fwd = 0, mtp_bwd = 0;
  if (c.efficiency > 0) {
    plan.achieved_flops = peak_flops * c.efficiency;
    single_efficiency_times(c, plan);
    mtp_fwd = 4.0 * hidden * hidden * tokens / (plan.achieved_flops * p.tp * plan.gemm_speedup);
    mtp_bwd = (c.lora_rank > 0 ? 1.0 : 2.0) * mtp_fwd;  // LoRA: no weight gradient
  } else {
    if (gpu == nullptr)
      throw InputError("efficiency", "0 needs the GPU's kernel-model figures (none given)");
    const KernelModel km(*gpu, peak_flops, gemm_peak_flops, c.precision);
    kernel_model_times(c, km, plan);
    if (mtp > 0) km.mtp_module(c, tokens, mtp_fwd, mtp_bwd);
  }
  if (mtp > 0) {
    const auto modules = static_cast<std::int64_t>(mtp);
    plan.head_forward += Time::s(mtp * mtp_fwd) + plan.head_forward * modules;
    plan.head_backward += Time::s(mtp * mtp_bwd) + plan.head_backward * modules;
  }
  const double projection = mtp * 2.0 * hidden * hidden / p.tp;  // parameters per rank

  // LoRA: the base's weight-gradient GEMMs are not run (2 FLOPs per active weight and token
  // fewer, the output layer's too); the adapters' forward and two backward GEMMs are.
  double flops_per_token = config.model.train_flops_per_token(seq);  // with the MTP modules
  if (c.lora_rank > 0) {
    flops_per_token -= m.head_forward_flops_per_token();
    for (std::uint32_t l = 0; l < main_layers; ++l)
      flops_per_token +=
          -2.0 * static_cast<double>(m.layer_active_params(l)) + 6.0 * c.lora_params(l);
  }
  plan.model_flops_per_iteration = flops_per_token * static_cast<double>(c.tokens_per_iteration());

  // Memory: mixed-precision Adam as Megatron-LM keeps it with BF16 parameters: 2 (BF16 weights)
  // + 4 (FP32 gradients: Megatron accumulates and reduces BF16 models' gradients in FP32) + 12
  // (FP32 master weights, momentum, variance) = 18 bytes per parameter; the distributed optimizer
  // (ZeRO-1) shards the 12 over dp, 6 + 12/dp (Megatron-LM docs, "Distributed Optimizer"; ZeRO:
  // Rajbhandari et al. 2020, section 3); ZeRO-2 also shards the gradients, ZeRO-3 the weights.
  // Routed experts are replicated over dp / ep ranks only, so their shards are that much larger.
  // DualPipe: rank s holds stage s of one direction and stage pp - 1 - s of the other, two
  // copies of the parameters (DeepSeek-V3, arXiv:2412.19437, Table 2).
  const bool dualpipe = c.pipeline == PipelineSchedule::DualPipe;
  auto hosted = [&](std::uint32_t s) {
    return dualpipe ? std::vector<std::uint32_t>{s, p.pp - 1 - s} : std::vector<std::uint32_t>{s};
  };
  for (std::uint32_t s = 0; s < p.pp; ++s) {
    RankParams params;
    for (std::uint32_t h : hosted(s)) {
      for (std::uint32_t ch = 0; ch < p.interleave; ++ch) {
        const RankParams part =
            layer_params_per_rank(m, p, plan.first_layer(h, ch), plan.end_layer(h, ch),
                                  h == 0 && ch == 0, h + 1 == p.pp && ch + 1 == p.interleave);
        params.dense += part.dense;
        params.expert += part.expert;
      }
      // The MTP projections where the head is; the embedding the modules look up is the main
      // model's where DualPipe puts both ends on one rank (section 3.2.3, "Shared Embedding and
      // Output Head for Multi-Token Prediction"), a copy on the last stage otherwise.
      if (mtp > 0 && h + 1 == p.pp) {
        params.dense += projection;
        if (!dualpipe) params.dense += vocab * hidden / p.tp;
      }
    }
    // The distributed optimizer shards over the ranks that reduce a stage's gradients: the
    // data-parallel group with context parallel, under DualPipe both copies' groups (2 x dp: the
    // reduce-scatter leaves each holder 1 / (2 dp) of each of its two stages, as much in all as
    // one stage over dp). ZeRO-3's weights too: its per-layer gather runs over the same holders.
    const double copies = dualpipe ? 2.0 : 1.0;
    const double dp = p.replicas(), edp = static_cast<double>(p.expert_dp());
    auto bytes = [&](double per_param, ZeroStage sharded_from) {
      const bool sharded = p.zero >= sharded_from;
      const double b = params.dense * per_param / (sharded ? copies * dp : 1) +
                       params.expert * per_param / (sharded ? copies * edp : 1);
      return Bytes(static_cast<std::uint64_t>(b));
    };
    // The optimizer step (Megatron-LM's distributed optimizer updates the rank's shard, every
    // parameter without it), memory-bound: per shard parameter the gradient norm reads the FP32
    // gradient (4 B), Adam reads parameter, gradient and both moments (16 B) and writes three
    // (12 B), the copy to the BF16 weights reads 4 B and writes 2: 38 B at the HBM bandwidth
    // streaming kernels reach (docs/kernel-model.md).
    const double hbm = gpu && c.optimizer_step ? gpu->kernels.hbm_bandwidth.bytes_per_second() *
                                                     gpu->kernels.hbm_fraction
                                               : 0.0;
    // LoRA: the frozen base keeps its BF16 weights only; gradients and Adam's state are the
    // adapters' (Hu et al. 2021, section 4), sharded as ZeRO shards the rest.
    double adapters = 0;
    for (std::uint32_t h : hosted(s))
      for (std::uint32_t ch = 0; ch < p.interleave; ++ch)
        for (std::uint32_t l = plan.first_layer(h, ch); l < plan.end_layer(h, ch); ++l)
          adapters += c.lora_params(l) / p.tp;
    auto trained = [&](double per_param, ZeroStage sharded_from) {
      if (c.lora_rank == 0) return bytes(per_param, sharded_from);
      const double over = p.zero >= sharded_from ? copies * dp : 1.0;
      return Bytes(static_cast<std::uint64_t>(adapters * per_param / over));
    };
    const double shard = trained(1.0, ZeroStage::Optimizer).as_double();
    const double streamed = c.bf16_moments ? kOptimizerBytesBf16Moments : kOptimizerBytes;
    plan.optimizer_step.push_back(hbm > 0 ? Time::s(streamed * shard / hbm) : Time::zero());
    MemoryEstimate e;
    e.weights = bytes(kBf16, ZeroStage::Parameters);
    if (c.lora_rank > 0)
      e.weights = e.weights + Bytes(static_cast<std::uint64_t>(adapters * kBf16));
    e.gradients = trained(c.grad_reduce_in_fp32 ? kFp32 : kBf16, ZeroStage::Gradients);
    // FP32 master weights and two moments, the moments in BF16 with bf16_moments.
    e.optimizer = trained(kFp32 + 2 * (c.bf16_moments ? kBf16 : kFp32), ZeroStage::Optimizer);
    // The schedule's warm-up plus one pass is the most micro-batch chunks in flight on stage s
    // (1F1B: min(pp - s, m) micro-batches of the whole stage; interleaved with N = pp, stage 0
    // holds pp (1 + (pp - 1) / (pp v)) micro-batches' worth, Narayanan et al. 2021, section 2.2;
    // each micro-batch more in a group, N, adds v - 1 chunks to the warm-up).
    // Each chunk in flight holds its own layers' activations (chunks differ when the layers do
    // not split evenly, or with the embedding or loss counted as a layer).
    std::vector<double> chunk_bytes(p.interleave, 0.0);
    for (std::uint32_t ch = 0; ch < p.interleave; ++ch)
      for (std::uint32_t l = plan.first_layer(s, ch); l < plan.end_layer(s, ch); ++l)
        chunk_bytes[ch] += layer_activation_bytes(c, l, tokens);
    double peak = 0, live = 0;
    for (const PipelineUnit& u :
         pipeline_order(p.pp, p.interleave, plan.micro_batches, s, p.microbatch_group)) {
      live += u.forward ? chunk_bytes[u.chunk] : -chunk_bytes[u.chunk];
      peak = std::max(peak, live);
    }
    if (dualpipe) {
      // DualPipe: the rank's own schedule, stage s's activations per micro-batch of direction
      // 0 and stage pp - 1 - s's of direction 1 (dualpipe_activation_peak; pp + 1 micro-batches
      // with equal stages, DeepSeek-V3's Table 2).
      std::array<double, 2> per_direction = {0, 0};
      for (std::uint32_t d = 0; d < 2; ++d) {
        const std::uint32_t h = hosted(s)[d];
        for (std::uint32_t l = plan.first_layer(h, 0); l < plan.end_layer(h, 0); ++l)
          per_direction[d] += layer_activation_bytes(c, l, tokens);
      }
      peak = dualpipe_activation_peak(p.pp, plan.micro_batches, s, per_direction);
    }
    double act = peak;
    // FP32 logits where the output layer is (both end ranks under DualPipe), once more per MTP
    // module.
    if (s + 1 == p.pp || (dualpipe && s == 0))
      act += (1 + mtp) * tokens * static_cast<double>(m.vocab) * kFp32 / p.tp;
    e.activations = Bytes(static_cast<std::uint64_t>(act));
    if (!c.grad_reduce_in_fp32) {
      // BF16 gradients: the optimizer casts its shard to FP32 at the step (Megatron-Core's
      // _copy_model_grads_to_main_grads, `.float()`; zero_grad frees it before the next
      // forward), 4 B per shard parameter while the activations are gone. The peak is the
      // larger of the backward's and the step's.
      MemoryEstimate step = e;
      step.activations = Bytes(0);
      step.gradients = e.gradients + Bytes(static_cast<std::uint64_t>(kFp32 * shard));
      if (step.total() > e.total()) e = step;
    }
    if (e.total() > plan.memory.total()) plan.memory = e;
  }
  return plan;
}

void check_memory(const StepPlan& plan, Bytes hbm, const TrainConfig& c) {
  const MemoryEstimate& e = plan.memory;
  if (e.total() <= hbm) return;
  const double over = e.total().as_double() - hbm.as_double();
  throw InputError(
      "memory",
      fmt::format("{} needs {} per GPU (weights {}, gradients {}, optimizer {}, activations {}) "
                  "but the GPU has {}: {} over; try zero 1-3, recompute selective or full, more "
                  "tp/pp, or a smaller "
                  "micro-batch",
                  c.model.name, gb(e.total().as_double()), gb(e.weights.as_double()),
                  gb(e.gradients.as_double()), gb(e.optimizer.as_double()),
                  gb(e.activations.as_double()), gb(hbm.as_double()), gb(over)));
}

}  // namespace lockstep
