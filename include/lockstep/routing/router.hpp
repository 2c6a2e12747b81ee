#pragma once
// Routing: which directed links a transfer between two devices crosses. A router returns one
// path for per-flow policies (ECMP hashing, adaptive, dimension-order, rail-aligned) or several
// weighted paths for per-packet spraying. Engines call it once per transfer, never per packet;
// the packet engine turns a path into an immutable source route.
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "lockstep/routing/policy.hpp"
#include "lockstep/topology/graph.hpp"

namespace lockstep {

/// Identifies a transfer for hashing: endpoints plus a flow label (channel, queue pair).
struct FlowKey {
  DeviceId src = kNone;
  DeviceId dst = kNone;
  std::uint64_t label = 0;
};

/// A path with the fraction of the flow's bytes it carries (1.0 unless spraying).
struct PathShare {
  std::vector<DirLinkId> hops;
  double fraction = 1.0;
};

/// Current load per directed link, for adaptive routing; engines that track load implement it.
class LinkLoadView {
 public:
  virtual ~LinkLoadView() = default;
  virtual double load(DirLinkId link) const = 0;
};

class Router {
 public:
  virtual ~Router() = default;
  /// Fills `out` (cleared first) with the path(s) for `key`. `load` may be null.
  virtual void route(const FlowKey& key, const LinkLoadView* load,
                     std::vector<PathShare>& out) const = 0;
  virtual RoutingPolicy policy() const = 0;
};

struct RouterOptions {
  RoutingPolicy policy = RoutingPolicy::Ecmp;
  std::uint32_t queue_pairs =
      1;  // flows per connection spread by ECMP (NCCL_IB_QPS_PER_CONNECTION)
  std::uint64_t hash_seed = 0;
  // Spray: at most this many distinct paths per flow (the rest of the split is hashed).
  std::uint32_t max_spray_paths = 64;
};

/// The routing `topo`'s scale-out fabric does (docs/routing.md "By technology"): its traits'
/// routing policy when set, else InfiniBand's fat-tree routing (d_mod_k); spray for EFA (SRD),
/// Ultra Ethernet and Slingshot, whose NICs or switches spread a flow's packets; per-flow ECMP
/// hashing for RoCE, Ethernet and TCP. Queue pairs from the traits (NCCL's default 1).
RouterOptions fabric_routing(const Topology& topo);

/// Builds a router for `topo` (kept by reference; it must outlive the router). Paths are shortest
/// in hop count; see docs/routing.md for the policies. A router keeps scratch state (the last
/// destination's distance field), so one router must not be used by two threads at once.
/// Throws InputError for queue_pairs == 0 or max_spray_paths == 0; route() throws InputError when
/// an endpoint does not exist or no path connects them.
std::unique_ptr<Router> make_router(const Topology& topo, const RouterOptions& options);

}  // namespace lockstep
