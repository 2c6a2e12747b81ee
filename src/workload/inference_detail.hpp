#pragma once
// The serving simulation's memory and statistics helpers (src/workload/inference*.cpp).
#include <cstdint>
#include <vector>

#include "lockstep/workload/inference.hpp"

namespace lockstep {

constexpr double kGiB = 1024.0 * 1024 * 1024;

/// Blocks of KV cache one attention group holds (docs/inference.md, "Each group's cache and
/// queue"): `kv_cache_tokens` split over the groups, else what HBM leaves on the group's GPUs.
std::uint64_t group_kv_blocks(const InferenceConfig& c, const InferenceStepModel& m);

/// InputError at the field when the weights do not fit in HBM or one sequence of the longest
/// prompt + output does not fit one group's cache.
void check_inference_fit(const InferenceConfig& c, const InferenceStepModel& m);

/// Nearest-rank percentiles, the mean and the maximum of `v`.
Percentiles percentiles(std::vector<double> v);

}  // namespace lockstep
