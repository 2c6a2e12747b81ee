#include "pxn_relays.hpp"

#include "nic_failover.hpp"

namespace lockstep::routing_detail {

PxnRelays::PxnRelays(const Topology& topo) : topo_(topo), own_nic_(topo.num_devices(), kNone) {
  const auto gpus = topo.gpus();  // node-major, then local index
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    const std::uint32_t node = topo.device(gpus[i]).node;
    if (node == kNone) continue;
    ++node_gpus_.try_emplace(node, i, 0).first->second.second;
    for (const Port& p : topo.ports(gpus[i]))
      if (topo.device(p.peer).kind == DeviceKind::Nic && own_nic_[gpus[i]] == kNone)
        own_nic_[gpus[i]] = p.peer;
  }
}

DeviceId PxnRelays::relay(DeviceId src, DeviceId dst) const {
  const Device& s = topo_.device(src);
  const Device& d = topo_.device(dst);
  if (s.kind != DeviceKind::Gpu || d.kind != DeviceKind::Gpu || s.node == kNone ||
      d.node == kNone || s.node == d.node || s.local_index == d.local_index)
    return kNone;
  const auto it = node_gpus_.find(s.node);
  if (it == node_gpus_.end() || d.local_index >= it->second.second) return kNone;
  const DeviceId relay = topo_.gpus()[it->second.first + d.local_index];
  if (topo_.device(relay).local_index != d.local_index) return kNone;
  const DeviceId nic = own_nic_[relay];
  if (nic == kNone || nic == own_nic_[src] || !nic_in_service(topo_, nic)) return kNone;
  // Peers in one NVLink domain (an NVL72 rack's trays) talk over NVLink, not the network.
  return scale_up_peers(src, relay) && !scale_up_peers(src, dst) ? relay : kNone;
}

// NCCL relays only where the two GPUs reach each other over NVLink (PATH_NVL: a direct link, or
// one NVSwitch), never across the host's PCIe or through a third GPU.
bool PxnRelays::scale_up_peers(DeviceId a, DeviceId b) const {
  for (const Port& p : topo_.ports(a)) {
    if (p.peer == b && topo_.link(Topology::link_of(p.out)).medium == LinkMedium::NvLink)
      return true;
    if (topo_.device(p.peer).kind != DeviceKind::ScaleUpSwitch) continue;
    for (const Port& q : topo_.ports(p.peer))
      if (q.peer == b) return true;
  }
  return false;
}

}  // namespace lockstep::routing_detail
