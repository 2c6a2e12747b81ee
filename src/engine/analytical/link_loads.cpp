// Link loads of routed transfers, per phase (link_loads.hpp).
#include "lockstep/engine/analytical/link_loads.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "lockstep/core/error.hpp"

namespace lockstep {

LinkLoads::LinkLoads(const Topology& topo, const Router& router)
    : topo_(topo), router_(router), network_(topo.num_links()) {
  for (LinkId l = 0; l < topo.num_links(); ++l) network_[l] = is_network_link(topo, l);
}

std::vector<double>& LinkLoads::phase_loads(std::uint32_t p) {
  if (p >= loads_.size()) loads_.resize(p + 1);
  if (loads_[p].empty()) loads_[p].assign(topo_.num_directed_links(), 0.0);
  return loads_[p];
}

void LinkLoads::route(DeviceId a, DeviceId b, std::uint64_t label) const {
  router_.route(FlowKey{a, b, label}, nullptr, scratch_);
  if (scratch_.empty())
    throw InputError("topology", fmt::format("no route from device {} to device {}", a, b));
}

RoutedPath LinkLoads::summarise() const {
  RoutedPath out;
  for (const PathShare& share : scratch_) {
    Time latency;
    for (DirLinkId d : share.hops) {
      latency += topo_.link(Topology::link_of(d)).latency;
      out.network = out.network || network_[Topology::link_of(d)];
    }
    out.latency = std::max(out.latency, latency);
  }
  return out;
}

RoutedPath LinkLoads::path(DeviceId a, DeviceId b, std::uint64_t label) const {
  route(a, b, label);
  return summarise();
}

RoutedPath LinkLoads::add_transfer(std::uint32_t phase, DeviceId a, DeviceId b, std::uint64_t label,
                                   double bytes) {
  route(a, b, label);
  std::vector<double>& load = phase_loads(phase);
  for (const PathShare& share : scratch_)
    for (DirLinkId d : share.hops) load[d] += bytes * share.fraction;
  return summarise();
}

RoutedPath LinkLoads::add_net_reduce(std::uint32_t phase, std::span<const DeviceId> members,
                                     std::uint64_t label, double bytes) {
  if (union_.empty()) union_.assign(topo_.num_directed_links(), 0.0);
  RoutedPath longest;
  for (std::size_t i = 1; i < members.size(); ++i) {
    route(members[i], members[0], label);
    for (const PathShare& share : scratch_) {
      for (DirLinkId d : share.hops) {
        if (union_[d] == 0) touched_.push_back(d);
        union_[d] = std::max(union_[d], share.fraction);
      }
    }
    const RoutedPath p = summarise();
    longest.latency = std::max(longest.latency, p.latency);
    longest.network = longest.network || p.network;
  }
  // Up towards the root and the result back down: each direction of every link of the tree.
  std::vector<double>& load = phase_loads(phase);
  for (DirLinkId d : touched_) {
    load[d] += bytes * union_[d];
    load[d ^ 1u] += bytes * union_[d];
    union_[d] = 0;
  }
  touched_.clear();
  return longest;
}

PhaseLoad LinkLoads::phase(std::uint32_t p) const {
  PhaseLoad out;
  if (p >= loads_.size() || loads_[p].empty()) return out;
  const std::vector<double>& load = loads_[p];
  for (DirLinkId d = 0; d < load.size(); ++d) {
    if (load[d] <= 0) continue;
    const LinkId l = Topology::link_of(d);
    const double seconds = load[d] / topo_.link(l).bandwidth.bytes_per_second();
    if (network_[l]) {
      if (seconds > out.network_seconds) out.network_seconds = seconds, out.network_link = d;
    } else if (seconds > out.scale_up_seconds) {
      out.scale_up_seconds = seconds, out.scale_up_link = d;
    }
  }
  return out;
}

double LinkLoads::bytes(std::uint32_t p, DirLinkId link) const {
  return p < loads_.size() && !loads_[p].empty() ? loads_[p][link] : 0.0;
}

}  // namespace lockstep
