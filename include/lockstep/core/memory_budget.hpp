#pragma once
// What a run will hold in memory, estimated before it allocates, and the budget it must fit
// (`--max-memory`, default half of the machine's memory): a run over budget is refused with its
// estimate and a hint (exit 2) instead of growing until std::bad_alloc or the OOM killer;
// `--dry-run` prints the estimate and stops. docs/memory.md lists what each command counts and
// compares the estimates with measured peak RSS.
//
//   RunEstimate e;
//   e.add("alltoallv matrix", ranks * ranks * 8);
//   if (!admit(e, budget, "fewer --ranks")) return;  // dry run: printed, stop here
#include <cstdint>
#include <string>
#include <vector>

namespace lockstep {

struct RunEstimate {
  struct Part {
    std::string what;
    double bytes = 0;  // double: an absurd request (ranks^2 at 10^6 ranks) must not wrap
  };
  std::vector<Part> parts;
  /// Work that costs time rather than memory (the packet engine's events; inference steps weighed
  /// as events, scenario/memory_estimate.hpp), checked against
  /// MemoryBudget::max_events; 0 when the run has none to speak of.
  double events = 0;

  void add(std::string what, double bytes) { parts.push_back({std::move(what), bytes}); }
  double total() const;
  /// "1.2 GiB (flow engine 1.0 GiB, graph 200 MiB)": the parts in decreasing size.
  std::string text() const;
};

struct MemoryBudget {
  double bytes = 0;       // refuse estimates above this
  double max_events = 0;  // refuse runs with more packet-engine events than this; 0: no limit
  bool dry_run = false;   // print the estimate, run nothing
};

/// The machine's memory as this process may use it: /proc/meminfo's MemTotal, lowered to the
/// cgroup's memory.max when one is set (containers); sysconf(_SC_PHYS_PAGES) without /proc.
double machine_memory_bytes();

/// Half of machine_memory_bytes(): the estimates are within a factor of about 1.5 of the
/// measured peak (docs/memory.md), and other processes need the rest.
double default_memory_budget();

/// The packet engine's default event budget: 5e8 events, about 90 s at the 5.6 M events per
/// CPU-second of bench_packet_permutation (README), beyond which `--max-events` must say so.
inline constexpr double kEventsPerCpuSecond = 5.6e6;
inline constexpr double kDefaultMaxEvents = 5e8;

/// True when the run may go on. Over budget: InputError naming --max-memory (or --max-events)
/// with the estimate, the budget and `hint`. Dry run: prints the estimate and the budget on
/// stdout and returns false.
bool admit(const RunEstimate& estimate, const MemoryBudget& budget, const std::string& hint);

}  // namespace lockstep
