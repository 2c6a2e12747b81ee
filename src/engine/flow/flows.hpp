#pragma once
// Flows of a flow-engine run and their max-min fair rates (internal; docs/flow-engine.md "Timing
// of one transfer", "Max-min fair sharing").
//
// A flow is one path share of a transfer in its bandwidth phase: one solver variable over the
// share's constraints (link orbits, with as coefficient the class members crossing each link),
// plus the sending rank's channel limit when there is one. Flows that start in the same instant
// over the same share of the same route with the same bytes and no channel limit (the channels
// of one peer in a direct alltoall, when routing gives every channel the same paths) form one
// bundle: under max-min fairness identical flows on identical constraints get identical rates
// and finish together, so k of them are one variable with k times the coefficients, and when it
// has streamed each of its transfers is told in the order they started. After all events of an
// instant the solver re-solves what changed (solve); every flow whose rate changed gets its
// remaining bytes settled and a new completion event (FlowDone), the old one being dropped by
// generation.
//
// Owns the flow records, their solver variables, the channel-limit constraints and the log of
// link-rate changes (record_link_series, an output). Relies on the events, the route table, the
// solver and UnevenOrbits (whose checks run with every solve).
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "asymmetry.hpp"
#include "events.hpp"
#include "flat_index.hpp"
#include "lockstep/engine/engine.hpp"
#include "lockstep/engine/flow/maxmin.hpp"
#include "route_table.hpp"
#include "uneven_orbits.hpp"

namespace lockstep::flow_detail {

struct Flow {
  std::uint32_t transfer = 0;
  std::uint32_t route = 0;  // the transfer's
  MaxMinSolver::VarId var = 0;
  MaxMinSolver::ConsId cap = kNone;  // its (sender, channel) speed limit, if any
  double cap_share = 1;              // its coefficient there: 1 / the send's Op::fan_out
  double remaining = 0;              // bytes, as of `updated`
  double rate = 0;                   // bytes/s
  Time updated;
  std::uint32_t generation = 0;  // bumped whenever its pending FlowDone event goes stale
  std::uint16_t share = 0;       // which path share of the route
  bool live = false;
  std::vector<std::uint32_t> more;  // the bundle's other transfers, in the order they started
};

struct RateChange {
  DirLinkId link;
  Time at;
  double delta;  // bytes/s
};

class Flows {
 public:
  Flows(const EngineOptions& options, bool bundle, Events& events, RouteTable& routes,
        MaxMinSolver& solver, UnevenOrbits& uneven);

  // Starts transfer t's flow of `bytes` over share `share` of `route` (and channel limit `cap`,
  // or kNone, which each byte uses `cap_share` of).
  void start(std::uint32_t t, std::uint32_t route, std::uint32_t share, double bytes,
             MaxMinSolver::ConsId cap, double cap_share = 1);
  // The solver constraint of simulated rank r's channel (EngineOptions::channel_send_bandwidth),
  // created the first time one of its sends streams. A class's constraint stands for each
  // member's own: a member's send crosses only its own rank's, with coefficient 1.
  MaxMinSolver::ConsId channel_cap(Rank r, std::uint16_t channel);
  // A FlowDone event: the flow has streamed its last byte, unless the event is stale (then
  // transfer is kNone).
  struct Streamed {
    std::uint32_t transfer = kNone;
    std::uint32_t share = 0;
    std::span<const std::uint32_t> more;  // the bundle's other transfers (valid until the next)
  };
  Streamed finish(std::uint32_t f, std::uint32_t generation) {
    Flow& flow = flows_[f];
    if (flow.generation != generation) return {};  // its rate changed since this was scheduled
    const double all = flow.rate * bundled(flow);
    record_rate(flow, -all);
    uneven_.add_rate(flow.route, -all);
    solver_.remove(flow.var);
    flow.live = false;
    ++flow.generation;
    free_.push_back(f);
    done_more_.swap(flow.more);
    flow.more.clear();
    return {flow.transfer, flow.share, done_more_};
  }
  // Live flows of routes whose constraints changed get variables over the new ones.
  void readd(std::span<const std::uint32_t> routes);
  // Re-solves the rates after an instant and schedules the completions that moved. Returns the
  // asymmetry UnevenOrbits found, if any.
  Asymmetry solve();

  std::uint64_t solves() const { return solves_; }
  std::uint64_t bundled() const { return bundled_; }
  const std::vector<RateChange>& rate_log() const { return rate_log_; }

 private:
  friend class SteadyState;  // writes the live flows and moves their times on
  // The solver variable of flow f over its share's constraints (and its channel cap), with the
  // coefficients of as many flows as its bundle holds.
  MaxMinSolver::VarId add_variable(std::uint32_t f);
  static double bundled(const Flow& flow) { return 1.0 + static_cast<double>(flow.more.size()); }
  void settle(Flow& flow) {
    flow.remaining -= flow.rate * (events_.now() - flow.updated).seconds();
    flow.updated = events_.now();
  }
  void record_rate(const Flow& flow, double delta_rate) {
    if (options_.record_link_series && delta_rate != 0) log_rate(flow, delta_rate);
  }
  void log_rate(const Flow& flow, double delta_rate);

  const EngineOptions& options_;
  bool bundle_;  // FlowEngineConfig::bundle
  Events& events_;
  RouteTable& routes_;
  MaxMinSolver& solver_;
  UnevenOrbits& uneven_;
  std::vector<Flow> flows_;
  std::vector<std::uint32_t> free_;
  std::vector<std::uint32_t> flow_of_var_;
  FlatIndex cap_index_;  // (simulated rank, channel) -> solver constraint
  std::vector<MaxMinSolver::Use> uses_scratch_;
  std::uint64_t solves_ = 0;
  std::vector<RateChange> rate_log_;
  // The bundles opened in this instant, by a hash of (route, share, bytes) (a flow whose key
  // collides starts a bundle of its own).
  std::unordered_map<std::uint64_t, std::uint32_t> open_;
  std::vector<std::uint32_t> done_more_;  // the last finished bundle's other transfers
  std::uint64_t bundled_ = 0;             // flows that joined a bundle
};

}  // namespace lockstep::flow_detail
