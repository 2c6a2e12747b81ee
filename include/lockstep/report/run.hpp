#pragma once
// The main job behind `lockstep run`: for every variant of a scenario, build the cluster (bill of
// materials), run the collective sweeps and the training step the scenario names, and gather
// everything into RunResults (plus the Perfetto trace of a training step). Computation only:
// writing files is the caller's business (report/output.hpp), so an interrupted run has nothing
// to clean up but staged files.
//
//   RunInput in{...sections of load_scenario(path)...};
//   Progress progress(false, count_steps(in));
//   RunArtifacts out = run_scenario(in, progress);
#include <cstdint>
#include <optional>
#include <string>

#include "lockstep/config/arg_node.hpp"
#include "lockstep/core/memory_budget.hpp"
#include "lockstep/report/progress.hpp"
#include "lockstep/report/results.hpp"
#include "lockstep/report/variants.hpp"
#include "lockstep/scenario/scenario.hpp"
#include "lockstep/topology/builder.hpp"

namespace lockstep::report {

struct RunInput {
  std::string title;          // the scenario's name (report.title overrides it)
  std::string scenario_path;  // as given on the command line
  std::string scenario_text;  // the file's text, shown in the report
  std::string lockstep_version;
  std::uint64_t seed = 1;
  ArgNode cluster;
  std::optional<ArgNode> engine;
  std::optional<ArgNode> packet;  // packet-engine settings, for runs on engine "packet"
  std::optional<ArgNode> collectives;
  std::optional<ArgNode> job;
  std::optional<ArgNode> variants;
  std::optional<ArgNode> report;
};

/// A scenario's sections as run input; `text` is the file's text as read (once: it may be a
/// pipe), `path` the path given.
RunInput run_input(const Scenario& scenario, std::string text, std::string path,
                   std::string lockstep_version);

/// The `report:` section (docs/report.md).
struct ReportOptions {
  std::string title;                   // empty: the scenario's name
  std::uint32_t busiest_links = 12;    // rows of the link heat map
  std::uint32_t heatmap_buckets = 60;  // time columns of the heat map (finer series are averaged)
};
ReportOptions parse_report_options(const std::optional<ArgNode>& section);

struct RunArtifacts {
  RunResults results;
  std::string trace_json;  // Perfetto trace of the first variant's training step; empty if none
};

/// `input` with the variant's (or sweep point's) values substituted into its sections; `seed`
/// takes an integer. Throws InputError at the value for a path the scenario lacks.
RunInput apply_variant(const RunInput& input, const VariantSpec& variant);

/// Progress steps run_scenario will take (per variant: the topology, each sweep, the training).
std::uint64_t count_steps(const RunInput& input);

/// What run_scenario will hold at most (its largest variant: graph, sweep state, training
/// expansion and timeline) and the packet events of every variant, from the sections' sizes.
RunEstimate estimate_run(const RunInput& input);

/// Reads and checks every section of one variant's input (`variants:` aside) and builds its
/// cluster, simulating nothing: what run_scenario does for each variant before any runs.
BuildResult check_run_input(const RunInput& input);

/// Runs everything. Throws InputError (naming the variant, the field and file:line:column) for
/// bad input in any section. Every variant is checked before any runs; each then holds its
/// cluster only while it runs, so memory is the largest variant's whatever their count.
RunArtifacts run_scenario(const RunInput& input, Progress& progress);

/// Averages `series` down to at most `buckets` values (each output value the mean of a run of
/// consecutive inputs); shorter series come back unchanged.
std::vector<double> downsample(const std::vector<double>& series, std::size_t buckets);

}  // namespace lockstep::report
