// What the benchmark process has used, from the kernel (getrusage): CPU time and peak resident
// memory. Shared by the Google Benchmark programs (per-benchmark peaks, after reset_peak_rss)
// and the whole-process runs (the peak of the run so far).
#pragma once

#include <malloc.h>
#include <sys/resource.h>

#include <fstream>

namespace lockstep::bench {

/// User + system CPU seconds of this process so far: the figure to compare on a shared machine,
/// where wall time depends on what else runs.
inline double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

/// Peak resident memory in MiB since the process started or since the last reset_peak_rss().
inline double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // Linux reports KiB
}

/// Gives the heap's free pages back to the system (glibc keeps them otherwise), so that what a
/// benchmark allocates next is faulted in again, as in a fresh process, and counts in its peak.
inline void release_free_memory() {
  malloc_trim(0);
}

/// Restarts the peak at the current resident memory, less the free heap pages (Linux: "5" to
/// /proc/self/clear_refs), so that one benchmark's peak is not a larger earlier one's. Without
/// that file the peak stays the process's.
inline void reset_peak_rss() {
  release_free_memory();
  std::ofstream("/proc/self/clear_refs") << "5";
}

}  // namespace lockstep::bench
