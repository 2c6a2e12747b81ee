#pragma once
// NIC failover, PXN-style (docs/routing.md "NIC failover"). A GPU whose own NICs no longer reach
// the network (a failed NIC-to-leaf link, a failed PCIe link to its NIC) sends and receives its
// network traffic through another GPU of its node: over NVLink to that GPU, then through that
// GPU's NIC, as NCCL's PXN (PCI x NVLink, NCCL 2.12) moves data to the GPU next to the NIC it
// uses. Internal to routing.
#include <vector>

#include "lockstep/topology/graph.hpp"

namespace lockstep::routing_detail {

/// Whether `gpu` reaches the network through its own PCIe side: a NIC or host of its node,
/// reached without crossing a GPU, with a link to a switch, a gateway, or another node's NIC or
/// host.
bool reaches_network(const Topology& topo, DeviceId gpu);

/// Usable NIC of a node-structured GPU: an attached NIC with a link into the network.
bool nic_in_service(const Topology& topo, DeviceId nic);

class NicFailover {
 public:
  explicit NicFailover(const Topology& topo);
  /// The GPU whose NIC carries `gpu`'s traffic to and from other nodes, or kNone when `gpu` uses
  /// its own (or no GPU of its node reaches the network either). The relay is the next GPU of
  /// the node in local order (wrapping) that reaches the network itself.
  DeviceId relay(DeviceId gpu) const { return relay_.empty() ? kNone : relay_[gpu]; }

 private:
  std::vector<DeviceId> relay_;  // per device; empty when no GPU needs a relay
};

}  // namespace lockstep::routing_detail
