// dragonfly (Kim, Dally, Scott, Abts, ISCA 2008): `groups` groups of `routers_per_group` (a)
// routers, all-to-all inside a group (local links); each router has `global_links_per_router` (h)
// links to other groups and `nodes_per_router` (p) servers whose NICs plug into it. Balanced
// defaults: a = 2p, h = p, groups = a h + 1 (every pair of groups joined by exactly one global
// link). Global links are dealt pair by pair, (0,1), (0,2), ..., (1,2), ..., repeatedly while
// both groups have free global ports, so fewer groups get parallel links and more groups than
// a h + 1 leave some pairs without a direct link (reported infeasible: minimal routing then
// needs more than one global hop). Router radix needed: p x NICs per node + (a - 1) + h.
#include <fmt/format.h>

#include "common.hpp"
#include "registrars.hpp"

namespace lockstep::builders {
namespace {

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
  // Global links, pair by pair; count those crossing the half-way cut for the bisection.
  std::vector<std::uint64_t> used(groups, 0);
  const std::uint64_t ports = std::uint64_t{a} * h;
  std::uint64_t crossing = 0, missing_pairs = 0;
  for (bool added = true; added && groups > 1;) {
    added = false;
    for (std::uint64_t i = 0; i < groups; ++i) {
      for (std::uint64_t j = i + 1; j < groups; ++j) {
        if (used[i] == ports || used[j] == ports) continue;
        const DeviceId ri = router[i * a + used[i]++ / h];
        const DeviceId rj = router[j * a + used[j]++ / h];
        b.add_link(fabric_link(hw, ri, rj, hw.port_speed, hw.core_link_m, 2));
        if ((i < groups / 2) != (j < groups / 2)) ++crossing;
        added = true;
      }
    }
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
