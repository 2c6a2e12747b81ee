// rail_optimized: DGX SuperPOD-style scalable units (SUs). Presets build HGX clusters through
// this builder, so its keys are a contract (docs/topology.md):
//   nodes | sus        servers, or SUs of nodes_per_su servers (one of them required)
//   nodes_per_su       servers per SU (32)
//   gpus_per_node      8 by default (from the scale-up system); nics_per_node = rails (8)
//   gpu, scale_up (nvswitch | nvl72 | nvlink_domain | mesh | none), scale_up_gpus
//   nic (or nic_speed), switch, radix, port_speed, transport (tcp, ultra_ethernet, ...)
//   oversubscription   leaf downlink:uplink (1), spine_oversubscription (3 tiers, 1)
//   tiers              auto | 2 | 3
//   link_latency, switch_latency, host_link_m, fabric_link_m, core_link_m, pcie
//   management_links   UFM appliance cables into the last SU's free leaf ports (0)
//   optics             per_port (one transceiver per link end) | per_module (twin-port cages)
//   nic_ports_per_module  NIC ports per node-side cage (2 on DGX H100 / B200 OSFP cages; 1)
//   spine_switch       the switch above the leaves (default: `switch`), ports at least as fast
//   core_switch        the core tier's (default: spine_switch)
// `tiers: 2` beyond one spine tier builds rail-planed: each rail its own leaf-spine plane.
// Structure: SU s has one leaf per rail; NIC r of every server of SU s plugs into leaf (s, r),
// which has nodes_per_su downlinks and nodes_per_su / oversubscription uplinks. Two tiers when
// all leaves fit under one spine tier (leaves <= radix): every leaf reaches every spine. Three
// tiers otherwise: pods of whole SUs (as many as the spines' downlinks hold), one spine per leaf
// uplink in each pod, and a core tier in planes (see clos.hpp). `tiers: 3` on what one pod
// holds splits the SUs into two pods (a core tier carries only traffic between pods).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "clos.hpp"
#include "registrars.hpp"

namespace lockstep::builders {
namespace {

BuildResult build(const ArgNode& args, const BuildOptions& options) {
  ClosDesign d;
  d.builder = "rail_optimized";
  d.hw = read_hardware(args);
  d.layout = read_node_layout(args, d.hw);
  d.nodes_per_su = static_cast<std::uint32_t>(args.get_int("nodes_per_su", 32, 1, 65'535));
  const std::int64_t max_nodes = 16'000'000 / d.layout.gpus_per_node;
  if (args.has("sus")) {
    if (args.has("nodes")) args.at("nodes").fail("give either nodes or sus, not both");
    const auto sus =
        args.at("sus").as_int(1, std::max<std::int64_t>(1, max_nodes / d.nodes_per_su));
    d.nodes = static_cast<std::uint32_t>(sus * d.nodes_per_su);
  } else {
    d.nodes = read_nodes(args, d.layout);
  }
  const std::uint32_t rails = d.layout.nics_per_node;
  const std::uint32_t sus = (d.nodes + d.nodes_per_su - 1) / d.nodes_per_su;
  const double leaf_ratio = read_ratio(args, "oversubscription");
  const double spine_ratio = read_ratio(args, "spine_oversubscription");
  const std::string tiers =
      args.find("tiers") ? args.at("tiers").as_choice({"auto", "2", "3"}) : std::string("auto");
  d.management_links =
      static_cast<std::uint32_t>(args.get_int("management_links", 0, 0, 1'000'000));
  read_optics(args, d);
  read_tier_switches(args, d.hw, true);
  const std::uint32_t spine_radix = d.hw.spine.ends(), core_radix = d.hw.core.ends();
  d.leaf_down = d.nodes_per_su;
  d.shape.leaves = sus * rails;
  d.shape.leaf_up = static_cast<std::uint32_t>(std::ceil(d.nodes_per_su / leaf_ratio - 1e-9));
  if (d.leaf_down + d.shape.leaf_up > d.hw.radix) {
    d.problems.push_back(fmt::format(
        "a rail leaf needs {} ports ({} servers + {} uplinks) but a "
        "{} has {}",
        d.leaf_down + d.shape.leaf_up, d.leaf_down, d.shape.leaf_up, d.hw.sw->name, d.hw.radix));
  }
  const bool three = tiers == "3" || (tiers == "auto" && d.shape.leaves > spine_radix);
  std::uint32_t pods = 1;
  if (three) {
    const auto [spine_down, spine_up] = split_spine_ports(d.hw, spine_ratio);
    std::uint32_t sus_per_pod = std::max<std::uint32_t>(1, spine_down / rails);
    d.shape.tiers = 3;
    d.shape.spine_up = spine_up;
    if (sus <= sus_per_pod) {
      // Forced 3 tiers on what one pod holds: a core tier carries traffic only between pods, so
      // split the SUs into two pods, each spine keeping the down:up ratio asked for (issue 23).
      if (sus < 2) {
        args.at("tiers").fail(fmt::format(
            "3 tiers need at least 2 pods of whole SUs; {} nodes make 1 SU of {} (give more nodes "
            "or a smaller nodes_per_su)",
            d.nodes, d.nodes_per_su));
      }
      sus_per_pod = (sus + 1) / 2;
      d.shape.spine_up = spine_up_links(d.hw, std::uint64_t{sus_per_pod} * rails, spine_ratio);
    }
    d.shape.leaves_per_pod = sus_per_pod * rails;
    pods = (sus + sus_per_pod - 1) / sus_per_pod;
    if (pods > core_radix) {
      d.problems.push_back(fmt::format(
          "a 3-tier rail fabric of {}-port switches holds at most {} pods of {} SUs ({} GPUs); "
          "{} pods requested",
          core_radix, core_radix, sus_per_pod,
          std::uint64_t{core_radix} * sus_per_pod * d.nodes_per_su * d.layout.gpus_per_node, pods));
    }
  } else if (d.shape.leaves > spine_radix && tiers == "2") {
    // Two tiers asked for beyond one spine tier: rail-planed, each rail its own leaf-spine
    // plane of one leaf per SU; traffic between rails crosses the scale-up domain (PXN).
    d.shape.planes = rails;
    if (sus > spine_radix) {
      d.problems.push_back(
          fmt::format("{} SUs do not fit under rail-planed {}-port spines (at most {} SUs, one "
                      "leaf per SU in each rail's plane); use tiers: 3",
                      sus, spine_radix, spine_radix));
    }
  } else if (d.shape.leaves > spine_radix) {
    d.problems.push_back(
        fmt::format("{} rail leaves do not fit under one tier of {}-port spines; "
                    "use tiers: 3",
                    d.shape.leaves, spine_radix));
  }
  d.design = fmt::format(
      "rail_optimized: {} SUs x {} nodes x {} {} GPUs, {} rails, {} tiers{}, {} "
      "radix {}",
      sus, d.nodes_per_su, d.layout.gpus_per_node, d.hw.gpu->name, rails, three ? 3 : 2,
      d.shape.planes > 1 ? fmt::format(" (rail-planed: {} planes)", d.shape.planes) : "",
      d.hw.sw->name, d.hw.radix);
  if (d.hw.spine.radix != d.hw.radix || d.hw.spine.sw != d.hw.sw) {
    d.design += tier_switch_note(d.hw.spine, d.hw.port_speed, "spines");
  }
  if (three && (d.hw.core.radix != d.hw.spine.radix || d.hw.core.sw != d.hw.spine.sw)) {
    d.design += tier_switch_note(d.hw.core, d.hw.core_link_speed, "cores");
  }
  if (three) d.design += core_links_note(d.hw);
  return build_clos(args, d, options);
}

}  // namespace

void register_rail_optimized_builder() {
  auto keys = node_keys();
  for (const char* k : {"sus", "nodes_per_su", "oversubscription", "spine_oversubscription",
                        "tiers", "management_links", "spine_switch", "core_switch"}) {
    keys.push_back(k);
  }
  for (const std::string& k : optics_keys()) keys.push_back(k);
  register_builder({"rail_optimized",
                    "DGX SuperPOD-style rail-optimised scalable units (leaf per rail per SU)", keys,
                    build});
}

}  // namespace lockstep::builders
