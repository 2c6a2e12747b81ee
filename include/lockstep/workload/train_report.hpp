#pragma once
// Printing a TrainResult: the human-readable summary `lockstep train` prints, and a JSON object
// (stable key order, every quantity with its unit in the key name) for `--format json` and for
// `lockstep run`'s reports.
#include <string>

#include "lockstep/workload/train_config.hpp"
#include "lockstep/workload/training.hpp"

namespace lockstep {

/// Multi-line text: configuration, iteration time and breakdown, MFU, throughput, cost, memory,
/// jitter statistics and warnings.
std::string format_training_text(const TrainResult& result, const TrainConfig& config);

/// One JSON object (no trailing newline).
std::string training_result_json(const TrainResult& result, const TrainConfig& config);

}  // namespace lockstep
