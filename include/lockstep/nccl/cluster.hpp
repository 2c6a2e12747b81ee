#pragma once
// The cluster as NCCL sees it: GPU generation, NVLink domains ("nodes"), the bandwidth NCCL
// assumes between a node's GPUs and through its NICs. Derived from a preset or from a built
// topology; the tuner (nccl/tuner.hpp) prices collectives on it. docs/nccl-model.md explains each
// field.
//
//   NcclCluster c = nccl_cluster(resolve_preset({.system = "hgx-h100", .nodes = 2}));
//   // c.nodes == 2, c.gpus_per_node == 8, c.node_net_GBps() == 8 x 48
#include <cstdint>
#include <string>
#include <vector>

#include "lockstep/nccl/constants.hpp"
#include "lockstep/topology/graph.hpp"

namespace lockstep {

struct PresetCluster;  // topology/presets.hpp
struct FabricPreset;

/// What NCCL's model needs to know about a cluster.
struct NcclCluster {
  nccl::Generation generation = nccl::Generation::Hopper;
  std::string gpu = "h100";
  std::uint32_t nodes = 1;
  std::uint32_t gpus_per_node = 8;
  nccl::Path intra_path = nccl::Path::NvLink;  // NvLink (or xGMI) / Pcie between local GPUs
  double intra_GBps = 0;            // per GPU, one direction, as NCCL assumes (links x per link)
  std::uint32_t nics_per_node = 0;  // NICs serving the GPUs in use
  double nic_GBps = 0;              // line rate of one NIC (GB/s, one direction)
  double gpu_nic_GBps = 0;          // PCIe between a GPU and its NIC (one direction; 0: no limit)
  bool sharp = false;               // CollNet (InfiniBand SHARP) available
  bool nvls = false;                // NVLink SHARP available
  bool amd_host = false;            // host network post overhead 2 us instead of 1 us
  bool ll128_network = true;        // LL128 over the network (false for TCP sockets)
  double extra_net_step_us = 0;     // fabric latency per network step beyond NCCL's IB table
  // The NCCL_ALGO / NCCL_PROTO the fabric's transport is documented to run with (GCP's TCPX
  // profile: ring, Simple); empty: NCCL's defaults. They bound the tuner's automatic choice.
  std::vector<Algorithm> net_algos;
  std::vector<nccl::Proto> net_protos;
  // GPUs wired as a torus (one GPU per node, ranks in the builder's order): its sizes, for
  // torus_ring. Empty otherwise, and for any group other than every GPU in order.
  std::vector<std::uint32_t> torus_dims;

  std::uint32_t ranks() const { return nodes * gpus_per_node; }
  /// What one GPU can push through its NIC (GB/s): the NIC's line rate or, if lower, the PCIe
  /// link to it (NCCL's search takes the narrowest link of the GPU-to-NIC path).
  double nic_path_GBps() const;
  /// Per-node network bandwidth NCCL's search settles on (GB/s): NICs x search speed.
  double node_net_GBps() const;
  /// Ring/tree channels NCCL builds for this cluster (before small-message reduction).
  std::uint32_t max_channels() const;
};

/// The cluster description NCCL would derive from a preset.
NcclCluster nccl_cluster(const PresetCluster& preset);
/// The same from a built topology's traits and links (for --scenario clusters). An NVLink domain
/// spanning several servers (NVL72) is one NCCL node; `sharp` means the switches could (a sweep
/// turns it on).
NcclCluster nccl_cluster(const Topology& topo);
/// Sets the transport's costs and limits of `fabric` on `c` (extra step latency, LL128 over the
/// network, the documented NCCL_ALGO / NCCL_PROTO).
void apply_transport(NcclCluster& c, const FabricPreset& fabric);

}  // namespace lockstep
