#pragma once
// The answers in one screen: one row per variant with the figures people compare first. Used by
// the report's summary, results.json's "summary", summary.csv and the lines `lockstep run` prints.
#include <optional>
#include <string>
#include <vector>

#include "lockstep/report/results.hpp"

namespace lockstep::report {

struct SummaryRow {
  std::string variant;
  std::uint64_t gpus = 0;
  double cost_usd = 0;
  double power_w = 0;
  bool feasible = true;
  // Bus bandwidth of the largest message of the first sweep (the nccl-tests headline figure).
  std::optional<double> peak_busbw_GBps;
  std::string peak_busbw_op;
  std::optional<double> iteration_time_us;
  std::optional<double> p99_iteration_time_us;
  std::optional<double> mfu;
  std::optional<double> tokens_per_s;
  std::optional<double> cost_per_step_usd;
  std::optional<double> lockstep_waste_usd;
  // An inference job's headline (docs/inference.md): latency percentiles in ms, output tokens/s
  // per GPU, and USD per million output tokens.
  std::optional<double> ttft_p50_ms, ttft_p99_ms, tpot_p50_ms, tpot_p99_ms;
  std::optional<double> output_tokens_per_s_per_gpu;
  std::optional<double> cost_per_million_tokens_usd;
};

std::vector<SummaryRow> summarize(const RunResults& results);

/// A few plain lines for the terminal, e.g. "fabric=ib-ndr  256 GPUs  $9.1M  busbw 361 GB/s ...".
std::string summary_text(const RunResults& results);

}  // namespace lockstep::report
