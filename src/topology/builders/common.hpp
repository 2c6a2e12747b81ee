#pragma once
// Pieces every node-structured builder shares: reading the hardware keys (gpu, nic, switch, radix,
// port_speed, latencies, cable lengths), the node layout (GPUs per node, NICs, scale-up domain),
// adding servers to a graph in the canonical node model (docs/topology.md), and scale-out links
// whose medium, latency and cable follow from their length and the catalog.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lockstep/config/arg_node.hpp"
#include "lockstep/topology/builder.hpp"
#include "lockstep/topology/catalog.hpp"
#include "lockstep/topology/graph.hpp"
#include "lockstep/topology/inventory_count.hpp"

namespace lockstep::builders {

/// Scale-out hardware: the switch, its (possibly overridden) radix, port speed and latency, the
/// NIC, the GPU and the PCIe link between them, and the cable lengths of each tier.
struct Hardware {
  const GpuSpec* gpu = nullptr;
  std::uint16_t gpu_model = 0;
  const NicSpec* nic = nullptr;
  std::uint16_t nic_model = 0;
  const SwitchSpec* sw = nullptr;
  std::uint16_t switch_model = 0;
  std::uint32_t radix = 0;
  // The spine (tier 1) and core (tier 2) switches: the leaf's unless a builder reads another
  // (spine_switch / core_switch of the Clos builders: a chassis or 128-port switch).
  struct TierSwitch {
    const SwitchSpec* sw = nullptr;
    std::uint16_t model = 0;
    std::uint32_t radix = 0;
    // Fabric link ends (at the leaves' port speed) one of its ports takes: a faster port split
    // by breakout (switch_breakout: an SN5600 800G port as 2 x 400G); 1 otherwise.
    std::uint32_t ends_per_port = 1;
    std::uint32_t ends() const { return radix * ends_per_port; }
  };
  TierSwitch spine, core;
  Bandwidth port_speed;
  // Spine-to-core links run at the highest rate both ends' ports support: the lower of the
  // spine's and the core's port speed (port_speed while neither tier has a switch of its own),
  // each spine port taking spine_up_ends_per_port of them (its breakout at that rate).
  Bandwidth core_link_speed;
  std::uint32_t spine_up_ends_per_port = 1;
  Time switch_latency;
  std::optional<Time> link_latency;  // overrides the propagation latency of scale-out cables
  const PcieSpec* pcie = nullptr;
  std::string transport;                  // ClusterTraits::fabric; "" = from the switch and NIC
  std::string routing;                    // ClusterTraits::routing
  std::uint32_t qps_per_connection = 0;   // ClusterTraits::qps_per_connection
  double host_link_m = 10;                // NIC to leaf
  double fabric_link_m = 30;              // leaf to spine
  double core_link_m = 100;               // spine to core
  Bandwidth host_link_bandwidth() const;  // min(NIC injection, switch port speed)
};

/// Reads gpu, switch, radix, port_speed, nic (or nic_speed), transport, pcie, link_latency,
/// switch_latency and the *_link_m keys. `default_switch` is used when the key is absent.
Hardware read_hardware(const ArgNode& args, const std::string& default_switch = "qm9700");

/// How GPUs are grouped into servers and scale-up domains.
struct NodeLayout {
  std::uint32_t gpus_per_node = 8;
  std::uint32_t nics_per_node = 8;
  const ScaleUpSpec* scale_up = nullptr;  // nullptr: no scale-up fabric
  std::uint16_t scale_up_model = 0;
  std::uint32_t domain_nodes = 1;      // servers per scale-up domain (NVL72: 18 trays)
  std::string scale_up_name = "none";  // ClusterTraits::scale_up
};

/// Reads gpus_per_node, nics_per_node, scale_up, scale_up_gpus. With `with_nics` false (torus,
/// scale-up only) nics_per_node is 0 and the key is not accepted.
NodeLayout read_node_layout(const ArgNode& args, const Hardware& hw, bool with_nics = true);

/// One GPU pair's link in a mesh node. An AMD Instinct UBB (the GPU's own xGMI mesh) wires one
/// link per pair, so a node of fewer GPUs than links + 1 leaves links idle (MI300X datasheet: 7
/// links to the 7 peers of an 8-GPU platform); another GPU wired pairwise spreads its scale-up
/// bandwidth over its g - 1 peers.
Bandwidth mesh_pair_bandwidth(const Hardware& hw, const NodeLayout& layout);

/// Adds `nodes` servers: GPUs, one ScaleUpSwitch per domain (or a mesh), NICs, NVLink and PCIe
/// links. Returns the NIC device ids, node-major (nics[node * nics_per_node + i]).
std::vector<DeviceId> add_nodes(TopologyBuilder& b, const Hardware& hw, const NodeLayout& layout,
                                std::uint32_t nodes);

/// Reads `nodes`, or `gpus` (a whole number of nodes); one of them is required.
std::uint32_t read_nodes(const ArgNode& args, const NodeLayout& layout);

/// Links add_nodes() creates for `nodes` servers (NVLink/mesh + PCIe).
std::uint64_t node_links(const NodeLayout& layout, std::uint64_t nodes);

/// Tells `tally` what add_nodes() would build, without building it.
void tally_nodes(BomTally& tally, const Hardware& hw, const NodeLayout& layout,
                 std::uint64_t nodes);

/// Adds a scale-out switch device.
DeviceId add_switch(TopologyBuilder& b, const Hardware& hw, std::uint8_t tier);

/// A scale-out link of `length_m`: medium from the length, latency = propagation (or the
/// link_latency override) + half the port-to-port latency of each switch end.
Link fabric_link(const Hardware& hw, DeviceId a, DeviceId b, Bandwidth bw, double length_m,
                 int switch_ends);

ClusterTraits make_traits(const Hardware& hw, const NodeLayout& layout);

/// Reads an oversubscription ratio: a number >= 1 or "a:b" (e.g. "2:1"); 1 when absent.
double read_ratio(const ArgNode& args, const std::string& key);

/// Splits `radix` ports into (down, up) with down / up <= ratio as close as possible:
/// ratio 1 on 64 ports -> (32, 32); ratio 2 -> (42, 21); ratio 3 -> (48, 16).
std::pair<std::uint32_t, std::uint32_t> split_ports(std::uint32_t radix, double ratio);

/// Reads a count key that must be present and positive: InputError naming the key otherwise.
std::uint64_t read_count(const ArgNode& args, const std::string& key, std::uint64_t max);

/// Throws InputError when the design would need more than options.max_links links.
void check_size(const ArgNode& args, std::uint64_t links, const BuildOptions& options);

/// Keys every node-structured builder accepts (for BuilderInfo::keys and --help).
std::vector<std::string> node_keys();

/// Fills the graph-derived parts of the inventory (counts, paths) and common figures.
void finish_inventory(BuildResult& result, Topology topo, const BuildOptions& options);

}  // namespace lockstep::builders
