#pragma once
// The topology: an immutable, index-based graph of devices and full-duplex links. Every later
// stage (routing, engines, reports) reads it; nothing mutates it after TopologyBuilder::build().
// A link has one bandwidth per direction; directed link ids are 2*link + dir, where dir 0 goes
// from link.a to link.b and dir 1 from b to a. Engines keep per-direction state indexed by them.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "lockstep/core/units.hpp"

namespace lockstep {

using DeviceId = std::uint32_t;
using LinkId = std::uint32_t;
using DirLinkId = std::uint32_t;  // 2 * LinkId + direction
inline constexpr std::uint32_t kNone = 0xFFFFFFFFu;

enum class DeviceKind : std::uint8_t {
  Gpu,
  Nic,
  Host,           // CPU / PCIe root of a server
  ScaleUpSwitch,  // NVSwitch, NVLink Switch tray
  Switch,         // Ethernet or InfiniBand switch; Device::tier says which tier (0 = leaf)
  Gateway,        // datacenter interconnect router at a site's edge
};

enum class LinkMedium : std::uint8_t {
  NvLink,
  Pcie,
  CopperDac,
  ActiveElectrical,
  Optical,
  LongHaulFibre,
  // The link between a server's CPU sockets (Intel QPI / UPI, AMD Infinity Fabric xGMI): board
  // traces between the root complexes, carrying PCIe traffic from one socket to the other.
  CpuLink,
};

const char* to_string(DeviceKind kind);
const char* to_string(LinkMedium medium);
/// A trace on a server's boards (NVLink, PCIe, the CPUs' socket link): no cable, no optics, and
/// what it carries stays in the server.
constexpr bool on_board(LinkMedium medium) {
  return medium == LinkMedium::NvLink || medium == LinkMedium::Pcie ||
         medium == LinkMedium::CpuLink;
}
/// "leaf", "spine", "core" for switch tiers 0, 1, 2, else "tier3+".
const char* switch_tier_name(std::uint8_t tier);

struct Device {
  DeviceKind kind = DeviceKind::Gpu;
  std::uint8_t tier = 0;          // switches: 0 leaf, 1 spine, 2 core; others 0
  std::uint32_t node = kNone;     // server (node) index for GPUs, NICs, hosts, in-node switches
  std::uint32_t site = 0;         // datacenter index (multi_site)
  std::uint32_t local_index = 0;  // e.g. GPU index within its node (the rail for rail fabrics)
  std::uint16_t model = 0;        // index into the hardware catalog of its kind (0 = default)
  std::uint16_t radix = 0;        // switch ports available (0 = unlimited / not a switch)
};

struct Link {
  DeviceId a = kNone;
  DeviceId b = kNone;
  Bandwidth bandwidth;  // per direction
  Time latency;         // propagation + serialisation-independent fixed latency, one way
  LinkMedium medium = LinkMedium::CopperDac;
  double length_m = 0;  // physical length (long-haul fibre, optics reach checks)
};

/// One end of a link seen from a device: the directed link leaving the device and the peer.
struct Port {
  DirLinkId out;  // directed id leaving this device
  DeviceId peer;
};

/// What kind of hardware a topology is made of, for engines and cost models that depend on it
/// (NCCL's constants differ by GPU generation; the packet engine's flow control by technology).
/// Builders set it from the catalog names they were given.
struct ClusterTraits {
  std::string gpu = "h100";           // catalog GPU name
  std::string scale_up = "nvswitch";  // nvswitch | nvl72 | nvlink_domain | pcie | none
  // infiniband | roce | ethernet | ultra_ethernet | efa | tcp | slingshot
  std::string fabric = "infiniband";
  std::string nic = "";             // catalog NIC name
  std::string switch_model = "";    // catalog scale-out switch name
  std::uint32_t gpus_per_node = 0;  // 0: not node-structured
  std::uint32_t nics_per_node = 0;
  bool sharp = false;  // in-network reduction available in the scale-out switches
  bool nvls = false;   // NVLink SHARP available in the scale-up domain
  // How the scale-out fabric routes (docs/routing.md "By technology"): a routing policy's name
  // (routing/policy.hpp), empty for the technology's own; and the queue pairs NCCL spreads one
  // connection over (NCCL_IB_QPS_PER_CONNECTION), 0 for NCCL's default of 1.
  std::string routing;
  std::uint32_t qps_per_connection = 0;
  // A torus of GPUs (torus builder): its sizes, the first varying fastest in gpus() order.
  std::vector<std::uint32_t> torus_dims;
};

/// One port of a pluggable-optics cage: the end at `device` of link `link`. Links from 0 to
/// num_links() - 1 are the graph's; num_links() + i is management link i.
struct CageEnd {
  std::uint64_t link = 0;
  DeviceId device = kNone;
};

class Topology {
 public:
  Topology() = default;

  const std::string& name() const { return name_; }
  const ClusterTraits& traits() const { return traits_; }
  std::size_t num_devices() const { return devices_.size(); }
  std::size_t num_links() const { return links_.size(); }
  const Device& device(DeviceId id) const { return devices_[id]; }
  const Link& link(LinkId id) const { return links_[id]; }
  std::span<const Device> devices() const { return devices_; }
  std::span<const Link> links() const { return links_; }

  /// Ports of a device (one per attached link), in the order the links were added.
  std::span<const Port> ports(DeviceId id) const {
    return {ports_.data() + port_offsets_[id], ports_.data() + port_offsets_[id + 1]};
  }
  /// GPUs in rank order: node-major, then local index (the default rank placement).
  std::span<const DeviceId> gpus() const { return gpus_; }
  std::uint32_t num_nodes() const { return num_nodes_; }
  std::uint32_t num_sites() const { return num_sites_; }

  // Directed-link helpers.
  static LinkId link_of(DirLinkId d) { return d >> 1; }
  DeviceId source(DirLinkId d) const { return (d & 1) ? links_[d >> 1].b : links_[d >> 1].a; }
  DeviceId target(DirLinkId d) const { return (d & 1) ? links_[d >> 1].a : links_[d >> 1].b; }
  std::size_t num_directed_links() const { return links_.size() * 2; }

  /// True when every device can reach every other (cached at build time).
  bool connected() const { return connected_; }

  // What the bill of materials counts beyond the links that carry jobs' traffic
  // (docs/topology.md "Transceivers per module"): cables from fabric-management appliances (UFM)
  // into switch ports (a = kNone, the appliance; b = the switch), and the cages whose ports share
  // one pluggable module (a twin-port OSFP). Ends in no cage take a module each.
  std::span<const Link> management_links() const { return management_; }
  std::size_t num_cages() const { return cage_ports_.size(); }
  std::span<const CageEnd> cage(std::size_t i) const {
    return {cage_ends_.data() + cage_offsets_[i], cage_ends_.data() + cage_offsets_[i + 1]};
  }
  /// The ports cage i holds, used or not: its module's (a twin-port cage with one port cabled
  /// still takes a twin-port module).
  std::uint32_t cage_ports(std::size_t i) const { return cage_ports_[i]; }

 private:
  friend class TopologyBuilder;
  std::string name_;
  ClusterTraits traits_;
  std::vector<Device> devices_;
  std::vector<Link> links_;
  std::vector<std::uint32_t> port_offsets_;  // CSR: size num_devices + 1
  std::vector<Port> ports_;
  std::vector<DeviceId> gpus_;
  std::uint32_t num_nodes_ = 0;
  std::uint32_t num_sites_ = 1;
  bool connected_ = true;
  std::vector<Link> management_;
  std::vector<CageEnd> cage_ends_;
  std::vector<std::uint32_t> cage_offsets_;  // CSR over cage_ends_; empty: no cages
  std::vector<std::uint32_t> cage_ports_;
};

/// The names ClusterTraits::routing accepts.
const std::vector<std::string>& routing_policy_names();

/// Where a link sits at a NIC: a GPU's (PCIe) link to its NIC, a NIC's link into the fabric
/// (whose speed is the NIC's line rate as built), two NICs cabled back to back, or no NIC end.
enum class NicSide : std::uint8_t { None, GpuToNic, NicToFabric, NicToNic };
NicSide nic_side(const Topology& topo, const Link& link);
/// A scale-out network link: one end is an Ethernet/InfiniBand switch or a gateway, it joins two
/// NICs, or it is a GPU's (PCIe) link to its NIC, since NCCL's network speed is that of the whole
/// GPU-to-wire path, or a cable between GPUs of two servers (a torus, a full mesh of one-GPU
/// nodes: it is their network). NVLink, other GPU-GPU and PCIe links are not. Engines price these
/// links at NCCL's network efficiency and the others at its scale-up one.
bool is_network_link(const Topology& topo, LinkId link);

/// Mutable staging area for builders; build() freezes it into a Topology (CSR adjacency,
/// GPU order, connectivity), throwing InputError for dangling endpoints or zero bandwidth.
class TopologyBuilder {
 public:
  explicit TopologyBuilder(std::string name) { topo_.name_ = std::move(name); }
  DeviceId add_device(const Device& d);
  LinkId add_link(const Link& l);
  /// A management cable into switch `l.b` (l.a = kNone), counted but not routed over.
  void add_management_link(const Link& l) { topo_.management_.push_back(l); }
  const Link& management_link(std::size_t i) const { return topo_.management_[i]; }
  /// Ports sharing one module in a cage of `ports` (at least ends.size()); build() checks that
  /// each end exists and is in one cage at most.
  void add_cage(std::span<const CageEnd> ends, std::uint32_t ports);
  std::size_t num_links() const { return topo_.links_.size(); }
  const Link& link(LinkId id) const { return topo_.links_[id]; }
  void reserve(std::size_t devices, std::size_t links);
  void set_traits(ClusterTraits traits) { topo_.traits_ = std::move(traits); }
  std::size_t num_devices() const { return topo_.devices_.size(); }
  const Device& device(DeviceId id) const { return topo_.devices_[id]; }
  Topology build() &&;

 private:
  Topology topo_;
};

}  // namespace lockstep
