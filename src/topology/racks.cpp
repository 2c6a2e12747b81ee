// Racks and power per rack of the systems whose documents state them. Only stated figures: a
// system not listed here gets no rack plan.
#include "lockstep/topology/racks.hpp"

#include <fmt/format.h>

#include <string_view>

#include "lockstep/topology/catalog.hpp"

namespace lockstep {
namespace {

struct RackFacts {
  const char* gpu;  // catalog key
  std::uint32_t gpus_per_node;
  const char* system;
  std::uint32_t nodes_per_rack;
  double kw_low, kw_high;
  const char* cooling;
  const char* source;
};

// DGX H100 / H200 datasheets: ~10.2 kW maximum per system, air-cooled; the DGX SuperPOD H100
// Reference Architecture (RA-11333-001) puts 4 DGX H100 per rack: 40.8 kW per rack.
// GB200 NVL72 (NVIDIA GB200 NVL72 product page and DGX GB200 documents): 18 compute trays per
// rack, liquid-cooled, about 120 kW per rack; the NVIDIA-Vertiv GB200 NVL72 reference design
// is rated for 132 kW per rack: the two figures as a range.
constexpr RackFacts kFacts[] = {
    {"h100", 8, "DGX H100", 4, 40.8, 40.8, "air",
     "DGX H100 datasheet (10.2 kW max per system); DGX SuperPOD H100 RA (4 systems per rack)"},
    {"h200", 8, "DGX H200", 4, 40.8, 40.8, "air",
     "DGX H200 datasheet (10.2 kW max per system); 4 per rack as in the SuperPOD H100 RA"},
    {"gb200", 4, "GB200 NVL72", 18, 120, 132, "liquid",
     "GB200 NVL72: 18 compute trays per rack, ~120 kW (NVIDIA); 132 kW (NVIDIA-Vertiv reference "
     "design)"},
};

}  // namespace

std::optional<RackPlan> rack_plan(const Inventory& inv) {
  if (inv.nodes == 0 || inv.gpus % inv.nodes != 0) return std::nullopt;
  const std::uint64_t per_node = inv.gpus / inv.nodes;
  for (const RackFacts& f : kFacts) {
    if (per_node != f.gpus_per_node) continue;
    const std::string& display = gpu_spec(f.gpu).display;
    for (const InventoryLine& l : inv.lines) {
      if (l.category != "gpu" || l.item != display) continue;
      RackPlan p;
      p.system = f.system;
      p.nodes_per_rack = f.nodes_per_rack;
      p.racks = (inv.nodes + f.nodes_per_rack - 1) / f.nodes_per_rack;
      p.kw_per_rack_low = f.kw_low;
      p.kw_per_rack_high = f.kw_high;
      p.cooling = f.cooling;
      p.source = f.source;
      return p;
    }
  }
  return std::nullopt;
}

std::string format_rack_plan(const std::optional<RackPlan>& plan) {
  if (!plan) {
    return "\nracks and power\n  no stated rack figures for this system (known: DGX H100, DGX "
           "H200, GB200 NVL72)\n";
  }
  auto kw = [](double lo, double hi) {
    return lo == hi ? fmt::format("{:.1f}", lo) : fmt::format("{:.1f}-{:.1f}", lo, hi);
  };
  const double racks = static_cast<double>(plan->racks);
  std::string out = "\nracks and power (compute racks only; the documents' figures)\n";
  out += fmt::format("  {:<32}{:>12}\n", "system", plan->system);
  out += fmt::format("  {:<32}{:>12}\n", "systems per rack", plan->nodes_per_rack);
  out += fmt::format("  {:<32}{:>12}\n", "compute racks", plan->racks);
  out += fmt::format("  {:<32}{:>12}\n", "kW per rack",
                     kw(plan->kw_per_rack_low, plan->kw_per_rack_high));
  out += fmt::format("  {:<32}{:>12}\n", "compute racks kW",
                     kw(plan->kw_per_rack_low * racks, plan->kw_per_rack_high * racks));
  out += fmt::format("  {:<32}{:>12}\n", "cooling", plan->cooling);
  out += fmt::format("  source: {}\n", plan->source);
  return out;
}

}  // namespace lockstep
