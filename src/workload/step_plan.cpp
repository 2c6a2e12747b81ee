#include "lockstep/workload/step_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "lockstep/core/error.hpp"

namespace lockstep {
namespace {

constexpr double kBf16 = 2.0;

Time seconds(double s) {
  return Time::ps(static_cast<std::int64_t>(std::llround(s * 1e12)));
}

// Parameters one rank of `stage` holds (TP shards every matrix; EP shards routed experts).
double stage_params_per_rank(const ModelSpec& m, const ParallelConfig& p, std::uint32_t first,
                             std::uint32_t last, bool has_embedding, bool has_head) {
  double params = 0;
  for (std::uint32_t l = first; l < last; ++l) {
    if (m.is_moe_layer(l)) {
      const double routed = static_cast<double>(m.experts) * static_cast<double>(m.expert_params());
      params += (static_cast<double>(m.layer_params(l)) - routed) / p.tp + routed / (p.tp * p.ep);
    } else {
      params += static_cast<double>(m.layer_params(l)) / p.tp;
    }
  }
  const double table = static_cast<double>(m.vocab * m.hidden) / p.tp;
  if (has_embedding) params += table;
  if (has_head) params += table;  // Megatron keeps a copy on the last stage even when tied
  return params;
}

// Activation bytes one layer keeps per micro-batch on one rank (Korthikanti et al. 2022,
// "Reducing Activation Recomputation in Large Transformer Models", section 4: 34sbh/t with
// sequence parallelism when the attention scores are not stored, as with FlashAttention;
// sbh(10 + 24/t) with tensor parallelism alone; 2sbh/t (the layer input) with full recompute).
double layer_activation_bytes(const TrainConfig& c, double tokens) {
  const double sbh = tokens * static_cast<double>(c.model.hidden);
  const double t = c.par.tp;
  if (c.recompute) return 2.0 * sbh / t;
  if (c.par.sequence_parallel || c.par.tp == 1) return 34.0 * sbh / t;
  return sbh * (10.0 + 24.0 / t);
}

std::string gb(double bytes) {
  return fmt::format("{:.1f} GB", bytes / 1e9);
}

}  // namespace

StepPlan make_step_plan(const TrainConfig& c, double peak_flops) {
  const ModelSpec& m = c.model;
  const ParallelConfig& p = c.par;
  StepPlan plan;
  plan.stages = p.pp;
  // Layers split evenly; the remainder goes to the middle stages (from stage 1), since stage 0
  // holds the most activations and the last stage computes the output layer (the Llama 3 paper
  // removes one layer each from the first and last stages for the same reason).
  const std::uint32_t base = m.layers / p.pp, extra = m.layers % p.pp;
  plan.stage_first_layer.push_back(0);
  for (std::uint32_t s = 0; s < p.pp; ++s) {
    const bool bigger = s >= 1 && s <= extra;
    plan.stage_first_layer.push_back(plan.stage_first_layer.back() + base + (bigger ? 1 : 0));
  }
  plan.micro_batches = c.micro_batches();
  const std::uint64_t seq = c.sequence_length();
  plan.tokens_per_micro = c.micro_batch * seq;
  plan.achieved_flops = peak_flops * c.efficiency;
  const double tokens = static_cast<double>(plan.tokens_per_micro);
  const double rate = plan.achieved_flops * p.tp;  // a TP group's FLOP/s on one micro-batch

  for (std::uint32_t l = 0; l < m.layers; ++l) {
    const double fwd = m.layer_forward_flops_per_token(l, seq) * tokens / rate;
    plan.forward.push_back(seconds(fwd));
    plan.backward.push_back(seconds(fwd * (c.recompute ? 3.0 : 2.0)));
  }
  const double head = m.head_forward_flops_per_token() * tokens / rate;
  plan.head_forward = seconds(head);
  plan.head_backward = seconds(2.0 * head);

  const double act = tokens * static_cast<double>(m.hidden) * kBf16;
  plan.tp_bytes = Bytes(static_cast<std::uint64_t>(act));
  plan.pp_bytes = Bytes(static_cast<std::uint64_t>(act / p.tp));
  plan.ep_bytes = Bytes(static_cast<std::uint64_t>(act * std::max(1u, m.top_k) / p.tp));

  // Gradient bytes per layer and rank; the embedding counts with the first layer, the output
  // layer with the last (that is when their gradients are complete).
  for (std::uint32_t s = 0; s < p.pp; ++s) {
    const std::uint32_t first = plan.stage_first_layer[s], last = plan.stage_first_layer[s + 1];
    for (std::uint32_t l = first; l < last; ++l) {
      double params = stage_params_per_rank(m, p, l, l + 1, s == 0 && l == first,
                                            s + 1 == p.pp && l + 1 == last);
      plan.layer_grad_bytes.push_back(Bytes(static_cast<std::uint64_t>(params * kBf16)));
    }
  }
  // Megatron-LM's DDP bucket: max(40M, 1M x dp) parameters (distributed/distributed_data_parallel
  // _config.py, bucket_size default).
  const std::uint64_t bucket = c.bucket.count()
                                   ? c.bucket.count()
                                   : std::max<std::uint64_t>(40'000'000, 1'000'000ULL * p.dp) * 2;
  plan.buckets.resize(p.pp);
  for (std::uint32_t s = 0; s < p.pp; ++s) {
    std::uint64_t acc = 0;
    for (std::uint32_t l = plan.stage_first_layer[s + 1]; l-- > plan.stage_first_layer[s];) {
      acc += plan.layer_grad_bytes[l].count();
      if (acc >= bucket || l == plan.stage_first_layer[s]) {
        plan.buckets[s].push_back({Bytes(acc), l});
        acc = 0;
      }
    }
  }

  plan.model_flops_per_iteration =
      m.train_flops_per_token(seq) * static_cast<double>(c.tokens_per_iteration());

  // Memory: mixed-precision Adam keeps 2 (BF16 weights) + 2 (BF16 gradients) + 12 (FP32 master
  // weights, momentum, variance) bytes per parameter (Rajbhandari et al. 2020, ZeRO, section 3);
  // ZeRO-1 shards the 12 over dp, ZeRO-2 also the gradients, ZeRO-3 also the weights.
  for (std::uint32_t s = 0; s < p.pp; ++s) {
    const double params = stage_params_per_rank(
        m, p, plan.stage_first_layer[s], plan.stage_first_layer[s + 1], s == 0, s + 1 == p.pp);
    const double dp = p.dp;
    MemoryEstimate e;
    const auto z = p.zero;
    e.weights =
        Bytes(static_cast<std::uint64_t>(params * 2 / (z >= ZeroStage::Parameters ? dp : 1)));
    e.gradients =
        Bytes(static_cast<std::uint64_t>(params * 2 / (z >= ZeroStage::Gradients ? dp : 1)));
    e.optimizer =
        Bytes(static_cast<std::uint64_t>(params * 12 / (z >= ZeroStage::Optimizer ? dp : 1)));
    // 1F1B keeps min(pp - s, m) micro-batches in flight on stage s.
    const double in_flight =
        static_cast<double>(std::min<std::uint64_t>(p.pp - s, plan.micro_batches));
    double act = in_flight * plan.layers_in(s) * layer_activation_bytes(c, tokens);
    if (s + 1 == p.pp) act += tokens * static_cast<double>(m.vocab) * 4.0 / p.tp;  // FP32 logits
    e.activations = Bytes(static_cast<std::uint64_t>(act));
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
                  "but the GPU has {}: {} over; try zero 1-3, recompute, more tp/pp, or a smaller "
                  "micro-batch",
                  c.model.name, gb(e.total().as_double()), gb(e.weights.as_double()),
                  gb(e.gradients.as_double()), gb(e.optimizer.as_double()),
                  gb(e.activations.as_double()), gb(hbm.as_double()), gb(over)));
}

}  // namespace lockstep
