// What the calibration benches share: where the public measurements live, and the accuracy
// figures they print over their rows' |relative errors| (%): median, p90 (nearest rank) and the
// count over 25%. Shared by bench_calibration and bench_training so that both tables mean the
// same by each figure.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <filesystem>
#include <vector>

#include "lockstep/core/error_stats.hpp"

namespace lockstep::bench {

// ../shared/calibration beside the source tree (LOCKSTEP_SOURCE_DIR, set by the bench targets).
inline std::filesystem::path calibration_dir() {
  return std::filesystem::path(LOCKSTEP_SOURCE_DIR) / ".." / "shared" / "calibration";
}

using lockstep::median;
using lockstep::p90;
inline std::size_t over_25(const std::vector<double>& v) {
  return static_cast<std::size_t>(
      std::count_if(v.begin(), v.end(), [](double e) { return e > 25; }));
}

}  // namespace lockstep::bench
