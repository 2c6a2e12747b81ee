// Counting a design into its bill of materials: BomTally accumulates parts (from a graph or from
// a builder's closed-form counts) and prices them from the catalog.
#include "lockstep/topology/inventory_count.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "lockstep/topology/catalog.hpp"

namespace lockstep {
namespace {

void add_line(Inventory& inv, std::string item, std::string category, std::string tier,
              std::uint64_t count, double power_w, double price_usd) {
  if (count == 0) return;
  inv.power_w += power_w * static_cast<double>(count);
  inv.cost_usd += price_usd * static_cast<double>(count);
  inv.lines.push_back(
      {std::move(item), std::move(category), std::move(tier), count, power_w, price_usd});
}

// "included in <the GPU whose board carries the chips> (<basis>)", or the catalog's note.
std::string scale_up_price_note(const ScaleUpSpec& s,
                                const std::map<std::uint16_t, std::uint64_t>& gpus) {
  if (!s.chips_in_gpu_price) return s.price_note;
  std::string gpu = "the GPUs' price";
  for (const auto& [model, count] : gpus) {
    if (gpu_catalog()[model].default_scale_up == s.name) {
      gpu = gpu_catalog()[model].display;
      break;
    }
  }
  return "included in " + gpu + " (" + s.price_note + ")";
}

}  // namespace

void BomTally::add_gpus(std::uint16_t model, std::uint64_t count) {
  gpus_[model] += count;
}
void BomTally::add_nics(std::uint16_t model, std::uint64_t count) {
  nics_[model] += count;
}

void BomTally::add_switches(std::uint16_t model, std::uint8_t tier, std::uint64_t count,
                            std::uint64_t ports_used, std::uint32_t radix, std::uint64_t overfull) {
  SwitchCount& s = switches_[{tier, model}];
  s.count += count;
  s.ports_used += ports_used;
  s.ports_total += static_cast<std::uint64_t>(radix) * count;
  s.overfull += overfull;
  if (overfull == 0 && radix != 0 && ports_used > static_cast<std::uint64_t>(radix) * count) {
    s.overfull += count;
  }
}

void BomTally::add_scale_up(std::uint16_t model, std::uint64_t domains, std::uint64_t chips,
                            std::uint64_t ports_used) {
  auto& [d, c, p] = scale_up_[model];
  d += domains;
  c += chips;
  p += ports_used;
}

void BomTally::add_links(LinkMedium medium, Bandwidth speed, double length_m, std::uint64_t count,
                         bool ends_counted) {
  const LinkKey key{medium, speed.bytes_per_second(), length_m};
  links_[key] += count;
  if (!ends_counted) auto_ends_[key] += 2 * count;
}

void BomTally::add_modules(LinkMedium medium, Bandwidth speed, double length_m,
                           std::uint32_t ports_per_module, std::uint64_t modules,
                           std::optional<std::uint16_t> nic) {
  const LinkKey key{medium, speed.bytes_per_second() * ports_per_module, length_m};
  if (nic) {
    nic_modules_[{key, *nic}] += modules;
  } else {
    modules_[key] += modules;
  }
}

std::string nic_side_module_name(const CableSpec& part) {
  const bool osfp = part.display.rfind("OSFP ", 0) == 0;
  return part.display + (osfp ? ", flat top (NIC side)" : " (NIC side)");
}

void BomTally::add_splitters(std::uint64_t splitters, std::uint64_t legs) {
  splitters_ += splitters;
  split_legs_ += legs;
}

void BomTally::add_split_dacs(LinkMedium medium, Bandwidth speed, double length_m,
                              std::uint32_t legs_per_cable, std::uint64_t cables,
                              std::uint64_t legs) {
  auto& [n, l] = split_dacs_[{LinkKey{medium, speed.bytes_per_second(), length_m}, legs_per_cable}];
  n += cables;
  l += legs;
}

void BomTally::finish(Inventory& inv) const {
  inv.lines.clear();
  inv.tiers.clear();
  inv.power_w = 0;
  inv.cost_usd = 0;
  inv.gpus = inv.nics = inv.cables = inv.transceivers = 0;
  for (const auto& [model, count] : gpus_) {
    const GpuSpec& g = gpu_catalog()[model];
    inv.gpus += count;
    add_line(inv, g.display, "gpu", "", count, g.power_w, g.price_usd);
  }
  for (const auto& [model, count] : nics_) {
    const NicSpec& n = nic_catalog()[model];
    inv.nics += count;
    add_line(inv, n.display, "nic", "", count, n.power_w, n.price_usd);
  }
  for (const auto& [model, counts] : scale_up_) {
    const auto& [domains, chips, ports] = counts;
    const ScaleUpSpec& s = scale_up_catalog()[model];
    if (chips != 0) {
      add_line(inv, s.switch_chip + " chip (" + s.display + ")", "switch", "scale_up", chips,
               s.chip_power_w, s.chip_price_usd);
      inv.lines.back().price_note = scale_up_price_note(s, gpus_);
    }
    TierFigures tier;
    tier.tier = "scale_up";
    tier.switches = chips;
    tier.ports_used = ports;
    const std::uint64_t total = chips * s.chip_ports;
    tier.ports_free = total > ports ? total - ports : 0;
    inv.tiers.push_back(tier);
    (void)domains;
  }
  // Scale-out tiers in order leaf, spine, core; several models in one tier share its figures.
  std::map<std::uint8_t, TierFigures> tiers;
  for (const auto& [key, s] : switches_) {
    const auto [tier, model] = key;
    const SwitchSpec& spec = switch_catalog()[model];
    add_line(inv, spec.display, "switch", switch_tier_name(tier), s.count, spec.power_w,
             spec.price_usd);
    TierFigures& t = tiers[tier];
    t.tier = switch_tier_name(tier);
    t.switches += s.count;
    t.ports_used += s.ports_used;
    t.ports_free += s.ports_total > s.ports_used ? s.ports_total - s.ports_used : 0;
    if (s.overfull != 0) {
      inv.feasible = false;
      inv.problems.push_back(fmt::format(
          "{} {} switch(es) need more ports than the {} each has ({} ports used on {} switches)",
          s.overfull, switch_tier_name(tier), s.ports_total / s.count, s.ports_used, s.count));
    }
  }
  for (auto& [tier, figures] : tiers) inv.tiers.push_back(figures);

  std::uint64_t fibres = 0;
  std::map<const CableSpec*, std::uint64_t> parts;   // cables (DAC / AEC)
  std::map<const CableSpec*, std::uint64_t> optics;  // transceivers
  std::map<LinkKey, std::uint64_t> modules = modules_;
  for (const auto& [key, count] : links_) {
    const CableChoice choice =
        cable_for(key.medium, Bandwidth::bytes_per_second(key.speed), key.length_m);
    if (choice.spec == nullptr) continue;  // NVLink / PCIe: board traces, not cables
    const std::uint64_t n = count * choice.parallel;
    if (choice.spec->transceivers_per_link != 0) {
      if (auto it = auto_ends_.find(key); it != auto_ends_.end()) modules[key] += it->second;
      if (key.medium == LinkMedium::Optical) fibres += n;
      inv.cables += n;  // the fibre (patch cord or long-haul strand pair)
    } else {
      parts[choice.spec] += n;
      inv.cables += n;
    }
  }
  // Copper legs joined at their switch cage take one splitter DAC per cage, not a DAC each.
  std::map<const CableSpec*, std::uint64_t> split;
  for (const auto& [key, counts] : split_dacs_) {
    const auto& [link, legs_per_cable] = key;
    const CableChoice choice =
        cable_for(link.medium, Bandwidth::bytes_per_second(link.speed), link.length_m);
    if (choice.spec == nullptr || choice.spec->transceivers_per_link != 0) continue;
    const std::uint64_t legs = std::min(counts.second * choice.parallel, parts[choice.spec]);
    parts[choice.spec] -= legs;
    inv.cables = inv.cables - legs + counts.first;
    split[&splitter_dac(legs_per_cable)] += counts.first;
  }
  // A module carries its ports' total speed: a twin-port 2 x 400G end takes one 800G 2xSR4.
  // NIC cages' modules are the same parts in their NIC form, on a line of their own.
  std::map<const CableSpec*, std::uint64_t> nic_optics;
  auto add_optics = [&](std::map<const CableSpec*, std::uint64_t>& to, const CableChoice& choice,
                        std::uint64_t count) {
    if (choice.spec == nullptr || choice.spec->transceivers_per_link == 0) return;
    to[choice.spec] += count * choice.parallel;
    inv.transceivers += count * choice.parallel;
  };
  for (const auto& [key, count] : modules) {
    add_optics(optics, cable_for(key.medium, Bandwidth::bytes_per_second(key.speed), key.length_m),
               count);
  }
  // A NIC's cage takes the part its NIC's optics need (nic_cage_module).
  for (const auto& [key, count] : nic_modules_) {
    const auto& [link, nic] = key;
    add_optics(nic_optics,
               nic_cage_module(nic_catalog()[nic], link.medium,
                               Bandwidth::bytes_per_second(link.speed), link.length_m),
               count);
  }
  for (const CableSpec& c : cable_catalog()) {
    if (auto it = optics.find(&c); it != optics.end()) {
      add_line(inv, c.display, "transceiver", "", it->second, c.power_w, c.price_usd);
    }
    if (auto it = nic_optics.find(&c); it != nic_optics.end()) {
      add_line(inv, nic_side_module_name(c), "transceiver", "", it->second, c.power_w, c.price_usd);
    }
    if (auto it = parts.find(&c); it != parts.end()) {
      add_line(inv, c.display, "cable", "", it->second, c.power_w, c.price_usd);
    }
  }
  for (const auto& [spec, count] : split) {
    add_line(inv, spec->display, "cable", "", count, spec->power_w, spec->price_usd);
  }
  // Split legs share a splitter fibre instead of a patch cord each.
  const std::uint64_t legs = std::min(split_legs_, fibres);
  inv.cables = inv.cables - legs + splitters_;
  const CableSpec& cord = fibre_patch_cord();
  add_line(inv, cord.display, "cable", "", fibres - legs, cord.power_w, cord.price_usd);
  const CableSpec& splitter = splitter_fibre();
  add_line(inv, splitter.display, "cable", "", splitters_, splitter.power_w, splitter.price_usd);
}

std::uint64_t BomTally::links(LinkMedium medium) const {
  std::uint64_t n = 0;
  for (const auto& [key, count] : links_)
    if (key.medium == medium) n += count;
  return n;
}

BomTally tally_topology(const Topology& topo) {
  BomTally tally;
  // Group switches by (tier, model, radix) so ports are summed per group.
  std::map<std::tuple<std::uint8_t, std::uint16_t, std::uint16_t>,
           std::tuple<std::uint64_t, std::uint64_t, std::uint64_t>>
      switch_groups;
  std::map<std::uint16_t, std::uint64_t> gpus, nics;
  std::map<DeviceId, std::uint64_t> managed;  // management cables into each switch
  for (const Link& l : topo.management_links()) ++managed[l.b];
  // A switch's ports: one per link end, except ends its datasheet lets share a port by breakout
  // (switch_breakout: a QM9700 400G port split 2 x 200G), k of them to a port.
  // Optical 200G ends take a 1:2 splitter fibre per pair (splitter_legs, add_splitters).
  auto switch_ports = [&](DeviceId id, std::uint64_t managed_ends) {
    const SwitchSpec& spec = switch_catalog()[topo.device(id).model];
    std::map<std::pair<std::uint32_t, bool>, std::uint64_t> ends;  // by (breakout, optical)
    auto add_end = [&](const Link& l) {
      ++ends[{switch_breakout(spec, l.bandwidth), l.medium == LinkMedium::Optical}];
    };
    for (const Port& p : topo.ports(id)) add_end(topo.link(Topology::link_of(p.out)));
    for (const Link& l : topo.management_links()) {
      if (l.b == id && managed_ends != 0) add_end(l);
    }
    std::uint64_t used = 0;
    for (const auto& [key, n] : ends) {
      const auto [k, optical] = key;
      used += (n + k - 1) / k;
      const std::uint64_t legs = k > 1 ? splitter_legs(spec.port_speed * (1.0 / k)) : 1;
      if (legs > 1 && optical) tally.add_splitters((n + legs - 1) / legs, n);
    }
    return used;
  };
  for (DeviceId id = 0; id < topo.num_devices(); ++id) {
    const Device& d = topo.device(id);
    auto degree = static_cast<std::uint64_t>(topo.ports(id).size());
    std::uint64_t managed_ends = 0;
    if (const auto it = managed.find(id); it != managed.end()) managed_ends = it->second;
    degree += managed_ends;
    if (d.kind == DeviceKind::Switch) degree = switch_ports(id, managed_ends);
    switch (d.kind) {
      case DeviceKind::Gpu:
        ++gpus[d.model];
        break;
      case DeviceKind::Nic:
        ++nics[d.model];
        break;
      case DeviceKind::Switch: {
        auto& [count, used, overfull] = switch_groups[{d.tier, d.model, d.radix}];
        ++count;
        used += degree;
        if (d.radix != 0 && degree > d.radix) ++overfull;
        break;
      }
      case DeviceKind::ScaleUpSwitch: {
        if (degree == 0) break;
        const ScaleUpSpec& s = scale_up_catalog()[d.model];
        const GpuSpec& g = gpu_catalog()[topo.device(topo.ports(id)[0].peer).model];
        tally.add_scale_up(d.model, 1, s.chips_for(degree, g.scale_up_links),
                           degree * g.scale_up_links);
        break;
      }
      case DeviceKind::Host:
      case DeviceKind::Gateway:
        break;
    }
  }
  for (const auto& [model, count] : gpus) tally.add_gpus(model, count);
  for (const auto& [model, count] : nics) tally.add_nics(model, count);
  // Links: group by (medium, speed, length) so the catalog lookup runs once per kind; the
  // management cables count as links, each taking a port of its switch.
  using Kind = std::tuple<LinkMedium, double, double>;
  auto kind_of = [](const Link& l) {
    return Kind{l.medium, l.bandwidth.bytes_per_second(), l.length_m};
  };
  std::map<Kind, std::uint64_t> kinds;
  for (const Link& l : topo.links()) ++kinds[kind_of(l)];
  for (const Link& l : topo.management_links()) ++kinds[kind_of(l)];
  for (const auto& [key, value] : switch_groups) {
    const auto [tier, model, radix] = key;
    const auto [count, used, overfull] = value;
    tally.add_switches(model, tier, count, used, radix, overfull);
  }
  // Modules: one per cage, carrying its ports' total speed, and one per end in no cage (both ends
  // of a graph link, the appliance's and the switch's of a management cable); finish() keeps the
  // ones of optical links.
  const std::size_t links = topo.num_links();
  auto link_at = [&](std::uint64_t i) -> const Link& {
    return i < links ? topo.link(i) : topo.management_links()[i - links];
  };
  std::set<std::pair<std::uint64_t, DeviceId>> in_cage;  // (link, device) ends
  for (std::size_t c = 0; c < topo.num_cages(); ++c) {
    for (const CageEnd& e : topo.cage(c)) in_cage.insert({e.link, e.device});
  }
  // Ends in no cage, a module each: a NIC's on the NIC side, the rest (switches, appliances).
  // NIC ends are keyed by the NIC's catalog model too (its cage's part: nic_cage_module).
  std::map<Kind, std::uint64_t> loose;
  std::map<std::pair<Kind, std::uint16_t>, std::uint64_t> nic_loose;
  auto is_nic = [&](DeviceId d) { return d != kNone && topo.device(d).kind == DeviceKind::Nic; };
  for (std::uint64_t i = 0; i < links + topo.management_links().size(); ++i) {
    const Link& l = link_at(i);
    for (const DeviceId end : {l.a, l.b}) {
      if (!in_cage.empty() && in_cage.count({i, end})) continue;
      if (is_nic(end)) {
        ++nic_loose[{kind_of(l), topo.device(end).model}];
      } else {
        ++loose[kind_of(l)];
      }
    }
  }
  std::map<std::pair<Kind, std::uint32_t>, std::uint64_t> caged;
  std::map<std::tuple<Kind, std::uint32_t, std::uint16_t>, std::uint64_t> nic_caged;
  // A switch cage of copper links only, whose other ends are single ports (NICs, appliances):
  // one splitter DAC for the cage (splitter_dac()).
  std::map<std::pair<Kind, std::uint32_t>, std::pair<std::uint64_t, std::uint64_t>> split;
  auto single_port_peer = [&](const CageEnd& e) {
    const Link& l = link_at(e.link);
    if (l.medium != LinkMedium::CopperDac) return false;
    const DeviceId peer = l.a == e.device ? l.b : l.a;
    if (peer == kNone) return true;  // an appliance's management cable
    return topo.device(peer).kind != DeviceKind::Switch && !in_cage.count({e.link, peer});
  };
  for (std::size_t c = 0; c < topo.num_cages(); ++c) {
    const auto ends = topo.cage(c);
    if (ends.empty()) continue;
    const Kind k = kind_of(link_at(ends[0].link));
    if (is_nic(ends[0].device)) {
      ++nic_caged[{k, topo.cage_ports(c), topo.device(ends[0].device).model}];
    } else {
      ++caged[{k, topo.cage_ports(c)}];
    }
    if (topo.device(ends[0].device).kind == DeviceKind::Switch &&
        std::all_of(ends.begin(), ends.end(), single_port_peer)) {
      auto& [cables, legs] = split[{k, topo.cage_ports(c)}];
      ++cables;
      legs += ends.size();
    }
  }
  for (const auto& [key, counts] : split) {
    const auto [medium, speed, length] = key.first;
    tally.add_split_dacs(medium, Bandwidth::bytes_per_second(speed), length, key.second,
                         counts.first, counts.second);
  }
  for (const auto& [key, count] : kinds) {
    const auto [medium, speed, length] = key;
    tally.add_links(medium, Bandwidth::bytes_per_second(speed), length, count, true);
  }
  for (const auto& [key, count] : loose) {
    const auto [medium, speed, length] = key;
    tally.add_modules(medium, Bandwidth::bytes_per_second(speed), length, 1, count);
  }
  for (const auto& [key, count] : caged) {
    const auto [medium, speed, length] = key.first;
    tally.add_modules(medium, Bandwidth::bytes_per_second(speed), length, key.second, count);
  }
  for (const auto& [key, count] : nic_loose) {
    const auto [medium, speed, length] = key.first;
    tally.add_modules(medium, Bandwidth::bytes_per_second(speed), length, 1, count, key.second);
  }
  for (const auto& [key, count] : nic_caged) {
    const auto& [kind, ports, nic] = key;
    const auto [medium, speed, length] = kind;
    tally.add_modules(medium, Bandwidth::bytes_per_second(speed), length, ports, count, nic);
  }
  return tally;
}

void count_inventory(const Topology& topo, Inventory& inv) {
  tally_topology(topo).finish(inv);
  inv.nodes = topo.num_nodes();
  inv.graph_built = true;
}

}  // namespace lockstep
