// preset: a system preset on a fabric preset (topology/presets.hpp), built as a non-blocking
// rail-optimised cluster through the rail_optimized builder.
#include "lockstep/topology/builder.hpp"
#include "lockstep/topology/presets.hpp"
#include "registrars.hpp"

namespace lockstep::builders {
namespace {

BuildResult build(const ArgNode& args, const BuildOptions& options) {
  const PresetCluster cluster = resolve_preset(preset_request(args));
  const BuilderInfo* rail = find_builder("rail_optimized");
  if (rail == nullptr) args.fail("the rail_optimized builder is not available");
  return rail->build(rail_optimized_args(cluster, args.path()), options);
}

}  // namespace

void register_preset_builder() {
  register_builder({"preset",
                    "a shipped system (hgx-h100, gb200-nvl72, ...) on a fabric preset (ib-ndr, "
                    "roce-400g, ...), rail-optimised and non-blocking",
                    {"system", "fabric", "nodes", "gpus_per_node", "nics_per_node", "nic_speed",
                     "sharp", "domain_nodes"},
                    build});
}

}  // namespace lockstep::builders
