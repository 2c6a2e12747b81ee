#pragma once
// The switch tiers of a folded Clos, shared by leaf_spine, fat_tree and rail_optimized.
//
// 2 tiers: `leaves` leaves with `leaf_up` uplinks each; spines = the smallest divisor of leaf_up
//   that is at least ceil(leaves * leaf_up / radix) (equal_links_spines), and leaf l's uplink j
//   goes to spine (l * leaf_up + j) mod spines, so every leaf has leaf_up / spines links to every
//   spine (as the DGX SuperPOD reference architectures wire them); build_clos first pads a
//   leaf's uplinks to a multiple of the spines' need where it has free ports and is not
//   oversubscribed (pad_uplinks in clos_build.cpp). Non-blocking needs
//   leaves <= radix; beyond that every leaf still reaches every spine and the spines overflow
//   their radix (reported as infeasible).
// 3 tiers: leaves are grouped into pods of `leaves_per_pod`; each pod has `leaf_up` spines and
//   leaf uplink j goes to the pod's spine j. Spine j of every pod belongs to core plane j, which
//   has ceil(pods * spine_up / radix) cores; spine (p, j)'s uplink m goes to core
//   (p * spine_up + m) mod cores_per_plane. The k-ary fat tree is the case radix = k,
//   leaf_up = spine_up = leaves_per_pod = k/2. Non-blocking needs pods <= radix.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common.hpp"
#include "lockstep/topology/inventory.hpp"

namespace lockstep::builders {

struct ClosShape {
  std::uint32_t leaves = 0;
  std::uint32_t leaf_up = 0;
  std::uint32_t tiers = 2;           // 2 or 3; a single leaf needs no spines whatever this says
  std::uint32_t leaves_per_pod = 0;  // 3 tiers only
  std::uint32_t spine_up = 0;        // 3 tiers only: links at Hardware::core_link_speed
  // 2 tiers: leaf l belongs to plane l % planes (a rail fabric's rail) and reaches only its
  // plane's spines: rail-planed, each rail its own leaf-spine fabric.
  std::uint32_t planes = 1;
};

struct ClosCounts {
  std::uint32_t spines = 0;
  std::uint32_t cores = 0;
  std::uint32_t pods = 0;  // 3 tiers; 1 otherwise
  std::uint32_t cores_per_plane = 0;
  std::uint32_t spines_per_plane = 0;  // 2 tiers: spines of each rail plane
  std::uint64_t links = 0;             // inter-switch links
};

/// Spines of a 2-tier Clos: the fewest that hold leaves x leaf_up uplinks on `radix` ports and
/// give every leaf the same number of links to every spine (a divisor of leaf_up). NVIDIA DGX
/// SuperPOD H100 RA, compute fabric table: 8 / 16 / 24 / 32 leaves of 32 uplinks on 64-port
/// QM9700 spines take 4 / 8 / 16 / 16 spines.
std::uint32_t equal_links_spines(std::uint32_t leaves, std::uint32_t leaf_up, std::uint32_t radix);

/// Counts without building (to check sizes before allocating), for spines and cores of these
/// radixes.
ClosCounts plan_clos(const ClosShape& shape, std::uint32_t spine_radix, std::uint32_t core_radix);

/// Adds the leaves (returned, in order), spines, cores and the links between them.
std::vector<DeviceId> add_clos_switches(TopologyBuilder& b, const Hardware& hw,
                                        const ClosShape& shape, ClosCounts& counts);

/// Bisection of a Clos carrying `hosts` endpoints of `host_bw`: the least of the hosts' half,
/// the leaf uplinks' half (at `port`) and (3 tiers, several pods) the spine uplinks' half (at
/// `core_port`).
Bandwidth clos_bisection(const ClosShape& shape, const ClosCounts& counts, std::uint64_t hosts,
                         Bandwidth host_bw, Bandwidth port, Bandwidth core_port);

/// A Clos fabric over canonical nodes (docs/topology.md): the shape of its switch tiers and which
/// leaf each NIC plugs into.
struct ClosDesign {
  std::string builder;  // graph name
  Hardware hw;
  NodeLayout layout;
  std::uint32_t nodes = 0;
  ClosShape shape;
  std::uint32_t leaf_down = 0;     // host ports per leaf
  std::uint32_t nodes_per_su = 0;  // rail fabrics: NIC r of node n -> leaf (n / nodes_per_su,
                                   // r); 0: NICs fill leaves in order, leaf_down each
  // Cables from fabric-management appliances (UFM) into the last SU's free leaf ports, spread
  // over its rails; counted in the bill of materials, not wired in the graph (no job traffic).
  std::uint32_t management_links = 0;
  // Transceivers per pluggable module rather than per link end: switch cages per
  // switch_ports_per_cage(), `nic_ports_per_module` NIC ports per node-side cage. Unset (no
  // `optics` key): per module where a tier's switch has twin-port cages, as a real bill of
  // materials counts them; per port otherwise (the same count with single-port cages).
  std::optional<bool> optics_per_module;
  std::uint32_t nic_ports_per_module = 1;
  // Dual-ToR NICs (Alibaba HPN, SIGCOMM 2024; leaf_spine only): each NIC's two ports, at half
  // its rate each, to the two leaves of a pair (leaves 2k and 2k + 1 hold the same NICs; with
  // shape.planes 2 each in its own plane of spines, none when a plane has one leaf).
  bool dual_tor = false;
  std::string design;                 // Inventory::design
  std::vector<std::string> problems;  // feasibility problems found while planning
};

/// Builds the graph and counts it, or (options.want_graph false, or more links than
/// options.max_links) tallies the same design analytically without a graph; then sets injection,
/// bisection, oversubscription, diameter and latency.
BuildResult build_clos(const ArgNode& args, const ClosDesign& design, const BuildOptions& options);

/// Reads `optics` (per_port | per_module; absent: per_module where a switch tier has twin-port
/// cages, decided in build_clos) and `nic_ports_per_module` (1 or 2) into `design`.
void read_optics(const ArgNode& args, ClosDesign& design);

/// Reads `spine_switch` (spines, and cores unless `core_switch` says otherwise) and, where the
/// builder has a core tier (`core`), `core_switch` into `hw`: a catalog switch of the leaves'
/// fabric whose ports run at least at the leaves' uplink rate, taking switch_breakout() of
/// those links a port (Hardware::TierSwitch::ends_per_port). Absent: the leaves' switch.
void read_tier_switches(const ArgNode& args, Hardware& hw, bool core);

/// Spine-to-core links of a spine with `down_ends` links to leaves (at port_speed) at a
/// down:up bandwidth ratio of `ratio`, at Hardware::core_link_speed: ceil(down bandwidth /
/// (ratio x link rate)). Equal rates give ceil(down_ends / ratio).
std::uint32_t spine_up_links(const Hardware& hw, std::uint64_t down_ends, double ratio);

/// A spine's ports split as split_ports() splits a leaf's, in ports that carry links of two
/// rates: down ports take Hardware::TierSwitch::ends_per_port leaf links, up ports
/// spine_up_ends_per_port core links; the most down ports whose up links fit the rest at
/// `ratio`. Returns (leaf link ends, core links). 64 SN5600 ports under 400G leaves at 1:1 with
/// 800G cores: 32 ports down (64 ends), 32 up (32 links at 800G).
std::pair<std::uint32_t, std::uint32_t> split_spine_ports(const Hardware& hw, double ratio);

/// ", spines NAME radix R" (", cores ...": `what`) for the design line of a tier switch other
/// than the leaves', with its split for links of `rate` ("(2 x 400G a port)": the leaves'
/// uplink rate for spines, Hardware::core_link_speed for cores) or its ports' slower rate.
std::string tier_switch_note(const Hardware::TierSwitch& s, Bandwidth rate,
                             const std::string& what);

/// ", spine-core links at 800G" where they run at another rate than the leaves' uplinks; "".
std::string core_links_note(const Hardware& hw);

/// The keys read_optics() reads, for BuilderInfo::keys.
std::vector<std::string> optics_keys();

/// Sets TierFigures::oversubscription of the tier named `tier` (if present).
void set_tier_ratio(Inventory& inv, const std::string& tier, double ratio);

}  // namespace lockstep::builders
