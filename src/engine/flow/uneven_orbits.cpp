#include "uneven_orbits.hpp"

namespace lockstep::flow_detail {

Asymmetry UnevenOrbits::watch_changed(RouteTable::Watch watch) {
  if (watch == RouteTable::Watch::SharesOnUnevenOrbit) return Asymmetry::SharesOnUnevenOrbit;
  relax();
  for (std::uint32_t route = 0; route < routes_.size(); ++route)
    if (!routes_.watched_by(route).empty()) changed_.push_back(route);
  return Asymmetry::None;
}

// The stand-in constraint of an uneven orbit stands for none of its links, so it must not limit
// anything: it is relaxed to an unbounded capacity (finite, so that a flow whose every link lies
// in uneven orbits still gets a finite rate, which the check below then finds too high).
void UnevenOrbits::relax() {
  constexpr double kUnbounded = 1e300;
  for (const DirLinkId root : routes_.uneven_roots()) {
    if (root >= relaxed_capacity_.size()) relaxed_capacity_.resize(directed_links_, -1);
    if (relaxed_capacity_[root] >= 0) continue;
    relaxed_capacity_[root] = solver_.capacity(root);
    solver_.set_capacity(root, kUnbounded);
  }
}

// Max-min fairness is characterised by feasibility and, for every flow, a saturated constraint
// on which it has the largest rate. The aggregated solver knows the even orbits and the caps, a
// subset of the real constraints that look the same from every member; its allocation gives
// every flow such a bottleneck among them, so it is the real max-min allocation as long as it is
// feasible on the rest: no real link of an uneven orbit may carry more than its capacity.
bool UnevenOrbits::feasible() {
  constexpr double kSlack = 1e-9;
  if (checked_in_.size() < routes_.watched().size()) checked_in_.resize(routes_.watched().size());
  ++checks_;
  for (const std::uint32_t route : changed_) {
    for (const std::uint32_t w : routes_.watched_by(route)) {
      if (checked_in_[w] == checks_) continue;
      checked_in_[w] = checks_;
      const RouteTable::Watched& watched = routes_.watched()[w];
      double load = 0;
      for (const auto& [r, members] : watched.routes) load += members * route_rate_[r];
      // A real link's capacity (its orbit's root may be a relaxed stand-in).
      const bool relaxed =
          watched.link < relaxed_capacity_.size() && relaxed_capacity_[watched.link] >= 0;
      const double cap = relaxed ? relaxed_capacity_[watched.link] : solver_.capacity(watched.link);
      if (load > cap * (1 + kSlack)) return false;
    }
  }
  return true;
}

}  // namespace lockstep::flow_detail
