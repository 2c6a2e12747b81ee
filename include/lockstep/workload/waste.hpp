#pragma once
// Lockstep accounting: how much GPU time synchronisation wastes, and order statistics of
// Monte Carlo trials. docs/training.md defines each quantity.
#include <span>
#include <vector>

#include "lockstep/core/units.hpp"

namespace lockstep {

/// GPU-time spent waiting at a barrier: every rank idles from its own arrival until the last
/// arrival. Example: 10,000 ranks, one 20 us late: 9,999 x 20 us = 0.19998 GPU-seconds.
Time barrier_waste(std::span<const Time> arrivals);

/// Lockstep waste of a noisy iteration against its noise-free baseline: each rank loses the
/// iteration's slowdown (noisy - baseline) minus the part it spent on its own extra compute
/// (noise in its own kernels is its own cost, not waiting); never negative per rank.
/// Returns GPU-seconds. `extra_compute[r]` = rank r's noisy minus ideal kernel time.
double lockstep_waste_gpu_seconds(Time noisy, Time baseline, std::span<const Time> extra_compute);

/// Nearest-rank percentile (q in [0, 1]) of unsorted values; zero for an empty set.
Time percentile(std::vector<Time> values, double q);

}  // namespace lockstep
