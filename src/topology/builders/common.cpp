#include "common.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "lockstep/core/error.hpp"
#include "lockstep/topology/inventory_count.hpp"
#include "lockstep/topology/inventory_paths.hpp"
#include "lockstep/topology/presets.hpp"

namespace lockstep::builders {
namespace {

// Looks a catalog name up, re-raising an unknown name at the key's own location.
template <typename F>
auto lookup(const ArgNode& args, const std::string& key, const std::string& fallback, F find) {
  const ArgNode* node = args.find(key);
  if (node == nullptr) return find(fallback);
  if (node->kind() != ArgNode::Kind::Scalar) node->fail("expected a catalog name");
  try {
    return find(node->text());
  } catch (const InputError& e) {
    node->fail(e.bare_message());
  }
}

Time read_latency(const ArgNode& args, const std::string& key, Time fallback) {
  const ArgNode* node = args.find(key);
  if (node == nullptr) return fallback;
  const Time t = node->as_time();
  if (t < Time::zero() || t > Time::s(1)) node->fail("must be between 0 and 1 s");
  return t;
}

}  // namespace

Bandwidth Hardware::host_link_bandwidth() const {
  return std::min(nic->injection(), port_speed);
}

Hardware read_hardware(const ArgNode& args, const std::string& default_switch) {
  Hardware hw;
  hw.sw = lookup(args, "switch", default_switch,
                 [](const std::string& n) { return &switch_spec(n, "switch"); });
  hw.switch_model = static_cast<std::uint16_t>(hw.sw - switch_catalog().data());
  hw.radix = static_cast<std::uint32_t>(args.get_int("radix", hw.sw->radix, 2, 65'535));
  hw.spine = {hw.sw, hw.switch_model, hw.radix};
  hw.core = hw.spine;
  hw.port_speed = args.get_bandwidth("port_speed", hw.sw->port_speed);
  if (!(hw.port_speed.bytes_per_second() > 0)) args.at("port_speed").fail("must be positive");
  // A port trains down to a slower rate (InfiniBand link training, Ethernet auto-negotiation),
  // never above its datasheet's: a faster port_speed would price and route a switch that does not
  // exist. The one exception is a host port that stands for several NIC ports fused into one
  // (nic_ports_fused: NCCL fuses the NICs of one GPU, as AWS p5's 4 x 100G or a GB300 tray's 2 x
  // 400G per GPU, and the presets wire them as one port of their summed speed).
  const auto fused = args.get_int("nic_ports_fused", 1, 1, 64);
  if (hw.port_speed.bytes_per_second() >
      static_cast<double>(fused) * hw.sw->port_speed.bytes_per_second()) {
    args.at("port_speed")
        .fail(fmt::format("{} is above {}switch '{}''s ports of {}", to_string(hw.port_speed),
                          fused > 1 ? fmt::format("{} fused ports of ", fused) : "", hw.sw->name,
                          to_string(hw.sw->port_speed)));
  }
  hw.core_link_speed = hw.port_speed;
  std::string default_nic = default_nic_for(*hw.sw).name;
  if (const ArgNode* speed = args.find("nic_speed")) {
    // A NIC by speed: the first catalog NIC of the switch's fabric at that port speed.
    if (args.has("nic")) speed->fail("give either nic or nic_speed, not both");
    const Bandwidth want = speed->as_bandwidth();
    const std::string fabric = hw.sw->fabric == "infiniband" ? "infiniband" : "roce";
    default_nic.clear();
    for (const NicSpec& n : nic_catalog()) {
      if (n.fabric == fabric && n.port_speed == want) {
        default_nic = n.name;
        break;
      }
    }
    if (default_nic.empty()) {
      speed->fail(fmt::format("no {} NIC of {} in the catalog", fabric, to_string(want)));
    }
  }
  hw.nic =
      lookup(args, "nic", default_nic, [](const std::string& n) { return &nic_spec(n, "nic"); });
  hw.nic_model = static_cast<std::uint16_t>(hw.nic - nic_catalog().data());
  const bool ib_switch = hw.sw->fabric == "infiniband";
  if (hw.nic->fabric != "efa" && (hw.nic->fabric == "infiniband") != ib_switch) {
    const ArgNode* where = args.find("nic");
    const std::string message =
        fmt::format("NIC '{}' speaks {} but switch '{}' is {}", hw.nic->name, hw.nic->fabric,
                    hw.sw->name, hw.sw->fabric);
    if (where != nullptr) where->fail(message);
    args.fail(message);
  }
  if (const ArgNode* transport = args.find("transport")) {
    // The transport over the fabric (the packet engine's flow and congestion control): an
    // InfiniBand switch carries InfiniBand, an Ethernet switch RoCE, plain Ethernet, Ultra
    // Ethernet, TCP or Slingshot (HPE's Ethernet-based HPC transport); EFA runs over AWS's own
    // fabric.
    hw.transport = transport->as_choice(
        {"infiniband", "roce", "ethernet", "ultra_ethernet", "efa", "tcp", "slingshot"});
    const bool ib = hw.transport == "infiniband";
    if (hw.transport != "efa" && ib != ib_switch) {
      transport->fail(fmt::format("{} does not run over switch '{}' ({})", hw.transport,
                                  hw.sw->name, hw.sw->fabric));
    }
  }
  if (const ArgNode* routing = args.find("routing"))
    hw.routing = routing->as_choice(routing_policy_names());
  hw.qps_per_connection = static_cast<std::uint32_t>(args.get_int("qps_per_connection", 0, 1, 128));
  hw.gpu = lookup(args, "gpu", "h100", [](const std::string& n) { return &gpu_spec(n, "gpu"); });
  hw.gpu_model = static_cast<std::uint16_t>(hw.gpu - gpu_catalog().data());
  hw.pcie = lookup(args, "pcie", default_gpu_nic_pcie(hw.gpu->name).name,
                   [](const std::string& n) { return &pcie_spec(n, "pcie"); });
  if (args.has("link_latency")) hw.link_latency = read_latency(args, "link_latency", Time::zero());
  hw.switch_latency = read_latency(args, "switch_latency", hw.sw->latency);
  hw.host_link_m = args.get_double("host_link_m", hw.host_link_m, 0, 1e7);
  hw.fabric_link_m = args.get_double("fabric_link_m", hw.fabric_link_m, 0, 1e7);
  hw.core_link_m = args.get_double("core_link_m", hw.core_link_m, 0, 1e7);
  return hw;
}

NodeLayout read_node_layout(const ArgNode& args, const Hardware& hw, bool with_nics) {
  NodeLayout layout;
  const std::string gpu = hw.gpu->name;
  const bool blackwell = gpu == "b200" || gpu == "gb200" || gpu == "b300" || gpu == "gb300";
  const ArgNode* su_node = args.find("scale_up");
  std::string choice =
      su_node ? su_node->as_choice({"nvswitch", "nvl72", "nvlink_domain", "mesh", "none",
                                    "hgx_a100", "hgx_h100", "hgx_b200", "xgmi_mesh",
                                    "xgmi_mesh_mi355x", "nvlink_bridge", "gh200_quad", "a100_quad",
                                    "pcie_switch", "dgx1_cube_mesh"})
              : std::string("default");
  auto fail_su = [&](const std::string& message) {
    if (su_node != nullptr) su_node->fail(message);
    args.fail(message);
  };
  std::string spec;
  if (choice == "default") {
    spec = hw.gpu->default_scale_up;
  } else if (choice == "nvswitch") {
    if (hw.gpu->default_scale_up.rfind("xgmi_mesh", 0) == 0)
      fail_su(gpu + " has no NVSwitch; use scale_up: mesh");
    const bool ampere = gpu == "a100" || gpu == "a800" || gpu == "a100_40gb";
    spec = ampere ? "hgx_a100" : blackwell ? "hgx_b200" : "hgx_h100";
  } else if (choice == "nvl72") {
    if (!blackwell) fail_su("nvl72 needs Blackwell GPUs (gpu: gb200)");
    spec = "nvl72";
  } else if (choice == "mesh") {
    // An AMD GPU's own mesh (its link rate); any other GPU wired pairwise at MI300X's.
    const bool own = scale_up_spec(hw.gpu->default_scale_up).chip_ports == 0;
    spec = own ? hw.gpu->default_scale_up : "xgmi_mesh";
  } else if (choice != "none") {
    spec = choice;
  }
  if (!spec.empty()) {
    layout.scale_up = &scale_up_spec(spec);
    layout.scale_up_model = scale_up_index(spec);
    layout.scale_up_name = choice == "default" || choice == "none" ? spec : choice;
    if (spec.rfind("hgx_", 0) == 0) layout.scale_up_name = "nvswitch";
    if (layout.scale_up->chip_ports == 0) layout.scale_up_name = "mesh";
    // NCCL sees PCIe between the bridged pairs, and between GPUs without NVLink (docs/presets.md).
    if (spec == "nvlink_bridge" || spec == "pcie_switch") layout.scale_up_name = "pcie";
  }
  const std::uint32_t default_gpn =
      layout.scale_up ? layout.scale_up->gpus_per_node : hw.gpu->default_gpus_per_node;
  layout.gpus_per_node =
      static_cast<std::uint32_t>(args.get_int("gpus_per_node", default_gpn, 1, 1024));
  auto fail_gpn = [&](const std::string& message) {
    if (args.has("gpus_per_node")) args.at("gpus_per_node").fail(message);
    fail_su(message);
  };
  if (layout.scale_up != nullptr) {
    const ScaleUpSpec& su = *layout.scale_up;
    std::uint32_t domain = su.domain_gpus;
    if (su.domain_gpus == 0) {
      domain = static_cast<std::uint32_t>(args.get_int("scale_up_gpus", 72, 2, su.max_gpus));
    } else if (su.domain_gpus > su.gpus_per_node) {
      // A partition of a multi-node domain (NVL72 split into NVLink partitions).
      domain = static_cast<std::uint32_t>(
          args.get_int("scale_up_gpus", su.domain_gpus, 1, su.domain_gpus));
    }
    if (su.chip_ports == 0 && su.domain_gpus < su.gpus_per_node) {
      // Meshes smaller than the server (NVLink bridge pairs): groups of domain_gpus.
      if (layout.gpus_per_node > su.domain_gpus && layout.gpus_per_node % su.domain_gpus != 0) {
        fail_gpn(fmt::format("{} GPUs per node are not whole {}-GPU groups of a {}",
                             layout.gpus_per_node, su.domain_gpus, su.name));
      }
      layout.domain_nodes = 1;
    } else if (su.domain_gpus == layout.scale_up->gpus_per_node) {
      if (layout.gpus_per_node > su.max_gpus) {
        fail_gpn(fmt::format("{} GPUs per node exceed the {} GPUs of a {}", layout.gpus_per_node,
                             su.max_gpus, su.name));
      }
      layout.domain_nodes = 1;
    } else {
      if (domain % layout.gpus_per_node != 0) {
        fail_gpn(fmt::format("a {}-GPU scale-up domain is not a whole number of {}-GPU nodes",
                             domain, layout.gpus_per_node));
      }
      layout.domain_nodes = domain / layout.gpus_per_node;
    }
  }
  if (with_nics) {
    layout.nics_per_node = static_cast<std::uint32_t>(
        args.get_int("nics_per_node", layout.gpus_per_node, 1, layout.gpus_per_node));
  } else {
    layout.nics_per_node = 0;
  }
  return layout;
}

Bandwidth mesh_pair_bandwidth(const Hardware& hw, const NodeLayout& layout) {
  // The GPU's own board wires every pair of its mesh alike whatever the GPUs in use (AMD's UBB:
  // one xGMI link per pair of 8; GH200 quad: 6 NVLinks per pair of 4; H100 PCIe: a bridged
  // pair), so its links split over the board's peers; a foreign mesh over the peers in use.
  const bool own_mesh = layout.scale_up != nullptr && layout.scale_up->chip_ports == 0 &&
                        layout.scale_up->name == hw.gpu->default_scale_up;
  const std::uint32_t group =
      layout.scale_up != nullptr && layout.scale_up->chip_ports == 0
          ? (own_mesh ? layout.scale_up->domain_gpus
                      : std::min(layout.gpus_per_node, layout.scale_up->domain_gpus))
          : layout.gpus_per_node;
  return hw.gpu->scale_up_bandwidth / static_cast<double>(std::max<std::uint32_t>(1, group - 1));
}

namespace {

// A mesh wired pair by pair (DGX-1's hybrid cube mesh: catalog mesh_wiring), else empty.
const std::vector<std::vector<std::uint32_t>>& wiring_of(const NodeLayout& layout) {
  static const std::vector<std::vector<std::uint32_t>> none;
  const ScaleUpSpec* su = layout.scale_up;
  return su != nullptr && su->chip_ports == 0 ? mesh_wiring(su->name) : none;
}

// The linked pairs among a wired mesh's first g GPUs.
std::uint64_t wired_pairs(const std::vector<std::vector<std::uint32_t>>& w, std::uint32_t g) {
  std::uint64_t pairs = 0;
  for (std::uint32_t i = 0; i < g; ++i)
    for (std::uint32_t j = i + 1; j < g; ++j) pairs += w[i][j] > 0 ? 1 : 0;
  return pairs;
}

// The devices of a server's PCIe tree (catalog host_pcie_tree) for g GPUs: the switches their
// GPUs sit behind and the CPUs those switches hang from; none without a tree.
struct HostTreeSize {
  std::uint32_t switches = 0, cpus = 0;
};
HostTreeSize host_tree_size(const NodeLayout& layout, std::uint32_t g) {
  if (layout.scale_up == nullptr) return {};
  const HostPcieTree& tree = host_pcie_tree(layout.scale_up->name);
  if (tree.gpus_per_switch == 0) return {};
  const std::uint32_t switches = (g + tree.gpus_per_switch - 1) / tree.gpus_per_switch;
  return {switches, (switches + tree.switches_per_cpu - 1) / tree.switches_per_cpu};
}

// Where the server's GPUs meet over PCIe: its PCIe tree when the catalog has one (DGX-1: GPU ->
// PCIe switch -> CPU root complex, the CPUs joined by QPI), else one host device standing for
// the PCIe switches and root complex, every GPU on it by its PCIe link.
void add_host_pcie(TopologyBuilder& b, const Hardware& hw, const NodeLayout& layout,
                   std::uint32_t node, const std::vector<DeviceId>& gpus) {
  const auto g = static_cast<std::uint32_t>(gpus.size());
  const HostTreeSize size = host_tree_size(layout, g);
  if (size.switches == 0) {
    const DeviceId host = b.add_device(Device{DeviceKind::Host, 0, node, 0, 0, 0, 0});
    for (DeviceId gpu : gpus)
      b.add_link(Link{gpu, host, hw.pcie->bandwidth, hw.pcie->latency, LinkMedium::Pcie, 0});
    return;
  }
  const HostPcieTree& tree = host_pcie_tree(layout.scale_up->name);
  std::vector<DeviceId> cpus(size.cpus), switches(size.switches);
  for (std::uint32_t c = 0; c < size.cpus; ++c)
    cpus[c] = b.add_device(Device{DeviceKind::Host, 0, node, 0, c, 0, 0});
  for (std::uint32_t s = 0; s < size.switches; ++s) {
    switches[s] = b.add_device(Device{DeviceKind::Host, 0, node, 0, size.cpus + s, 0, 0});
    b.add_link(Link{switches[s], cpus[s / tree.switches_per_cpu], hw.pcie->bandwidth,
                    hw.pcie->latency, LinkMedium::Pcie, 0});
  }
  for (std::uint32_t i = 0; i < g; ++i)
    b.add_link(Link{gpus[i], switches[i / tree.gpus_per_switch], hw.pcie->bandwidth,
                    hw.pcie->latency, LinkMedium::Pcie, 0});
  // The socket interconnect (QPI / UPI / xGMI): a board link of its own kind (no cable), carrying
  // PCIe's traffic between the root complexes.
  for (std::uint32_t c = 1; c < size.cpus; ++c)
    b.add_link(Link{cpus[c - 1], cpus[c], tree.cpu_link->bandwidth, tree.cpu_link->latency,
                    LinkMedium::CpuLink, 0});
}

// The server's links that add_host_pcie builds for g GPUs: PCIe, and the CPUs' socket links.
std::uint64_t host_pcie_links(const NodeLayout& layout, std::uint32_t g) {
  const HostTreeSize size = host_tree_size(layout, g);
  return g + size.switches + (size.cpus > 0 ? size.cpus - 1 : 0);
}

}  // namespace

std::vector<DeviceId> add_nodes(TopologyBuilder& b, const Hardware& hw, const NodeLayout& layout,
                                std::uint32_t nodes) {
  const std::uint32_t g = layout.gpus_per_node;
  std::vector<DeviceId> nics;
  nics.reserve(static_cast<std::size_t>(nodes) * layout.nics_per_node);
  std::vector<DeviceId> gpus(g);
  DeviceId domain_switch = kNone;
  const ScaleUpSpec* su = layout.scale_up;
  const bool mesh = su != nullptr && su->chip_ports == 0;
  const std::uint32_t group = mesh ? std::min(g, su->domain_gpus) : g;  // GPUs per mesh
  const DomainFill fill = fill_domains(nodes, layout.domain_nodes);
  for (std::uint32_t n = 0; n < nodes; ++n) {
    const std::uint32_t domain = fill.domain_of(n);
    if (su != nullptr && !mesh && fill.first_node(domain) == n) {
      Device d;
      d.kind = DeviceKind::ScaleUpSwitch;
      d.node = layout.domain_nodes == 1 ? n : kNone;
      d.local_index = domain;
      d.model = layout.scale_up_model;
      domain_switch = b.add_device(d);
    }
    for (std::uint32_t i = 0; i < g; ++i) {
      gpus[i] = b.add_device(Device{DeviceKind::Gpu, 0, n, 0, i, hw.gpu_model, 0});
      if (domain_switch != kNone && !mesh) {
        b.add_link(Link{gpus[i], domain_switch, hw.gpu->scale_up_bandwidth, su->latency / 2,
                        LinkMedium::NvLink, 0});
      }
    }
    const auto& wiring = wiring_of(layout);
    if (!wiring.empty()) {
      // Each linked pair at its links' rate, and the server's PCIe, through which the pairs
      // without NVLink meet (on a DGX-1, its PCIe switches and across the CPUs).
      for (std::uint32_t i = 0; i < g; ++i) {
        for (std::uint32_t j = i + 1; j < g; ++j) {
          if (wiring[i][j] == 0) continue;
          b.add_link(Link{gpus[i], gpus[j], su->port_speed * static_cast<double>(wiring[i][j]),
                          su->latency, LinkMedium::NvLink, 0});
        }
      }
      add_host_pcie(b, hw, layout, n, gpus);
    } else if (mesh && group > 1) {
      const Bandwidth per_peer = mesh_pair_bandwidth(hw, layout);
      for (std::uint32_t i = 0; i < g; ++i) {
        for (std::uint32_t j = i + 1; j < g && j / group == i / group; ++j) {
          b.add_link(Link{gpus[i], gpus[j], per_peer, su->latency, LinkMedium::NvLink, 0});
        }
      }
    }
    // GPUs of different meshes (bridged pairs) meet in the server's PCIe root complex.
    if (mesh && group < g) add_host_pcie(b, hw, layout, n, gpus);
    const std::size_t first_nic = nics.size();
    for (std::uint32_t i = 0; i < layout.nics_per_node; ++i) {
      nics.push_back(b.add_device(Device{DeviceKind::Nic, 0, n, 0, i, hw.nic_model, 0}));
    }
    if (layout.nics_per_node == 0) continue;
    for (std::uint32_t i = 0; i < g; ++i) {
      const DeviceId nic = nics[first_nic + static_cast<std::size_t>(i) * layout.nics_per_node / g];
      b.add_link(Link{gpus[i], nic, hw.pcie->bandwidth, hw.pcie->latency, LinkMedium::Pcie, 0});
    }
  }
  return nics;
}

std::uint32_t read_nodes(const ArgNode& args, const NodeLayout& layout) {
  const std::int64_t max_nodes = 16'000'000 / layout.gpus_per_node;
  if (args.has("nodes")) return static_cast<std::uint32_t>(args.at("nodes").as_int(1, max_nodes));
  if (!args.has("gpus")) args.fail("missing required key 'nodes' (or 'gpus')");
  const ArgNode& gpus = args.at("gpus");
  const std::int64_t n = gpus.as_int(1, 16'000'000);
  if (n % layout.gpus_per_node != 0) {
    gpus.fail(
        fmt::format("{} GPUs is not a whole number of {}-GPU nodes", n, layout.gpus_per_node));
  }
  return static_cast<std::uint32_t>(n / layout.gpus_per_node);
}

std::uint64_t node_links(const NodeLayout& layout, std::uint64_t nodes) {
  const std::uint64_t g = layout.gpus_per_node;
  std::uint64_t per_node = layout.nics_per_node ? g : 0;  // PCIe
  const ScaleUpSpec* su = layout.scale_up;
  if (su != nullptr && su->chip_ports != 0) per_node += g;
  if (const auto& wiring = wiring_of(layout); !wiring.empty()) {
    // NVLink pairs, the server's PCIe
    per_node +=
        wired_pairs(wiring, layout.gpus_per_node) + host_pcie_links(layout, layout.gpus_per_node);
  } else if (su != nullptr && su->chip_ports == 0) {
    const std::uint64_t group = std::min<std::uint64_t>(g, su->domain_gpus);
    per_node += g / group * group * (group - 1) / 2;
    if (group < g) per_node += host_pcie_links(layout, layout.gpus_per_node);  // between meshes
  }
  return per_node * nodes;
}

void tally_nodes(BomTally& tally, const Hardware& hw, const NodeLayout& layout,
                 std::uint64_t nodes) {
  const std::uint64_t g = layout.gpus_per_node;
  tally.add_gpus(hw.gpu_model, nodes * g);
  if (layout.nics_per_node != 0) {
    tally.add_nics(hw.nic_model, nodes * layout.nics_per_node);
    tally.add_links(LinkMedium::Pcie, hw.pcie->bandwidth, 0, nodes * g);
  }
  const ScaleUpSpec* su = layout.scale_up;
  if (su == nullptr) return;
  if (const auto& wiring = wiring_of(layout); !wiring.empty()) {
    for (std::uint32_t i = 0; i < layout.gpus_per_node; ++i)
      for (std::uint32_t j = i + 1; j < layout.gpus_per_node; ++j)
        if (wiring[i][j] > 0)
          tally.add_links(LinkMedium::NvLink, su->port_speed * static_cast<double>(wiring[i][j]), 0,
                          nodes);
    const HostTreeSize tree = host_tree_size(layout, layout.gpus_per_node);
    tally.add_links(LinkMedium::Pcie, hw.pcie->bandwidth, 0, nodes * (g + tree.switches));
    // A socket link is the CPUs' board traces, not a PCIe link nor a cable: its own kind, which
    // (like PCIe and NVLink) buys no part.
    if (tree.cpus > 1)
      tally.add_links(LinkMedium::CpuLink, host_pcie_tree(su->name).cpu_link->bandwidth, 0,
                      nodes * (tree.cpus - 1));
    return;
  }
  if (su->chip_ports == 0) {
    const std::uint64_t group = std::min<std::uint64_t>(g, su->domain_gpus);
    if (group > 1) {
      tally.add_links(LinkMedium::NvLink,
                      hw.gpu->scale_up_bandwidth / static_cast<double>(group - 1), 0,
                      nodes * (g / group) * group * (group - 1) / 2);
    }
    if (group < g) tally.add_links(LinkMedium::Pcie, hw.pcie->bandwidth, 0, nodes * g);
    return;
  }
  // Domains as add_nodes() fills them: `large` of small + 1 servers, the rest of `small`.
  const DomainFill fill = fill_domains(static_cast<std::uint32_t>(nodes), layout.domain_nodes);
  const std::uint32_t links = hw.gpu->scale_up_links;
  for (const auto& [count, servers] :
       {std::pair<std::uint64_t, std::uint64_t>{fill.large, fill.small + 1},
        {fill.domains - fill.large, fill.small}}) {
    if (count == 0) continue;
    tally.add_scale_up(layout.scale_up_model, count, count * su->chips_for(servers * g, links),
                       count * servers * g * links);
  }
  tally.add_links(LinkMedium::NvLink, hw.gpu->scale_up_bandwidth, 0, nodes * g);
}

DeviceId add_switch(TopologyBuilder& b, const Hardware& hw, std::uint8_t tier) {
  Device d;
  d.kind = DeviceKind::Switch;
  d.tier = tier;
  const Hardware::TierSwitch& s = tier == 0 ? Hardware::TierSwitch{hw.sw, hw.switch_model, hw.radix}
                                  : tier == 1 ? hw.spine
                                              : hw.core;
  d.model = s.model;
  d.radix = static_cast<std::uint16_t>(s.radix);
  return b.add_device(d);
}

Link fabric_link(const Hardware& hw, DeviceId a, DeviceId b, Bandwidth bw, double length_m,
                 int switch_ends) {
  const Time propagation = hw.link_latency.value_or(Time::ns(length_m * kPropagationNsPerMetre));
  return Link{a,
              b,
              bw,
              propagation + hw.switch_latency * switch_ends / 2,
              medium_for_length(bw, length_m),
              length_m};
}

ClusterTraits make_traits(const Hardware& hw, const NodeLayout& layout) {
  ClusterTraits t;
  t.gpu = hw.gpu->name;
  t.scale_up = layout.scale_up_name;
  t.fabric = !hw.transport.empty()           ? hw.transport
             : hw.nic->fabric == "efa"       ? "efa"
             : hw.sw->fabric == "infiniband" ? "infiniband"
                                             : "roce";
  t.nic = hw.nic->name;
  t.switch_model = hw.sw->name;
  t.gpus_per_node = layout.gpus_per_node;
  t.nics_per_node = layout.nics_per_node;
  t.sharp = hw.sw->sharp;
  t.nvls = layout.scale_up != nullptr && layout.scale_up->nvls;
  t.routing = hw.routing;
  t.qps_per_connection = hw.qps_per_connection;
  return t;
}

double read_ratio(const ArgNode& args, const std::string& key) {
  const ArgNode* node = args.find(key);
  if (node == nullptr) return 1.0;
  if (node->kind() == ArgNode::Kind::Scalar) {
    const std::string& text = node->text();
    const auto colon = text.find(':');
    if (colon != std::string::npos) {
      double a = 0, b = 0;
      const char* s = text.data();
      auto ra = std::from_chars(s, s + colon, a);
      auto rb = std::from_chars(s + colon + 1, s + text.size(), b);
      if (ra.ec != std::errc() || ra.ptr != s + colon || rb.ec != std::errc() ||
          rb.ptr != s + text.size() || !(b > 0) || !std::isfinite(a / b)) {
        node->fail(fmt::format("expected a ratio like 2:1, got '{}'", text));
      }
      if (a / b < 1 || a / b > 64) node->fail("ratio must be between 1:1 and 64:1");
      return a / b;
    }
  }
  return node->as_double(1, 64);
}

std::pair<std::uint32_t, std::uint32_t> split_ports(std::uint32_t radix, double ratio) {
  auto down = static_cast<std::uint32_t>(std::floor(radix * ratio / (ratio + 1) + 1e-9));
  auto up_for = [&](std::uint32_t d) {
    return static_cast<std::uint32_t>(std::ceil(d / ratio - 1e-9));
  };
  while (down > 1 && down + up_for(down) > radix) --down;
  return {down, std::max<std::uint32_t>(1, up_for(down))};
}

std::uint64_t read_count(const ArgNode& args, const std::string& key, std::uint64_t max) {
  return static_cast<std::uint64_t>(args.at(key).as_int(1, static_cast<std::int64_t>(max)));
}

void check_size(const ArgNode& args, std::uint64_t links, const BuildOptions& options) {
  if (links > options.max_links) {
    args.fail(
        fmt::format("this design needs {} links, more than the {} lockstep builds as a "
                    "graph; make it smaller",
                    links, options.max_links));
  }
}

void finish_inventory(BuildResult& result, Topology topo, const BuildOptions& options) {
  count_inventory(topo, result.inventory);
  const PathExtent extent = measure_paths(topo);
  result.inventory.diameter_switch_hops = extent.switch_hops;
  result.inventory.max_one_way_latency = extent.latency;
  if (!topo.connected()) {
    result.inventory.feasible = false;
    result.inventory.problems.push_back("the fabric is not connected");
  }
  if (options.want_graph) result.graph = std::move(topo);
}

std::vector<std::string> node_keys() {
  return {"nodes",
          "gpus",
          "gpu",
          "gpus_per_node",
          "scale_up",
          "scale_up_gpus",
          "nic",
          "nic_speed",
          "transport",
          "nics_per_node",
          "switch",
          "radix",
          "port_speed",
          "link_latency",
          "switch_latency",
          "host_link_m",
          "fabric_link_m",
          "core_link_m",
          "pcie",
          "routing",
          "qps_per_connection",
          "nic_ports_fused"};
}

}  // namespace lockstep::builders
