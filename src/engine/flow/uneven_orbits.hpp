#pragma once
// Uneven link orbits of an aggregated run (internal; docs/flow-engine.md "Uneven orbits").
//
// When the links of one orbit carry different class routes (or members crossing them in
// different numbers: an ECMP collision), the solver's constraint for the orbit stands for none
// of them. It is relaxed (an unbounded capacity), and the aggregated run stays exact as long as
// no real link of the orbit carries more than its capacity: the solver's allocation gives every
// flow a bottleneck among the constraints it does hold, so if it is also feasible on the uneven
// links it is the real max-min allocation. Around every solve this piece brings the watch lists
// up to date (prepare) and checks the real links whose routes changed rate (check).
//
// Owns the relaxed stand-ins' real capacities and the summed rate per class route. Relies on the
// route table (watch lists) and the solver (capacities).
#include <cstdint>
#include <vector>

#include "asymmetry.hpp"
#include "lockstep/engine/flow/maxmin.hpp"
#include "route_table.hpp"

namespace lockstep::flow_detail {

class UnevenOrbits {
 public:
  UnevenOrbits(RouteTable& routes, MaxMinSolver& solver, std::size_t directed_links)
      : routes_(routes), solver_(solver), directed_links_(directed_links) {}

  // Before a solve: relaxes the orbits found uneven since the last one (their routes are then
  // checked after it). Asymmetry::SharesOnUnevenOrbit when one cannot be watched.
  Asymmetry prepare() {
    changed_.clear();
    const RouteTable::Watch watch = routes_.refresh_watch();
    return watch == RouteTable::Watch::Unchanged ? Asymmetry::None : watch_changed(watch);
  }
  // A flow on `route` changed rate by `delta` (bytes/s per member).
  void add_rate(std::uint32_t route, double delta) {
    if (route >= route_rate_.size()) route_rate_.resize(routes_.size(), 0.0);
    route_rate_[route] += delta;
  }
  // The solve moved a rate on `route`: its watched links are checked after it.
  void rate_changed(std::uint32_t route) {
    if (routes_.any_watched() && !routes_.watched_by(route).empty()) changed_.push_back(route);
  }
  // After a solve: Asymmetry::Overload when a real link of an uneven orbit is over its capacity
  // (a collision among a class's members limits a flow).
  Asymmetry check() {
    if (changed_.empty()) return Asymmetry::None;
    if (route_rate_.size() < routes_.size()) route_rate_.resize(routes_.size(), 0.0);
    return feasible() ? Asymmetry::None : Asymmetry::Overload;
  }

 private:
  friend class SteadyState;  // names what it holds (nothing the future depends on)
  Asymmetry watch_changed(RouteTable::Watch watch);
  void relax();
  bool feasible();

  RouteTable& routes_;
  MaxMinSolver& solver_;
  std::size_t directed_links_;
  std::vector<double> relaxed_capacity_;  // per directed link: a relaxed stand-in's own, or -1
  std::vector<double> route_rate_;        // per class route: the summed rate of its live flows
  std::vector<std::uint32_t> changed_;    // routes whose rate moved in this solve
  // Per watched link, the check that last summed its load: many changed routes share a link
  // (an alltoall's routes into one NIC), which one check sums once.
  std::vector<std::uint32_t> checked_in_;
  std::uint32_t checks_ = 0;
};

}  // namespace lockstep::flow_detail
