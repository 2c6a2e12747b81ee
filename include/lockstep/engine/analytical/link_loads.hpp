#pragma once
// Traffic priced on the graph without dynamics: every transfer is routed by the router lockstep
// already has (ECMP hashing, rail alignment, spraying, whatever the topology leaves after failed
// or degraded links) and its bytes are added to every directed link of its path; a phase of
// transfers that run at once then takes at least as long as its most loaded link needs, load /
// bandwidth. Scale-up links (NVLink, GPU-GPU, in-node PCIe) and scale-out network links
// (is_network_link) are reported apart, because the NCCL model runs them at different fractions
// of their line rate (docs/analytical-engine.md).
//
//   LinkLoads loads(topo, *router);
//   loads.add_transfer(0, gpus[0], gpus[8], /*label=*/0, 1e6);   // phase 0
//   PhaseLoad p = loads.phase(0);  // p.network_seconds = the busiest network link's bytes / bw
#include <cstdint>
#include <span>
#include <vector>

#include "lockstep/core/units.hpp"
#include "lockstep/routing/router.hpp"
#include "lockstep/topology/graph.hpp"

namespace lockstep {

/// What a routed transfer crossed.
struct RoutedPath {
  Time latency;          // sum of link latencies along the path (the slowest share's)
  bool network = false;  // some share crosses a scale-out network link
};

/// A phase's most loaded links: bytes / bandwidth (seconds) of the busiest scale-up link and of
/// the busiest network link, and which directed links they are (kNone when no link carried any).
struct PhaseLoad {
  double scale_up_seconds = 0;
  double network_seconds = 0;
  DirLinkId scale_up_link = kNone;
  DirLinkId network_link = kNone;
};

class LinkLoads {
 public:
  /// Both are kept by reference. The router's paths decide the loads.
  LinkLoads(const Topology& topo, const Router& router);

  /// Routes `bytes` from device a to device b with flow label `label` (a channel) in `phase`;
  /// a path of several shares (queue pairs, spraying) loads each share's links by its fraction.
  /// InputError when no path connects them.
  RoutedPath add_transfer(std::uint32_t phase, DeviceId a, DeviceId b, std::uint64_t label,
                          double bytes);
  /// An in-network reduction (SHARP, NVLS) of `bytes` from each member: the switches add on the
  /// way up and multicast on the way down, so every link of the aggregation tree, here the union
  /// of the members' paths to members[0], carries `bytes` each way once, however many members'
  /// paths cross it. Returns the longest member-to-members[0] path.
  RoutedPath add_net_reduce(std::uint32_t phase, std::span<const DeviceId> members,
                            std::uint64_t label, double bytes);
  /// The route alone (no load): its latency and whether it crosses the network.
  RoutedPath path(DeviceId a, DeviceId b, std::uint64_t label) const;

  std::uint32_t num_phases() const { return static_cast<std::uint32_t>(loads_.size()); }
  PhaseLoad phase(std::uint32_t p) const;
  /// Bytes phase p put on a directed link.
  double bytes(std::uint32_t p, DirLinkId link) const;

 private:
  std::vector<double>& phase_loads(std::uint32_t p);
  void route(DeviceId a, DeviceId b, std::uint64_t label) const;
  RoutedPath summarise() const;

  const Topology& topo_;
  const Router& router_;
  std::vector<bool> network_;               // per link: is_network_link
  std::vector<std::vector<double>> loads_;  // per phase, per directed link (bytes)
  mutable std::vector<PathShare> scratch_;
  std::vector<double> union_;  // per directed link: fraction in this reduction
  std::vector<DirLinkId> touched_;
};

}  // namespace lockstep
