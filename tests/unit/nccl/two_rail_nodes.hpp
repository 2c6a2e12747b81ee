#pragma once
// Two HGX H100 nodes whose rails meet through one thin spine (nccl/pxn_switch_test.cpp,
// workload/pxn_moe_test.cpp): where PXN keeps a byte on its rail and where it crosses the spine.
#include "lockstep/topology/builder.hpp"
#include "lockstep/topology/graph.hpp"
#include "lockstep/topology/presets.hpp"

namespace lockstep::testing {

/// 2 HGX H100 nodes on NDR rail leaves. nodes_per_su 2 at oversubscription 2 gives each rail
/// leaf 2 NIC ports and 1 uplink, so one spine joins the 8 leaves by one 400G cable each: a
/// cross-rail byte has exactly one path, and the spine's cables bind when cross-rail traffic
/// uses them.
struct TwoRailNodes {
  PresetCluster preset = resolve_preset({.system = "hgx-h100", .nodes = 2});
  BuildResult built = build();
  BuildResult build() const {
    ArgNode args = rail_optimized_args(preset);
    args.set("nodes_per_su", ArgNode::scalar("2", "test"));
    args.set("oversubscription", ArgNode::scalar("2", "test"));
    return build_topology(args);
  }
  const Topology& topo() const { return *built.graph; }
};

/// A cable between two switches (a leaf's uplink or the spine's downlink).
inline bool spine_cable(const Topology& t, DirLinkId d) {
  return t.device(t.source(d)).kind == DeviceKind::Switch &&
         t.device(t.target(d)).kind == DeviceKind::Switch;
}

/// A NIC's cable up to its rail's leaf.
inline bool nic_to_leaf(const Topology& t, DirLinkId d) {
  return t.device(t.source(d)).kind == DeviceKind::Nic &&
         t.device(t.target(d)).kind == DeviceKind::Switch;
}

/// A GPU's NVLink out (to its NVSwitch: one link a GPU on these nodes).
inline bool gpu_nvlink(const Topology& t, DirLinkId d) {
  return t.device(t.source(d)).kind == DeviceKind::Gpu &&
         t.link(Topology::link_of(d)).medium == LinkMedium::NvLink;
}

}  // namespace lockstep::testing
