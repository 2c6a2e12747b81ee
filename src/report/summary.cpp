// The per-variant headline figures, and their terminal rendering.
#include "lockstep/report/summary.hpp"

#include <fmt/format.h>

#include "lockstep/report/training.hpp"

namespace lockstep::report {

std::vector<SummaryRow> summarize(const RunResults& results) {
  std::vector<SummaryRow> rows;
  for (const auto& v : results.variants) {
    SummaryRow row;
    row.variant = v.name;
    row.gpus = v.inventory.gpus;
    row.cost_usd = v.inventory.cost_usd;
    row.power_w = v.inventory.power_w;
    row.feasible = v.inventory.feasible;
    if (!v.sweeps.empty() && !v.sweeps.front().rows.empty()) {
      // The largest message is where busbw approaches its plateau, as nccl-tests users read it.
      const SweepRow* largest = &v.sweeps.front().rows.front();
      for (const auto& r : v.sweeps.front().rows) {
        if (r.bytes >= largest->bytes) largest = &r;
      }
      row.peak_busbw_GBps = largest->busbw_GBps;
      row.peak_busbw_op = v.sweeps.front().op;
    }
    if (v.training) {
      const Training& t = *v.training;
      row.iteration_time_us = t.iteration_time_us;
      row.mfu = t.mfu;
      row.tokens_per_s = t.tokens_per_s;
      row.cost_per_step_usd = t.cost_per_step_usd;
      if (t.jitter) {
        row.p99_iteration_time_us = t.jitter->p99_us;
        row.lockstep_waste_usd = t.jitter->lockstep_waste_usd;
      }
    }
    if (v.inference) {
      const auto& inf = *v.inference;
      row.ttft_p50_ms = inf.at("ttft_s").at("p50").get<double>() * 1e3;
      row.ttft_p99_ms = inf.at("ttft_s").at("p99").get<double>() * 1e3;
      row.tpot_p50_ms = inf.at("tpot_s").at("p50").get<double>() * 1e3;
      row.tpot_p99_ms = inf.at("tpot_s").at("p99").get<double>() * 1e3;
      row.output_tokens_per_s_per_gpu = inf.at("output_tokens_per_s_per_gpu").get<double>();
      row.cost_per_million_tokens_usd = inf.at("cost_per_million_tokens_usd").get<double>();
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string summary_text(const RunResults& results) {
  std::string out;
  const std::vector<SummaryRow> rows = summarize(results);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const SummaryRow& s = rows[i];
    const std::optional<Training>& training = results.variants[i].training;
    out += fmt::format("  {:<22} {:>7} GPUs  ${:.2f}M  {:.0f} kW", s.variant, s.gpus,
                       s.cost_usd / 1e6, s.power_w / 1e3);
    if (!s.feasible) out += "  (infeasible)";
    if (s.peak_busbw_GBps) {
      out += fmt::format("  {} busbw {:.1f} GB/s", s.peak_busbw_op, *s.peak_busbw_GBps);
    }
    if (s.iteration_time_us) {
      out += fmt::format("  step {:.3f} s", *s.iteration_time_us / 1e6);
      // Below kTrialsForP99 trials the p99 is the maximum: say so (training.hpp).
      if (training && training->jitter && training->jitter->trials < kTrialsForP99) {
        out += fmt::format(" (max of {} trials {:.3f} s)", training->jitter->trials,
                           training->jitter->max_us / 1e6);
      } else if (s.p99_iteration_time_us) {
        out += fmt::format(" (p99 {:.3f} s)", *s.p99_iteration_time_us / 1e6);
      }
      if (s.mfu) out += fmt::format("  MFU {:.1f}%", *s.mfu * 100);
    }
    if (const auto& inf = results.variants[i].inference) {
      out +=
          fmt::format("  TTFT p99 {:.1f} ms  TPOT p50 {:.2f} ms  {:.0f} tokens/s  ${:.2f}/M tokens",
                      *s.ttft_p99_ms, *s.tpot_p50_ms, (*inf)["output_tokens_per_s"].get<double>(),
                      *s.cost_per_million_tokens_usd);
    }
    out += "\n";
  }
  return out;
}

}  // namespace lockstep::report
