#pragma once
// System and fabric presets: real clusters as shipped ("hgx-h100" on "ib-ndr"), sized by a node
// count into a rail-optimised, non-blocking scale-out fabric. `lockstep collective --system
// hgx-h100 --fabric ib-ndr --nodes 16` and the topology builder "preset" (keys: system, fabric,
// nodes, gpus_per_node, nics_per_node, nic_speed, sharp) both resolve through here. The hardware
// figures come from the catalog (catalog.hpp); docs/presets.md lists every preset and its source.
//
//   PresetCluster c = resolve_preset({.system = "hgx-h100", .fabric = "ib-ndr", .nodes = 16});
//   // c.gpus_per_node == 8, c.nics_per_node == 8, c.nic_speed == 400 Gb/s
#include <cstdint>
#include <string>
#include <vector>

#include "lockstep/config/arg_node.hpp"
#include "lockstep/core/units.hpp"

namespace lockstep {

struct SystemPreset {
  std::string name;             // "hgx-h100"
  std::string gpu;              // catalog GPU name
  std::string scale_up;         // catalog scale-up name
  std::uint32_t gpus_per_node;  // as shipped (a GB200 NVL72 compute tray has 4)
  std::uint32_t nics_per_node;  // scale-out NICs as shipped
  std::string fabric;           // default fabric preset
  std::uint32_t domain_nodes;   // nodes sharing one NVLink domain (18 trays for NVL72), else 1
  bool amd_host;                // host CPU vendor (NCCL's network overhead differs)
  std::string summary;
};

struct FabricPreset {
  std::string name;          // "ib-ndr"
  std::string technology;    // infiniband | roce | efa | tcp
  std::string nic;           // catalog NIC name
  Bandwidth nic_speed;       // per NIC, per direction
  std::string switch_model;  // catalog switch name
  Time nic_latency;          // GPU to wire through NIC and PCIe, one way
  Time extra_step_latency;   // per network step beyond NCCL's InfiniBand-based table
  bool sharp_capable;        // the switches reduce in-network (SHARP)
  std::string summary;
  // NICs per node as the instance ships them when that differs from the system's count (p5:
  // 32 EFA devices for 8 GPUs); 0: the system's.
  std::uint32_t nics_per_node;
  // The NCCL_ALGO / NCCL_PROTO the transport's vendor documents for it (GCP's TCPX profile:
  // "Ring", "Simple"); empty: NCCL's defaults. They bound NCCL's automatic choice only.
  std::string nccl_algo;
  std::string nccl_proto;
};

/// How `nodes` servers fill scale-up domains of at most `per_domain` servers (NVL72 racks of 18
/// trays): as few domains as hold them, filled evenly, so that domain sizes differ by at most one
/// server and the larger ones come first. 32 trays are 2 racks of 16 (not 18 + 14), 48 trays 3 of
/// 16, 20 trays 2 of 10, 37 trays 13 + 12 + 12 (docs/presets.md).
struct DomainFill {
  std::uint32_t domains = 1;
  std::uint32_t small = 1;  // servers in each of the smaller domains
  std::uint32_t large = 0;  // domains holding small + 1 servers (the first ones)
  bool equal() const { return large == 0; }
  std::uint32_t largest() const { return large > 0 ? small + 1 : small; }
  /// Domain of server n (0-based).
  std::uint32_t domain_of(std::uint32_t n) const;
  /// First server of domain d.
  std::uint32_t first_node(std::uint32_t d) const;
};
DomainFill fill_domains(std::uint32_t nodes, std::uint32_t per_domain);

const std::vector<SystemPreset>& system_presets();
const std::vector<FabricPreset>& fabric_presets();
/// Lookups: InputError(field, "unknown system 'x' (known: dgx-a100, ...)") when absent.
const SystemPreset& system_preset(const std::string& name, const std::string& field = "system");
const FabricPreset& fabric_preset(const std::string& name, const std::string& field = "fabric");

/// What the user asked for; zero / empty means "as shipped".
struct PresetRequest {
  std::string system = "hgx-h100";
  std::string fabric;  // empty: the system's own
  std::uint32_t nodes = 1;
  std::uint32_t gpus_per_node = 0;
  std::uint32_t nics_per_node = 0;
  Bandwidth nic_speed;
  bool sharp = false;
  // Nodes per NVLink domain when the rack is partitioned (an NVL72 split into NVLink partitions
  // of 1-18 trays, as NVIDIA's fabric manager allows); 0: the whole rack.
  std::uint32_t domain_nodes = 0;
  // The fabric's routing policy (empty: its technology's, docs/routing.md) and
  // NCCL_IB_QPS_PER_CONNECTION (0: NCCL's default, 1).
  std::string routing;
  std::uint32_t qps_per_connection = 0;
};

/// A validated cluster: presets plus overrides.
struct PresetCluster {
  SystemPreset system;
  FabricPreset fabric;
  std::uint32_t nodes = 1;
  std::uint32_t gpus_per_node = 8;  // GPUs in use per node
  std::uint32_t nics_per_node = 8;  // NICs serving the GPUs in use
  Bandwidth nic_speed;
  bool sharp = false;
  bool nvls = false;                     // NVLink SHARP in the scale-up switches
  std::string routing;                   // PresetRequest::routing
  std::uint32_t qps_per_connection = 0;  // PresetRequest::qps_per_connection

  std::uint32_t ranks() const { return nodes * gpus_per_node; }
  /// How the nodes fill NVLink domains (fill_domains with the system's domain_nodes).
  DomainFill fill() const;
  /// GPUs of the largest NVLink domain (one node, or up to 18 trays of an NVL72 rack).
  std::uint32_t domain_gpus() const;
  /// Number of NVLink domains.
  std::uint32_t domains() const;
};

/// Validates and applies overrides: unknown names, gpus_per_node above what the system ships,
/// zero nodes or NICs, --sharp on a fabric without SHARP switches, an NVLink partition larger
/// than the system's domain -> InputError naming the field.
/// NVL72 systems take any tray count (fill_domains says how they fill racks).
PresetCluster resolve_preset(const PresetRequest& request);

/// Reads a request from a map with keys system, fabric, nodes, gpus_per_node, nics_per_node,
/// nic_speed, sharp, domain_nodes (file:line:column in errors when the map came from a file).
PresetRequest preset_request(const ArgNode& args);

/// The arguments of the rail_optimized builder (docs/topology.md) that build this cluster: one
/// non-blocking rail-optimised fabric of the fabric's switches, SUs of min(32, radix / 2)
/// nodes, NIC links at nic_speed, the system's scale-up domain (NVL72 racks for gb200-nvl72).
/// `path` prefixes the dotted paths of the generated nodes (for error messages).
ArgNode rail_optimized_args(const PresetCluster& cluster, const std::string& path = "preset");

}  // namespace lockstep
