// `lockstep run`'s orchestration: variants x sections, in a fixed order so that output is
// deterministic, with progress reported between steps.
#include "lockstep/report/run.hpp"

#include <fmt/format.h>

#include <limits>
#include <optional>

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
#include "lockstep/workload/inference.hpp"
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

RunInput run_input(const Scenario& scenario, std::string text, std::string path,
                   std::string lockstep_version) {
  RunInput input;
  input.title = scenario.name;
  input.scenario_path = std::move(path);
  input.scenario_text = std::move(text);
  input.lockstep_version = std::move(lockstep_version);
  input.seed = scenario.seed;
  input.cluster = scenario.cluster;
  input.engine = scenario.engine;
  input.packet = scenario.packet;
  input.collectives = scenario.collectives;
  input.job = scenario.job;
  input.variants = scenario.variants;
  input.report = scenario.report;
  return input;
}

RunInput apply_variant(const RunInput& input, const VariantSpec& variant) {
  RunInput out = input;
  out.variants.reset();
  for (const auto& [key, value] : variant.values) {
    const std::vector<std::string> path = scenario_key_path(key, value, true);
    if (path[0] == "seed") {
      out.seed =
          static_cast<std::uint64_t>(value.as_int(0, std::numeric_limits<std::int64_t>::max()));
    } else if (path[0] == "cluster") {
      std::optional<ArgNode> cluster = out.cluster;
      override_section(cluster, path, value);
      out.cluster = *cluster;
    } else {
      std::optional<ArgNode>& section = path[0] == "engine"        ? out.engine
                                        : path[0] == "packet"      ? out.packet
                                        : path[0] == "collectives" ? out.collectives
                                                                   : out.job;
      override_section(section, path, value);
    }
  }
  return out;
}

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
  std::uint64_t steps = 0;
  const std::vector<VariantSpec> specs = parse_variants(input.variants, keys);
  for (const VariantSpec& spec : specs) {
    for_variant(spec.name, specs.size() > 1, [&] {
      const RunInput in = apply_variant(input, spec);
      steps += 1 + (in.collectives ? count_collective_steps(in) : 0) + (in.job ? 1 : 0);
    });
  }
  return steps;
}

RunEstimate estimate_run(const RunInput& input) {
  std::vector<std::string> keys;
  // Variants run one after another: the largest one's memory, every one's events.
  RunEstimate largest;
  double events = 0;
  const std::vector<VariantSpec> specs = parse_variants(input.variants, keys);
  for (const VariantSpec& spec : specs) {
    // An error in a variant's sections names the variant, as run_scenario's checks do.
    for_variant(spec.name, specs.size() > 1, [&] {
      const RunInput in = apply_variant(input, spec);
      std::vector<CollectiveSweep> sweeps;
      if (in.collectives) {
        const std::string engine =
            in.engine ? parse_engine_name(*in.engine) : std::string("analytical");
        sweeps = parse_collectives_section(*in.collectives, engine);
      }
      std::optional<TrainConfig> job;
      std::optional<InferenceConfig> serve;
      if (in.job && is_inference_job(*in.job)) {
        serve = parse_inference_config(*in.job);
      } else if (in.job) {
        job = parse_train_config(*in.job);
      }
      const Inventory inventory =
          ClusterSource(in.cluster).build(BuildOptions{.want_graph = false}).inventory;
      RunEstimate e;
      e.add("lockstep", kBaseBytes);
      add_graph_estimate(e, inventory.gpus);
      add_sweeps_estimate(e, sweeps, inventory.gpus, inventory.diameter_switch_hops + 1);
      if (job) {
        // A job that may expand in full is small: its graph is built so that the estimate counts
        // NCCL's plans of its collectives, as simulate_training does (memory_estimate.hpp).
        std::optional<Topology> graph;
        CollectiveOpCount count;
        if (counts_collectives_on_cluster(*job)) {
          graph = ClusterSource(in.cluster).build().graph;
          // Its groups are planned on the cluster's GPUs: a job of another size is counted in
          // single rings here and refused when it runs (simulate_training's check).
          if (graph && graph->gpus().size() == job->par.world())
            count = collective_op_count(*graph, true);
        }
        // run records the first variant's timeline and its busiest links' tracks.
        add_training_estimate(e, *job, true, count, parse_report_options(in.report).busiest_links);
        add_sensitivity_estimate(e, inventory.gpus);
      }
      if (serve) add_inference_estimate(e, *serve, true);  // and the first one's steps
      events += e.events;
      if (e.total() > largest.total()) largest = e;
    });
  }
  largest.events = events;
  return largest;
}

BuildResult check_run_input(const RunInput& in) {
  const std::string engine = in.engine ? parse_engine_name(*in.engine) : "analytical";
  const std::vector<CollectiveSweep> sweeps =
      in.collectives ? parse_collectives_section(*in.collectives, engine)
                     : std::vector<CollectiveSweep>{};
  const bool inference = in.job && is_inference_job(*in.job);
  if (inference) parse_inference_config(*in.job);
  const std::optional<TrainConfig> job =
      in.job && !inference ? std::optional<TrainConfig>(parse_train_config(*in.job)) : std::nullopt;
  parse_report_options(in.report);
  BuildResult built = ClusterSource(in.cluster).build();
  const std::optional<Topology>& graph = built.graph;
  if (graph && !sweeps.empty()) {
    const NcclCluster nccl = nccl_cluster(*graph);
    for (const CollectiveSweep& sweep : sweeps) check_sweep(sweep, nccl, &*graph);
  }
  if (job && graph) check_training(*graph, *job);
  // `packet:` against this variant's fabric (its MTU range depends on the medium), even when no
  // sweep uses the packet engine: a section that is written is checked.
  if (in.packet && graph) packet_config_for_topology(&*in.packet, graph->traits().fabric);
  return built;
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
  // the job's degrees fails in a moment, not after every collective sweep has run. Only one
  // variant's cluster is held at a time (it is built again to run), so the count of variants
  // is bounded by time alone.
  std::vector<RunInput> inputs;
  std::optional<BuildResult> kept;  // a lone variant's cluster, not built twice
  for (const VariantSpec& spec : specs) {
    progress.begin(spec.name + ": topology");
    for_variant(spec.name, several, [&] {
      inputs.push_back(apply_variant(input, spec));
      BuildResult built = check_run_input(inputs.back());
      if (!several) kept = std::move(built);
    });
    progress.advance();
  }

  for (std::size_t i = 0; i < specs.size(); ++i) {
    const VariantSpec& spec = specs[i];
    const RunInput& in = inputs[i];
    Variant variant;
    variant.name = spec.name;
    variant.substitutions = spec.shown;
    const BuildResult built =
        kept ? std::move(*kept)
             : for_variant(spec.name, several, [&] { return ClusterSource(in.cluster).build(); });
    variant.inventory = built.inventory;
    if (in.collectives) {
      for_variant(spec.name, several, [&] { run_collectives(in, built, variant, progress); });
    }
    if (in.job && is_inference_job(*in.job)) {
      progress.begin(variant.name + ": inference");
      std::string* trace = results.variants.empty() ? &artifacts.trace_json : nullptr;
      for_variant(spec.name, several, [&] { run_inference(in, built, variant, trace); });
      progress.advance();
    } else if (in.job) {
      progress.begin(variant.name + ": training step");
      // The trace shows the first variant only: one timeline is what a person opens.
      std::string* trace = results.variants.empty() ? &artifacts.trace_json : nullptr;
      for_variant(spec.name, several,
                  [&] { run_training(in, options, built, variant, trace, progress.hook()); });
      progress.advance();
    }
    results.variants.push_back(std::move(variant));
  }
  explain(results);
  return artifacts;
}

}  // namespace lockstep::report
