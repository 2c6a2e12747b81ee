// The training section of `lockstep run`: the scenario's `job:` simulated on each variant's
// cluster by the workload layer (simulate_training), turned into the report's Training record
// (training.hpp) and the busiest links' heat map.
#include <algorithm>

#include "lockstep/core/error.hpp"
#include "lockstep/report/trace.hpp"
#include "lockstep/report/training.hpp"
#include "lockstep/report/why.hpp"
#include "lockstep/scenario/collective_sweep.hpp"
#include "lockstep/scenario/engines.hpp"
#include "lockstep/workload/train_config.hpp"
#include "lockstep/workload/training.hpp"
#include "run_sections.hpp"

namespace lockstep::report {
namespace {

std::optional<LinkHeatmap> to_heatmap(const TrainResult& r, const TrainConfig& config,
                                      const ReportOptions& options) {
  if (r.links.empty()) return std::nullopt;
  LinkHeatmap h;
  // The links are recorded from the traced run: the first noisy trial when there is noise.
  h.source = config.noisy() ? "first trial of the training step" : "noise-free training step";
  std::size_t longest = 0;
  for (const auto& track : r.links) longest = std::max(longest, track.utilisation.size());
  if (longest == 0) return std::nullopt;
  // Every track shares the sample period; averaging k samples per bucket widens it k-fold.
  const std::size_t buckets = std::min<std::size_t>(longest, options.heatmap_buckets);
  const double period_us = r.links.front().period.microseconds();
  h.bucket_us = period_us * static_cast<double>(longest) / static_cast<double>(buckets);
  h.step_us = period_us * static_cast<double>(longest);  // the engine samples the whole run
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
    std::vector<float> coarse, queue;
    coarse.reserve(n / k + 1);
    for (std::size_t lo = 0; lo < n; lo += k) {
      const std::size_t hi = std::min(n, lo + k);
      double sum = 0;
      for (std::size_t i = lo; i < hi; ++i) sum += track.utilisation[i];
      coarse.push_back(static_cast<float>(sum / static_cast<double>(hi - lo)));
      // A queue's peak stays the peak of the coarser period.
      if (hi <= track.queue_bytes.size())
        queue.push_back(
            *std::max_element(track.queue_bytes.begin() + static_cast<std::ptrdiff_t>(lo),
                              track.queue_bytes.begin() + static_cast<std::ptrdiff_t>(hi)));
    }
    track.utilisation = std::move(coarse);
    track.queue_bytes = std::move(queue);
    track.events = coarsen_events(track.events, k);
    track.period = track.period * static_cast<std::int64_t>(k);
  }
}

}  // namespace

void run_training(const RunInput& input, const ReportOptions& options, const BuildResult& cluster,
                  Variant& variant, std::string* trace_json, ProgressHook* progress) {
  TrainConfig config = parse_train_config(*input.job);
  if (!input.job->has("seed")) config.seed = input.seed;  // the scenario's master seed
  config.pxn = collectives_pxn(input.collectives);
  if (!cluster.graph) {
    input.job->fail("the cluster is too large to build as a graph, so no training step can run");
  }
  SimulateOptions simulate;
  simulate.record_timeline = true;  // also what fills the busiest links' tracks
  // Only the first variant's trace is written: the others record their heat map only when the
  // step runs every micro-batch anyway, and else fast-forward (docs/training.md).
  simulate.record_unless_fast_forwarded = trace_json == nullptr;
  simulate.busiest_links = options.busiest_links;
  simulate.engines = scenario_engines(input.packet);
  // The training step is one step of run's bar: the noise-free step and each trial share it.
  StepShare steps(progress);
  simulate.progress = steps.hook();
  if (progress)
    simulate.on_step = [&steps](std::uint32_t done, std::uint32_t total) { steps.at(done, total); };
  TrainResult result = simulate_training(*cluster.graph, config, simulate);
  variant.training = training_record(result, config);
  variant.heatmap = to_heatmap(result, config, options);
  run_sensitivity(*cluster.graph, config, simulate.engines, variant);
  for (const auto& warning : result.warnings) variant.notes.push_back("job: " + warning);
  if (result.expanded_micro_batches < config.micro_batches() && trace_json == nullptr) {
    variant.notes.push_back(
        "job: no link heat map: the step's steady phase was fast-forwarded (only the first "
        "variant records every micro-batch)");
  }
  if (trace_json != nullptr) {
    coarsen_link_tracks(result.links);
    *trace_json = training_trace_json(result);
  }
}

}  // namespace lockstep::report
