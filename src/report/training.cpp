// The training step's record (results.json, `train --format json`) and its text summary.
#include "lockstep/report/training.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "lockstep/report/inventory.hpp"

namespace lockstep::report {
namespace {

// The interleaved schedule's group size N as it ran (pp unless given); 0 without interleaving.
std::uint32_t microbatch_group(const ParallelConfig& p) {
  if (p.interleave < 2) return 0;
  return p.microbatch_group ? p.microbatch_group : p.pp;
}

// The job keys' names as the job writes them (`attention_kernel`, `optimizer: {moments}`).
const char* attention_kernel(const TrainConfig& c) {
  return c.unfused_attention ? "unfused" : "flash";
}
const char* optimizer_moments(const TrainConfig& c) {
  return c.bf16_moments ? "bf16" : "fp32";
}

TrainingOptions options_record(const TrainConfig& c) {
  TrainingOptions o;
  o.efficiency = c.efficiency;
  o.peak_tflops = c.peak_flops / 1e12;
  o.tp_comm_overlap = c.tp_comm_overlap;
  o.tp_comm_overlap_sms = c.tp_comm_overlap_sms;
  o.overlap_dp = c.overlap_dp;
  o.overlap_param_gather = c.overlap_param_gather;
  o.grad_reduce_in_fp32 = c.grad_reduce_in_fp32;
  o.bucket_bytes = c.bucket.count();
  o.optimizer_step = c.optimizer_step;
  o.clip_grad = c.clip_grad;
  o.moe_imbalance = c.moe_imbalance;
  o.lora_rank = c.lora_rank;
  if (c.lora_rank > 0) o.lora_targets = c.lora_mlp ? "attention_mlp" : "attention";
  o.account_for_embedding_in_pipeline_split = c.embedding_in_pipeline_split;
  o.account_for_loss_in_pipeline_split = c.loss_in_pipeline_split;
  o.communication_sms = c.communication_sms;
  return o;
}

// The options as the text output's lines name them: every key, then the ones a job sets for
// LoRA, MoE imbalance and the pipeline split only when set.
std::string on_off(bool b) {
  return b ? "on" : "off";
}
std::string options_text(const TrainingOptions& o) {
  std::string s = o.efficiency > 0 ? fmt::format("efficiency {:g}", o.efficiency)
                                   : std::string("efficiency kernels");
  if (o.peak_tflops > 0) s += fmt::format(", peak_tflops {:g}", o.peak_tflops);
  s += ", tp_comm_overlap " +
       (o.tp_comm_overlap ? fmt::format("on ({} SMs)", o.tp_comm_overlap_sms) : std::string("off"));
  s += fmt::format(", overlap_dp {}, overlap_param_gather {}, grad_reduce_in_fp32 {}",
                   on_off(o.overlap_dp), on_off(o.overlap_param_gather),
                   on_off(o.grad_reduce_in_fp32));
  s += o.bucket_bytes ? fmt::format(", bucket {} B", o.bucket_bytes) : ", bucket default";
  s += fmt::format(", optimizer_step {}, clip_grad {:g}", on_off(o.optimizer_step), o.clip_grad);
  if (o.moe_imbalance != 1.0) s += fmt::format(", moe_imbalance {:g}", o.moe_imbalance);
  if (o.lora_rank > 0) s += fmt::format(", lora_rank {} on {}", o.lora_rank, o.lora_targets);
  if (o.account_for_embedding_in_pipeline_split) s += ", embedding in pipeline split";
  if (o.account_for_loss_in_pipeline_split) s += ", loss in pipeline split";
  if (o.communication_sms > 0) s += fmt::format(", communication_sms {}", o.communication_sms);
  return s;
}

std::string parallelism_text(const TrainConfig& c) {
  const ParallelConfig& p = c.par;
  std::string text = fmt::format("TP{} PP{}", p.tp, p.pp);
  if (p.interleave > 1) text += fmt::format(" VP{} N{}", p.interleave, microbatch_group(p));
  if (c.pipeline == PipelineSchedule::DualPipe) text += " DualPipe";
  text += fmt::format(" DP{}", p.dp);
  if (p.cp > 1) text += fmt::format(" CP{}", p.cp);
  if (p.ep > 1) text += fmt::format(" EP{}", p.ep);
  if (p.expert_tp() != p.tp) text += fmt::format(" ETP{}", p.expert_tp());
  if (p.fsdp) {
    text += " FSDP";
  } else if (p.zero != ZeroStage::None) {
    text += fmt::format(" ZeRO-{}", static_cast<int>(p.zero));
  }
  return text;
}

JitterStats jitter_record(const TrainResult& r, const TrainConfig& config) {
  JitterStats j;
  j.trials = r.trials;
  j.p50_us = r.p50.microseconds();
  j.p99_us = r.p99.microseconds();
  j.max_us = r.max.microseconds();
  j.mean_us = r.mean.microseconds();
  for (Time time : r.trial_times) j.iteration_time_us.push_back(time.microseconds());
  std::sort(j.iteration_time_us.begin(), j.iteration_time_us.end());
  j.lockstep_waste_gpu_s = r.waste_gpu_seconds;
  j.lockstep_waste_usd = r.waste_cost_per_step_usd;
  j.lockstep_waste_fraction = r.waste_fraction;
  j.lockstep_waste_per_trillion_tokens_usd = r.waste_cost_per_trillion_tokens_usd;
  j.straggler_wait_us = r.breakdown.straggler.microseconds();
  j.seed = config.seed;
  return j;
}

// --- text -------------------------------------------------------------------------------------

// A duration in the unit that keeps it readable (21.367 s, not 21366.654 ms), three decimals.
std::string ms(Time t) {
  const double us = t.microseconds();
  if (std::abs(us) >= 1e6) return fmt::format("{:.3f} s", us / 1e6);
  if (std::abs(us) >= 1e3 || us == 0) return fmt::format("{:.3f} ms", us / 1e3);
  return fmt::format("{:.3f} us", us);
}

std::string pct(Time part, Time whole) {
  return whole > Time::zero() ? fmt::format("{:5.1f}%", 100.0 * part.seconds() / whole.seconds())
                              : std::string("    -");
}

// Memory in GiB: HBM comes in binary sizes (an "80 GB" H100 holds 80 GiB = 85.9e9 bytes), so
// GiB shows the capacity as the datasheet names it.
std::string gb(Bytes b) {
  return fmt::format("{:.1f} GiB", b.as_double() / (1024.0 * 1024.0 * 1024.0));
}

std::string parallel_text(const TrainConfig& c) {
  const ParallelConfig& p = c.par;
  std::string s = fmt::format("tp {} (sequence parallel {}), pp {}", p.tp,
                              p.sequence_parallel ? "on" : "off", p.pp);
  if (p.interleave > 1) {
    s += fmt::format(" (interleaved, {} chunks per stage, {} micro-batches per group)",
                     p.interleave, microbatch_group(p));
  }
  if (p.cp > 1) s += fmt::format(", cp {}", p.cp);
  s += fmt::format(", dp {}", p.dp);
  if (p.ep > 1) s += fmt::format(", ep {}", p.ep);
  if (p.expert_tp() != p.tp) s += fmt::format(", etp {}", p.expert_tp());
  if (p.zero != ZeroStage::None) s += fmt::format(", {}", p.fsdp ? "fsdp" : to_string(p.zero));
  if (c.pipeline == PipelineSchedule::DualPipe) s += ", pipeline dualpipe";
  return s;
}

}  // namespace

nlohmann::ordered_json model_map_json(const ModelSpec& m) {
  return {{"name", m.name},
          {"layers", m.layers},
          {"hidden", m.hidden},
          {"ffn", m.ffn},
          {"heads", m.heads},
          {"kv_heads", m.kv_heads},
          {"head_dim", m.head_dim},
          {"vocab", m.vocab},
          {"seq", m.seq},
          {"gated_mlp", m.gated_mlp},
          {"tied_embeddings", m.tied_embeddings},
          {"dropout", m.dropout},
          {"experts", m.experts},
          {"top_k", m.top_k},
          {"shared_experts", m.shared_experts},
          {"expert_ffn", m.expert_ffn},
          {"dense_layers", m.dense_layers},
          {"q_lora_rank", m.q_lora_rank},
          {"kv_lora_rank", m.kv_lora_rank},
          {"qk_rope_head_dim", m.qk_rope_head_dim},
          {"v_head_dim", m.v_head_dim},
          {"attention_params", m.attention_params},
          {"sliding_window", m.sliding_window},
          {"global_every", m.global_every},
          {"num_nextn_predict_layers", m.mtp_layers},
          {"moe_max_nodes", m.moe_max_nodes},
          {"moe_fp8_dispatch", m.moe_fp8_dispatch}};
}

Training training_record(const TrainResult& r, const TrainConfig& config) {
  Training t;
  t.model = r.model;
  t.model_map = model_map_json(config.model);
  t.parallelism = parallelism_text(config);
  t.gpus = r.gpus;
  t.iteration_time_us = r.iteration.microseconds();
  // The slices that add up to the noise-free iteration (straggler waste is not one of them).
  const std::pair<const char*, Time> parts[] = {
      {"compute", r.breakdown.compute}, {"exposed_tp", r.breakdown.tp},
      {"exposed_ep", r.breakdown.ep},   {"exposed_cp", r.breakdown.cp},
      {"exposed_pp", r.breakdown.pp},   {"pipeline_bubble", r.breakdown.bubble},
      {"exposed_dp", r.breakdown.dp},   {"imbalance", r.breakdown.imbalance}};
  for (const auto& [name, time] : parts) {
    if (time > Time::zero()) t.breakdown.push_back({name, time.microseconds()});
  }
  t.mfu = r.mfu;
  t.tokens_per_s = r.tokens_per_second;
  t.gpu_hours_per_step = r.gpu_hours_per_step;
  t.cost_per_step_usd = r.cost_per_step_usd;
  t.cost_per_trillion_tokens_usd = r.cost_per_trillion_tokens_usd;
  // One trial has no distribution to show (with noise configured, the text still prints it).
  if (r.trials > 1 && !r.trial_times.empty()) t.jitter = jitter_record(r, config);
  t.engine = r.engine;
  t.expansion = r.expansion;
  const ParallelConfig& p = config.par;
  t.parallel = {p.tp,
                p.pp,
                p.dp,
                p.ep,
                p.interleave,
                p.sequence_parallel,
                static_cast<std::uint32_t>(p.zero),
                p.fsdp};
  t.parallel.cp = p.cp;
  if (p.expert_tp() != p.tp) t.parallel.etp = p.expert_tp();
  t.parallel.microbatch_group = microbatch_group(p);
  if (config.pipeline == PipelineSchedule::DualPipe) t.parallel.pipeline = "dualpipe";
  t.precision = to_string(config.precision);
  t.attention_kernel = attention_kernel(config);
  t.optimizer_moments = optimizer_moments(config);
  t.recompute = to_string(config.recompute);
  if (config.recompute == Recompute::Selective)
    t.recompute_modules = recompute_module_names(config.recompute_modules);
  t.options = options_record(config);
  t.batch = {config.global_batch, config.micro_batch, config.micro_batches(),
             config.sequence_length(), r.tokens_per_iteration};
  t.memory = {r.memory.weights.count(),     r.memory.gradients.count(), r.memory.optimizer.count(),
              r.memory.activations.count(), r.memory.total().count(),   r.hbm.count()};
  t.gpu_hours_per_trillion_tokens = r.gpu_hours_per_trillion_tokens;
  t.warnings = r.warnings;
  for (const SlowGpuPlace& g : r.slow_gpus) {
    t.slow_gpus.push_back({g.text, g.factor, g.rank, g.node, g.gpu, g.stage, g.replica, g.tp_rank});
  }
  t.waste = {r.waste_gpu_seconds,       r.waste_cost_per_step_usd,
             r.waste_fraction,          r.waste_cost_per_trillion_tokens_usd,
             r.waste_gpu_hours_per_day, r.waste_cost_per_day_usd};
  return t;
}

std::string format_training_text(const TrainResult& r, const TrainConfig& c) {
  std::string out;
  auto line = [&](const std::string& s) { out += s + "\n"; };
  line(fmt::format("# lockstep train: {} on {} GPUs, engine {} ({} expansion)", r.model, r.gpus,
                   r.engine, r.expansion));
  line(fmt::format("parallelism        {}", parallel_text(c)));
  line(fmt::format("kernels            {} weight GEMMs, {} attention, optimizer moments {}",
                   to_string(c.precision), attention_kernel(c), optimizer_moments(c)));
  line(fmt::format("options            {}", options_text(options_record(c))));
  line(
      fmt::format("batch              {} sequences x {} tokens, micro-batch {}, {} micro-batches "
                  "per replica",
                  c.global_batch, c.sequence_length(), c.micro_batch, c.micro_batches()));
  std::string recompute = c.recompute == Recompute::None
                              ? ""
                              : fmt::format(", {} recomputation", to_string(c.recompute));
  if (c.recompute == Recompute::Selective && c.recompute_modules != kRecomputeCoreAttn)
    recompute += fmt::format(" of {}", recompute_module_names(c.recompute_modules));
  line(
      fmt::format("memory per GPU     {} of {} (weights {}, gradients {}, optimizer {}, "
                  "activations {}{})",
                  gb(r.memory.total()), gb(r.hbm), gb(r.memory.weights), gb(r.memory.gradients),
                  gb(r.memory.optimizer), gb(r.memory.activations), recompute));
  line("");
  line(fmt::format("iteration time     {} (noise-free)", ms(r.iteration)));
  const TrainBreakdown& b = r.breakdown;
  const Time T = r.iteration;
  line(fmt::format("  compute          {:>14}  {}", ms(b.compute), pct(b.compute, T)));
  line(fmt::format("  exposed TP comm  {:>14}  {}", ms(b.tp), pct(b.tp, T)));
  if (c.par.ep > 1) line(fmt::format("  exposed EP comm  {:>14}  {}", ms(b.ep), pct(b.ep, T)));
  if (c.par.cp > 1) line(fmt::format("  exposed CP comm  {:>14}  {}", ms(b.cp), pct(b.cp, T)));
  line(fmt::format("  exposed PP comm  {:>14}  {}", ms(b.pp), pct(b.pp, T)));
  line(fmt::format("  pipeline bubble  {:>14}  {}", ms(b.bubble), pct(b.bubble, T)));
  line(fmt::format("  exposed DP comm  {:>14}  {}", ms(b.dp), pct(b.dp, T)));
  line(fmt::format("  waiting (no PP)  {:>14}  {}", ms(b.imbalance), pct(b.imbalance, T)));
  line(fmt::format("  straggler wait   {:>14}  (mean per GPU per noisy iteration)",
                   ms(b.straggler)));
  // MFU stays BF16-equivalent whatever the GEMMs ran in (model FLOPs / BF16 dense peak).
  const std::string of_bf16 =
      c.precision == Precision::Bf16
          ? ""
          : fmt::format(" (of the BF16 peak; weight GEMMs in {})", to_string(c.precision));
  line(fmt::format("MFU                {:.1f}%{}", 100 * r.mfu, of_bf16));
  line(fmt::format("throughput         {:.0f} tokens/s", r.tokens_per_second));
  line(fmt::format("per step           {:.4f} GPU-hours, ${:.2f} at ${:.2f}/GPU-hour",
                   r.gpu_hours_per_step, r.cost_per_step_usd, c.gpu_hour_usd));
  line(fmt::format("per 1T tokens      {:.0f} GPU-hours, ${:.0f}", r.gpu_hours_per_trillion_tokens,
                   r.cost_per_trillion_tokens_usd));
  line("");
  line(fmt::format("trials             {} (seed {}){}", r.trials, c.seed,
                   c.noisy() ? "" : ", no noise configured: every trial is the baseline"));
  line(fmt::format("iteration p50      {}", ms(r.p50)));
  // The nearest-rank p99 of n trials is the ceil(0.99 n)-th smallest: the maximum itself below
  // 100 trials, so it is printed only from there on.
  if (r.trials >= kTrialsForP99) {
    line(fmt::format("iteration p99      {}", ms(r.p99)));
  } else {
    line(
        fmt::format("iteration p99      - ({} trials: a p99 needs at least {}; the max is the "
                    "tail)",
                    r.trials, kTrialsForP99));
  }
  line(fmt::format("iteration max      {} (the slowest of {} trials)", ms(r.max), r.trials));
  line(
      fmt::format("lockstep waste     {:.3f} GPU-seconds per step ({:.2f}% of GPU time), "
                  "${:.4f} per step, ${:.0f} per 1T tokens",
                  r.waste_gpu_seconds, 100 * r.waste_fraction, r.waste_cost_per_step_usd,
                  r.waste_cost_per_trillion_tokens_usd));
  if (r.waste_gpu_seconds > 0) {
    line(fmt::format("  per day          {:.1f} GPU-hours, {} (back-to-back steps of {})",
                     r.waste_gpu_hours_per_day, format_usd(r.waste_cost_per_day_usd), ms(r.mean)));
  }
  for (const SlowGpuPlace& g : r.slow_gpus) {
    line(
        fmt::format("slow GPU           {}: rank {} = node {} GPU {}, pipeline stage {} of {}, "
                    "data-parallel replica {}, TP rank {}",
                    g.text, g.rank, g.node, g.gpu, g.stage, c.par.pp, g.replica, g.tp_rank));
  }
  if (!r.slow_gpus.empty() && c.par.pp > 1) {
    line(
        fmt::format("  its cost depends on its pipeline stage (the stages' work differs, and "
                    "1F1B passes a stage's delay on through activations and gradients): compare "
                    "slow-gpu:stage=0 to stage={}",
                    c.par.pp - 1));
  }
  for (const auto& w : r.warnings) line("warning: " + w);
  return out;
}

}  // namespace lockstep::report
