// The training section of `lockstep run`: the scenario's `job:` simulated on each variant's
// cluster by the workload layer (simulate_training), turned into the report's Training, its
// jitter statistics and the busiest links' heat map.
#include <fmt/format.h>

#include <algorithm>

#include "lockstep/core/error.hpp"
#include "lockstep/report/trace.hpp"
#include "lockstep/scenario/engines.hpp"
#include "lockstep/workload/train_config.hpp"
#include "lockstep/workload/training.hpp"
#include "run_sections.hpp"

namespace lockstep::report {
namespace {

std::string parallelism_text(const TrainConfig& c) {
  std::string text = fmt::format("TP{} PP{} DP{}", c.par.tp, c.par.pp, c.par.dp);
  if (c.par.ep > 1) text += fmt::format(" EP{}", c.par.ep);
  if (c.par.fsdp) {
    text += " FSDP";
  } else if (c.par.zero != ZeroStage::None) {
    text += fmt::format(" ZeRO-{}", static_cast<int>(c.par.zero));
  }
  return text;
}

Training to_training(const TrainResult& r, const TrainConfig& config) {
  Training t;
  t.model = r.model;
  t.parallelism = parallelism_text(config);
  t.gpus = r.gpus;
  t.iteration_time_us = r.iteration.microseconds();
  // The slices that add up to the noise-free iteration (straggler waste is not one of them).
  const std::pair<const char*, Time> parts[] = {
      {"compute", r.breakdown.compute},        {"exposed_tp", r.breakdown.tp},
      {"exposed_ep", r.breakdown.ep},          {"exposed_pp", r.breakdown.pp},
      {"pipeline_bubble", r.breakdown.bubble}, {"exposed_dp", r.breakdown.dp},
      {"imbalance", r.breakdown.imbalance}};
  for (const auto& [name, time] : parts) {
    if (time > Time::zero()) t.breakdown.push_back({name, time.microseconds()});
  }
  t.mfu = r.mfu;
  t.tokens_per_s = r.tokens_per_second;
  t.gpu_hours_per_step = r.gpu_hours_per_step;
  t.cost_per_step_usd = r.cost_per_step_usd;
  t.cost_per_trillion_tokens_usd = r.cost_per_trillion_tokens_usd;
  if (r.trials > 1 && !r.trial_times.empty()) {
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
    t.jitter = std::move(j);
  }
  return t;
}

std::optional<LinkHeatmap> to_heatmap(const TrainResult& r, const ReportOptions& options) {
  if (r.links.empty()) return std::nullopt;
  LinkHeatmap h;
  h.source = "noise-free training step";
  std::size_t longest = 0;
  for (const auto& track : r.links) longest = std::max(longest, track.utilisation.size());
  if (longest == 0) return std::nullopt;
  // Every track shares the sample period; averaging k samples per bucket widens it k-fold.
  const std::size_t buckets = std::min<std::size_t>(longest, options.heatmap_buckets);
  const double period_us = r.links.front().period.microseconds();
  h.bucket_us = period_us * static_cast<double>(longest) / static_cast<double>(buckets);
  for (const auto& track : r.links) {
    if (h.links.size() >= options.busiest_links) break;
    std::vector<double> series(track.utilisation.begin(), track.utilisation.end());
    series.resize(longest, 0.0);
    h.links.push_back(track.name);
    h.utilisation.push_back(downsample(series, buckets));
  }
  return h;
}

// The trace's counter tracks need no finer grain than a person can see in ui.perfetto.dev:
// averaging blocks of k samples (k = ceil(n / kMaxTraceSamples)) keeps a 20 s step sampled every
// 10 us from becoming millions of counter events (gigabytes of JSON).
constexpr std::size_t kMaxTraceSamples = 2000;

void coarsen_link_tracks(std::vector<LinkTrack>& links) {
  for (LinkTrack& track : links) {
    const std::size_t n = track.utilisation.size();
    if (n <= kMaxTraceSamples) continue;
    const std::size_t k = (n + kMaxTraceSamples - 1) / kMaxTraceSamples;
    std::vector<float> coarse;
    coarse.reserve(n / k + 1);
    for (std::size_t lo = 0; lo < n; lo += k) {
      const std::size_t hi = std::min(n, lo + k);
      double sum = 0;
      for (std::size_t i = lo; i < hi; ++i) sum += track.utilisation[i];
      coarse.push_back(static_cast<float>(sum / static_cast<double>(hi - lo)));
    }
    track.utilisation = std::move(coarse);
    track.period = track.period * static_cast<std::int64_t>(k);
  }
}

}  // namespace

void run_training(const RunInput& input, const ReportOptions& options, const BuildResult& cluster,
                  Variant& variant, std::string* trace_json) {
  TrainConfig config = parse_train_config(*input.job);
  if (!input.job->has("seed")) config.seed = input.seed;  // the scenario's master seed
  if (!cluster.graph) {
    input.job->fail("the cluster is too large to build as a graph, so no training step can run");
  }
  SimulateOptions simulate;
  simulate.record_timeline = true;  // also what fills the busiest links' tracks
  simulate.busiest_links = options.busiest_links;
  simulate.engines = scenario_engines(input.packet);
  TrainResult result = simulate_training(*cluster.graph, config, simulate);
  variant.training = to_training(result, config);
  variant.heatmap = to_heatmap(result, options);
  for (const auto& warning : result.warnings) variant.notes.push_back("job: " + warning);
  if (trace_json != nullptr) {
    coarsen_link_tracks(result.links);
    *trace_json = training_trace_json(result);
  }
}

}  // namespace lockstep::report
