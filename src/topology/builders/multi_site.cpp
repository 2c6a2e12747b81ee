// Builder "multi_site" (scale-across): several datacenters, each built by any other builder,
// joined through one gateway per site by long-haul fibre of a given length and capacity.
//
// Model (docs/scenario.md): each site's top switch tier (or, without switches, its NICs or GPUs)
// connects to the site's gateway by port-speed links sized to the site's long-haul capacity, so the
// gateway is never the bottleneck; gateways are switches of the `gateway_switch` model. The
// uplinks take free ports of the site's top tier; a full top tier makes the design infeasible.
// Every pair of sites (or each pair listed under `links:`) is joined by one long-haul link of
// `capacity` per direction whose latency is the fibre's propagation delay, 5 us per km one way
// (catalog: kPropagationNsPerMetre), plus half the gateway latency at each end.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "length_arg.hpp"
#include "lockstep/topology/builder.hpp"
#include "lockstep/topology/catalog.hpp"
#include "lockstep/topology/inventory_count.hpp"
#include "lockstep/topology/inventory_paths.hpp"
#include "min_cut.hpp"
#include "registrars.hpp"

namespace lockstep::builders {
namespace {

constexpr double kDefaultUplinkMetres = 100;  // site top tier to gateway, within the building

struct Site {
  std::string name;
  const ArgNode* spec = nullptr;
  BuildResult built;
  std::uint64_t attach_points = 0;  // top-tier switches (or NICs, or GPUs) wired to the gateway
  Bandwidth capacity;               // long-haul capacity leaving this site, all pairs
};

struct Pair {
  std::size_t a = 0, b = 0;
  double length_m = 0;
  Bandwidth capacity;
};

std::vector<Site> read_sites(const ArgNode& args) {
  const ArgNode& sites = args.at("sites");
  std::vector<Site> out;
  if (sites.kind() == ArgNode::Kind::Map) {
    for (const auto& key : sites.keys()) out.push_back(Site{key, sites.find(key)});
  } else if (sites.kind() == ArgNode::Kind::List) {
    for (const ArgNode& item : sites.items()) {
      Site s{fmt::format("site{}", out.size()), &item};
      if (item.kind() == ArgNode::Kind::Map) {
        if (const ArgNode* name = item.find("name")) s.name = name->text();
      }
      out.push_back(std::move(s));
    }
  } else {
    sites.fail("expected a map (name: cluster) or a list of site clusters");
  }
  if (out.size() < 2) sites.fail(fmt::format("needs at least 2 sites, got {}", out.size()));
  if (out.size() > 64) sites.fail(fmt::format("at most 64 sites, got {}", out.size()));
  return out;
}

std::size_t site_index(const std::vector<Site>& sites, const ArgNode& node) {
  for (std::size_t i = 0; i < sites.size(); ++i) {
    if (sites[i].name == node.text()) return i;
  }
  node.fail(fmt::format("unknown site '{}'", node.text()));
}

std::vector<Pair> read_pairs(const ArgNode& args, const std::vector<Site>& sites) {
  std::optional<double> distance;
  std::optional<Bandwidth> capacity;
  if (const ArgNode* d = args.find("distance")) distance = length_metres(*d);
  if (const ArgNode* c = args.find("capacity")) capacity = c->as_bandwidth();
  std::vector<Pair> pairs;
  const ArgNode* links = args.find("links");
  if (links == nullptr) {
    if (!distance) args.at("distance");  // throws "missing required key"
    if (!capacity) args.at("capacity");
    for (std::size_t a = 0; a < sites.size(); ++a) {
      for (std::size_t b = a + 1; b < sites.size(); ++b)
        pairs.push_back({a, b, *distance, *capacity});
    }
    return pairs;
  }
  if (links->kind() != ArgNode::Kind::List) links->fail("expected a list of {a, b} site pairs");
  for (const ArgNode& l : links->items()) {
    if (l.kind() != ArgNode::Kind::Map) l.fail("expected a map with a and b");
    Pair p{site_index(sites, l.at("a")), site_index(sites, l.at("b"))};
    if (p.a == p.b) l.at("b").fail(fmt::format("links site '{}' to itself", sites[p.a].name));
    const ArgNode* d = l.find("distance");
    const ArgNode* c = l.find("capacity");
    if (d == nullptr && !distance) l.at("distance");
    if (c == nullptr && !capacity) l.at("capacity");
    p.length_m = d ? length_metres(*d) : *distance;
    p.capacity = c ? c->as_bandwidth() : *capacity;
    l.check_all_used();
    pairs.push_back(p);
  }
  // Every site must be reachable from the first through the listed links.
  std::vector<char> reached(sites.size(), 0);
  reached[0] = 1;
  for (bool grew = true; grew;) {
    grew = false;
    for (const Pair& p : pairs) {
      if (reached[p.a] != reached[p.b]) {
        reached[p.a] = reached[p.b] = 1;
        grew = true;
      }
    }
  }
  for (std::size_t i = 0; i < sites.size(); ++i) {
    if (!reached[i]) {
      links->fail(fmt::format("site '{}' is not joined to site '{}' by any chain of links",
                              sites[i].name, sites[0].name));
    }
  }
  return pairs;
}

// The devices a site's gateway plugs into: its highest switch tier; without switches its NICs;
// without NICs its GPUs.
std::vector<DeviceId> attach_devices(const Topology& t) {
  int top = -1;
  for (const Device& d : t.devices()) {
    if (d.kind == DeviceKind::Switch) top = std::max(top, static_cast<int>(d.tier));
  }
  std::vector<DeviceId> out;
  for (DeviceKind want : {DeviceKind::Switch, DeviceKind::Nic, DeviceKind::Gpu}) {
    for (DeviceId id = 0; id < t.num_devices(); ++id) {
      const Device& d = t.device(id);
      if (d.kind == want && (want != DeviceKind::Switch || d.tier == top)) out.push_back(id);
    }
    if (!out.empty()) break;
  }
  return out;
}

// The site's highest scale-out switch tier in its inventory (nullptr without switches).
TierFigures* top_tier(Inventory& inv) {
  for (auto it = inv.tiers.rbegin(); it != inv.tiers.rend(); ++it) {
    if (it->tier != "scale_up" && it->tier != "dci" && it->switches > 0) return &*it;
  }
  return nullptr;
}

// Without a graph: the same attach points counted from the inventory.
std::uint64_t attach_count(Inventory& inv) {
  if (const TierFigures* top = top_tier(inv)) return top->switches;
  return inv.nics > 0 ? inv.nics : inv.gpus;
}

// The uplinks take ports of the site's top tier (as its graph shows): a site whose top tier is
// full cannot reach its gateway without more switches, and says so.
void reserve_uplink_ports(Inventory& inv, std::uint64_t ports) {
  TierFigures* top = top_tier(inv);
  if (top == nullptr) return;
  top->ports_used += ports;
  if (top->ports_free >= ports) {
    top->ports_free -= ports;
    return;
  }
  inv.feasible = false;
  inv.problems.push_back(fmt::format(
      "the gateway uplinks need {} ports of the {} tier, which has {} free; size the site with "
      "spare {} ports",
      ports, top->tier, top->ports_free, top->tier));
  top->ports_free = 0;
}

// Gateway ports per attach point: the site's long-haul capacity split evenly, rounded up to
// whole ports, each a link of the gateway's port speed.
std::uint64_t uplink_ports_each(const Site& s, Bandwidth port) {
  const double ports = std::ceil(s.capacity.bytes_per_second() / port.bytes_per_second() /
                                 static_cast<double>(s.attach_points));
  return static_cast<std::uint64_t>(std::max(1.0, ports));
}

void merge_inventory(Inventory& total, const Inventory& part, const std::string& site) {
  total.gpus += part.gpus;
  total.nodes += part.nodes;
  total.nics += part.nics;
  total.cables += part.cables;
  total.transceivers += part.transceivers;
  total.power_w += part.power_w;
  total.cost_usd += part.cost_usd;
  total.ports_per_gpu = std::max(total.ports_per_gpu, part.ports_per_gpu);
  for (const TierFigures& t : part.tiers) {
    auto it = std::find_if(total.tiers.begin(), total.tiers.end(),
                           [&](const TierFigures& x) { return x.tier == t.tier; });
    if (it == total.tiers.end()) {
      total.tiers.push_back(t);
    } else {
      it->switches += t.switches;
      it->ports_used += t.ports_used;
      it->ports_free += t.ports_free;
      it->oversubscription = std::max(it->oversubscription, t.oversubscription);
    }
  }
  for (const InventoryLine& l : part.lines) {
    auto it = std::find_if(total.lines.begin(), total.lines.end(), [&](const InventoryLine& x) {
      return x.item == l.item && x.category == l.category && x.tier == l.tier;
    });
    if (it == total.lines.end()) {
      total.lines.push_back(l);
    } else {
      it->count += l.count;
    }
  }
  if (!part.feasible) total.feasible = false;
  for (const auto& p : part.problems) total.problems.push_back(fmt::format("site {}: {}", site, p));
}

BuildResult build_multi_site(const ArgNode& args, const BuildOptions& options) {
  std::vector<Site> sites = read_sites(args);
  const std::vector<Pair> pairs = read_pairs(args, sites);
  const double uplink_m =
      args.find("uplink_length") ? length_metres(args.at("uplink_length")) : kDefaultUplinkMetres;

  BuildOptions site_options = options;
  site_options.want_graph = true;  // merged below when every site has one
  bool all_graphs = true;
  for (Site& s : sites) {
    s.built = build_topology(*s.spec, site_options);
    all_graphs = all_graphs && s.built.graph.has_value();
  }
  for (const Pair& p : pairs) {
    sites[p.a].capacity = sites[p.a].capacity + p.capacity;
    sites[p.b].capacity = sites[p.b].capacity + p.capacity;
  }

  // The gateway model: stated, or the first site's scale-out switch.
  std::string gw_name = "qm9700";
  if (sites[0].built.graph && !sites[0].built.graph->traits().switch_model.empty()) {
    gw_name = sites[0].built.graph->traits().switch_model;
  }
  const ArgNode* gw_node = args.find("gateway_switch");
  if (gw_node) gw_name = gw_node->text();
  std::uint16_t gw_model = 0;
  try {
    gw_model = switch_index(gw_name);
  } catch (const InputError& e) {
    if (gw_node == nullptr) throw;
    gw_node->fail(e.bare_message());
  }
  const SwitchSpec& gw = switch_catalog()[gw_model];

  BuildResult result;
  Inventory& inv = result.inventory;
  BomTally dci;
  std::uint64_t gw_ports = 0;
  std::uint64_t uplink_ports = 0;  // on the sites' top tiers
  for (Site& s : sites) {
    s.attach_points =
        s.built.graph ? attach_devices(*s.built.graph).size() : attach_count(s.built.inventory);
    const std::uint64_t ports_each = uplink_ports_each(s, gw.port_speed);
    dci.add_links(medium_for_length(gw.port_speed, uplink_m), gw.port_speed, uplink_m,
                  s.attach_points * ports_each);
    gw_ports += ports_each * s.attach_points;
    uplink_ports += ports_each * s.attach_points;
    reserve_uplink_ports(s.built.inventory, ports_each * s.attach_points);
    merge_inventory(inv, s.built.inventory, s.name);
  }
  for (const Pair& p : pairs) {
    dci.add_links(LinkMedium::LongHaulFibre, p.capacity, p.length_m, 1);
    // Both gateways of the pair give the long-haul link as many ports as its capacity needs.
    gw_ports += 2 * static_cast<std::uint64_t>(std::ceil(p.capacity.bytes_per_second() /
                                                         gw.port_speed.bytes_per_second()));
  }
  Inventory dci_inv;
  try {
    dci.finish(dci_inv);  // picks the long-haul optics; fails when none reaches that far
  } catch (const InputError& e) {
    const ArgNode* where = args.find("links") ? args.find("links") : args.find("distance");
    (where ? *where : args).fail(e.bare_message());
  }
  merge_inventory(inv, dci_inv, "dci");
  inv.lines.push_back(
      {gw.display + " as DCI gateway", "switch", "dci", sites.size(), gw.power_w, gw.price_usd});
  inv.power_w += gw.power_w * static_cast<double>(sites.size());
  inv.cost_usd += gw.price_usd * static_cast<double>(sites.size());
  TierFigures dci_tier;
  dci_tier.tier = "dci";
  dci_tier.switches = sites.size();
  dci_tier.ports_used = gw_ports;
  const std::uint64_t gw_total = static_cast<std::uint64_t>(gw.radix) * sites.size();
  dci_tier.ports_free = gw_total > gw_ports ? gw_total - gw_ports : 0;
  inv.tiers.push_back(dci_tier);
  if (gw_ports > gw_total) {
    inv.feasible = false;
    inv.problems.push_back(
        fmt::format("the {} gateways need {} ports but have {}", sites.size(), gw_ports, gw_total));
  }

  // Site-level figures: the weakest site bounds injection; bisection by the balanced cut below.
  inv.injection_per_gpu = sites[0].built.inventory.injection_per_gpu;
  for (const Site& s : sites) {
    inv.injection_per_gpu = std::min(inv.injection_per_gpu, s.built.inventory.injection_per_gpu);
  }
  std::string parts;
  double max_km = 0;
  for (const Site& s : sites) parts += fmt::format("{}{}", parts.empty() ? "" : ", ", s.name);
  for (const Pair& p : pairs) max_km = std::max(max_km, p.length_m / 1000);
  inv.design = fmt::format(
      "multi_site: {} sites ({}), {} long-haul links up to {} km, {} gateway uplink ports on the "
      "sites' top tiers",
      sites.size(), parts, pairs.size(), max_km, uplink_ports);

  if (!all_graphs) {
    // Estimates without a graph: a GPU climbs half its site's diameter to the top tier, then
    // top -> gateway -> gateway -> top adds three hops.
    Bandwidth site_cuts;
    for (std::size_t i = 0; i < sites.size(); ++i) {
      const Inventory& a = sites[i].built.inventory;
      site_cuts = site_cuts + a.bisection;
      inv.diameter_switch_hops = std::max(inv.diameter_switch_hops, a.diameter_switch_hops);
      inv.max_one_way_latency = std::max(inv.max_one_way_latency, a.max_one_way_latency);
      for (const Pair& p : pairs) {
        if (p.a != i) continue;
        const Inventory& b = sites[p.b].built.inventory;
        inv.diameter_switch_hops =
            std::max(inv.diameter_switch_hops,
                     (a.diameter_switch_hops + 1) / 2 + (b.diameter_switch_hops + 1) / 2 + 3);
        inv.max_one_way_latency = std::max(inv.max_one_way_latency,
                                           a.max_one_way_latency / 2 + b.max_one_way_latency / 2 +
                                               Time::ns(p.length_m * kPropagationNsPerMetre));
      }
    }
    Bandwidth cross;
    for (const Pair& p : pairs) {
      if ((p.a < sites.size() / 2) != (p.b < sites.size() / 2)) cross = cross + p.capacity;
    }
    inv.bisection = std::min(site_cuts, cross);
    inv.graph_built = false;
    return result;
  }

  TopologyBuilder tb("multi_site");
  std::vector<DeviceId> gateways;
  std::uint32_t node_offset = 0;
  for (std::uint32_t si = 0; si < sites.size(); ++si) {
    const Topology& t = *sites[si].built.graph;
    const auto offset = static_cast<DeviceId>(tb.num_devices());
    for (Device d : t.devices()) {
      d.site = si;
      if (d.node != kNone) d.node += node_offset;
      tb.add_device(d);
    }
    for (Link l : t.links()) {
      l.a += offset;
      l.b += offset;
      tb.add_link(l);
    }
    node_offset += t.num_nodes();
    Device g;
    g.kind = DeviceKind::Gateway;
    g.site = si;
    g.local_index = si;
    g.model = gw_model;
    g.radix = static_cast<std::uint16_t>(gw.radix);
    const DeviceId gid = tb.add_device(g);
    gateways.push_back(gid);
    const std::uint64_t ports_each = uplink_ports_each(sites[si], gw.port_speed);
    for (DeviceId d : attach_devices(t)) {
      for (std::uint64_t p = 0; p < ports_each; ++p) {
        Link l;
        l.a = d + offset;
        l.b = gid;
        l.bandwidth = gw.port_speed;
        l.length_m = uplink_m;
        l.medium = medium_for_length(gw.port_speed, uplink_m);
        l.latency = Time::ns(uplink_m * kPropagationNsPerMetre) + gw.latency / 2;
        tb.add_link(l);
      }
    }
  }
  for (const Pair& p : pairs) {
    Link l;
    l.a = gateways[p.a];
    l.b = gateways[p.b];
    l.bandwidth = p.capacity;
    l.length_m = p.length_m;
    l.medium = LinkMedium::LongHaulFibre;
    // Light in fibre: kPropagationNsPerMetre (5 ns/m = 5 us/km), plus half a gateway each end.
    l.latency = Time::ns(p.length_m * kPropagationNsPerMetre) + gw.latency;
    tb.add_link(l);
  }
  tb.set_traits(sites[0].built.graph->traits());
  Topology topo = std::move(tb).build();

  // Paths from the first GPU of every site; bisection as the min cut of the rank-order halves.
  for (std::uint32_t si = 0, first = 0; si < sites.size() && first < topo.gpus().size(); ++si) {
    const PathExtent e = measure_paths(topo, topo.gpus()[first]);
    inv.diameter_switch_hops = std::max(inv.diameter_switch_hops, e.switch_hops);
    inv.max_one_way_latency = std::max(inv.max_one_way_latency, e.latency);
    first += static_cast<std::uint32_t>(sites[si].built.graph->gpus().size());
  }
  inv.bisection = rank_halves_cut(topo);
  inv.graph_built = true;
  if (options.want_graph) result.graph = std::move(topo);
  return result;
}

}  // namespace

void register_multi_site_builder() {
  register_builder(
      BuilderInfo{"multi_site",
                  "several datacenters (each any builder) joined by gateways and long-haul fibre",
                  {"sites", "distance", "capacity", "links", "gateway_switch", "uplink_length"},
                  build_multi_site});
}

}  // namespace lockstep::builders
