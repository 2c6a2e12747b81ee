#include "memory_options.hpp"

#include "lockstep/api/commands.hpp"

namespace lockstep::cli {

MemoryBudget MemoryFlags::budget() const {
  return api::memory_budget(max_memory, max_events, dry_run);
}

void add_memory_options(CLI::App& cmd, MemoryFlags& flags) {
  cmd.add_option("--max-memory", flags.max_memory,
                 "refuse a run whose memory estimate is larger, e.g. 4GiB (default: half of the "
                 "machine's memory; docs/memory.md)");
  cmd.add_option("--max-events", flags.max_events,
                 "refuse packet-engine runs estimated to simulate more events (default 5e8, "
                 "about 90 s of CPU)")
      ->check(CLI::PositiveNumber);
  cmd.add_flag("--dry-run", flags.dry_run, "print the memory estimate and stop");
}

}  // namespace lockstep::cli
