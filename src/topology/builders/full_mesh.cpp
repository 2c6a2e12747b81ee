// full_mesh: every GPU wired directly to every other. n GPUs need n - 1 ports each and
// n (n - 1) / 2 links; the inventory is computed in closed form, and the graph is built only when
// it is small enough (a 200,000-GPU mesh has 19,999,900,000 links and gets its bill of materials
// without them). Feasible while n - 1 <= the ports a GPU has for direct links (its NVLink or
// Infinity Fabric links by default: 7 on an MI300X, so an 8-GPU mesh is feasible).
#include <fmt/format.h>

#include "common.hpp"
#include "lockstep/topology/inventory_count.hpp"
#include "registrars.hpp"

namespace lockstep::builders {
namespace {

BuildResult build(const ArgNode& args, const BuildOptions& options) {
  Hardware hw;
  hw.gpu = [&] {
    const std::string name = args.get_string("gpu", "h100");
    try {
      return &gpu_spec(name);
    } catch (const InputError& e) {
      args.at("gpu").fail(e.bare_message());
    }
  }();
  hw.gpu_model = static_cast<std::uint16_t>(hw.gpu - gpu_catalog().data());
  const std::uint64_t n = read_count(args, "gpus", 100'000'000);
  const Bandwidth bw = args.get_bandwidth(
      "link_bandwidth", hw.gpu->scale_up_bandwidth / static_cast<double>(hw.gpu->scale_up_links));
  if (!(bw.bytes_per_second() > 0)) args.at("link_bandwidth").fail("must be positive");
  const auto ports = static_cast<std::uint64_t>(
      args.get_int("ports_per_gpu", hw.gpu->scale_up_links, 1, 1'000'000'000));
  const double length = args.get_double("link_m", 1.0, 0, 1e7);
  const LinkMedium medium = length == 0 ? LinkMedium::NvLink : medium_for_length(bw, length);
  const Time latency = args.get_time("link_latency", Time::ns(length * kPropagationNsPerMetre));
  if (latency < Time::zero()) args.at("link_latency").fail("must not be negative");

  const std::uint64_t links = n * (n - 1) / 2;
  BuildResult result;
  Inventory& inv = result.inventory;
  BomTally tally;
  tally.add_gpus(hw.gpu_model, n);
  tally.add_links(medium, bw, length, links);
  tally.finish(inv);
  inv.design = fmt::format("full_mesh: {} {} GPUs, {} per link", n, hw.gpu->name, to_string(bw));
  inv.ports_per_gpu = n - 1;
  inv.injection_per_gpu = bw * static_cast<double>(n - 1);
  inv.bisection = bw * (static_cast<double>(n / 2) * static_cast<double>(n - n / 2));
  inv.diameter_switch_hops = n > 1 && medium != LinkMedium::NvLink ? 1 : 0;
  inv.max_one_way_latency = n > 1 ? latency : Time::zero();
  if (n - 1 > ports) {
    inv.feasible = false;
    inv.problems.push_back(fmt::format("each GPU needs {} ports for a full mesh but an {} has {}",
                                       n - 1, hw.gpu->name, ports));
  }
  if (options.want_graph && links <= options.max_links) {
    TopologyBuilder b("full_mesh");
    b.reserve(n, links);
    for (std::uint64_t i = 0; i < n; ++i) {
      b.add_device(
          Device{DeviceKind::Gpu, 0, static_cast<std::uint32_t>(i), 0, 0, hw.gpu_model, 0});
    }
    for (std::uint64_t i = 0; i < n; ++i) {
      for (std::uint64_t j = i + 1; j < n; ++j) {
        b.add_link(
            Link{static_cast<DeviceId>(i), static_cast<DeviceId>(j), bw, latency, medium, length});
      }
    }
    ClusterTraits t;
    t.gpu = hw.gpu->name;
    t.scale_up = medium == LinkMedium::NvLink ? "mesh" : "none";
    t.fabric = "infiniband";  // direct point-to-point links: lossless, no switch
    t.gpus_per_node = 1;
    b.set_traits(t);
    result.graph = std::move(b).build();
    inv.graph_built = true;
    inv.nodes = n;
  } else {
    inv.nodes = n;
  }
  return result;
}

}  // namespace

void register_full_mesh_builder() {
  register_builder({"full_mesh",
                    "every GPU wired to every other (bill of materials even when too big to build)",
                    {"gpus", "gpu", "link_bandwidth", "ports_per_gpu", "link_m", "link_latency"},
                    build});
}

}  // namespace lockstep::builders
