#pragma once
// Hop distances towards one destination, computed by a breadth-first search that starts at the
// destination and grows only as far as the queries need (so a route between neighbours in a
// 300,000-device fabric touches a few hundred devices, not all of them). Internal to routing.
//
// Transit rule: a GPU may forward traffic only between two GPUs (tori and GPU meshes forward
// through chips; in a server a GPU never relays NIC traffic). A non-destination GPU therefore
// expands only to GPU neighbours, and only when it can itself reach the destination through
// GPUs (its `gpu_chain` flag). Without GPU transit (make_router_without_gpu_transit) no GPU but
// the destination has that flag, so a GPU never forwards.
//
// Each device also learns the least latency (sum of its links' latencies) of its shortest paths
// towards the destination, over the steps the search expands; the router breaks ties between
// equally short next hops by it (docs/routing.md).
#include <cstdint>
#include <memory>
#include <vector>

#include "lockstep/topology/graph.hpp"

namespace lockstep::routing_detail {

class DistanceField {
 public:
  static constexpr std::uint32_t kUnreached = 0xFFFFFFFFu;

  /// What the search reads of the topology, laid out for it: the latency of every port in the
  /// order of the topology's port list (read in turn as a device's ports are, where the links'
  /// own records lie far apart: at 131,072 GPUs that load was three quarters of the search) and
  /// which devices are GPUs. Shared by a router's fields.
  struct Layout {
    explicit Layout(const Topology& topo, bool transit = true);
    std::vector<std::int64_t> port_latency;  // picoseconds, by index in the port list
    std::vector<std::uint8_t> gpu;           // 1 for a GPU
    bool gpu_transit = true;                 // may a GPU forward between GPUs?
  };

  explicit DistanceField(const Topology& topo, std::shared_ptr<const Layout> layout = nullptr);

  /// Makes dist(v) exact for `from` and every device closer to `dst` than `from`. Returns false
  /// when `from` cannot reach `dst`.
  bool reach(DeviceId dst, DeviceId from);

  std::uint32_t dist(DeviceId v) const {
    return state_[v].stamp == stamp_now_ ? state_[v].dist : kUnreached;
  }
  /// True when GPU `v` reaches the destination through GPUs only (it may relay GPU traffic).
  bool gpu_chain(DeviceId v) const { return state_[v].stamp == stamp_now_ && state_[v].chain; }
  DeviceId destination() const { return dst_; }
  /// The least latency of v's shortest paths to the destination, in picoseconds (final for the
  /// devices whose distance reach() made exact).
  std::int64_t latency(DeviceId v) const { return state_[v].latency; }

  /// May a path step from u to v (v one hop closer)? `u_is_start` exempts the path's first
  /// device from the transit rule.
  bool may_step(DeviceId u, DeviceId v, bool u_is_start) const;

  /// A destination's gateway: the one device g, `depth` hops from dst, through which every
  /// device farther from dst reaches it (a GPU's leaf switch behind its NIC). When the devices
  /// that forward traffic at some distance from dst (searching outwards, at most `max_depth`
  /// hops and `max_devices` devices) are a single one, neither a GPU nor linked to one, every
  /// device beyond it is as far from dst as from g plus `depth`, and steps towards dst exactly
  /// where it steps towards g (no GPU relays beyond g, none next to it). kNone when there is none.
  struct Gateway {
    DeviceId device = kNone;
    std::uint32_t depth = 0;
  };
  Gateway find_gateway(DeviceId dst, std::uint32_t max_depth, std::size_t max_devices);
  /// Makes dist(v) exact for every device within `depth` hops of dst; is `from` one of them?
  bool within(DeviceId dst, DeviceId from, std::uint32_t depth);

 private:
  void restart(DeviceId dst);
  void visit(DeviceId v, std::uint32_t d, bool chain, std::int64_t latency);
  // Does w forward what reaches it (a GPU that cannot relay is an endpoint only)? Final once
  // the layer before w's is expanded.
  bool forwards(DeviceId w) const { return w == dst_ || !is_gpu(w) || state_[w].chain; }
  void expand_next();  // expands queue_[head_]
  // Is queue_[head_] the first device of its layer (all layers before it expanded)?
  bool layer_starts_at_head() const;
  // Stamps an unstamped `from` from its ports when it lies one hop beyond head_'s layer.
  bool pull(DeviceId from);
  bool is_gpu(DeviceId v) const { return layout_->gpu[v] != 0; }
  // The latency of port `p` of the topology's port list.
  std::int64_t port_latency(const Port& p) const {
    return layout_->port_latency[static_cast<std::size_t>(&p - first_port_)];
  }

  // A device's search state, together (one cache line per visit, not four).
  struct State {
    std::int64_t latency = 0;
    std::uint32_t stamp = 0;
    std::uint32_t dist : 31;
    std::uint32_t chain : 1;
  };

  const Topology& topo_;
  std::shared_ptr<const Layout> layout_;
  const Port* first_port_;
  DeviceId dst_ = kNone;
  std::uint32_t stamp_now_ = 0;
  std::vector<State> state_;
  std::vector<DeviceId> queue_;  // BFS order; entries before head_ are expanded
  std::size_t head_ = 0;
};

}  // namespace lockstep::routing_detail
