#pragma once
// Steady-state fast-forward of a flow-engine run (internal; docs/flow-engine.md "Steady-state
// fast-forward").
//
// A ring step repeats the one before it, so once the transient has died out the simulation state
// at some instant t_b equals the state at an earlier instant t_a with every op index moved on by
// D ops. Everything after t_b is then the run after t_a moved by D ops and dT = t_b - t_a, so j
// more cycles are applied at once: op indices + j*D, times + j*dT, and j times the cycle's
// outputs. The program promises the repetition of its ops (ProgramSet::periodic_region); the
// engine checks the state itself (SteadyState), so the result equals the full simulation's to
// the picosecond.
//
// Snapshots are taken only when simulated rank 0 has just reached a period boundary. Each gets a
// cheap signature; the whole state is written only for the first few snapshots, every
// power-of-two-th, and those whose signature repeated, and a few are kept whole to verify a
// repetition exactly. Many-channel rings can wander for thousands of steps without repeating
// (channels sharing NVLink ports drift in and out of phase); the signature keeps those runs from
// paying for a full state at every boundary.
//
// Owns the snapshots (marks, saved states, the stride) and the jump counts. Relies on the
// programs' periodic regions, the class map, the events, Ranks (cursors), NetReduce (no open
// rounds) and SteadyState (what the state is, how it is written and moved).
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "class_map.hpp"
#include "events.hpp"
#include "lockstep/collective/program.hpp"
#include "lockstep/engine/engine.hpp"
#include "lockstep/engine/flow/flow_engine.hpp"
#include "steady_state.hpp"

namespace lockstep::flow_detail {

class NetReduce;
class Ranks;

class FastForward {
 public:
  FastForward(const EngineInput& input, const FlowEngineConfig& config, const ClassMap& map,
              const Events& events, const Ranks& ranks, const NetReduce& net_reduce,
              SteadyState& steady);

  // Skipped cycles leave no per-op times, adaptive routes depend on history the state does not
  // hold, and NetReduce rounds are keyed by group, not by op: no fast-forward then.
  bool enabled() const { return enabled_; }
  // Called at the end of every instant: takes a snapshot at rank 0's period boundaries and jumps
  // when one repeats an earlier one.
  void check();

  std::uint32_t jumps() const { return jumps_; }
  std::uint64_t skipped_ops() const { return skipped_ops_; }

 private:
  struct PeriodMark {
    std::uint64_t hash = 0;
    Time time;
    OpIndex origin = 0;  // rank 0's oldest unfinished op
    std::uint64_t events = 0;
    std::int32_t saved = -1;  // index into saved_, or -1
  };
  struct SavedState {
    std::uint32_t mark = 0;  // index into marks_ of the snapshot it holds
    bool keep = false;       // one of the first or a power-of-two-th: never evicted
    std::vector<std::uint64_t> words;
    SteadyState::Totals totals;
  };
  void reset();
  void save_state(PeriodMark& mark, bool keep);
  bool try_skip(const PeriodMark& a, const SavedState& saved);
  // The program's promise: every op in the windows equals its counterpart `ops` later.
  void check_promise(OpIndex ops) const;

  const ProgramSet& programs_;
  const ClassMap& map_;
  const Events& events_;
  const Ranks& ranks_;
  const NetReduce& net_reduce_;
  SteadyState& steady_;
  bool enabled_;
  OpIndex last_base_ = 0;
  OpIndex region_first_ = 0;
  std::uint32_t stride_ = 1;  // snapshot every stride-th period boundary
  std::vector<PeriodMark> marks_;
  std::unordered_map<std::uint64_t, std::uint32_t> by_hash_;  // hash -> latest mark
  std::vector<SavedState> saved_;
  std::vector<std::uint64_t> words_;
  std::uint32_t jumps_ = 0;
  std::uint64_t skipped_ops_ = 0;
};

}  // namespace lockstep::flow_detail
