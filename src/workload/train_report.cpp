#include "lockstep/workload/train_report.hpp"

#include <fmt/format.h>

#include <string>

namespace lockstep {
namespace {

std::string ms(Time t) {
  return fmt::format("{:.3f} ms", t.milliseconds());
}

std::string pct(Time part, Time whole) {
  return whole > Time::zero() ? fmt::format("{:5.1f}%", 100.0 * part.seconds() / whole.seconds())
                              : std::string("    -");
}

std::string gb(Bytes b) {
  return fmt::format("{:.1f} GB", b.as_double() / 1e9);
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (static_cast<unsigned char>(ch) < 0x20) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned>(static_cast<unsigned char>(ch)));
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

// Shortest round-trip text of a double: deterministic and exact.
std::string num(double v) {
  return fmt::format("{}", v);
}

std::string parallel_text(const ParallelConfig& p) {
  std::string s = fmt::format("tp {} (sequence parallel {}), pp {}", p.tp,
                              p.sequence_parallel ? "on" : "off", p.pp);
  if (p.interleave > 1) s += fmt::format(" (interleaved, {} chunks per stage)", p.interleave);
  s += fmt::format(", dp {}", p.dp);
  if (p.ep > 1) s += fmt::format(", ep {}", p.ep);
  if (p.zero != ZeroStage::None) s += fmt::format(", {}", p.fsdp ? "fsdp" : to_string(p.zero));
  return s;
}

}  // namespace

std::string format_training_text(const TrainResult& r, const TrainConfig& c) {
  std::string out;
  auto line = [&](const std::string& s) { out += s + "\n"; };
  line(fmt::format("# lockstep train: {} on {} GPUs, engine {} ({} expansion)", r.model, r.gpus,
                   r.engine, r.expansion));
  line(fmt::format("parallelism        {}", parallel_text(c.par)));
  line(
      fmt::format("batch              {} sequences x {} tokens, micro-batch {}, {} micro-batches "
                  "per replica",
                  c.global_batch, c.sequence_length(), c.micro_batch, c.micro_batches()));
  line(
      fmt::format("memory per GPU     {} of {} (weights {}, gradients {}, optimizer {}, "
                  "activations {})",
                  gb(r.memory.total()), gb(r.hbm), gb(r.memory.weights), gb(r.memory.gradients),
                  gb(r.memory.optimizer), gb(r.memory.activations)));
  line("");
  line(fmt::format("iteration time     {} (noise-free)", ms(r.iteration)));
  const TrainBreakdown& b = r.breakdown;
  const Time T = r.iteration;
  line(fmt::format("  compute          {:>14}  {}", ms(b.compute), pct(b.compute, T)));
  line(fmt::format("  exposed TP comm  {:>14}  {}", ms(b.tp), pct(b.tp, T)));
  if (c.par.ep > 1) line(fmt::format("  exposed EP comm  {:>14}  {}", ms(b.ep), pct(b.ep, T)));
  line(fmt::format("  exposed PP comm  {:>14}  {}", ms(b.pp), pct(b.pp, T)));
  line(fmt::format("  pipeline bubble  {:>14}  {}", ms(b.bubble), pct(b.bubble, T)));
  line(fmt::format("  exposed DP comm  {:>14}  {}", ms(b.dp), pct(b.dp, T)));
  line(fmt::format("  waiting (no PP)  {:>14}  {}", ms(b.imbalance), pct(b.imbalance, T)));
  line(fmt::format("  straggler wait   {:>14}  (mean per GPU per noisy iteration)",
                   ms(b.straggler)));
  line(fmt::format("MFU                {:.1f}%", 100 * r.mfu));
  line(fmt::format("throughput         {:.0f} tokens/s", r.tokens_per_second));
  line(fmt::format("per step           {:.4f} GPU-hours, ${:.2f} at ${:.2f}/GPU-hour",
                   r.gpu_hours_per_step, r.cost_per_step_usd, c.gpu_hour_usd));
  line(fmt::format("per 1T tokens      {:.0f} GPU-hours, ${:.0f}", r.gpu_hours_per_trillion_tokens,
                   r.cost_per_trillion_tokens_usd));
  line("");
  line(fmt::format("trials             {} (seed {}){}", r.trials, c.seed,
                   c.noisy() ? "" : ", no noise configured: every trial is the baseline"));
  line(fmt::format("iteration p50      {}", ms(r.p50)));
  line(fmt::format("iteration p99      {}", ms(r.p99)));
  line(fmt::format("iteration max      {}", ms(r.max)));
  line(
      fmt::format("lockstep waste     {:.3f} GPU-seconds per step ({:.2f}% of GPU time), "
                  "${:.4f} per step, ${:.0f} per 1T tokens",
                  r.waste_gpu_seconds, 100 * r.waste_fraction, r.waste_cost_per_step_usd,
                  r.waste_cost_per_trillion_tokens_usd));
  for (const auto& w : r.warnings) line("warning: " + w);
  return out;
}

std::string training_result_json(const TrainResult& r, const TrainConfig& c) {
  const TrainBreakdown& b = r.breakdown;
  std::string trials = "[";
  for (std::size_t i = 0; i < r.trial_times.size(); ++i) {
    trials += (i ? "," : "") + num(r.trial_times[i].seconds());
  }
  trials += "]";
  std::string warnings = "[";
  for (std::size_t i = 0; i < r.warnings.size(); ++i) {
    warnings += (i ? "," : "") + json_string(r.warnings[i]);
  }
  warnings += "]";
  return fmt::format(
      "{{\"model\":{},\"engine\":{},\"expansion\":{},\"gpus\":{},\"tp\":{},\"pp\":{},\"dp\":{},"
      "\"ep\":{},\"zero\":{},\"global_batch\":{},\"micro_batch\":{},\"seq\":{},"
      "\"tokens_per_iteration\":{},\"iteration_s\":{},"
      "\"breakdown_s\":{{\"compute\":{},\"tp\":{},\"ep\":{},\"pp\":{},\"bubble\":{},\"dp\":{},"
      "\"imbalance\":{},\"straggler\":{}}},"
      "\"mfu\":{},\"tokens_per_s\":{},\"gpu_hours_per_step\":{},\"cost_per_step_usd\":{},"
      "\"gpu_hours_per_trillion_tokens\":{},\"cost_per_trillion_tokens_usd\":{},"
      "\"memory_bytes\":{{\"weights\":{},\"gradients\":{},\"optimizer\":{},\"activations\":{},"
      "\"total\":{},\"hbm\":{}}},"
      "\"trials\":{},\"seed\":{},\"trial_iteration_s\":{},\"p50_s\":{},\"p99_s\":{},\"max_s\":{},"
      "\"mean_s\":{},\"waste_gpu_s_per_step\":{},\"waste_fraction\":{},"
      "\"waste_cost_per_step_usd\":{},\"waste_cost_per_trillion_tokens_usd\":{},"
      "\"warnings\":{}}}",
      json_string(r.model), json_string(r.engine), json_string(r.expansion), r.gpus, c.par.tp,
      c.par.pp, c.par.dp, c.par.ep, static_cast<int>(c.par.zero), c.global_batch, c.micro_batch,
      c.sequence_length(), r.tokens_per_iteration, num(r.iteration.seconds()),
      num(b.compute.seconds()), num(b.tp.seconds()), num(b.ep.seconds()), num(b.pp.seconds()),
      num(b.bubble.seconds()), num(b.dp.seconds()), num(b.imbalance.seconds()),
      num(b.straggler.seconds()), num(r.mfu), num(r.tokens_per_second), num(r.gpu_hours_per_step),
      num(r.cost_per_step_usd), num(r.gpu_hours_per_trillion_tokens),
      num(r.cost_per_trillion_tokens_usd), r.memory.weights.count(), r.memory.gradients.count(),
      r.memory.optimizer.count(), r.memory.activations.count(), r.memory.total().count(),
      r.hbm.count(), r.trials, c.seed, trials, num(r.p50.seconds()), num(r.p99.seconds()),
      num(r.max.seconds()), num(r.mean.seconds()), num(r.waste_gpu_seconds), num(r.waste_fraction),
      num(r.waste_cost_per_step_usd), num(r.waste_cost_per_trillion_tokens_usd), warnings);
}

}  // namespace lockstep
