// `lockstep run` on a scenario whose job is `type: inference`: the serving simulation on each
// variant's cluster, its results.json object and the first variant's trace of engine steps.
#include "lockstep/report/inference.hpp"
#include "lockstep/scenario/collective_sweep.hpp"
#include "lockstep/workload/inference.hpp"
#include "run_sections.hpp"

namespace lockstep::report {

void run_inference(const RunInput& input, const BuildResult& cluster, Variant& variant,
                   std::string* trace_json) {
  InferenceConfig config = parse_inference_config(*input.job);
  if (!input.job->has("seed")) config.seed = input.seed;  // the scenario's master seed
  config.pxn = collectives_pxn(input.collectives);
  if (!cluster.graph) {
    input.job->fail("the cluster is too large to build as a graph, so no inference job can run");
  }
  InferenceOptions options;
  options.record_steps = trace_json != nullptr;
  const InferenceResult result = simulate_inference(*cluster.graph, config, options);
  variant.inference = inference_to_json(result, config);
  for (const auto& warning : result.warnings) variant.notes.push_back("job: " + warning);
  if (trace_json != nullptr) *trace_json = inference_trace_json(result);
}

}  // namespace lockstep::report
