// scale_up: one scale-up domain on its own (an HGX board, a GB200 NVL72 rack, an NVLink-switch
// domain of up to 576 GPUs, an MI300X mesh), without a scale-out network. To join several domains
// attach them to a scale-out builder (leaf_spine, fat_tree, rail_optimized) with scale_up: ...
#include <fmt/format.h>

#include "common.hpp"
#include "registrars.hpp"

namespace lockstep::builders {
namespace {

BuildResult build(const ArgNode& args, const BuildOptions& options) {
  Hardware hw;
  try {
    hw.gpu = &gpu_spec(args.get_string("gpu", "h100"));
  } catch (const InputError& e) {
    args.at("gpu").fail(e.bare_message());
  }
  hw.gpu_model = static_cast<std::uint16_t>(hw.gpu - gpu_catalog().data());
  hw.pcie = &default_gpu_nic_pcie(hw.gpu->name);  // between NVLink bridge pairs
  const NodeLayout layout = read_node_layout(args, hw, /*with_nics=*/false);
  if (layout.scale_up == nullptr)
    args.at("scale_up").fail("a scale-up domain needs a scale-up system");
  const std::uint32_t nodes = read_nodes(args, layout);
  if (nodes > layout.domain_nodes) {
    args.fail(
        fmt::format("{} GPUs exceed one {}-GPU {} domain; attach domains to a scale-out "
                    "builder (leaf_spine, fat_tree, rail_optimized) with scale_up",
                    std::uint64_t{nodes} * layout.gpus_per_node,
                    layout.domain_nodes * layout.gpus_per_node, layout.scale_up->name));
  }
  TopologyBuilder b("scale_up");
  add_nodes(b, hw, layout, nodes);
  ClusterTraits t;
  t.gpu = hw.gpu->name;
  t.scale_up = layout.scale_up_name;
  t.gpus_per_node = layout.gpus_per_node;
  t.nvls = layout.scale_up->nvls;
  b.set_traits(t);
  BuildResult result;
  finish_inventory(result, std::move(b).build(), options);
  Inventory& inv = result.inventory;
  const std::uint64_t gpus = std::uint64_t{nodes} * layout.gpus_per_node;
  inv.design =
      fmt::format("scale_up: {} {} GPUs in one {}", gpus, hw.gpu->name, layout.scale_up->display);
  // Within one domain the GPU's scale-up links are its injection; NVSwitch is non-blocking, a
  // mesh gives each pair its own link (mesh_pair_bandwidth) and a GPU g - 1 of them.
  inv.injection_per_gpu = hw.gpu->scale_up_bandwidth;
  if (layout.scale_up->chip_ports == 0) {
    const double per_pair = mesh_pair_bandwidth(hw, layout).bytes_per_second();
    inv.injection_per_gpu = Bandwidth::bytes_per_second(
        per_pair * static_cast<double>(std::max<std::uint64_t>(1, gpus - 1)));
    inv.bisection = Bandwidth::bytes_per_second(per_pair * static_cast<double>(gpus / 2) *
                                                static_cast<double>(gpus - gpus / 2));
  } else {
    inv.bisection = hw.gpu->scale_up_bandwidth * static_cast<double>(gpus / 2);
  }
  return result;
}

}  // namespace

void register_scale_up_builder() {
  register_builder({"scale_up",
                    "one scale-up domain (HGX, NVL72, NVLink domain <= 576, mesh)",
                    {"gpus", "nodes", "gpu", "gpus_per_node", "scale_up", "scale_up_gpus"},
                    build});
}

}  // namespace lockstep::builders
