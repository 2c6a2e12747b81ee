#include "route_table.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <unordered_map>

#include "lockstep/core/rng.hpp"
#include "lockstep/core/slot_pool.hpp"

namespace lockstep::flow_detail {

RouteTable::RouteTable(const Topology& topo, PathCache& paths, std::span<const DeviceId> placement,
                       const ClassMap& classes, bool share_routes)
    : share_routes_(share_routes),
      topo_(topo),
      paths_(paths),
      placement_(placement),
      map_(classes),
      orbits_(topo.num_directed_links()),
      constraint_(topo.num_directed_links(), false),
      uneven_(topo.num_directed_links(), false),
      load_signature_(topo.num_directed_links(), 0) {}

std::uint32_t RouteTable::new_slot() {
  const std::uint32_t id = take_slot(routes_, free_);
  if (id < temporary_.size()) {
    routes_[id] = ClassRoute{};
    retargeted_once_[id] = false;
  } else {
    temporary_.push_back(false);
    retargeted_once_.push_back(false);
  }
  return id;
}

// Paths are asked for grouped by destination, then listed in member order: the router keeps
// distance fields towards its last few destinations only (6 on a 32,768-GPU fabric), and the
// members of a class cycle through the class's destinations (a split NVLS tree's 128 members
// cycle 16 times through 8 GPUs), which restarted a whole-fabric search for almost every member:
// two-thirds of a 4,096-node run. Routing does not depend on the order of queries.
void RouteTable::fetch_member_paths() {
  member_order_.resize(member_keys_.size());
  std::iota(member_order_.begin(), member_order_.end(), 0u);
  std::stable_sort(
      member_order_.begin(), member_order_.end(),
      [&](std::uint32_t a, std::uint32_t b) { return member_keys_[a].dst < member_keys_[b].dst; });
  member_scratch_.assign(member_keys_.size(), nullptr);
  for (const std::uint32_t m : member_order_) {
    const DeviceKey& k = member_keys_[m];
    member_scratch_[m] = &paths_.get(k.src, k.dst, k.label);
  }
}

std::uint32_t RouteTable::class_route(Rank src_class, Rank to, std::uint16_t channel) {
  const std::uint64_t key = static_cast<std::uint64_t>(src_class) << 32 | to;
  if (const auto id = by_class_.find(key, channel); id != FlatIndex::kMissing) return id;
  const Rank from = map_.real(src_class);
  member_keys_.clear();
  for (Rank m = 0; m < map_.members(); ++m) {
    const ClassMap::Element e = map_.member(m);
    member_keys_.push_back(DeviceKey{placement_[map_.apply(e, from)], placement_[map_.apply(e, to)],
                                     map_.apply_channel(e, channel)});
  }
  fetch_member_paths();
  const std::uint64_t hash = share_routes_ ? member_paths_hash() : 0;
  for (auto [it, end] = by_paths_.equal_range(hash); share_routes_ && it != end; ++it) {
    const std::uint32_t other = it->second;
    if (retargeted_once_[other] || member_paths_[other] != member_scratch_) continue;
    by_class_.insert(key, channel, other);
    return other;
  }
  const std::uint32_t id = build(member_scratch_);
  if (id == kNoRoute) return id;
  by_class_.insert(key, channel, id);
  if (!share_routes_) return id;
  by_paths_.emplace(hash, id);
  if (member_paths_.size() <= id) member_paths_.resize(id + 1);
  member_paths_[id] = member_scratch_;
  return id;
}

// The members' paths, by the identity of the cache's copies (equal paths share one).
std::uint64_t RouteTable::member_paths_hash() const {
  std::uint64_t h = 0;
  for (const std::vector<PathShare>* paths : member_scratch_)
    h = mix64(h ^ reinterpret_cast<std::uintptr_t>(paths));
  return h;
}

std::uint32_t RouteTable::class_device_route(Rank cls, std::span<const Target> targets,
                                             Direction direction, const LinkWeight* weight) {
  const DeviceKey key{cls << 1 | static_cast<DeviceId>(direction), targets[0].dst,
                      targets[0].label};
  if (const auto it = by_class_device_.find(key); it != by_class_device_.end()) return it->second;
  const Rank from = map_.real(cls);
  member_keys_.clear();
  for (Rank m = 0; m < map_.members(); ++m) {
    const DeviceId gpu = placement_[map_.apply(map_.member(m), from)];
    const Target& t = targets[m];
    member_keys_.push_back(direction == kToDevice ? DeviceKey{gpu, t.dst, t.label}
                                                  : DeviceKey{t.dst, gpu, t.label});
  }
  fetch_member_paths();
  const std::uint32_t id = build(member_scratch_, weight);
  if (id != kNoRoute) by_class_device_.emplace(key, id);
  return id;
}

std::uint32_t RouteTable::load_route(const Router& router, DeviceId src, DeviceId dst,
                                     std::uint64_t label, const LinkLoadView& load) {
  router.route(FlowKey{src, dst, label}, &load, load_scratch_);
  const std::vector<PathShare>* one = &load_scratch_;
  const std::uint32_t id = build({&one, 1});
  temporary_[id] = true;
  return id;
}

void RouteTable::release(std::uint32_t id, std::vector<double>& link_bytes) {
  if (!temporary_[id]) return;
  const ClassRoute& r = routes_[id];
  for (const auto& [link, weight] : r.member_links) link_bytes[link] += r.carried * weight;
  temporary_[id] = false;
  free_.push_back(id);
}

void RouteTable::add_link_bytes(std::vector<double>& link_bytes) const {
  for (std::size_t i = 0; i < routes_.size(); ++i) {
    if (temporary_[i]) continue;
    const ClassRoute& r = routes_[i];
    if (r.carried == 0) continue;
    for (const auto& [link, weight] : r.member_links) link_bytes[link] += r.carried * weight;
  }
}

std::uint32_t RouteTable::build(std::span<const std::vector<PathShare>* const> members,
                                const LinkWeight* weight) {
  const std::vector<PathShare>& rep = *members[0];
  const auto weight_of = [&](std::size_t j, DirLinkId l) {
    return weight == nullptr ? 1.0 : (*weight)(j, l);
  };
  // Count, per link and share, how many members' paths cross it (each weighted).
  count_scratch_.clear();
  total_scratch_.clear();
  for (std::size_t j = 0; j < members.size(); ++j) {
    const auto& paths = *members[j];
    if (paths.size() != rep.size()) return kNoRoute;
    for (std::size_t s = 0; s < paths.size(); ++s) {
      for (const DirLinkId l : paths[s].hops) {
        const double w = weight_of(j, l);
        count_scratch_[static_cast<std::uint64_t>(l) << 16 | s] += w;
        total_scratch_[l] += paths[s].fraction * w;
      }
    }
  }
  auto count = [&](DirLinkId l, std::size_t s) -> double {
    const auto it = count_scratch_.find(static_cast<std::uint64_t>(l) << 16 | s);
    return it == count_scratch_.end() ? 0 : it->second;
  };
  // Members are indistinguishable when, hop by hop, their links look like the representative's
  // (bandwidth, latency and the share of the bytes they carry).
  // How many members share a link may differ (ECMP hashing two members onto one uplink): such a
  // link's signature differs from its orbit's (check_uniform_load), so the orbit is uneven and
  // its real links are watched, and the classes give way only if a collision limits a flow.
  for (std::size_t j = 1; j < members.size(); ++j) {
    const auto& paths = *members[j];
    for (std::size_t s = 0; s < rep.size(); ++s) {
      const auto& a = rep[s].hops;
      const auto& b = paths[s].hops;
      if (a.size() != b.size() || rep[s].fraction != paths[s].fraction) return kNoRoute;
      for (std::size_t h = 0; h < a.size(); ++h) {
        const Link& la = topo_.link(Topology::link_of(a[h]));
        const Link& lb = topo_.link(Topology::link_of(b[h]));
        if (la.bandwidth != lb.bandwidth || la.latency != lb.latency ||
            weight_of(0, a[h]) != weight_of(j, b[h]))
          return kNoRoute;
      }
    }
  }
  const std::uint32_t id = new_slot();
  // Member j's hops are the images of the representative's: join their orbits. An orbit that
  // some route already loads keeps its root; two such orbits meeting were constraints that
  // should have been one: the routes on the second move onto the first (retarget). Orbits whose
  // links already carry different routes (signatures) are uneven.
  for (std::size_t j = 1; j < members.size(); ++j) {
    for (std::size_t s = 0; s < rep.size(); ++s) {
      for (std::size_t h = 0; h < rep[s].hops.size(); ++h) {
        const DirLinkId a = orbits_.find(rep[s].hops[h]),
                        b = orbits_.find((*members[j])[s].hops[h]);
        if (a == b) continue;
        // Two orbits that routes already load: each route's coefficient counted the crossings
        // of its own orbit's links, not the joined one's, so the joined orbit is watched link by
        // link (uneven) rather than trusted as one constraint.
        const bool uneven = uneven_[a] || uneven_[b] || load_signature_[a] != load_signature_[b] ||
                            (constraint_[a] && constraint_[b]);
        if (constraint_[a] && constraint_[b]) retarget(b, a);
        if (constraint_[b]) {
          orbits_.join(b, a);
        } else {
          orbits_.join(a, b);
        }
        uneven_[orbits_.find(a)] = uneven;
        watch_stale_ = watch_stale_ || uneven;
      }
    }
  }
  ClassRoute& route = routes_[id];
  route.shares.resize(rep.size());
  for (std::size_t s = 0; s < rep.size(); ++s) {
    ShareRoute& share = route.shares[s];
    share.fraction = rep[s].fraction;
    share.latency = Time::zero();
    bool network = false;
    for (const DirLinkId l : rep[s].hops) {
      share.latency += topo_.link(Topology::link_of(l)).latency;
      network = network || is_network_link(topo_, Topology::link_of(l));
    }
    if (network) share.latency += network_latency_;
    // Constraints: the orbit of every link of any representative share that members of share s
    // cross, with as coefficient the members crossing that very link (by symmetry, the load
    // per link of the orbit: crossings of the orbit / its size).
    links_scratch_.clear();
    for (std::size_t t = 0; t < rep.size(); ++t) {
      for (const DirLinkId l : rep[t].hops) {
        const double c = count(l, s);
        if (c == 0 ||
            std::find(links_scratch_.begin(), links_scratch_.end(), l) != links_scratch_.end())
          continue;
        links_scratch_.push_back(l);
        const DirLinkId root = orbits_.find(l);
        constraint_[root] = true;
        MaxMinSolver::Use* same = nullptr;
        for (auto& use : share.uses)
          if (use.cons == root) same = &use;
        if (same != nullptr) {
          // Two links of one orbit on the path: by symmetry each carries the same member
          // crossings, which already count the paths that cross it as their other hop.
          same->coefficient = std::max(same->coefficient, c);
        } else {
          share.uses.push_back({root, c});
        }
      }
    }
  }
  if (share_routes_) merge_identical_shares(route);
  route.member_links.assign(total_scratch_.begin(), total_scratch_.end());
  check_uniform_load(id);
  return id;
}

// Queue pairs whose members' paths load the same constraints with the same coefficients are
// identical solver variables: max-min fairness gives them one rate (1.4: uniqueness), and with
// equal bytes (fraction) and latency they stream and arrive together. One variable whose
// coefficients are k times one flow's gets that same rate (progressive filling sees the same
// sum of coefficients on every constraint), so a share standing for k flows replaces them
// (docs/flow-engine.md R4). A 4-queue-pair connection inside an NVLink domain has one path,
// hence one flow instead of four.
void RouteTable::merge_identical_shares(ClassRoute& route) {
  std::vector<ShareRoute>& shares = route.shares;
  if (shares.size() < 2) return;
  std::size_t kept = 0;
  for (std::size_t s = 0; s < shares.size(); ++s) {
    const auto same = std::find_if(shares.begin(), shares.begin() + kept, [&](const ShareRoute& k) {
      const auto same_use = [](const MaxMinSolver::Use& a, const MaxMinSolver::Use& b) {
        return a.cons == b.cons && a.coefficient == b.coefficient;
      };
      return std::equal(k.uses.begin(), k.uses.end(), shares[s].uses.begin(), shares[s].uses.end(),
                        same_use) &&
             k.fraction == shares[s].fraction && k.latency == shares[s].latency;
    });
    if (same != shares.begin() + kept) {
      ++same->flows;
    } else {
      if (kept != s) shares[kept] = std::move(shares[s]);
      ++kept;
    }
  }
  shares.resize(kept);
  for (ShareRoute& share : shares)
    for (MaxMinSolver::Use& use : share.uses) use.coefficient *= share.flows;
}

// Every route loading constraint `from` loads `to` instead (their orbits joined).
void RouteTable::retarget(DirLinkId from, DirLinkId to) {
  constraint_[from] = false;
  for (std::uint32_t id = 0; id < routes_.size(); ++id) {
    bool moved = false;
    for (ShareRoute& share : routes_[id].shares) {
      auto it = std::find_if(share.uses.begin(), share.uses.end(),
                             [&](const MaxMinSolver::Use& u) { return u.cons == from; });
      if (it == share.uses.end()) continue;
      moved = true;
      auto same = std::find_if(share.uses.begin(), share.uses.end(),
                               [&](const MaxMinSolver::Use& u) { return u.cons == to; });
      if (same != share.uses.end()) {
        same->coefficient += it->coefficient;
        share.uses.erase(it);
      } else {
        it->cons = to;
      }
    }
    if (!moved) continue;
    retargeted_.push_back(id);
    retargeted_once_[id] = true;
  }
}

// Aggregation is exact if every link of an orbit carries the same class routes with the same
// member counts. Hop-by-hop likeness of one route's members does not ensure it: under ECMP the
// representative's channels c and c + g may hash onto one uplink while a member's land on two,
// which joins orbits whose links then carry different routes. A signature per link (a sum over
// the routes crossing it) is compared with its orbit root's after every route is built; an orbit
// where they differ is uneven: its links are watched (uneven_orbits.cpp) instead.
void RouteTable::check_uniform_load(std::uint32_t id) {
  const std::uint64_t key = mix64(std::uint64_t{id} + 1);
  for (const auto& [link, weight] : routes_[id].member_links)
    load_signature_[link] += key * static_cast<std::uint64_t>(std::llround(weight * 4096));
  for (const auto& [link, weight] : routes_[id].member_links) {
    const DirLinkId root = orbits_.find(link);
    if (load_signature_[link] != load_signature_[root]) uneven_[root] = true;
    watch_stale_ = watch_stale_ || uneven_[root];
  }
}

// The links of uneven orbits and, per link, the class routes on it with their member counts.
RouteTable::Watch RouteTable::rebuild_watch() {
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
      // Loads are summed per route from one rate: several path shares would need one each (a
      // share standing for several flows too: route_rate_ counts one).
      if (routes_[id].shares.size() > 1 || routes_[id].shares.front().flows > 1)
        return Watch::SharesOnUnevenOrbit;
      const auto [it, added] = index.try_emplace(link, static_cast<std::uint32_t>(watched_.size()));
      if (added) watched_.push_back(Watched{link, {}});
      watched_[it->second].routes.emplace_back(id, weight);
      route_watch_[id].push_back(it->second);
    }
  }
  return Watch::Refreshed;
}

}  // namespace lockstep::flow_detail
