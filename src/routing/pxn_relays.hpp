#pragma once
// NCCL's PXN (PCI x NVLink, NCCL 2.12) for point-to-point traffic between nodes
// (docs/routing.md "PXN"). A GPU sending to a GPU of another node does not use its own NIC: it
// writes the data over NVLink (xGMI on AMD) into the GPU of its node with the receiver's local
// index, whose NIC posts it, so the transfer leaves on the receiver's rail and stays on that
// rail's leaf. Internal to routing.
#include <unordered_map>
#include <utility>
#include <vector>

#include "lockstep/topology/graph.hpp"

namespace lockstep::routing_detail {

class PxnRelays {
 public:
  explicit PxnRelays(const Topology& topo);
  /// The GPU through whose NIC `src` sends to `dst`, or kNone when `src` sends through its own:
  /// both ends GPUs of different nodes with different local indices, and the GPU of src's node
  /// with dst's local index reached over the scale-up domain (a direct NVLink / xGMI link or a
  /// shared scale-up switch: NCCL's PATH_NVL) with a NIC in service that is not src's own, and
  /// dst not reached so (an NVL72 rack's trays meet over NVLink, not the network).
  DeviceId relay(DeviceId src, DeviceId dst) const;

 private:
  bool scale_up_peers(DeviceId a, DeviceId b) const;

  const Topology& topo_;
  // node -> (position of its first GPU in topo.gpus(), its GPU count)
  std::unordered_map<std::uint32_t, std::pair<std::size_t, std::size_t>> node_gpus_;
  std::vector<DeviceId> own_nic_;  // per device: the NIC a GPU is cabled to, else kNone
};

}  // namespace lockstep::routing_detail
