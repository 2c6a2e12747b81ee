// single_switch: every NIC on one switch. Feasible only while the NICs fit in its radix; past
// that the design is still counted (a useful ideal non-blocking reference for simulation) and
// reported infeasible with the reason.
#include <fmt/format.h>

#include "clos.hpp"
#include "registrars.hpp"

namespace lockstep::builders {
namespace {

BuildResult build(const ArgNode& args, const BuildOptions& options) {
  ClosDesign d;
  d.builder = "single_switch";
  d.hw = read_hardware(args);
  d.layout = read_node_layout(args, d.hw);
  d.nodes = read_nodes(args, d.layout);
  const std::uint64_t hosts = std::uint64_t{d.nodes} * d.layout.nics_per_node;
  d.leaf_down = static_cast<std::uint32_t>(hosts);
  d.shape.leaves = 1;
  d.shape.leaf_up = 0;
  if (hosts > d.hw.radix) {
    d.problems.push_back(fmt::format("{} NICs need {} switch ports but a {} has {}", hosts, hosts,
                                     d.hw.sw->name, d.hw.radix));
  }
  d.design = fmt::format("single_switch: {} nodes x {} {} GPUs on one {} (radix {})", d.nodes,
                         d.layout.gpus_per_node, d.hw.gpu->name, d.hw.sw->name, d.hw.radix);
  return build_clos(args, d, options);
}

}  // namespace

void register_single_switch_builder() {
  register_builder({"single_switch", "every NIC on one switch (infeasible beyond its radix)",
                    node_keys(), build});
}

}  // namespace lockstep::builders
