#pragma once
// Internal to the analytical engine: a longest-path evaluation of per-rank programs. Every op
// ends when its dependencies have ended plus its cost; a matched send/recv pair ends for both
// sides at max(both ready) + the transfer's cost; a NetReduce round ends for every member at the
// latest member's start + the round's cost. The costs come from a DagCosts, so the same walk
// times programs alpha-beta (AnalyticalEngine) or measures a chain of latencies alone
// (critical_path). Costs that depend on what ran before (a link busy with an earlier transfer)
// ask for the walk in time order: ops start by ready time, so transfers reach the costs in the
// order of their ready times. Memory: a few words per operation.
#include <cstdint>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "lockstep/collective/program.hpp"
#include "lockstep/core/units.hpp"
#include "lockstep/engine/engine.hpp"

namespace lockstep::analytical_detail {

class DagCosts {
 public:
  virtual ~DagCosts() = default;
  /// A matched transfer of `bytes` from rank src to rank dst on `channel` that may start at
  /// `ready` (both sides ready): its duration from then.
  virtual Time transfer(Rank src, Rank dst, std::uint16_t channel, std::uint64_t bytes,
                        Time ready) = 0;
  /// Copy / Reduce of `bytes`, and the extra local work of a reducing recv.
  virtual Time local(std::uint64_t bytes) = 0;
  /// One round of NetReduce group `group` whose members (with the bytes each hands in) are given.
  virtual Time net_reduce(std::uint32_t group,
                          std::span<const std::pair<Rank, std::uint64_t>> members) = 0;
  /// Whether transfer() must see transfers in the order of their ready times.
  virtual bool in_time_order() const { return false; }
};

struct DagResult {
  Time makespan;
  std::vector<Time> rank_finish;
  std::vector<std::vector<OpTiming>> ops;  // only when asked
  std::uint64_t events = 0;
};

/// Walks the programs; throws InputError for a dependency on a later op, mismatched transfer
/// sizes, or programs that never complete (naming the rank and op).
DagResult walk_dag(const ProgramSet& programs, DagCosts& costs, bool record_ops);

}  // namespace lockstep::analytical_detail
