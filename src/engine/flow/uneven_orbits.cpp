// Uneven link orbits (docs/flow-engine.md "Link orbits"): when the links of one orbit carry
// different class routes (or members crossing them in different numbers), the aggregated
// solver's constraint for the orbit stands for none of them. It is relaxed, and the aggregated
// run is exact while no real link of the orbit is over its capacity. These functions keep the
// real links' loads in view and give up on the classes (Asymmetry::Overload) the moment that
// fails.
#include <algorithm>
#include <span>
#include <unordered_map>

#include "simulation.hpp"

namespace lockstep::flow_detail {

// The stand-in constraint of an uneven orbit stands for none of its links, so it must not limit
// anything: it is relaxed to an unbounded capacity (finite, so that a flow whose every link lies
// in uneven orbits still gets a finite rate, which the check below then finds too high).
void Simulation::relax_uneven_orbits() {
  constexpr double kUnbounded = 1e300;
  for (const DirLinkId root : routes_.uneven_roots()) {
    if (root >= relaxed_capacity_.size()) relaxed_capacity_.resize(topo_.num_directed_links(), -1);
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
bool Simulation::uneven_orbits_feasible(std::span<const std::uint32_t> changed_routes) const {
  constexpr double kSlack = 1e-9;
  for (const std::uint32_t route : changed_routes) {
    for (const std::uint32_t w : routes_.watched_by(route)) {
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
