#include "flows.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

#include "lockstep/core/rng.hpp"
#include "lockstep/core/slot_pool.hpp"
#include "uneven_orbits.hpp"

namespace lockstep::flow_detail {

Flows::Flows(const EngineOptions& options, bool bundle, Events& events, RouteTable& routes,
             MaxMinSolver& solver, UnevenOrbits& uneven)
    : options_(options),
      bundle_(bundle),
      events_(events),
      routes_(routes),
      solver_(solver),
      uneven_(uneven) {}

void Flows::start(std::uint32_t t, std::uint32_t route, std::uint32_t share, double bytes,
                  MaxMinSolver::ConsId cap, double cap_share) {
  // A channel limit is its sender's own: flows under one are never bundled.
  const std::uint64_t key =
      mix64((std::uint64_t{route} << 16 | share) ^ mix64(std::bit_cast<std::uint64_t>(bytes)));
  const bool bundles = bundle_ && cap == kNone;
  // Queue pairs a merged share stands for (RouteTable::merge_identical_shares) are flows on one
  // variable too.
  const std::uint32_t queue_pairs = routes_[route].shares[share].flows;
  if (bundles) {
    if (const auto it = open_.find(key); it != open_.end()) {
      Flow& bundle = flows_[it->second];
      if (bundle.route == route && bundle.share == share && bundle.remaining == bytes) {
        bundle.more.push_back(t);
        bundled_ += queue_pairs;
        // Its variable grows by one flow's coefficients: until the solve that ends the instant
        // no rate has been given, so nothing else changes.
        solver_.remove(bundle.var);
        bundle.var = add_variable(it->second);
        return;
      }
    }
  }
  const std::uint32_t f = take_slot(flows_, free_);
  Flow& flow = flows_[f];
  flow.transfer = t;
  flow.route = route;
  flow.share = static_cast<std::uint16_t>(share);
  flow.remaining = bytes;
  flow.rate = 0;
  flow.updated = events_.now();
  flow.cap = cap;
  flow.cap_share = cap_share;
  flow.live = true;
  flow.more.clear();
  flow.var = add_variable(f);
  bundled_ += queue_pairs - 1;
  if (bundles) open_.try_emplace(key, f);
}

MaxMinSolver::VarId Flows::add_variable(std::uint32_t f) {
  const Flow& flow = flows_[f];
  const ShareRoute& share = routes_[flow.route].shares[flow.share];
  const double k = bundled(flow);
  MaxMinSolver::VarId v;
  if (flow.cap != kNone || k != 1) {
    // The sender's channel limit goes in front of the share's links, where a port link on the
    // sending GPU would sit, as one more constraint the flow crosses: once per queue pair the
    // share stands for (the share's link coefficients already count them).
    uses_scratch_.clear();
    if (flow.cap != kNone)
      uses_scratch_.push_back(MaxMinSolver::Use{flow.cap, flow.cap_share * share.flows});
    for (const MaxMinSolver::Use& use : share.uses)
      uses_scratch_.push_back(MaxMinSolver::Use{use.cons, use.coefficient * k});
    v = solver_.add(uses_scratch_);
  } else {
    v = solver_.add(share.uses);
  }
  if (flow_of_var_.size() <= v) flow_of_var_.resize(v + 1);
  flow_of_var_[v] = f;
  return v;
}

MaxMinSolver::ConsId Flows::channel_cap(Rank r, std::uint16_t channel) {
  std::uint32_t id = cap_index_.find(r, channel);
  if (id == FlatIndex::kMissing) {
    id = solver_.add_constraint(options_.channel_send_bandwidth.bytes_per_second());
    cap_index_.insert(r, channel, id);
  }
  return id;
}

// Same remaining bytes and (until the next solve) the same rate: only the constraints change, so
// the pending completion event is dropped (generation) and the solve schedules a new one.
void Flows::readd(std::span<const std::uint32_t> routes) {
  for (std::uint32_t f = 0; f < flows_.size(); ++f) {
    Flow& flow = flows_[f];
    if (!flow.live) continue;
    if (std::find(routes.begin(), routes.end(), flow.route) == routes.end()) continue;
    settle(flow);
    solver_.remove(flow.var);
    flow.var = add_variable(f);
    ++flow.generation;
  }
}

void Flows::log_rate(const Flow& flow, double delta_rate) {
  for (const auto& use : routes_[flow.route].shares[flow.share].uses)
    rate_log_.push_back(RateChange{use.cons, events_.now(), delta_rate * use.coefficient});
}

Asymmetry Flows::solve() {
  if (!open_.empty()) open_.clear();
  if (const Asymmetry found = uneven_.prepare(); found != Asymmetry::None) return found;
  solver_.solve();
  ++solves_;
  const Time now = events_.now();
  for (const MaxMinSolver::VarId v : solver_.changed()) {
    Flow& flow = flows_[flow_of_var_[v]];
    settle(flow);
    const double rate = solver_.rate(v);
    const double delta = (rate - flow.rate) * bundled(flow);
    record_rate(flow, delta);
    uneven_.add_rate(flow.route, delta);
    uneven_.rate_changed(flow.route);
    flow.rate = rate;
    ++flow.generation;
    if (rate <= 0) continue;
    // Round up to the picosecond, forgiving representation error well below one picosecond.
    const double ps = std::max(0.0, std::ceil(flow.remaining / rate * 1e12 - 1e-3));
    events_.push(now + Time::from_ps(ps), EventKind::FlowDone, flow_of_var_[v], flow.generation);
  }
  return uneven_.check();
}

}  // namespace lockstep::flow_detail
