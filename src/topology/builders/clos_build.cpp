// Building a Clos design (graph + counted inventory) or tallying it analytically; both give the
// same bill of materials (tests/unit/topology/clos_test.cpp holds them to it).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <map>
#include <optional>
#include <span>

#include "clos.hpp"
#include "lockstep/topology/catalog.hpp"

namespace lockstep::builders {
namespace {

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) {
  return (a + b - 1) / b;
}

// Fabric ports per NIC: two with dual-ToR, one to each leaf of a pair.
std::uint64_t nic_ports(const ClosDesign& d) {
  return d.dual_tor ? 2 : 1;
}

// Host-side fabric ports (links into the leaves).
std::uint64_t hosts_of(const ClosDesign& d) {
  return std::uint64_t{d.nodes} * d.layout.nics_per_node * nic_ports(d);
}

// One NIC port's rate: the NIC's, split over its two ports with dual-ToR (2 x 200G for 400G).
Bandwidth host_port_bandwidth(const ClosDesign& d) {
  return d.hw.host_link_bandwidth() * (1.0 / static_cast<double>(nic_ports(d)));
}

// Host ports sharing one leaf port by breakout (switch_breakout: a QM9700 400G port split
// 2 x 200G for dual-ToR NICs' half-rate ports); 1 otherwise.
std::uint64_t host_breakout(const ClosDesign& d) {
  return switch_breakout(*d.hw.sw, host_port_bandwidth(d));
}

// The leaf of port `port` of NIC `nic` (dual-ToR: leaves 2k and 2k + 1 of a pair).
std::uint32_t leaf_of(const ClosDesign& d, std::uint64_t nic, std::uint64_t port) {
  if (d.nodes_per_su == 0)
    return static_cast<std::uint32_t>((nic / d.leaf_down) * nic_ports(d) + port);
  const std::uint64_t rails = d.layout.nics_per_node;
  const std::uint64_t node = nic / rails;
  return static_cast<std::uint32_t>((node / d.nodes_per_su) * rails + nic % rails);
}

// `n` fabric link ends on one switch, `k` of them to a port where its port is split by breakout
// (Hardware::TierSwitch::ends_per_port for the leaves' links, spine_up_ends_per_port for the
// cores'), optical or not.
struct TierEnds {
  std::uint32_t k = 1;
  bool optical = false;
  std::uint64_t n = 0;
};

// One switch's ports for its fabric ends, grouped as the counted graph groups them
// (count_inventory: by breakout and medium, k ends to a port); `times` such switches' splitter
// fibres (200G ends of an optical split port share one per pair, splitter_legs) go to `t`.
std::uint64_t tier_ports(BomTally& t, const SwitchSpec& sw, std::uint64_t times,
                         std::initializer_list<TierEnds> ends) {
  std::map<std::pair<std::uint32_t, bool>, std::uint64_t> groups;
  for (const TierEnds& e : ends) groups[{e.k, e.optical}] += e.n;
  std::uint64_t ports = 0;
  for (const auto& [key, n] : groups) {
    const auto [k, optical] = key;
    const std::uint64_t legs = k > 1 ? splitter_legs(sw.port_speed * (1.0 / k)) : 1;
    if (legs > 1 && optical && n != 0) t.add_splitters(times * ceil_div(n, legs), times * n);
    ports += ceil_div(n, k);
  }
  return ports;
}

bool is_optical(Bandwidth speed, double m) {
  return medium_for_length(speed, m) == LinkMedium::Optical;
}

// Switches that share one total of link ends (all of one length) spread as evenly as the
// builder spreads them: `total` ends over `count` switches, the first total % count taking one
// more. Spines (tier 1) take the leaves' links, cores (tier 2) the spines' at their own rate.
void tally_even(BomTally& t, const Hardware& hw, std::uint8_t tier, std::uint64_t count,
                std::uint64_t total, double m) {
  if (count == 0) return;
  const std::uint64_t lo = total / count, extra = total % count;
  const Hardware::TierSwitch& s = tier == 1 ? hw.spine : hw.core;
  const bool optical = is_optical(tier == 1 ? hw.port_speed : hw.core_link_speed, m);
  std::uint64_t overfull = 0, used = 0;
  for (const auto& [ends, n] : {std::pair{lo + 1, extra}, {lo, count - extra}}) {
    if (n == 0) continue;
    const std::uint64_t ports = tier_ports(t, *s.sw, n, {{s.ends_per_port, optical, ends}});
    used += n * ports;
    if (ports > s.radix) overfull += n;
  }
  t.add_switches(s.model, tier, count, used, s.radix, overfull);
}

// Leaves hold `full` hosts each except the last group; returns per-leaf host ports as
// (ports, leaves) pairs. Management links take the last SU's free ports, rail by rail.
std::vector<std::pair<std::uint64_t, std::uint64_t>> leaf_loads(const ClosDesign& d) {
  if (d.nodes_per_su == 0) {
    const std::uint64_t nics = std::uint64_t{d.nodes} * d.layout.nics_per_node;
    const std::uint64_t full = nics / d.leaf_down, rest = nics % d.leaf_down, k = nic_ports(d);
    return {{d.leaf_down, full * k}, {rest, rest ? k : 0}};
  }
  const std::uint64_t rails = d.layout.nics_per_node;
  const std::uint64_t sus = (d.nodes + d.nodes_per_su - 1) / d.nodes_per_su;
  const std::uint64_t last = d.nodes - (sus - 1) * d.nodes_per_su;
  const std::uint64_t more = d.management_links % rails, base = last + d.management_links / rails;
  return {{d.nodes_per_su, (sus - 1) * rails}, {base + 1, more}, {base, rails - more}};
}

// Modules on `count` switches sharing `total` ports as evenly as the builder spreads them.
std::uint64_t modules_even(std::uint64_t count, std::uint64_t total, std::uint64_t share) {
  if (count == 0) return 0;
  const std::uint64_t lo = total / count, extra = total % count;
  return extra * ceil_div(lo + 1, share) + (count - extra) * ceil_div(lo, share);
}

// Transceiver modules per link end (docs/topology.md "Transceivers per module"): a NIC cage of
// `nic_ports_per_module` ports, a switch cage of switch_ports_per_cage() ports; a module serves
// the ports of one link class on one device (down ports apart from up ports, as cabled).
void tally_modules(BomTally& t, const ClosDesign& d, const ClosCounts& c) {
  const Hardware& hw = d.hw;
  const std::uint64_t sw = switch_ports_per_cage(*hw.sw);
  // A spine's or core's cage holds its ports' split ends too (an SN5600 800G cage, 2 x 400G).
  const std::uint64_t upper = switch_ports_per_cage(*hw.spine.sw) * hw.spine.ends_per_port;
  const std::uint64_t upper_up = switch_ports_per_cage(*hw.spine.sw) * hw.spine_up_ends_per_port;
  const std::uint64_t core = switch_ports_per_cage(*hw.core.sw) * hw.core.ends_per_port;
  auto add = [&](Bandwidth speed, double m, std::uint64_t share, std::uint64_t n,
                 bool nic_side = false) {
    const LinkMedium medium = medium_for_length(speed, m);
    if (medium == LinkMedium::Optical || medium == LinkMedium::LongHaulFibre) {
      t.add_modules(medium, speed, m, static_cast<std::uint32_t>(share), n, nic_side);
    }
  };
  const Bandwidth host = host_port_bandwidth(d);
  const std::uint64_t nic_share = d.nic_ports_per_module;
  add(host, hw.host_link_m, nic_share,
      d.nodes * ceil_div(d.layout.nics_per_node * nic_ports(d), nic_share), true);
  add(host, hw.host_link_m, 1, d.management_links);
  const std::uint64_t up = c.spines ? d.shape.leaf_up : 0;
  const std::uint64_t k = host_breakout(d);  // a cage's ports each split k ways
  for (const auto& [load, leaves] : leaf_loads(d)) {
    add(host, hw.host_link_m, sw * k, leaves * ceil_div(load, sw * k));
  }
  if (up == 0) return;
  const Bandwidth port = hw.port_speed;
  add(port, hw.fabric_link_m, sw, std::uint64_t{d.shape.leaves} * ceil_div(up, sw));
  if (c.cores == 0) {
    add(port, hw.fabric_link_m, upper,
        modules_even(c.spines, std::uint64_t{d.shape.leaves} * up, upper));
    return;
  }
  const std::uint64_t lpp = d.shape.leaves_per_pod, last = d.shape.leaves - (c.pods - 1) * lpp;
  add(port, hw.fabric_link_m, upper,
      (c.pods - 1) * up * ceil_div(lpp, upper) + up * ceil_div(last, upper));
  const Bandwidth core_port = hw.core_link_speed;
  add(core_port, hw.core_link_m, upper_up,
      std::uint64_t{c.spines} * ceil_div(d.shape.spine_up, upper_up));
  add(core_port, hw.core_link_m, core,
      up * modules_even(c.cores_per_plane, std::uint64_t{c.pods} * d.shape.spine_up, core));
}

void tally_clos(const ClosDesign& d, const ClosCounts& c, Inventory& inv) {
  const Hardware& hw = d.hw;
  BomTally t;
  tally_nodes(t, hw, d.layout, d.nodes);
  const std::uint64_t hosts = hosts_of(d);
  const std::uint64_t up = c.spines ? d.shape.leaf_up : 0;
  for (const auto& [load, leaves] : leaf_loads(d)) {
    if (leaves == 0) continue;
    const std::uint64_t per = ceil_div(load, host_breakout(d)) + up;
    t.add_switches(hw.switch_model, 0, leaves, per * leaves, hw.radix, per > hw.radix ? leaves : 0);
  }
  const bool ends = d.optics_per_module.value_or(false);
  const Bandwidth host_port = host_port_bandwidth(d);
  const LinkMedium host_medium = medium_for_length(host_port, hw.host_link_m);
  t.add_links(host_medium, host_port, hw.host_link_m, hosts + d.management_links, true);
  if (!ends) {
    // One module per end, the NICs' on the NIC side (a line of their own).
    t.add_modules(host_medium, host_port, hw.host_link_m, 1, hosts, true);
    t.add_modules(host_medium, host_port, hw.host_link_m, 1, hosts + 2 * d.management_links);
  }
  // Split leaf ports (host_breakout) take a splitter fibre per pair of optical 200G links.
  const std::uint64_t k = host_breakout(d);
  const std::uint64_t legs = k > 1 ? splitter_legs(host_port) : 1;
  if (legs > 1 && medium_for_length(host_port, hw.host_link_m) == LinkMedium::Optical) {
    for (const auto& [load, leaves] : leaf_loads(d)) {
      t.add_splitters(leaves * ceil_div(load, legs), leaves * load);
    }
  }
  // Copper host links into a leaf cage of several ports (twin-port OSFP, split ports) from
  // single-port NICs: one splitter DAC per cage (splitter_dac()), counted with the cages.
  const std::uint64_t share = std::uint64_t{switch_ports_per_cage(*hw.sw)} * k;
  if (ends && share > 1 && d.nic_ports_per_module == 1 &&
      medium_for_length(host_port, hw.host_link_m) == LinkMedium::CopperDac) {
    for (const auto& [load, leaves] : leaf_loads(d)) {
      t.add_split_dacs(LinkMedium::CopperDac, host_port, hw.host_link_m,
                       static_cast<std::uint32_t>(share), leaves * ceil_div(load, share),
                       leaves * load);
    }
  }
  const std::uint64_t leaf_links = std::uint64_t{d.shape.leaves} * up;
  t.add_links(medium_for_length(hw.port_speed, hw.fabric_link_m), hw.port_speed, hw.fabric_link_m,
              leaf_links, ends);
  if (c.cores == 0) {
    tally_even(t, hw, 1, c.spines, leaf_links, hw.fabric_link_m);
  } else {
    const std::uint64_t lpp = d.shape.leaves_per_pod, last = d.shape.leaves - (c.pods - 1) * lpp;
    const std::uint64_t su = d.shape.spine_up, lu = d.shape.leaf_up;
    const bool down_optical = is_optical(hw.port_speed, hw.fabric_link_m);
    const bool up_optical = is_optical(hw.core_link_speed, hw.core_link_m);
    for (const auto& [down, pods] : {std::pair{lpp, std::uint64_t{c.pods} - 1}, {last, 1}}) {
      const std::uint64_t n = pods * lu;
      if (n == 0) continue;
      const std::uint64_t per = tier_ports(t, *hw.spine.sw, n,
                                           {{hw.spine.ends_per_port, down_optical, down},
                                            {hw.spine_up_ends_per_port, up_optical, su}});
      t.add_switches(hw.spine.model, 1, n, n * per, hw.spine.radix, per > hw.spine.radix ? n : 0);
    }
    for (std::uint64_t plane = 0; plane < lu; ++plane) {
      tally_even(t, hw, 2, c.cores_per_plane, std::uint64_t{c.pods} * su, hw.core_link_m);
    }
    t.add_links(medium_for_length(hw.core_link_speed, hw.core_link_m), hw.core_link_speed,
                hw.core_link_m, std::uint64_t{c.spines} * su, ends);
  }
  if (ends) tally_modules(t, d, c);
  t.finish(inv);
  inv.nodes = d.nodes;
  inv.graph_built = false;
  // Fewest-hop, fabric-only worst path (ignores NVLink shortcuts; an upper bound when a scale-up
  // domain spans leaves).
  const Time sw = hw.switch_latency;
  auto prop = [&](double m) {
    return hw.link_latency.value_or(Time::ns(m * kPropagationNsPerMetre));
  };
  Time latency = hw.pcie->latency * 2 + prop(hw.host_link_m) * 2 + sw;
  inv.diameter_switch_hops = 0;
  if (c.spines != 0) {
    latency += prop(hw.fabric_link_m) * 2 + sw * 2;
    inv.diameter_switch_hops = 2;
  }
  if (c.cores != 0 && c.pods > 1) {
    latency += prop(hw.core_link_m) * 2 + sw * 2;
    inv.diameter_switch_hops = 4;
  }
  inv.max_one_way_latency = latency;
}

// The graph's share of what tally_modules() counts: management cables into the last SU's
// leaves, rail by rail (as leaf_loads() spreads them), and with per-module optics the cages:
// each switch's down ports (hosts, management, lower tiers) and up ports apart, in link order,
// switch_ports_per_cage() to a cage; a node's NIC ports nic_ports_per_module to a cage.
void add_management_and_cages(TopologyBuilder& b, const ClosDesign& d,
                              const std::vector<DeviceId>& leaves) {
  const Hardware& hw = d.hw;
  const std::uint64_t rails = d.layout.nics_per_node;
  const std::uint64_t sus = d.nodes_per_su ? ceil_div(d.nodes, d.nodes_per_su) : 1;
  for (std::uint64_t i = 0; i < d.management_links; ++i) {
    const std::uint64_t leaf = d.nodes_per_su ? (sus - 1) * rails + i % rails : leaves.size() - 1;
    Link l = fabric_link(hw, kNone, leaves[leaf], host_port_bandwidth(d), hw.host_link_m, 1);
    b.add_management_link(l);
  }
  if (!d.optics_per_module.value_or(false)) return;
  // Ends by (device or node, up): switches by device id, NIC ports by node (the node's cages).
  std::map<std::pair<std::uint64_t, bool>, std::vector<CageEnd>> groups;
  const std::uint64_t nic_key = std::uint64_t{1} << 40;
  auto add_end = [&](std::uint64_t link, DeviceId at, DeviceId peer) {
    const Device& x = b.device(at);
    if (x.kind == DeviceKind::Nic && b.device(peer).kind == DeviceKind::Switch) {
      groups[{nic_key + x.node, false}].push_back({link, at});
    } else if (x.kind == DeviceKind::Switch) {
      const Device& p = b.device(peer);
      groups[{at, p.kind == DeviceKind::Switch && p.tier > x.tier}].push_back({link, at});
    }
  };
  for (LinkId l = 0; l < b.num_links(); ++l) {
    add_end(l, b.link(l).a, b.link(l).b);
    add_end(l, b.link(l).b, b.link(l).a);
  }
  for (std::uint64_t i = 0; i < d.management_links; ++i) {
    const DeviceId leaf = b.management_link(i).b;
    groups[{leaf, false}].push_back({b.num_links() + i, leaf});
  }
  for (const auto& group : groups) {
    const auto& key = group.first;
    const auto& ends = group.second;  // a named reference: clang 14 cannot capture a binding
    // A switch cage's ports each split k ways by breakout: k times the ends to a module.
    auto switch_share = [&](const SwitchSpec& sw) {
      const std::uint64_t l = ends[0].link;
      const Bandwidth bw =
          l < b.num_links() ? b.link(l).bandwidth : b.management_link(l - b.num_links()).bandwidth;
      return std::uint64_t{switch_ports_per_cage(sw)} * switch_breakout(sw, bw);
    };
    const std::uint64_t share =
        key.first >= nic_key
            ? d.nic_ports_per_module
            : switch_share(switch_catalog()[b.device(static_cast<DeviceId>(key.first)).model]);
    if (share < 2) continue;  // a module per end, as without cages
    for (std::size_t i = 0; i < ends.size(); i += share) {
      b.add_cage(std::span(ends).subspan(i, std::min<std::size_t>(share, ends.size() - i)),
                 static_cast<std::uint32_t>(share));
    }
  }
}

}  // namespace

static BuildResult build_clos_shaped(const ArgNode&, const ClosDesign& d,
                                     const BuildOptions& options) {
  const Hardware& hw = d.hw;
  const ClosCounts planned = plan_clos(d.shape, hw.spine.ends(), hw.core.ends());
  const std::uint64_t hosts = hosts_of(d);
  BuildResult result;
  ClosCounts counts = planned;
  const std::uint64_t links = node_links(d.layout, d.nodes) + hosts + planned.links;
  // Too large to materialise: the closed-form inventory, no graph (never an out-of-memory).
  if (options.want_graph && links <= options.max_links) {
    TopologyBuilder b(d.builder);
    b.reserve(std::uint64_t{d.nodes} * (d.layout.gpus_per_node + d.layout.nics_per_node + 1) +
                  d.shape.leaves + planned.spines + planned.cores,
              links);
    const std::vector<DeviceId> nics = add_nodes(b, hw, d.layout, d.nodes);
    const std::vector<DeviceId> leaves = add_clos_switches(b, hw, d.shape, counts);
    const Bandwidth port_bw = host_port_bandwidth(d);
    for (std::uint64_t h = 0; h < nics.size(); ++h) {
      for (std::uint64_t p = 0; p < nic_ports(d); ++p) {
        b.add_link(fabric_link(hw, nics[h], leaves[leaf_of(d, h, p)], port_bw, hw.host_link_m, 1));
      }
    }
    add_management_and_cages(b, d, leaves);
    b.set_traits(make_traits(hw, d.layout));
    finish_inventory(result, std::move(b).build(), options);
  } else {
    tally_clos(d, counts, result.inventory);
  }
  Inventory& inv = result.inventory;
  inv.design = d.design;
  // The builder's own explanation first, then the port counts that show it.
  if (!d.problems.empty()) inv.feasible = false;
  inv.problems.insert(inv.problems.begin(), d.problems.begin(), d.problems.end());
  const Bandwidth host_bw = hw.host_link_bandwidth();
  inv.ports_per_gpu = 1;
  inv.injection_per_gpu =
      host_bw * (static_cast<double>(d.layout.nics_per_node) / d.layout.gpus_per_node);
  const Bandwidth port_bw = host_port_bandwidth(d);
  inv.bisection =
      clos_bisection(d.shape, counts, hosts, port_bw, hw.port_speed, hw.core_link_speed);
  if (counts.spines != 0) {
    set_tier_ratio(inv, "leaf",
                   d.leaf_down * port_bw.bytes_per_second() /
                       (d.shape.leaf_up * hw.port_speed.bytes_per_second()));
  }
  if (counts.cores != 0) {
    set_tier_ratio(inv, "spine",
                   d.shape.leaves_per_pod * hw.port_speed.bytes_per_second() /
                       (d.shape.spine_up * hw.core_link_speed.bytes_per_second()));
  }
  return result;
}

// The equal-links rule with the fewest spines (docs/topology.md): where the uplinks' count has no
// divisor at the spines' need (a partial SU's 13 uplinks need 2 spines; 13 is prime), a leaf
// that is not oversubscribed takes a few more uplinks into its free ports, up to a multiple of
// the need (14 over 2 spines), rather than more spines (13, one link each). Leaves without free
// ports (a full SU: 32 down + 32 up) and oversubscribed ones (their ratio was asked for) keep the
// divisor rule (3 SUs: 16 spines).
static ClosShape pad_uplinks(const ClosDesign& d) {
  ClosShape s = d.shape;
  const bool three = s.tiers == 3 && s.leaves > s.leaves_per_pod;
  if (three || s.leaves <= 1 || s.leaf_up == 0) return s;
  const std::uint64_t per_plane = ceil_div(s.leaves, std::max<std::uint32_t>(s.planes, 1));
  const std::uint64_t need =
      std::max<std::uint64_t>(1, ceil_div(per_plane * s.leaf_up, d.hw.spine.ends()));
  if (need >= s.leaf_up || s.leaf_up % need == 0) return s;
  const std::uint64_t padded = ceil_div(s.leaf_up, need) * need;
  // Host ports in switch ports (breakout shares one among k).
  const std::uint64_t k = host_breakout(d);
  std::uint64_t load = 0;
  for (const auto& [ports, leaves] : leaf_loads(d)) {
    if (leaves != 0) load = std::max(load, ceil_div(ports, k));
  }
  const bool oversubscribed = s.leaf_up < std::max<std::uint64_t>(load, ceil_div(d.leaf_down, k));
  if (oversubscribed || load + padded > d.hw.radix ||
      per_plane * padded > need * d.hw.spine.ends()) {
    return s;
  }
  s.leaf_up = static_cast<std::uint32_t>(padded);
  return s;
}

BuildResult build_clos(const ArgNode& args, const ClosDesign& design, const BuildOptions& options) {
  ClosDesign d = design;
  d.shape = pad_uplinks(design);
  if (!d.optics_per_module) {
    // docs/topology.md "Transceivers per module": the default counts modules where a cage holds
    // two ports (QM9700, SN5600 / Tomahawk 5 at 400G) or the leaves' host ends split a port
    // (SN5600 at 400G or 200G); `optics: per_port` keeps one per end.
    bool twin = host_breakout(d) > 1;
    for (const SwitchSpec* sw : {d.hw.sw, d.hw.spine.sw, d.hw.core.sw}) {
      if (sw != nullptr && switch_ports_per_cage(*sw) > 1) twin = true;
    }
    // A spine or core port split for the leaves' slower uplinks: its cage's module serves them.
    if (d.hw.spine.ends_per_port > 1 || d.hw.spine_up_ends_per_port > 1 ||
        d.hw.core.ends_per_port > 1) {
      twin = true;
    }
    d.optics_per_module = twin;
  }
  return build_clos_shaped(args, d, options);
}

void read_optics(const ArgNode& args, ClosDesign& d) {
  if (args.find("optics")) {
    d.optics_per_module = args.at("optics").as_choice({"per_port", "per_module"}) == "per_module";
  }
  d.nic_ports_per_module =
      static_cast<std::uint32_t>(args.get_int("nic_ports_per_module", 1, 1, 2));
}

namespace {

// A tier's switch named by `key`: a chassis or larger switch above the leaves. It must speak the
// leaves' fabric; every fabric link runs at the leaves' uplink rate, so its ports must be at
// least that fast, and a faster port takes as many of those links as its datasheet's breakout
// allows (switch_breakout: an SN5600 800G port as 2 x 400G), else one, the port running at the
// leaves' rate (Ethernet and InfiniBand ports train to the highest rate both ends support).
std::optional<Hardware::TierSwitch> read_tier_switch(const ArgNode& args, const Hardware& hw,
                                                     const std::string& key) {
  const ArgNode* node = args.find(key);
  if (node == nullptr) return std::nullopt;
  const SwitchSpec* sw = nullptr;
  try {
    sw = &switch_spec(node->text(), key);
  } catch (const InputError& e) {
    node->fail(e.bare_message());
  }
  if (sw->fabric != hw.sw->fabric) {
    node->fail(fmt::format("a {} is an {} switch and the leaves ({}) are {}", sw->name, sw->fabric,
                           hw.sw->name, hw.sw->fabric));
  }
  if (sw->port_speed.bytes_per_second() < hw.port_speed.bytes_per_second()) {
    node->fail(fmt::format("a {} port runs at {} Gb/s, slower than the leaves' uplinks at {} Gb/s",
                           sw->name, sw->port_speed.gigabits_per_second(),
                           hw.port_speed.gigabits_per_second()));
  }
  return Hardware::TierSwitch{sw, static_cast<std::uint16_t>(sw - switch_catalog().data()),
                              sw->radix, switch_breakout(*sw, hw.port_speed)};
}

}  // namespace

void read_tier_switches(const ArgNode& args, Hardware& hw, bool core) {
  const auto spine = read_tier_switch(args, hw, "spine_switch");
  if (spine) hw.spine = hw.core = *spine;
  const auto own_core = core ? read_tier_switch(args, hw, "core_switch") : std::nullopt;
  if (own_core) hw.core = *own_core;
  if (!spine && !own_core) return;  // one switch model: every fabric link at port_speed
  // Spine-core links train to the highest rate both ports support (InfiniBand and Ethernet
  // auto-negotiation): two 800G SN5600 tiers join at 800G even under 400G leaves, one link a
  // port rather than the leaves' 2 x 400G. A port faster than that rate takes as many of them as
  // its breakout gives (switch_breakout), as the spine's down ports take the leaves' links.
  const Bandwidth spine_rate = spine ? hw.spine.sw->port_speed : hw.port_speed;
  const Bandwidth core_rate = own_core ? hw.core.sw->port_speed : spine_rate;
  hw.core_link_speed = std::min(spine_rate, core_rate);
  if (spine) hw.spine_up_ends_per_port = switch_breakout(*hw.spine.sw, hw.core_link_speed);
  hw.core.ends_per_port = switch_breakout(*hw.core.sw, hw.core_link_speed);
}

std::uint32_t spine_up_links(const Hardware& hw, std::uint64_t down_ends, double ratio) {
  const double down_bw = static_cast<double>(down_ends) * hw.port_speed.bytes_per_second();
  return static_cast<std::uint32_t>(
      std::ceil(down_bw / (ratio * hw.core_link_speed.bytes_per_second()) - 1e-9));
}

std::pair<std::uint32_t, std::uint32_t> split_spine_ports(const Hardware& hw, double ratio) {
  const std::uint32_t radix = hw.spine.radix, k_down = hw.spine.ends_per_port;
  const std::uint32_t k_up = hw.spine_up_ends_per_port;
  auto up_ports = [&](std::uint32_t d) {
    return (spine_up_links(hw, std::uint64_t{d} * k_down, ratio) + k_up - 1) / k_up;
  };
  std::uint32_t down = radix;
  while (down > 1 && down + up_ports(down) > radix) --down;
  return {down * k_down, std::max<std::uint32_t>(1, spine_up_links(hw, down * k_down, ratio))};
}

std::string tier_switch_note(const Hardware::TierSwitch& s, Bandwidth rate,
                             const std::string& what) {
  std::string note = fmt::format(", {} {} radix {}", what, s.sw->name, s.radix);
  if (s.ends_per_port > 1) {
    note += fmt::format(" ({} x {}G a port)", s.ends_per_port, rate.gigabits_per_second());
  } else if (s.sw->port_speed.bytes_per_second() > rate.bytes_per_second()) {
    note += fmt::format(" (ports at {}G)", rate.gigabits_per_second());
  }
  return note;
}

std::string core_links_note(const Hardware& hw) {
  if (hw.core_link_speed.bytes_per_second() == hw.port_speed.bytes_per_second()) return "";
  return fmt::format(", spine-core links at {}G", hw.core_link_speed.gigabits_per_second());
}

std::vector<std::string> optics_keys() {
  return {"optics", "nic_ports_per_module"};
}

}  // namespace lockstep::builders
