// InfiniBand adaptive routing decided at each switch (`adaptive: switch`). A Quantum switch
// with AR enabled sends each packet of an AR-enabled flow to the least-loaded port of the group
// of ports that reach its destination (NVIDIA, "Adaptive Routing" in the MLNX OFED / UFM
// documentation and the Quantum switch datasheets: "adaptive routing selects the output port
// with the lowest load"); the receiving ConnectX accepts the packets out of order. The sender
// keeps one path: ECMP and the source-side `adaptive: true` stay as they were.
#include "simulator.hpp"

namespace lockstep::packet {

std::uint32_t Simulator::adaptive_next_hop(Packet& p, std::uint32_t in, std::uint32_t out) {
  const Flow& f = flows_[p.flow];
  const DeviceKind kind = topo_->device(links_[in].dst).kind;
  if (f.paths.count <= 1 || (kind != DeviceKind::Switch && kind != DeviceKind::Gateway)) return out;
  // A port's load: the bytes queued for it on every lane and what it is still sending.
  auto load = [&](std::uint32_t link) {
    std::int64_t bytes = links_[link].busy ? links_[link].cur_wire : 0;
    for (std::uint32_t q = 0; q < queues_; ++q) bytes += fifos_[qidx(link, q)].bytes;
    return bytes;
  };
  // The equal-cost routes through this switch at this hop: those that arrived over `in` at the
  // same index (their rest leads from here to the destination in as many hops). `p.at` is the
  // position of `in` in the route arena; the packet moves to the chosen route's position.
  if (p.flags & kCtl) return out;  // control packets ride their reverse route
  std::uint32_t best = p.at;
  std::int64_t best_load = load(out);
  for (std::uint32_t k = f.paths.first; k < f.paths.first + f.paths.count && best_load > 0; ++k) {
    const PathRef& r = paths_[k];
    if (r.len != p.hops || arena_[r.offset + p.hop] != in) continue;
    const std::uint32_t next = arena_[r.offset + p.hop + 1];
    if (const std::int64_t l = load(next); l < best_load) {
      best = r.offset + p.hop;
      best_load = l;
    }
  }
  p.at = best;
  return arena_[best + 1];
}

}  // namespace lockstep::packet
