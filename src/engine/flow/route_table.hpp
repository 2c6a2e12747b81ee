#pragma once
// Routes of class transfers for the flow engine (internal; docs/flow-engine.md "Class
// aggregation", "Link orbits", "Uneven orbits"). A class transfer stands for the m transfers of a
// rank class with the same peer offset; its route lists, per path share of the representative,
// the solver constraints it loads and with which coefficient (how many members' paths of that
// share cross the link). Building a class route checks that every member's path looks the same
// (hop by hop: bandwidth and latency); if not, the class is not symmetric and no route is
// returned (kNoRoute), so the engine can split it. Solver constraints are link orbits
// (link_orbits.hpp); where members share links unequally (ECMP collisions) the orbit is uneven
// and its links are watched (UnevenOrbits checks their real loads).
// Owns the routes, the link orbits and the watch lists; relies on the class map, the placement
// and the path cache.
#include <cstdint>
#include <functional>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "class_map.hpp"
#include "flat_index.hpp"
#include "link_orbits.hpp"
#include "lockstep/collective/program.hpp"
#include "lockstep/engine/flow/maxmin.hpp"
#include "path_cache.hpp"

namespace lockstep::flow_detail {

struct ShareRoute {
  // Empty when source and destination coincide. Coefficients count `flows` flows.
  std::vector<MaxMinSolver::Use> uses;
  double fraction = 1;  // of the transfer's bytes, per flow
  Time latency;         // sum of the representative path's link latencies
  // Path shares (queue pairs) of identical constraints, fraction and latency that this one
  // stands for: under max-min fairness they get one rate, stream for one time and arrive
  // together, so they are one solver variable with `flows` times one flow's coefficients.
  std::uint32_t flows = 1;
};

struct ClassRoute {
  std::vector<ShareRoute> shares;
  // Every member's links with (members crossing x fraction), to turn bytes per member into
  // bytes per link once at the end.
  std::vector<std::pair<DirLinkId, double>> member_links;
  double carried = 0;  // wire bytes per member so far
};

class RouteTable {
 public:
  // share_routes: channels of identical member paths share a route, and a route's identical
  // path shares are one (FlowEngineConfig::bundle).
  RouteTable(const Topology& topo, PathCache& paths, std::span<const DeviceId> placement,
             const ClassMap& classes, bool share_routes);

  /// What class_route and class_device_route return when the members' paths differ hop by hop
  /// (Asymmetry::Paths): the class is not symmetric.
  static constexpr std::uint32_t kNoRoute = kNone;
  /// Route of the transfers of every member e of class src_class (class_map.hpp): from
  /// e(representative) to e(to), with flow label e(channel); or kNoRoute. Channels whose members
  /// take the very same paths (minimal routing on a dragonfly, any fabric without ECMP) share
  /// one route: its flows are then identical and Flows bundles them.
  std::uint32_t class_route(Rank src_class, Rank to, std::uint16_t channel);
  /// Route of every member m of class `cls` between member(m)(representative)'s device and
  /// targets[m].dst (an in-network reduction's root switch: one all members share, or each
  /// member's image of it), routed with label targets[m].label; or kNoRoute. Cached by the class,
  /// the direction and targets[0]. `weight` (null: 1) gives the share of a member's bytes that a
  /// link carries (a reduction tree's link carries one stream for all the legs crossing it).
  enum Direction : bool { kToDevice = true, kFromDevice = false };
  struct Target {
    DeviceId dst;
    std::uint64_t label;
  };
  using LinkWeight = std::function<double(std::size_t member, DirLinkId link)>;
  std::uint32_t class_device_route(Rank cls, std::span<const Target> targets, Direction direction,
                                   const LinkWeight* weight);
  /// A one-off route chosen with the current load (adaptive routing); release it when done.
  std::uint32_t load_route(const Router& router, DeviceId src, DeviceId dst, std::uint64_t label,
                           const LinkLoadView& load);
  void release(std::uint32_t id, std::vector<double>& link_bytes);
  /// Extra latency of every route that crosses a network link (EngineOptions).
  void set_network_latency(Time extra) { network_latency_ = extra; }

  /// Links of uneven orbits (check_uniform_load) and the class routes on each with their member
  /// counts: the aggregated solver's constraint for such an orbit stands for none of its links,
  /// so the engine checks each link's real load itself (UnevenOrbits::check).
  struct Watched {
    DirLinkId link;
    std::vector<std::pair<std::uint32_t, double>> routes;  // (route, members crossing the link)
  };
  /// Brings the watched links up to date with the routes built so far (cheap when nothing
  /// changed). An uneven orbit carrying a route of several path shares cannot be watched (loads
  /// are summed per route from one rate): the classes do not hold.
  enum class Watch : std::uint8_t { Unchanged, Refreshed, SharesOnUnevenOrbit };
  Watch refresh_watch() { return watch_stale_ ? rebuild_watch() : Watch::Unchanged; }
  bool any_watched() const { return !watched_.empty(); }
  /// Routes whose constraints changed since the last call (two orbits joined): their live
  /// flows must be put back into the solver with the new constraints.
  std::vector<std::uint32_t> take_retargeted() { return std::exchange(retargeted_, {}); }
  bool any_retargeted() const { return !retargeted_.empty(); }
  /// Roots of the uneven orbits, in the order they were found.
  const std::vector<DirLinkId>& uneven_roots() const { return uneven_roots_; }
  const std::vector<Watched>& watched() const { return watched_; }
  /// Indices into watched() of the links route `id` crosses (empty for most routes).
  std::span<const std::uint32_t> watched_by(std::uint32_t id) const {
    if (id >= route_watch_.size()) return {};
    return route_watch_[id];
  }

  ClassRoute& operator[](std::uint32_t id) { return routes_[id]; }
  std::size_t size() const { return routes_.size(); }
  /// Adds the bytes every cached route carried to `link_bytes` (per directed link).
  void add_link_bytes(std::vector<double>& link_bytes) const;

 private:
  std::uint32_t build(std::span<const std::vector<PathShare>* const> members,
                      const LinkWeight* weight = nullptr);
  std::uint32_t new_slot();
  void check_uniform_load(std::uint32_t id);
  static void merge_identical_shares(ClassRoute& route);
  Watch rebuild_watch();
  void retarget(DirLinkId from, DirLinkId to);
  Time network_latency_ = Time::zero();
  bool share_routes_;

  const Topology& topo_;
  PathCache& paths_;
  std::span<const DeviceId> placement_;
  ClassMap map_;
  LinkOrbits orbits_;
  std::vector<std::uint32_t> retargeted_;
  std::vector<bool> constraint_;  // per directed link: the root of an orbit some route loads
  std::vector<bool> uneven_;      // per orbit root: links carry different routes
  std::vector<std::uint64_t> load_signature_;  // per directed link: sum over the routes on it
  bool watch_stale_ = false;
  std::vector<Watched> watched_;
  std::vector<DirLinkId> uneven_roots_;
  std::vector<std::vector<std::uint32_t>> route_watch_;
  std::vector<ClassRoute> routes_;
  std::vector<std::uint32_t> free_;
  std::vector<bool> temporary_;
  FlatIndex by_class_;  // (src class << 32 | to, channel) -> route
  // Class routes by a hash of their members' paths, to find another channel's identical route
  // (the path cache keeps one copy of equal paths, so equal paths are the same pointers); a
  // route some orbit join retargeted is left out, as its coefficients were merged rather than
  // counted afresh.
  std::unordered_multimap<std::uint64_t, std::uint32_t> by_paths_;
  std::vector<std::vector<const std::vector<PathShare>*>> member_paths_;  // per class route
  std::vector<bool> retargeted_once_;                                     // per route
  std::uint64_t member_paths_hash() const;
  // Keyed by (class << 1 | direction, device, label).
  std::unordered_map<DeviceKey, std::uint32_t, DeviceKeyHash> by_class_device_;
  // Members' paths for build(), fetched grouped by destination (fetch_member_paths).
  void fetch_member_paths();
  std::vector<DeviceKey> member_keys_;
  std::vector<std::uint32_t> member_order_;
  std::vector<const std::vector<PathShare>*> member_scratch_;
  std::vector<DirLinkId> links_scratch_;
  std::unordered_map<std::uint64_t, double> count_scratch_;  // (link << 16 | share) -> members
  std::unordered_map<DirLinkId, double> total_scratch_;
  std::vector<PathShare> load_scratch_;
};

}  // namespace lockstep::flow_detail
