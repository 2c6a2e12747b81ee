// leaf_spine: a 2-tier folded Clos. NICs fill leaves in order (leaf_down = radix * o / (1 + o)
// hosts per leaf for oversubscription o), every leaf reaches every spine. Non-blocking with
// radix-R switches it holds at most R leaves x R/2 hosts (2,048 hosts with 64 ports); beyond that
// the design is reported infeasible.
#include <fmt/format.h>

#include "clos.hpp"
#include "registrars.hpp"

namespace lockstep::builders {
namespace {

BuildResult build(const ArgNode& args, const BuildOptions& options) {
  ClosDesign d;
  d.builder = "leaf_spine";
  d.hw = read_hardware(args);
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
  if (d.shape.leaves / planes > d.hw.radix) {
    d.problems.push_back(fmt::format(
        "a 2-tier leaf-spine of {}-port switches holds at most {} hosts at {}:1 ({} leaves x {} "
        "hosts); {} requested: use fat_tree",
        d.hw.radix, std::uint64_t{d.hw.radix} * d.leaf_down, ratio, d.hw.radix, d.leaf_down,
        hosts));
  }
  d.design = fmt::format(
      "leaf_spine: {} nodes x {} {} GPUs, {} leaves x {} down{} / {} up{}, {} "
      "radix {}",
      d.nodes, d.layout.gpus_per_node, d.hw.gpu->name, d.shape.leaves, d.leaf_down,
      split > 1 ? fmt::format(" (on {} ports split {} ways)", down, split) : "", up,
      d.dual_tor ? " (dual-ToR pairs, 2 planes)" : "", d.hw.sw->name, d.hw.radix);
  return build_clos(args, d, options);
}

}  // namespace

void register_leaf_spine_builder() {
  auto keys = node_keys();
  keys.push_back("oversubscription");
  keys.push_back("dual_tor");
  for (const std::string& k : optics_keys()) keys.push_back(k);
  register_builder(
      {"leaf_spine", "2-tier leaf-spine Clos with a leaf oversubscription ratio", keys, build});
}

}  // namespace lockstep::builders
