#pragma once
// An inference job's outputs, with the training report's conventions: a text summary with units,
// the `inference` object of results.json (docs/results.schema.json) and a Perfetto trace of each
// replica's engine steps (docs/inference.md).
#include <nlohmann/json.hpp>
#include <string>

#include "lockstep/workload/inference.hpp"

namespace lockstep::report {

std::string format_inference_text(const InferenceResult& result, const InferenceConfig& config);
nlohmann::ordered_json inference_to_json(const InferenceResult& result,
                                         const InferenceConfig& config);
/// Trace-event JSON: a process per replica, a slice per engine step (prefill or decode, its batch
/// and tokens in the arguments), opened by lockstep's signature like training's trace.
std::string inference_trace_json(const InferenceResult& result);

}  // namespace lockstep::report
