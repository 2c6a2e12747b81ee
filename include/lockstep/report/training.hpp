#pragma once
// A simulated training step as the report shows it: the record results.json's `training` object
// and `lockstep train --format json` both print (built here, from the TrainResult, in one place),
// and the human-readable summary `lockstep train` prints.
//
//   const TrainResult r = simulate_training(topo, config);
//   fmt::print("{}", json_text(training_to_json(training_record(r, config))));
#include <cstdint>
#include <string>

#include "lockstep/report/results.hpp"
#include "lockstep/workload/model.hpp"
#include "lockstep/workload/train_config.hpp"
#include "lockstep/workload/training.hpp"

namespace lockstep::report {

/// Trials from which a p99 is shown: the nearest-rank p99 of n trials, the ceil(0.99 n)-th
/// smallest, is the maximum for every n < 100 (ceil(0.99 n) = n), so below 100 the text and the
/// report name the maximum instead.
inline constexpr std::uint64_t kTrialsForP99 = 100;

/// `model` as the `model:` map that gives it (docs/scenario-job.md): every key of model_keys()
/// but `preset`, in that order, with its value (0 where a size is derived: head_dim 0 is
/// hidden / heads, v_head_dim 0 the head size, expert_ffn 0 the ffn, attention_params 0 the
/// formula's count). parse_model of this map gives `model` back.
nlohmann::ordered_json model_map_json(const ModelSpec& model);

/// The report's record of `result`: times in microseconds, the breakdown's non-zero slices
/// (which add up to the iteration time), jitter statistics when more than one trial ran, and the
/// configuration that produced it.
Training training_record(const TrainResult& result, const TrainConfig& config);

/// Multi-line text: configuration, iteration time and breakdown, MFU, throughput, cost, memory,
/// jitter statistics and warnings.
std::string format_training_text(const TrainResult& result, const TrainConfig& config);

}  // namespace lockstep::report
