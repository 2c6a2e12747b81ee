#include "lockstep/workload/waste.hpp"

#include <algorithm>
#include <cmath>

namespace lockstep {

Time barrier_waste(std::span<const Time> arrivals) {
  if (arrivals.empty()) return Time::zero();
  const Time last = *std::max_element(arrivals.begin(), arrivals.end());
  Time waste = Time::zero();
  for (Time a : arrivals) waste += last - a;
  return waste;
}

double lockstep_waste_gpu_seconds(Time noisy, Time baseline, std::span<const Time> extra_compute) {
  const Time slowdown = noisy - baseline;
  double total = 0;
  for (Time own : extra_compute) total += std::max(Time::zero(), slowdown - own).seconds();
  return total;
}

Time percentile(std::vector<Time> values, double q) {
  if (values.empty()) return Time::zero();
  std::sort(values.begin(), values.end());
  // Nearest rank: the smallest value with at least q of the samples at or below it.
  const double rank = std::ceil(q * static_cast<double>(values.size()));
  const std::size_t index = rank < 1 ? 0 : static_cast<std::size_t>(rank) - 1;
  return values[std::min(index, values.size() - 1)];
}

}  // namespace lockstep
