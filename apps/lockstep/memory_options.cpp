#include "memory_options.hpp"

#include "lockstep/core/units.hpp"

namespace lockstep::cli {

MemoryBudget MemoryFlags::budget() const {
  MemoryBudget b;
  b.bytes = max_memory.empty()
                ? default_memory_budget()
                : static_cast<double>(parse_bytes(max_memory, "--max-memory").count());
  b.max_events = max_events;
  b.dry_run = dry_run;
  return b;
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
