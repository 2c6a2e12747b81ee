// Uneven link orbits (docs/flow-engine.md "Link orbits"): when the links of one orbit carry
// different class routes, the aggregated solver's constraint for the orbit is a stand-in, exact
// only while neither it nor any real link of the orbit limits a flow. These functions keep the
// real links' loads in view and give up on the classes (AsymmetricClass) the moment that fails.
#include <algorithm>
#include <span>
#include <unordered_map>

#include "simulation.hpp"

namespace lockstep::flow_detail {

namespace {
constexpr double kLoosen = 1e-6;
}  // namespace

bool RouteTable::refresh_watch() {
  if (!watch_stale_) return false;
  watch_stale_ = false;
  watched_.clear();
  uneven_roots_.clear();
  route_watch_.assign(routes_.size(), {});
  std::unordered_map<DirLinkId, std::uint32_t> index;
  for (std::uint32_t id = 0; id < routes_.size(); ++id) {
    for (const auto& [link, weight] : routes_[id].member_links) {
      const DirLinkId root = orbits_.find(link);
      if (!uneven_[root]) continue;
      if (std::find(uneven_roots_.begin(), uneven_roots_.end(), root) == uneven_roots_.end())
        uneven_roots_.push_back(root);
      // Loads are summed per route from one rate: several path shares would need one each.
      if (routes_[id].shares.size() > 1) throw AsymmetricClass{};
      const auto [it, added] = index.try_emplace(link, static_cast<std::uint32_t>(watched_.size()));
      if (added) watched_.push_back(Watched{link, {}});
      watched_[it->second].routes.emplace_back(id, weight);
      route_watch_[id].push_back(it->second);
    }
  }
  return true;
}

// The stand-in constraint of an uneven orbit gets a hair more capacity than its links, so that
// where it ties with a real limit (two capped channels filling a link exactly) the real one binds
// and the check below can tell a tie from a stand-in that decides a rate.
void Simulation::loosen_uneven_orbits() {
  for (const DirLinkId root : routes_.uneven_roots()) {
    if (root >= loosened_.size()) loosened_.resize(topo_.num_directed_links(), false);
    if (loosened_[root]) continue;
    loosened_[root] = true;
    solver_.set_capacity(root, solver_.capacity(root) * (1 + kLoosen));
  }
}

// Max-min fairness is characterised by feasibility and, for every flow, a saturated constraint
// on which it has the largest rate. The aggregated allocation gives every flow such a bottleneck
// among the even orbits and caps, which look the same from every member; it is the real one as
// long as no uneven stand-in constraint is saturated and no real link of an uneven orbit is
// overloaded.
void Simulation::check_uneven_orbits(std::span<const std::uint32_t> changed_routes) {
  constexpr double kSlack = 1e-9;
  for (const std::uint32_t route : changed_routes) {
    for (const std::uint32_t w : routes_.watched_by(route)) {
      const RouteTable::Watched& watched = routes_.watched()[w];
      double load = 0;
      for (const auto& [r, members] : watched.routes) load += members * route_rate_[r];
      // A real link's capacity (its orbit's root may be a loosened stand-in).
      const bool loose = watched.link < loosened_.size() && loosened_[watched.link];
      const double cap = solver_.capacity(watched.link) / (loose ? 1 + kLoosen : 1.0);
      if (load > cap * (1 + kSlack)) throw AsymmetricClass{};
    }
    for (const ShareRoute& share : routes_[route].shares) {
      for (const MaxMinSolver::Use& use : share.uses) {
        if (routes_.uneven_root(use.cons) &&
            solver_.load(use.cons) >= solver_.capacity(use.cons) * (1 - kSlack))
          throw AsymmetricClass{};
      }
    }
  }
}

}  // namespace lockstep::flow_detail
