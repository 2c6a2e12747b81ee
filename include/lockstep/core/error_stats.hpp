#pragma once
// The accuracy figures lockstep prints over a set of |relative errors| (%): the median and the
// nearest-rank p90. One definition for `calibrate --from` and the calibration benches, so that
// both tables mean the same by each figure.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace lockstep {

/// The median (the mean of the two middle values for an even count); `v` must not be empty.
inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size();
  return m % 2 ? v[m / 2] : (v[m / 2 - 1] + v[m / 2]) / 2;
}

/// Nearest rank: the smallest value at least 90% of `v` do not exceed; `v` must not be empty.
inline double p90(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const auto rank = static_cast<std::size_t>(std::ceil(0.9 * static_cast<double>(v.size())));
  return v[std::max<std::size_t>(rank, 1) - 1];
}

}  // namespace lockstep
