#include "lockstep/core/memory_budget.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

#include "lockstep/core/error.hpp"

namespace lockstep {
namespace {

std::string size_text(double bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  std::size_t u = 0;
  while (bytes >= 1024 && u + 1 < std::size(kUnits)) {
    bytes /= 1024;
    ++u;
  }
  return u == 0 ? fmt::format("{:.0f} B", bytes) : fmt::format("{:.3g} {}", bytes, kUnits[u]);
}

// The first number of a file ("max" and unreadable files: 0).
double read_number(const std::string& path) {
  std::ifstream in(path);
  double v = 0;
  return in >> v ? v : 0;
}

}  // namespace

double RunEstimate::total() const {
  double sum = 0;
  for (const Part& p : parts) sum += p.bytes;
  return sum;
}

std::string RunEstimate::text() const {
  std::vector<Part> sorted = parts;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const Part& a, const Part& b) { return a.bytes > b.bytes; });
  std::string list;
  for (const Part& p : sorted) {
    if (p.bytes < 1) continue;
    list += fmt::format("{}{} {}", list.empty() ? "" : ", ", p.what, size_text(p.bytes));
  }
  return list.empty() ? size_text(total()) : fmt::format("{} ({})", size_text(total()), list);
}

double machine_memory_bytes() {
  double total = 0;
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  double kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit) {
    if (key == "MemTotal:") {
      total = kib * 1024;
      break;
    }
  }
  if (total <= 0) {
    total = static_cast<double>(::sysconf(_SC_PHYS_PAGES)) *
            static_cast<double>(::sysconf(_SC_PAGE_SIZE));
  }
  const double cgroup = read_number("/sys/fs/cgroup/memory.max");  // cgroup v2; "max": 0
  if (cgroup > 0) total = std::min(total, cgroup);
  return total;
}

double default_memory_budget() {
  return machine_memory_bytes() / 2;
}

bool admit(const RunEstimate& estimate, const MemoryBudget& budget, const std::string& hint) {
  const double need = estimate.total();
  const std::string events =
      estimate.events > 0 ? fmt::format(", {:.3g} events (about {:.0f} s of CPU)", estimate.events,
                                        estimate.events / kEventsPerCpuSecond)
                          : "";
  if (budget.dry_run) {
    fmt::print("memory estimate: {}{}; budget {}{}\n", estimate.text(), events,
               size_text(budget.bytes),
               need > budget.bytes ? " (over: the run would be refused)" : "");
    return false;
  }
  if (need > budget.bytes) {
    throw InputError("--max-memory",
                     fmt::format("the run would need about {}, over the budget of {}; {} (or "
                                 "raise --max-memory; --dry-run prints the estimate)",
                                 estimate.text(), size_text(budget.bytes), hint));
  }
  if (budget.max_events > 0 && estimate.events > budget.max_events) {
    throw InputError("--max-events",
                     fmt::format("the simulation would take about {:.3g} events (about "
                                 "{:.0f} s of CPU at 5.6 M events per second), over the budget "
                                 "of {:.3g}; {} (or raise --max-events)",
                                 estimate.events, estimate.events / kEventsPerCpuSecond,
                                 budget.max_events, hint));
  }
  return true;
}

}  // namespace lockstep
