#pragma once
// Diameter (scale-out hops) and worst fixed latency of a built graph, the inventory's path
// figures.
#include <cstdint>

#include "lockstep/core/units.hpp"
#include "lockstep/topology/graph.hpp"

namespace lockstep {

struct PathExtent {
  std::uint32_t switch_hops = 0;  // scale-out hops (see docs/topology.md) to the farthest GPU
  Time latency;                   // lowest fixed one-way latency to the farthest GPU
};

/// From GPU `source` (default: rank 0) to every other GPU: the largest number of scale-out hops on
/// a fewest-hop path (hops are links between forwarding elements: switches, gateways, and GPUs
/// wired directly to each other; NVLink and PCIe attachments are not hops), and the largest
/// lowest-latency one-way fixed latency. In the symmetric builders every GPU sees the same
/// extent, so one source gives the diameter. O(V + E log V).
PathExtent measure_paths(const Topology& topo, DeviceId source = kNone);

}  // namespace lockstep
