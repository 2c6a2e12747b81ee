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

namespace lockstep::bench {

// ../shared/calibration beside the source tree (LOCKSTEP_SOURCE_DIR, set by the bench targets).
inline std::filesystem::path calibration_dir() {
  return std::filesystem::path(LOCKSTEP_SOURCE_DIR) / ".." / "shared" / "calibration";
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size();
  return m % 2 ? v[m / 2] : (v[m / 2 - 1] + v[m / 2]) / 2;
}
// Nearest rank: the smallest error at least 90% of the rows do not exceed.
inline double p90(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const auto rank = static_cast<std::size_t>(std::ceil(0.9 * static_cast<double>(v.size())));
  return v[std::max<std::size_t>(rank, 1) - 1];
}
inline std::size_t over_25(const std::vector<double>& v) {
  return static_cast<std::size_t>(
      std::count_if(v.begin(), v.end(), [](double e) { return e > 25; }));
}

}  // namespace lockstep::bench
