// leaf_spine: a 2-tier folded Clos. NICs fill leaves in order (leaf_down = radix * o / (1 + o)
// hosts per leaf for oversubscription o), every leaf reaches every spine. Non-blocking with
// radix-R switches it holds at most R leaves x R/2 hosts (2,048 hosts with 64 ports); beyond that
// the design is reported infeasible. `spine_switch` puts another model above the leaves (a
// chassis or 128-port switch): its links (radix x breakout) decide how many leaves it joins.
#include <fmt/format.h>

#include "clos.hpp"
#include "registrars.hpp"

namespace lockstep::builders {
namespace {

BuildResult build(const ArgNode& args, const BuildOptions& options) {
  ClosDesign d;
  d.builder = "leaf_spine";
  d.hw = read_hardware(args);
  read_tier_switches(args, d.hw, false);
  d.layout = read_node_layout(args, d.hw);
  d.nodes = read_nodes(args, d.layout);
  const double ratio = read_ratio(args, "oversubscription");
  const auto [down, up] = split_ports(d.hw.radix, ratio);
  const std::uint64_t hosts = std::uint64_t{d.nodes} * d.layout.nics_per_node;
  // dual_tor (Alibaba HPN, Qian et al., SIGCOMM 2024, dual-ToR and dual-plane): every NIC's two
  // ports to a pair of leaves, leaf 2k in plane 0 and 2k + 1 in plane 1, each plane with its own
  // spines, so traffic stays in the plane of the port it left by (routing: queue pairs alternate
  // ports). A port runs at half the NIC's rate: where the switch splits a down port 2 x 200G
  // (switch_breakout, QM9700) a leaf holds twice `down` NIC ports at the same down:up ratio.
  d.dual_tor = args.get_bool("dual_tor", false);
  const std::uint32_t planes = d.dual_tor ? 2 : 1;
  const std::uint32_t split =
      d.dual_tor ? switch_breakout(*d.hw.sw, d.hw.host_link_bandwidth() * 0.5) : 1;
  d.leaf_down = down * split;
  d.shape.leaves = static_cast<std::uint32_t>((hosts + d.leaf_down - 1) / d.leaf_down * planes);
  d.shape.leaf_up = up;
  d.shape.tiers = 2;
  d.shape.planes = planes;
  read_optics(args, d);
  // Every leaf reaches every spine: at most as many leaves (a plane's) as a spine takes links.
  const std::uint32_t spine_ends = d.hw.spine.ends();
  if (d.shape.leaves / planes > spine_ends) {
    const bool own = d.hw.spine.sw != d.hw.sw || d.hw.spine.radix != d.hw.radix;
    const std::string spines = !own ? fmt::format("{}-port switches", d.hw.radix)
                                    : fmt::format("{}-port leaves under {} spines of {} links",
                                                  d.hw.radix, d.hw.spine.sw->name, spine_ends);
    d.problems.push_back(fmt::format(
        "a 2-tier leaf-spine of {} holds at most {} hosts at {}:1 ({} leaves x {} "
        "hosts); {} requested: use fat_tree",
        spines, std::uint64_t{spine_ends} * d.leaf_down, ratio, spine_ends, d.leaf_down, hosts));
  }
  d.design = fmt::format(
      "leaf_spine: {} nodes x {} {} GPUs, {} leaves x {} down{} / {} up{}, {} "
      "radix {}",
      d.nodes, d.layout.gpus_per_node, d.hw.gpu->name, d.shape.leaves, d.leaf_down,
      split > 1 ? fmt::format(" (on {} ports split {} ways)", down, split) : "", up,
      d.dual_tor ? " (dual-ToR pairs, 2 planes)" : "", d.hw.sw->name, d.hw.radix);
  if (d.hw.spine.radix != d.hw.radix || d.hw.spine.sw != d.hw.sw) {
    d.design += tier_switch_note(d.hw.spine, d.hw.port_speed, "spines");
  }
  return build_clos(args, d, options);
}

}  // namespace

void register_leaf_spine_builder() {
  auto keys = node_keys();
  keys.push_back("oversubscription");
  keys.push_back("dual_tor");
  keys.push_back("spine_switch");
  for (const std::string& k : optics_keys()) keys.push_back(k);
  register_builder(
      {"leaf_spine", "2-tier leaf-spine Clos with a leaf oversubscription ratio", keys, build});
}

}  // namespace lockstep::builders
