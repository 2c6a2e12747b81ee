#include "clos.hpp"

#include <algorithm>

namespace lockstep::builders {
namespace {

std::uint32_t ceil_div(std::uint64_t a, std::uint64_t b) {
  return static_cast<std::uint32_t>((a + b - 1) / b);
}

bool three_tier(const ClosShape& s) {
  return s.tiers == 3 && s.leaves > s.leaves_per_pod;
}

}  // namespace

std::uint32_t equal_links_spines(std::uint32_t leaves, std::uint32_t leaf_up, std::uint32_t radix) {
  if (leaf_up == 0) return 0;
  const std::uint32_t need = ceil_div(std::uint64_t{leaves} * leaf_up, radix);
  for (std::uint32_t s = std::max<std::uint32_t>(need, 1); s < leaf_up; ++s) {
    if (leaf_up % s == 0) return s;
  }
  return leaf_up;
}

ClosCounts plan_clos(const ClosShape& shape, std::uint32_t spine_radix, std::uint32_t core_radix) {
  ClosCounts c;
  c.pods = 1;
  if (shape.leaves <= 1) return c;
  if (!three_tier(shape)) {
    // Every leaf must reach every spine with the same number of links (NVIDIA DGX SuperPOD H100
    // RA: 3 SUs take 16 spines, 2 links from each leaf to each, not 12): the fewest spines that
    // hold the uplinks and divide leaf_up (at most leaf_up; overfull beyond `radix` leaves).
    // Rail-planed: each plane's leaves (one per SU) have their own spines.
    // A plane of one leaf (a dual-ToR pair's) joins its hosts without spines.
    const std::uint32_t planes = std::max<std::uint32_t>(shape.planes, 1);
    const std::uint32_t per_plane = ceil_div(shape.leaves, planes);
    if (per_plane <= 1) return c;
    c.spines_per_plane = equal_links_spines(per_plane, shape.leaf_up, spine_radix);
    c.spines = c.spines_per_plane * planes;
    c.links = std::uint64_t{shape.leaves} * shape.leaf_up;
    return c;
  }
  c.pods = ceil_div(shape.leaves, shape.leaves_per_pod);
  c.spines = c.pods * shape.leaf_up;
  c.cores_per_plane =
      std::min(ceil_div(std::uint64_t{c.pods} * shape.spine_up, core_radix), shape.spine_up);
  c.cores = c.cores_per_plane * shape.leaf_up;
  c.links = std::uint64_t{shape.leaves} * shape.leaf_up + std::uint64_t{c.spines} * shape.spine_up;
  return c;
}

std::vector<DeviceId> add_clos_switches(TopologyBuilder& b, const Hardware& hw,
                                        const ClosShape& shape, ClosCounts& counts) {
  counts = plan_clos(shape, hw.spine.ends(), hw.core.ends());
  std::vector<DeviceId> leaves(shape.leaves);
  for (auto& l : leaves) l = add_switch(b, hw, 0);
  std::vector<DeviceId> spines(counts.spines);
  for (auto& s : spines) s = add_switch(b, hw, 1);
  std::vector<DeviceId> cores(counts.cores);
  for (auto& c : cores) c = add_switch(b, hw, 2);
  const Bandwidth port = hw.port_speed;
  if (counts.spines == 0) return leaves;
  if (!three_tier(shape)) {
    const std::uint32_t planes = std::max<std::uint32_t>(shape.planes, 1);
    const std::uint32_t spp = counts.spines_per_plane;
    for (std::uint32_t l = 0; l < shape.leaves; ++l) {
      const std::uint32_t plane = l % planes, i = l / planes;
      for (std::uint32_t j = 0; j < shape.leaf_up; ++j) {
        const auto s =
            plane * spp + static_cast<std::uint32_t>((std::uint64_t{i} * shape.leaf_up + j) % spp);
        b.add_link(fabric_link(hw, leaves[l], spines[s], port, hw.fabric_link_m, 2));
      }
    }
    return leaves;
  }
  for (std::uint32_t l = 0; l < shape.leaves; ++l) {
    const std::uint32_t pod = l / shape.leaves_per_pod;
    for (std::uint32_t j = 0; j < shape.leaf_up; ++j) {
      b.add_link(
          fabric_link(hw, leaves[l], spines[pod * shape.leaf_up + j], port, hw.fabric_link_m, 2));
    }
  }
  for (std::uint32_t p = 0; p < counts.pods; ++p) {
    for (std::uint32_t j = 0; j < shape.leaf_up; ++j) {
      const DeviceId spine = spines[p * shape.leaf_up + j];
      for (std::uint32_t m = 0; m < shape.spine_up; ++m) {
        const auto c = static_cast<std::uint32_t>((std::uint64_t{p} * shape.spine_up + m) %
                                                  counts.cores_per_plane);
        b.add_link(fabric_link(hw, spine, cores[j * counts.cores_per_plane + c], hw.core_link_speed,
                               hw.core_link_m, 2));
      }
    }
  }
  return leaves;
}

Bandwidth clos_bisection(const ClosShape& shape, const ClosCounts& counts, std::uint64_t hosts,
                         Bandwidth host_bw, Bandwidth port, Bandwidth core_port) {
  Bandwidth best = host_bw * static_cast<double>(hosts / 2);
  if (shape.leaves > 1) {
    best = std::min(best, port * (static_cast<double>(shape.leaves) * shape.leaf_up / 2));
  }
  if (three_tier(shape) && counts.pods > 1) {
    best = std::min(best, core_port * (static_cast<double>(counts.spines) * shape.spine_up / 2));
  }
  return best;
}

void set_tier_ratio(Inventory& inv, const std::string& tier, double ratio) {
  for (TierFigures& t : inv.tiers) {
    if (t.tier == tier) t.oversubscription = ratio;
  }
}

}  // namespace lockstep::builders
