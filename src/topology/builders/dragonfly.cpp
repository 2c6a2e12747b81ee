// dragonfly (Kim, Dally, Scott, Abts, ISCA 2008): `groups` groups of `routers_per_group` (a)
// routers, all-to-all inside a group (local links); each router has `global_links_per_router` (h)
// links to other groups and `nodes_per_router` (p) servers whose NICs plug into it. Balanced
// defaults: a = 2p, h = p, groups = a h + 1 (every pair of groups joined by exactly one global
// link). Router radix needed: p x NICs per node + (a - 1) + h.
//
// Global links follow a circulant ("palm tree") arrangement (Camarero, Vallejo, Beivide, ACM
// TACO 2014): global port k = r h + j of group i (router r's j-th global port) joins group
// i + (k mod (g - 1)) + 1 (mod g), the same pattern in every group, so that moving every group
// by one maps links onto links (and minimal routes onto minimal routes). Port k's partner is the
// port of the same round of g - 1 ports whose offset is g minus k's. Ports beyond the last full
// round take offsets +1, -1, +2, -2, ... (and g/2 for an odd one out when g is even). Where that
// wires fewer or more links than dealing pairs greedily ((0,1), (0,2), ..., (1,2), ...,
// repeatedly while both groups have free ports), the greedy deal is kept, so that the inventory
// never depends on the arrangement. More groups than a h + 1 leave some pairs without a direct
// link (reported infeasible: minimal routing then needs more than one global hop).
#include <fmt/format.h>

#include <optional>
#include <utility>
#include <vector>

#include "common.hpp"
#include "registrars.hpp"

namespace lockstep::builders {
namespace {

// Group i's global port k under the circulant arrangement: its partner (group, port), or none
// (a port left free). Ports 0 .. q(g-1)-1 are q full rounds of offsets 1 .. g-1; the r ports
// after them take +1, -1, +2, -2, ..., pairing port m of the remainder with port m xor 1, and an
// odd one out takes g/2 when g is even (paired with the same port of group i + g/2).
std::optional<std::pair<std::uint64_t, std::uint64_t>> circulant_partner(std::uint64_t g,
                                                                         std::uint64_t ports,
                                                                         std::uint64_t i,
                                                                         std::uint64_t k) {
  const std::uint64_t full = ports / (g - 1) * (g - 1);
  if (k < full) {
    const std::uint64_t round = k / (g - 1) * (g - 1), d = k % (g - 1) + 1;
    return std::pair{(i + d) % g, round + (g - d - 1)};
  }
  const std::uint64_t m = k - full, r = ports - full;
  if ((m ^ 1) < r) {
    const std::uint64_t s = m / 2 + 1;
    return std::pair{(i + (m % 2 == 0 ? s : g - s)) % g, full + (m ^ 1)};
  }
  if (g % 2 == 0) return std::pair{(i + g / 2) % g, k};
  return std::nullopt;
}

std::uint64_t circulant_links(std::uint64_t g, std::uint64_t ports) {
  if (g < 2) return 0;
  const std::uint64_t r = ports % (g - 1);
  return ((ports - r) * g + r / 2 * 2 * g + (r % 2 == 1 && g % 2 == 0 ? g : 0)) / 2;
}

struct GreedyLink {
  std::uint64_t i, ki, j, kj;  // group i's port ki to group j's port kj
};

// Pair by pair, (0,1), (0,2), ..., (1,2), ..., repeatedly while both groups have free ports.
std::vector<GreedyLink> greedy_global_links(std::uint64_t groups, std::uint64_t ports) {
  std::vector<GreedyLink> out;
  std::vector<std::uint64_t> used(groups, 0);
  for (bool added = true; added && groups > 1;) {
    added = false;
    for (std::uint64_t i = 0; i < groups; ++i) {
      for (std::uint64_t j = i + 1; j < groups; ++j) {
        if (used[i] == ports || used[j] == ports) continue;
        out.push_back({i, used[i]++, j, used[j]++});
        added = true;
      }
    }
  }
  return out;
}

BuildResult build(const ArgNode& args, const BuildOptions& options) {
  const Hardware hw = read_hardware(args);
  const NodeLayout layout = read_node_layout(args, hw);
  const auto p = static_cast<std::uint32_t>(read_count(args, "nodes_per_router", 4096));
  const auto a =
      static_cast<std::uint32_t>(args.get_int("routers_per_group", std::int64_t{2} * p, 1, 4096));
  const auto h = static_cast<std::uint32_t>(args.get_int("global_links_per_router", p, 0, 4096));
  const auto groups = static_cast<std::uint32_t>(
      args.get_int("groups", std::min<std::int64_t>(std::int64_t{a} * h + 1, 4096), 1, 4096));
  if (groups > 1 && h == 0) args.at("global_links_per_router").fail("must be positive");
  const std::uint64_t routers = std::uint64_t{groups} * a;
  const std::uint64_t nodes = routers * p;
  if (nodes * layout.gpus_per_node > 16'000'000) args.fail("absurdly large dragonfly");
  const std::uint64_t nics_per_router = std::uint64_t{p} * layout.nics_per_node;
  const std::uint64_t local = std::uint64_t{groups} * a * (a - 1) / 2;
  const std::uint64_t global_max = routers * h / 2;
  check_size(args, node_links(layout, nodes) + nodes * layout.nics_per_node + local + global_max,
             options);

  TopologyBuilder b("dragonfly");
  const std::vector<DeviceId> nics = add_nodes(b, hw, layout, static_cast<std::uint32_t>(nodes));
  std::vector<DeviceId> router(routers);
  for (auto& r : router) r = add_switch(b, hw, 0);
  const Bandwidth host_bw = hw.host_link_bandwidth();
  for (std::uint64_t i = 0; i < nics.size(); ++i) {
    b.add_link(fabric_link(hw, nics[i], router[i / nics_per_router], host_bw, hw.host_link_m, 1));
  }
  for (std::uint64_t g = 0; g < groups; ++g) {
    for (std::uint64_t i = 0; i < a; ++i) {
      for (std::uint64_t j = i + 1; j < a; ++j) {
        b.add_link(fabric_link(hw, router[g * a + i], router[g * a + j], hw.port_speed,
                               hw.fabric_link_m, 2));
      }
    }
  }
  // Global links; count those crossing the half-way cut for the bisection.
  const std::uint64_t ports = std::uint64_t{a} * h;
  const auto greedy = greedy_global_links(groups, ports);
  const std::uint64_t circulant_count = circulant_links(groups, ports);
  std::uint64_t crossing = 0, missing_pairs = 0;
  const auto add_global = [&](std::uint64_t i, std::uint64_t ki, std::uint64_t j,
                              std::uint64_t kj) {
    b.add_link(fabric_link(hw, router[i * a + ki / h], router[j * a + kj / h], hw.port_speed,
                           hw.core_link_m, 2));
    if ((i < groups / 2) != (j < groups / 2)) ++crossing;
  };
  if (groups > 1 && circulant_count == greedy.size()) {
    for (std::uint64_t i = 0; i < groups; ++i) {
      for (std::uint64_t k = 0; k < ports; ++k) {
        const auto partner = circulant_partner(groups, ports, i, k);
        // Each link once, from its lesser end.
        if (partner && std::pair{i, k} < *partner)
          add_global(i, k, partner->first, partner->second);
      }
    }
  } else {
    for (const GreedyLink& l : greedy) add_global(l.i, l.ki, l.j, l.kj);
  }
  if (groups > 1 && ports < groups - 1) missing_pairs = std::uint64_t{groups} * (groups - 1) / 2;
  b.set_traits(make_traits(hw, layout));

  BuildResult result;
  finish_inventory(result, std::move(b).build(), options);
  Inventory& inv = result.inventory;
  inv.design = fmt::format(
      "dragonfly: {} groups x {} routers x {} nodes x {} {} GPUs, {} global "
      "links per router, {}",
      groups, a, p, layout.gpus_per_node, hw.gpu->name, h, hw.sw->name);
  const std::uint64_t radix_needed = nics_per_router + (a - 1) + h;
  if (radix_needed > hw.radix) {
    inv.feasible = false;
    inv.problems.push_back(
        fmt::format("a router needs {} ports ({} NICs + {} local + {} global) "
                    "but a {} has {}",
                    radix_needed, nics_per_router, a - 1, h, hw.sw->name, hw.radix));
  }
  if (missing_pairs != 0) {
    inv.feasible = false;
    inv.problems.push_back(
        fmt::format("{} groups need {} global ports per group for one link per "
                    "pair; a group has {}",
                    groups, groups - 1, ports));
  }
  inv.ports_per_gpu = 1;
  inv.injection_per_gpu =
      host_bw * (static_cast<double>(layout.nics_per_node) / layout.gpus_per_node);
  const std::uint64_t hosts = nodes * layout.nics_per_node;
  Bandwidth bisection = host_bw * static_cast<double>(hosts / 2);
  if (groups > 1) bisection = std::min(bisection, hw.port_speed * static_cast<double>(crossing));
  inv.bisection = bisection;
  return result;
}

}  // namespace

void register_dragonfly_builder() {
  auto keys = node_keys();
  for (const char* k :
       {"nodes_per_router", "routers_per_group", "global_links_per_router", "groups"}) {
    keys.push_back(k);
  }
  // The dragonfly sizes itself from its group shape: nodes/gpus do not apply.
  keys.erase(keys.begin(), keys.begin() + 2);
  register_builder(
      {"dragonfly", "dragonfly: all-to-all groups of routers joined by global links", keys, build});
}

}  // namespace lockstep::builders
