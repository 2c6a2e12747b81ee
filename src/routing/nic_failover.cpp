#include "nic_failover.hpp"

#include <algorithm>

namespace lockstep::routing_detail {
namespace {

bool pcie_side(const Device& d, std::uint32_t node) {
  return (d.kind == DeviceKind::Nic || d.kind == DeviceKind::Host) && d.node == node;
}

}  // namespace

bool reaches_network(const Topology& topo, DeviceId gpu) {
  const std::uint32_t node = topo.device(gpu).node;
  // The node's PCIe side is a handful of devices: a list is the visited set.
  std::vector<DeviceId> seen;
  for (const Port& p : topo.ports(gpu))
    if (pcie_side(topo.device(p.peer), node) &&
        std::find(seen.begin(), seen.end(), p.peer) == seen.end())
      seen.push_back(p.peer);
  for (std::size_t i = 0; i < seen.size(); ++i) {
    for (const Port& p : topo.ports(seen[i])) {
      const Device& peer = topo.device(p.peer);
      if (peer.kind == DeviceKind::Switch || peer.kind == DeviceKind::Gateway) return true;
      if (peer.kind == DeviceKind::Nic || peer.kind == DeviceKind::Host) {
        if (peer.node != node) return true;  // cabled to another node's NIC
        if (std::find(seen.begin(), seen.end(), p.peer) == seen.end()) seen.push_back(p.peer);
      }
    }
  }
  return false;
}

bool nic_in_service(const Topology& topo, DeviceId nic) {
  const std::uint32_t node = topo.device(nic).node;
  for (const Port& p : topo.ports(nic)) {
    const Device& peer = topo.device(p.peer);
    if (peer.kind == DeviceKind::Switch || peer.kind == DeviceKind::Gateway) return true;
    if ((peer.kind == DeviceKind::Nic || peer.kind == DeviceKind::Host) && peer.node != node)
      return true;
  }
  return false;
}

NicFailover::NicFailover(const Topology& topo) {
  const auto gpus = topo.gpus();  // node-major, then local index
  std::vector<std::uint8_t> up;
  for (std::size_t first = 0, last = 0; first < gpus.size(); first = last) {
    const std::uint32_t node = topo.device(gpus[first]).node;
    last = first + 1;
    while (last < gpus.size() && topo.device(gpus[last]).node == node) ++last;
    if (node == kNone) continue;
    const std::size_t g = last - first;
    up.assign(g, 0);
    for (std::size_t i = 0; i < g; ++i) up[i] = reaches_network(topo, gpus[first + i]) ? 1 : 0;
    const auto working = std::count(up.begin(), up.end(), 1);
    if (working == 0 || working == static_cast<std::ptrdiff_t>(g)) continue;
    if (relay_.empty()) relay_.assign(topo.num_devices(), kNone);
    for (std::size_t i = 0; i < g; ++i) {
      if (up[i]) continue;
      std::size_t j = (i + 1) % g;
      while (!up[j]) j = (j + 1) % g;
      relay_[gpus[first + i]] = gpus[first + j];
    }
  }
}

}  // namespace lockstep::routing_detail
