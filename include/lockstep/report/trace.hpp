#pragma once
// Chrome / Perfetto trace-event JSON of a simulated training iteration: open the file in
// ui.perfetto.dev or chrome://tracing. One process per recorded rank ("rank 12") with a thread
// per stream (compute chain, data-parallel communication, pipeline sends), every kernel and
// collective a complete ("X") slice with its name; one more process with a counter track per
// busiest link (utilisation 0..1). Timestamps are microseconds with picosecond decimals, so the
// file is byte-identical for identical inputs.
//
//   TrainResult r = simulate_training(topo, config, {.record_timeline = true});
//   report::write_training_trace(r, "step.json");
#include <filesystem>
#include <string>

#include "lockstep/report/results.hpp"
#include "lockstep/workload/training.hpp"

namespace lockstep::report {

/// The trace as a JSON text ({"traceEvents": [...], "displayTimeUnit": "ns"}).
std::string training_trace_json(const TrainResult& result);

/// Writes training_trace_json to `path` atomically (report/output.hpp's StagedOutput); an
/// unwritable path is an InputError naming "trace".
void write_training_trace(const TrainResult& result, const std::string& path);

/// `collective --trace`: the busiest links' counter tracks of each sweep's largest size (flow
/// and packet engines), named "<op>: <link>" when there are several sweeps, in one process.
std::string collective_trace_json(const std::vector<Sweep>& sweeps);
void write_collective_trace(const std::vector<Sweep>& sweeps, const std::string& path);

/// True when the file at `path` begins as training_trace_json's output does: a file lockstep
/// may replace without --force.
bool is_lockstep_trace(const std::filesystem::path& path);

}  // namespace lockstep::report
