#pragma once
// --max-memory, --max-events and --dry-run, offered by every command that simulates: the run's
// estimate (lockstep/scenario/memory_estimate.hpp) is checked against them before allocating.
#include <CLI/CLI.hpp>
#include <string>

#include "lockstep/core/memory_budget.hpp"

namespace lockstep::cli {

struct MemoryFlags {
  std::string max_memory;  // empty: default_memory_budget()
  double max_events = kDefaultMaxEvents;
  bool dry_run = false;
  MemoryBudget budget() const;
};

void add_memory_options(CLI::App& cmd, MemoryFlags& flags);

}  // namespace lockstep::cli
