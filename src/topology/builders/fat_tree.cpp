// fat_tree: a 3-tier folded Clos. `k` gives the classic k-ary fat tree (radix k, k pods of k/2
// edge and k/2 aggregation switches, (k/2)^2 cores, k^3/4 hosts); otherwise a general 3-tier
// Clos of the catalog switch with oversubscription per tier. Non-blocking with radix-R switches
// it holds at most R pods x R/2 leaves x R/2 hosts = R^3/4 (65,536 with 64 ports).
// `tiers`: auto (3, which is 2 when every leaf fits one pod), 3 (forced: at least two pods), or
// 2 (a leaf-spine, refused beyond R leaves). `spine_switch` / `core_switch` put other models in
// the upper tiers (a chassis spine, a 128-port core): a spine's links (radix x breakout) set the
// leaves of a pod, a core's the pods it joins.
#include <fmt/format.h>

#include <cmath>

#include "clos.hpp"
#include "registrars.hpp"

namespace lockstep::builders {
namespace {

BuildResult build(const ArgNode& args, const BuildOptions& options) {
  ClosDesign d;
  d.builder = "fat_tree";
  d.hw = read_hardware(args);
  std::uint64_t k = 0;
  if (const ArgNode* kn = args.find("k")) {
    k = static_cast<std::uint64_t>(kn->as_int(2, 65'534));
    if (k % 2 != 0) kn->fail(fmt::format("must be even (got {})", k));
    if (args.has("radix")) kn->fail("give either k or radix, not both");
    d.hw.radix = static_cast<std::uint32_t>(k);
    d.hw.spine.radix = d.hw.core.radix = d.hw.radix;
  }
  // After k: a spine_switch or core_switch keeps its own radix (`k` shapes the leaves').
  read_tier_switches(args, d.hw, true);
  const std::uint32_t spine_ends = d.hw.spine.ends(), core_ends = d.hw.core.ends();
  d.layout = read_node_layout(args, d.hw);
  if (k != 0 && !args.has("nodes") && !args.has("gpus")) {
    const std::uint64_t hosts = k * k * k / 4;
    if (hosts % d.layout.nics_per_node != 0 || hosts / d.layout.nics_per_node > 16'000'000) {
      args.at("k").fail(fmt::format("{} hosts do not make whole nodes of {} NICs; give nodes",
                                    hosts, d.layout.nics_per_node));
    }
    d.nodes = static_cast<std::uint32_t>(hosts / d.layout.nics_per_node);
  } else {
    d.nodes = read_nodes(args, d.layout);
  }
  const double leaf_ratio = read_ratio(args, "oversubscription");
  const double spine_ratio = read_ratio(args, "spine_oversubscription");
  const auto [down, up] = split_ports(d.hw.radix, leaf_ratio);
  const auto [spine_down, spine_up] = split_spine_ports(d.hw, spine_ratio);
  const std::uint64_t hosts = std::uint64_t{d.nodes} * d.layout.nics_per_node;
  d.leaf_down = down;
  d.shape.leaves = static_cast<std::uint32_t>((hosts + down - 1) / down);
  d.shape.leaf_up = up;
  const std::string tiers =
      args.find("tiers") ? args.at("tiers").as_choice({"auto", "2", "3"}) : std::string("auto");
  std::uint64_t pods = 1;
  if (tiers == "2") {
    // A leaf-spine: every leaf reaches every spine, so at most `radix` leaves (clos.hpp).
    d.shape.tiers = 2;
    if (d.shape.leaves > spine_ends) {
      d.problems.push_back(fmt::format(
          "2 tiers of {}-port {} hold at most {} hosts ({} leaves x {} hosts); {} requested: "
          "use tiers: 3",
          spine_ends, d.hw.spine.sw == d.hw.sw && spine_ends == d.hw.radix ? "switches" : "spines",
          std::uint64_t{spine_ends} * down, spine_ends, down, hosts));
    }
  } else {
    d.shape.tiers = 3;
    d.shape.leaves_per_pod = spine_down;
    d.shape.spine_up = spine_up;
    pods = (d.shape.leaves + spine_down - 1) / spine_down;
    if (tiers == "3" && pods == 1) {
      // Forced: a core tier carries traffic only between pods, so split the leaves into two
      // pods, each spine keeping the down:up ratio asked for (issue 23).
      if (d.shape.leaves < 2) {
        args.at("tiers").fail(fmt::format(
            "3 tiers need at least 2 pods; {} hosts fit on one {}-port leaf", hosts, d.hw.radix));
      }
      d.shape.leaves_per_pod = (d.shape.leaves + 1) / 2;
      d.shape.spine_up = spine_up_links(d.hw, d.shape.leaves_per_pod, spine_ratio);
      pods = 2;
    }
    if (pods > core_ends) {
      d.problems.push_back(fmt::format(
          "a 3-tier Clos of {}-port {} holds at most {} hosts ({} pods x {} leaves x {} "
          "hosts); {} requested",
          core_ends, d.hw.core.sw == d.hw.sw && core_ends == d.hw.radix ? "switches" : "cores",
          std::uint64_t{core_ends} * spine_down * down, core_ends, spine_down, down, hosts));
    }
  }
  // The tiers built, said in the design line: auto on one pod has no core (it builds 2 tiers,
  // which a user asking for a fat tree would not guess; issue 23).
  const bool core = d.shape.tiers == 3 && pods > 1;
  const std::string shape = d.shape.tiers == 2 ? std::string("2 tiers (leaf-spine)")
                            : core             ? fmt::format("3 tiers ({} pods)", pods)
                                   : std::string("2 tiers (one pod, no core; tiers: 3 adds one)");
  d.design = fmt::format("fat_tree: {} nodes x {} {} GPUs, {}, {} radix {}", d.nodes,
                         d.layout.gpus_per_node, d.hw.gpu->name, shape, d.hw.sw->name, d.hw.radix);
  if (d.hw.spine.radix != d.hw.radix || d.hw.spine.sw != d.hw.sw) {
    d.design += tier_switch_note(d.hw.spine, d.hw.port_speed, "spines");
  }
  if (core && (d.hw.core.radix != d.hw.spine.radix || d.hw.core.sw != d.hw.spine.sw)) {
    d.design += tier_switch_note(d.hw.core, d.hw.core_link_speed, "cores");
  }
  if (core) d.design += core_links_note(d.hw);
  read_optics(args, d);
  return build_clos(args, d, options);
}

}  // namespace

void register_fat_tree_builder() {
  auto keys = node_keys();
  for (const char* k :
       {"k", "oversubscription", "spine_oversubscription", "tiers", "spine_switch", "core_switch"})
    keys.push_back(k);
  for (const std::string& k : optics_keys()) keys.push_back(k);
  register_builder({"fat_tree", "3-tier Clos: k-ary fat tree or general, oversubscription per tier",
                    keys, build});
}

}  // namespace lockstep::builders
