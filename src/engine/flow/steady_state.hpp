#pragma once
// What decides the future of a flow-engine run, for the steady-state fast-forward (internal;
// docs/flow-engine.md "Steady-state fast-forward").
//
// Fast-forward (fast_forward.hpp) jumps over cycles of a steady state once the whole state at
// one period boundary equals the state at an earlier one with every op index moved on by D ops.
// This piece says what "the whole state" is. steady_state.cpp names every member of every piece
// of a run and every field of their records once, each with its part: compared (written into the
// canonical words), moved on by a jump (op indices by D, instants by dT), an output a jump
// extrapolates, or none (with the reason: fixed for the run, scratch, a cache of a key the cycle
// does not move, or unused when fast-forward is off). The names are structured bindings, which
// must name every member: a member or field added anywhere without being placed here stops the
// build (`only N names provided for structured binding`).
//
// Owns nothing of the run; reads and moves the state of Events, Ranks, Connections, Transfers,
// Flows (and the solver's order of flows per constraint, the route table's bytes carried), and
// names what NetReduce, UnevenOrbits and Simulation hold.
#include <cstdint>
#include <utility>
#include <vector>

#include "events.hpp"
#include "lockstep/collective/program.hpp"

namespace lockstep::flow_detail {

class ClassMap;
class Connections;
class Flows;
class NetReduce;
class Ranks;
class RouteTable;
class Simulation;
class Transfers;
class UnevenOrbits;

class SteadyState {
 public:
  SteadyState(const ProgramSet& programs, const ClassMap& map, Events& events, Ranks& ranks,
              Connections& connections, Transfers& transfers, Flows& flows, RouteTable& routes);

  // The whole state as a list of words in a canonical order: op indices relative to `origin`
  // (rank 0's oldest unfinished op), instants relative to now, records named by what they are
  // (a transfer by its send) rather than by pool index. Equal words, equal futures.
  void write(std::vector<std::uint64_t>& out, OpIndex origin);
  // A cheap function of the state (cursors, and the live events' distances and kinds as a
  // multiset): equal states have equal signatures.
  std::uint64_t signature(OpIndex origin) const;
  // Moves every op index on by `ops` and every instant by `dt`.
  void shift(OpIndex ops, Time dt);

  // The outputs a jump extrapolates: bytes carried per class route, point-to-point transfers
  // completed, and the length of the link-rate log.
  struct Totals {
    std::vector<double> carried;
    std::uint64_t transfers_done = 0;
    std::size_t rate_log = 0;
  };
  void totals(Totals& out) const;
  // Adds `cycles` times what the outputs grew by since `earlier`, one cycle being `dt` long.
  void extrapolate(const Totals& earlier, std::uint64_t cycles, Time dt);

 private:
  template <class V>
  void visit(V& v, Events& events);
  template <class V>
  void visit(V& v, Ranks& ranks);
  template <class V>
  void visit_slot(V& v, Ranks& ranks, Rank r, OpIndex i);
  template <class V>
  void visit(V& v, Transfers& transfers);
  template <class V>
  void visit(V& v, Flows& flows);
  template <class V>
  void visit(V& v, Connections& connections);
  // The pieces that hold nothing the future depends on, named all the same.
  static void none_of(const NetReduce& net_reduce);
  static void none_of(const UnevenOrbits& uneven);
  static void none_of(const Simulation& simulation);
  bool live(const Event& e) const;
  std::uint64_t transfer_key(std::uint32_t t, OpIndex origin) const;

  const ProgramSet& programs_;
  const ClassMap& map_;
  Events& events_;
  Ranks& ranks_;
  Connections& connections_;
  Transfers& transfers_;
  Flows& flows_;
  RouteTable& routes_;
  // Scratch.
  std::vector<Event> events_scratch_;
  std::vector<std::pair<std::uint64_t, std::uint32_t>> sorted_;  // (key, record)
  std::vector<char> free_;
  std::vector<std::uint32_t> links_;
};

}  // namespace lockstep::flow_detail
