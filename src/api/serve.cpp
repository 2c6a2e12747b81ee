// `lockstep serve`: an inference job of a scenario on its cluster (docs/inference.md).
#include <filesystem>

#include "lockstep/api/commands.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/report/inference.hpp"
#include "lockstep/report/output.hpp"
#include "lockstep/report/trace.hpp"
#include "lockstep/scenario/collective_sweep.hpp"
#include "lockstep/scenario/memory_estimate.hpp"
#include "lockstep/scenario/scenario.hpp"

namespace lockstep::api {

std::optional<ServeRun> run_serve(const ServeRequest& r) {
  const std::optional<Scenario> scenario = load_cluster_scenario(r.cluster, "a scenario file");
  if (!scenario) throw InputError("scenario", "lockstep serve needs a scenario file with a job:");
  if (!scenario->job) {
    throw InputError("job", "the scenario has no job: section", {r.cluster.scenario});
  }
  ArgNode job = *scenario->job;
  const ArgNode* type = job.find("type");
  if (type == nullptr || type->text() != "inference") {
    (type ? *type : job)
        .fail(
            "lockstep serve runs `type: inference` jobs (lockstep train runs "
            "training steps)");
  }
  if (scenario->seed_given && !job.has("seed")) {
    job.set("seed", ArgNode::scalar(std::to_string(scenario->seed), "seed"));
  }
  ServeRun run{.config = parse_inference_config(job)};
  run.config.pxn = collectives_pxn(scenario->collectives);
  std::filesystem::path trace_path;
  if (!r.trace.empty()) {
    trace_path = r.trace;
  } else if (!run.config.trace_path.empty()) {
    trace_path = report::resolve_scenario_output(job.at("trace"));
  }
  std::error_code ec;
  if (!trace_path.empty() && !r.force && std::filesystem::exists(trace_path, ec) &&
      !report::is_lockstep_trace(trace_path)) {
    throw InputError(r.trace.empty() ? "job.trace" : "--trace",
                     "'" + trace_path.string() +
                         "' exists and is not a trace lockstep wrote; give --force to replace it");
  }
  const ClusterSource source(&*scenario, r.cluster);
  // The estimate before the graph and the simulation allocate (scenario/memory_estimate.hpp).
  RunEstimate estimate;
  estimate.add("lockstep", kBaseBytes);
  add_graph_estimate(estimate, source.build(BuildOptions{.want_graph = false}).inventory.gpus);
  add_inference_estimate(estimate, run.config, !trace_path.empty());
  if (!admit(estimate, r.budget, "try fewer requests (requests.count) or a larger max_batch")) {
    return std::nullopt;
  }
  std::optional<Topology> topo = source.build().graph;
  if (!topo) source.args().fail("the cluster is too large to build as a graph");
  // Checked writable before the simulation, written in one piece after it (as train's trace).
  std::optional<report::StagedOutput> out;
  if (!trace_path.empty()) {
    out.emplace(trace_path.has_parent_path() ? trace_path.parent_path() : ".",
                r.trace.empty() ? "job.trace" : "--trace");
  }
  InferenceOptions options;
  options.record_steps = !trace_path.empty();
  run.result = simulate_inference(*topo, run.config, options);
  if (!trace_path.empty()) {
    out->add(trace_path.filename().string(), report::inference_trace_json(run.result));
    out->commit();
    run.trace_path = trace_path.string();
  }
  return run;
}

}  // namespace lockstep::api
