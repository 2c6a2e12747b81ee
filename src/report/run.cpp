// `lockstep run`'s orchestration: variants x sections, in a fixed order so that output is
// deterministic, with progress reported between steps.
#include "lockstep/report/run.hpp"

#include <fmt/format.h>

#include "lockstep/core/error.hpp"
#include "lockstep/engine/packet/packet_config.hpp"
#include "lockstep/nccl/cluster.hpp"
#include "lockstep/nccl/sweep.hpp"
#include "lockstep/report/variants.hpp"
#include "lockstep/report/why.hpp"
#include "lockstep/scenario/cluster_source.hpp"
#include "lockstep/scenario/collective_sweep.hpp"
#include "lockstep/scenario/engines.hpp"
#include "lockstep/scenario/memory_estimate.hpp"
#include "lockstep/workload/train_config.hpp"
#include "lockstep/workload/training.hpp"
#include "run_sections.hpp"

namespace lockstep::report {
namespace {

// Runs `fn`, prefixing the message of any InputError with the variant's name so that the user
// knows which substitution broke.
template <typename Fn>
auto for_variant(const std::string& name, bool several, Fn&& fn) -> decltype(fn()) {
  if (!several) return fn();
  try {
    return fn();
  } catch (const InputError& e) {
    throw InputError(e.field(), fmt::format("in variant '{}': {}", name, e.bare_message()),
                     e.where());
  }
}

}  // namespace

ReportOptions parse_report_options(const std::optional<ArgNode>& section) {
  ReportOptions options;
  if (!section) return options;
  options.title = section->get_string("title", "");
  options.busiest_links = static_cast<std::uint32_t>(section->get_int("busiest_links", 12, 1, 64));
  options.heatmap_buckets =
      static_cast<std::uint32_t>(section->get_int("heatmap_buckets", 60, 4, 400));
  section->check_all_used();
  return options;
}

std::uint64_t count_steps(const RunInput& input) {
  std::vector<std::string> keys;
  const std::uint64_t variants = parse_variants(input.variants, keys).size();
  const std::uint64_t per_variant =
      1 + (input.collectives ? count_collective_steps(input) : 0) + (input.job ? 1 : 0);
  return variants * per_variant;
}

RunEstimate estimate_run(const RunInput& input) {
  std::vector<std::string> keys;
  std::vector<CollectiveSweep> sweeps;
  if (input.collectives) {
    const std::string engine =
        input.engine ? parse_engine_name(*input.engine) : std::string("analytical");
    sweeps = parse_collectives_section(*input.collectives, engine);
  }
  std::optional<TrainConfig> job;
  if (input.job) job = parse_train_config(*input.job);
  // Variants run one after another: the largest one's memory, every one's events.
  RunEstimate largest;
  double events = 0;
  const std::vector<VariantSpec> specs = parse_variants(input.variants, keys);
  for (const VariantSpec& spec : specs) {
    // An error in a variant's cluster names the variant, as run_scenario's checks do.
    const Inventory inventory = for_variant(spec.name, specs.size() > 1, [&] {
      return ClusterSource(apply_variant(input.cluster, spec))
          .build(BuildOptions{.want_graph = false})
          .inventory;
    });
    RunEstimate e;
    e.add("lockstep", kBaseBytes);
    add_graph_estimate(e, inventory.gpus);
    add_sweeps_estimate(e, sweeps, inventory.gpus, inventory.diameter_switch_hops + 1);
    if (job) add_training_estimate(e, *job, true);  // run records the first variant's timeline
    events += e.events;
    if (e.total() > largest.total()) largest = e;
  }
  largest.events = events;
  return largest;
}

std::vector<double> downsample(const std::vector<double>& series, std::size_t buckets) {
  if (buckets == 0 || series.size() <= buckets) return series;
  std::vector<double> out(buckets, 0.0);
  const std::size_t n = series.size();
  for (std::size_t b = 0; b < buckets; ++b) {
    // Bucket b averages inputs [b*n/buckets, (b+1)*n/buckets): every input lands in one bucket.
    const std::size_t lo = b * n / buckets;
    const std::size_t hi = (b + 1) * n / buckets;
    double sum = 0;
    for (std::size_t i = lo; i < hi; ++i) sum += series[i];
    out[b] = hi > lo ? sum / static_cast<double>(hi - lo) : 0.0;
  }
  return out;
}

RunArtifacts run_scenario(const RunInput& input, Progress& progress) {
  const ReportOptions options = parse_report_options(input.report);
  RunArtifacts artifacts;
  RunResults& results = artifacts.results;
  results.title = options.title.empty() ? input.title : options.title;
  results.scenario_path = input.scenario_path;
  results.scenario_text = input.scenario_text;
  results.lockstep_version = input.lockstep_version;
  results.seed = input.seed;
  const std::vector<VariantSpec> specs = parse_variants(input.variants, results.variant_keys);
  const bool several = specs.size() > 1;

  // The whole scenario is read and checked before anything is simulated: a typo in `job:` or
  // `engine:`, a sweep fault on a link the cluster lacks, or a variant whose cluster does not fit
  // the job's degrees fails in a moment, not after every collective sweep has run.
  const std::string engine = input.engine ? parse_engine_name(*input.engine) : "analytical";
  const std::vector<CollectiveSweep> sweeps =
      input.collectives ? parse_collectives_section(*input.collectives, engine)
                        : std::vector<CollectiveSweep>{};
  const std::optional<TrainConfig> job =
      input.job ? std::optional<TrainConfig>(parse_train_config(*input.job)) : std::nullopt;
  std::vector<BuildResult> clusters;
  for (const VariantSpec& spec : specs) {
    progress.begin(spec.name + ": topology");
    clusters.push_back(for_variant(spec.name, several, [&] {
      return ClusterSource(apply_variant(input.cluster, spec)).build();
    }));
    const std::optional<Topology>& graph = clusters.back().graph;
    if (graph && !sweeps.empty()) {
      const NcclCluster nccl = nccl_cluster(*graph);
      for (const CollectiveSweep& sweep : sweeps) {
        for_variant(spec.name, several, [&] { check_sweep(sweep, nccl, &*graph); });
      }
    }
    if (job && graph) {
      for_variant(spec.name, several, [&] { check_training(*graph, *job); });
    }
    // `packet:` against this variant's fabric (its MTU range depends on the medium), even when
    // no sweep uses the packet engine: a section that is written is checked.
    if (input.packet && graph) {
      for_variant(spec.name, several,
                  [&] { packet_config_for_topology(&*input.packet, graph->traits().fabric); });
    }
    progress.advance();
  }

  for (std::size_t i = 0; i < specs.size(); ++i) {
    const VariantSpec& spec = specs[i];
    Variant variant;
    variant.name = spec.name;
    variant.substitutions = spec.shown;
    const BuildResult& built = clusters[i];
    variant.inventory = built.inventory;
    if (input.collectives) {
      for_variant(spec.name, several, [&] { run_collectives(input, built, variant, progress); });
    }
    if (input.job) {
      progress.begin(variant.name + ": training step");
      // The trace shows the first variant only: one timeline is what a person opens.
      std::string* trace = results.variants.empty() ? &artifacts.trace_json : nullptr;
      for_variant(spec.name, several,
                  [&] { run_training(input, options, built, variant, trace, progress.hook()); });
      progress.advance();
    }
    results.variants.push_back(std::move(variant));
  }
  explain(results);
  return artifacts;
}

}  // namespace lockstep::report
