#pragma once
// Hop distances towards one destination, computed by a breadth-first search that starts at the
// destination and grows only as far as the queries need (so a route between neighbours in a
// 300,000-device fabric touches a few hundred devices, not all of them). Internal to routing.
//
// Transit rule: a GPU may forward traffic only between two GPUs (tori and GPU meshes forward
// through chips; in a server a GPU never relays NIC traffic). A non-destination GPU therefore
// expands only to GPU neighbours, and only when it can itself reach the destination through
// GPUs (its `gpu_chain` flag).
//
// Each device also learns the least latency (sum of its links' latencies) of its shortest paths
// towards the destination, over the steps the search expands; the router breaks ties between
// equally short next hops by it (docs/routing.md).
#include <cstdint>
#include <vector>

#include "lockstep/topology/graph.hpp"

namespace lockstep::routing_detail {

class DistanceField {
 public:
  static constexpr std::uint32_t kUnreached = 0xFFFFFFFFu;

  explicit DistanceField(const Topology& topo);

  /// Makes dist(v) exact for `from` and every device closer to `dst` than `from`. Returns false
  /// when `from` cannot reach `dst`.
  bool reach(DeviceId dst, DeviceId from);

  std::uint32_t dist(DeviceId v) const { return stamp_[v] == stamp_now_ ? dist_[v] : kUnreached; }
  /// True when GPU `v` reaches the destination through GPUs only (it may relay GPU traffic).
  bool gpu_chain(DeviceId v) const { return stamp_[v] == stamp_now_ && chain_[v] != 0; }
  DeviceId destination() const { return dst_; }
  /// The least latency of v's shortest paths to the destination, in picoseconds (final for the
  /// devices whose distance reach() made exact).
  std::int64_t latency(DeviceId v) const { return latency_[v]; }

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
  bool forwards(DeviceId w) const { return w == dst_ || !is_gpu(w) || chain_[w] != 0; }
  void expand_next();  // expands queue_[head_]
  bool is_gpu(DeviceId v) const { return topo_.device(v).kind == DeviceKind::Gpu; }

  const Topology& topo_;
  DeviceId dst_ = kNone;
  std::uint32_t stamp_now_ = 0;
  std::vector<std::uint32_t> stamp_;
  std::vector<std::uint32_t> dist_;
  std::vector<std::uint8_t> chain_;
  std::vector<std::int64_t> latency_;
  std::vector<DeviceId> queue_;  // BFS order; entries before head_ are expanded
  std::size_t head_ = 0;
};

}  // namespace lockstep::routing_detail
