#include "lockstep/topology/graph.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "lockstep/core/error.hpp"

namespace lockstep {

const char* to_string(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::Gpu:
      return "gpu";
    case DeviceKind::Nic:
      return "nic";
    case DeviceKind::Host:
      return "host";
    case DeviceKind::ScaleUpSwitch:
      return "scale_up_switch";
    case DeviceKind::Switch:
      return "switch";
    case DeviceKind::Gateway:
      return "gateway";
  }
  return "?";
}

const char* to_string(LinkMedium medium) {
  switch (medium) {
    case LinkMedium::NvLink:
      return "nvlink";
    case LinkMedium::Pcie:
      return "pcie";
    case LinkMedium::CopperDac:
      return "copper_dac";
    case LinkMedium::ActiveElectrical:
      return "active_electrical";
    case LinkMedium::Optical:
      return "optical";
    case LinkMedium::LongHaulFibre:
      return "long_haul_fibre";
    case LinkMedium::CpuLink:
      return "cpu_link";
  }
  return "?";
}

const std::vector<std::string>& routing_policy_names() {
  static const std::vector<std::string> names{
      "ecmp", "adaptive", "spray", "dimension_order", "rail_aligned", "d_mod_k"};
  return names;
}

const char* switch_tier_name(std::uint8_t tier) {
  switch (tier) {
    case 0:
      return "leaf";
    case 1:
      return "spine";
    case 2:
      return "core";
    default:
      return "tier3+";
  }
}

DeviceId TopologyBuilder::add_device(const Device& d) {
  topo_.devices_.push_back(d);
  return static_cast<DeviceId>(topo_.devices_.size() - 1);
}

LinkId TopologyBuilder::add_link(const Link& l) {
  topo_.links_.push_back(l);
  return static_cast<LinkId>(topo_.links_.size() - 1);
}

void TopologyBuilder::add_cage(std::span<const CageEnd> ends, std::uint32_t ports) {
  if (ports < ends.size()) {
    throw InputError("topology",
                     fmt::format("a cage of {} ports holds {} ends", ports, ends.size()));
  }
  topo_.cage_ports_.push_back(ports);
  if (topo_.cage_offsets_.empty()) topo_.cage_offsets_.push_back(0);
  topo_.cage_ends_.insert(topo_.cage_ends_.end(), ends.begin(), ends.end());
  topo_.cage_offsets_.push_back(static_cast<std::uint32_t>(topo_.cage_ends_.size()));
}

void TopologyBuilder::reserve(std::size_t devices, std::size_t links) {
  topo_.devices_.reserve(devices);
  topo_.links_.reserve(links);
}

namespace {

// Management links end at a switch; a cage's ends exist, each in one cage at most.
void check_annex(const Topology& t) {
  const std::size_t n = t.num_devices(), links = t.num_links();
  for (std::size_t i = 0; i < t.management_links().size(); ++i) {
    const Link& l = t.management_links()[i];
    if (l.a != kNone || l.b >= n || t.device(l.b).kind != DeviceKind::Switch ||
        !(l.bandwidth.bytes_per_second() > 0)) {
      throw InputError("topology",
                       fmt::format("management link {} must join an appliance to a switch at a "
                                   "positive bandwidth",
                                   i));
    }
  }
  std::vector<std::uint8_t> taken(2 * (links + t.management_links().size()), 0);
  for (std::size_t c = 0; c < t.num_cages(); ++c) {
    for (const CageEnd& e : t.cage(c)) {
      const bool managed = e.link >= links;
      if (e.link >= links + t.management_links().size()) {
        throw InputError("topology",
                         fmt::format("cage {} names link {}, which does not exist", c, e.link));
      }
      const Link& l = managed ? t.management_links()[e.link - links] : t.link(e.link);
      if (e.device != l.b && (managed || e.device != l.a)) {
        throw InputError("topology", fmt::format("cage {}: device {} is not an end of link {}", c,
                                                 e.device, e.link));
      }
      std::uint8_t& seen = taken[2 * e.link + (e.device == l.b ? 1 : 0)];
      if (seen) {
        throw InputError("topology", fmt::format("cage {}: link {}'s end at device {} is already "
                                                 "in a cage",
                                                 c, e.link, e.device));
      }
      seen = 1;
    }
  }
}

}  // namespace

Topology TopologyBuilder::build() && {
  Topology& t = topo_;
  const auto n = t.devices_.size();
  if (n >= kNone) throw InputError("topology", "too many devices");
  std::vector<std::uint32_t> degree(n + 1, 0);
  for (std::size_t i = 0; i < t.links_.size(); ++i) {
    const Link& l = t.links_[i];
    if (l.a >= n || l.b >= n) {
      throw InputError("topology", fmt::format("link {} names a device that does not exist", i));
    }
    if (l.a == l.b)
      throw InputError("topology", fmt::format("link {} connects a device to itself", i));
    if (!(l.bandwidth.bytes_per_second() > 0)) {
      throw InputError("topology", fmt::format("link {} has zero bandwidth", i));
    }
    if (l.latency < Time::zero()) {
      throw InputError("topology", fmt::format("link {} has negative latency", i));
    }
    ++degree[l.a + 1];
    ++degree[l.b + 1];
  }
  check_annex(t);
  for (std::size_t i = 0; i < n; ++i) degree[i + 1] += degree[i];
  t.port_offsets_ = degree;
  t.ports_.resize(t.links_.size() * 2);
  std::vector<std::uint32_t> fill(t.port_offsets_.begin(), t.port_offsets_.end() - 1);
  for (std::size_t i = 0; i < t.links_.size(); ++i) {
    const Link& l = t.links_[i];
    const auto id = static_cast<DirLinkId>(i * 2);
    t.ports_[fill[l.a]++] = Port{id, l.b};
    t.ports_[fill[l.b]++] = Port{id + 1, l.a};
  }

  t.gpus_.clear();
  std::uint32_t max_node = 0, max_site = 0;
  bool any_node = false;
  for (DeviceId i = 0; i < n; ++i) {
    const Device& d = t.devices_[i];
    if (d.kind == DeviceKind::Gpu) t.gpus_.push_back(i);
    if (d.node != kNone) {
      max_node = std::max(max_node, d.node);
      any_node = true;
    }
    max_site = std::max(max_site, d.site);
  }
  std::stable_sort(t.gpus_.begin(), t.gpus_.end(), [&](DeviceId x, DeviceId y) {
    const Device& a = t.devices_[x];
    const Device& b = t.devices_[y];
    if (a.node != b.node) return a.node < b.node;
    return a.local_index < b.local_index;
  });
  t.num_nodes_ = any_node ? max_node + 1 : 0;
  t.num_sites_ = max_site + 1;

  // Connectivity by breadth-first search from device 0.
  t.connected_ = true;
  if (n > 1) {
    std::vector<char> seen(n, 0);
    std::vector<DeviceId> queue{0};
    seen[0] = 1;
    std::size_t reached = 1;
    for (std::size_t head = 0; head < queue.size(); ++head) {
      for (const Port& p : t.ports(queue[head])) {
        if (!seen[p.peer]) {
          seen[p.peer] = 1;
          ++reached;
          queue.push_back(p.peer);
        }
      }
    }
    t.connected_ = reached == n;
  }
  return std::move(t);
}

NicSide nic_side(const Topology& topo, const Link& link) {
  const DeviceKind a = topo.device(link.a).kind, b = topo.device(link.b).kind;
  const bool nic_a = a == DeviceKind::Nic, nic_b = b == DeviceKind::Nic;
  if (!nic_a && !nic_b) return NicSide::None;
  if (nic_a && nic_b) return NicSide::NicToNic;
  if (a == DeviceKind::Gpu || b == DeviceKind::Gpu) return NicSide::GpuToNic;
  return NicSide::NicToFabric;
}

bool is_network_link(const Topology& topo, LinkId link) {
  const Link& l = topo.link(link);
  const Device &da = topo.device(l.a), &db = topo.device(l.b);
  const DeviceKind a = da.kind, b = db.kind;
  auto outside = [](DeviceKind k) { return k == DeviceKind::Switch || k == DeviceKind::Gateway; };
  const NicSide side = nic_side(topo, l);
  const bool gpus_of_two_servers =
      a == DeviceKind::Gpu && b == DeviceKind::Gpu && da.node != db.node;
  return outside(a) || outside(b) || side == NicSide::NicToNic || side == NicSide::GpuToNic ||
         gpus_of_two_servers;
}

}  // namespace lockstep
