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

// Switch heights from the datasheets (rack units). Switches not listed have none stated here,
// and their racks are not estimated.
struct SwitchHeight {
  std::string_view name;  // catalog key
  std::uint32_t rack_units;
  std::string_view source;
};
constexpr SwitchHeight kHeights[] = {
    {"qm8700", 1, "NVIDIA Quantum QM8700 datasheet: 1U"},
    {"qm9700", 1, "NVIDIA Quantum-2 QM9700 datasheet: 1U"},
    {"q3400", 4, "NVIDIA Quantum-X800 Q3400-RA datasheet: 4U"},
    {"sn5600", 2, "NVIDIA Spectrum-4 SN5600 datasheet: 2U"},
    {"sn5600_400g", 2, "NVIDIA Spectrum-4 SN5600 datasheet: 2U"},
    {"sn4700", 1, "NVIDIA Spectrum-3 SN4700 datasheet: 1U"},
    {"sn3700", 1, "NVIDIA Spectrum-2 SN3700 datasheet: 1U"},
};

const SwitchSpec* switch_by_display(const std::string& display) {
  for (const SwitchSpec& s : switch_catalog())
    if (s.display == display) return &s;
  return nullptr;
}

}  // namespace

NetworkRacks network_racks(const Inventory& inv) {
  NetworkRacks n;
  for (const InventoryLine& l : inv.lines) {
    if (l.category != "switch" || l.tier == "scale_up") continue;
    const SwitchSpec* sw = switch_by_display(l.item);
    const SwitchHeight* h = nullptr;
    for (const SwitchHeight& x : kHeights)
      if (sw != nullptr && x.name == sw->name) h = &x;
    if (h == nullptr) {
      n.unstated += (n.unstated.empty() ? "" : ", ") + l.item;
      continue;
    }
    n.switches += l.count;
    n.rack_units += l.count * h->rack_units;
    n.kw += static_cast<double>(l.count) * l.unit_power_w / 1e3;
  }
  n.racks = (n.rack_units + kRackUnits - 1) / kRackUnits;
  return n;
}

std::string format_network_racks(const NetworkRacks& net, const std::optional<RackPlan>& plan) {
  std::string out = "\nnetwork racks and floor (derived: datasheet heights in 42U racks)\n";
  out += fmt::format("  {:<32}{:>12}\n", "scale-out switches", net.switches);
  out += fmt::format("  {:<32}{:>12}\n", "switch rack units", net.rack_units);
  out += fmt::format("  {:<32}{:>12}\n", "network racks", net.racks);
  out += fmt::format("  {:<32}{:>12.1f}\n", "network kW (switches)", net.kw);
  if (!net.unstated.empty()) out += fmt::format("  no stated height: {}\n", net.unstated);
  if (!plan) {
    out += "  totals need the compute racks (none stated for this system)\n";
    return out;
  }
  const std::uint64_t racks = plan->racks + net.racks;
  const double n = static_cast<double>(plan->racks);
  const double lo = plan->kw_per_rack_low * n + net.kw, hi = plan->kw_per_rack_high * n + net.kw;
  out += fmt::format("  {:<32}{:>12}\n", "racks (compute + network)", racks);
  out += fmt::format("  {:<32}{:>12}\n", "kW (compute + network)",
                     lo == hi ? fmt::format("{:.1f}", lo) : fmt::format("{:.1f}-{:.1f}", lo, hi));
  out += fmt::format("  {:<32}{:>12}\n", "floor tiles (600 mm)", racks * kTilesPerRack);
  out +=
      "  assumptions: switches only in network racks (no patch panels, no UFM or storage), "
      "2 tiles per 600 x 1200 mm rack, aisles not counted\n";
  return out;
}

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
