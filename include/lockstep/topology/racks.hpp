#pragma once
// Racks, power per rack and cooling of a cluster's compute systems, where the vendor's documents
// state them (docs/topology.md "Racks and power"). Read from the bill of materials: the GPU line
// names the system.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "lockstep/topology/inventory.hpp"

namespace lockstep {

struct RackPlan {
  std::string system;                // "DGX H100", "GB200 NVL72"
  std::uint32_t nodes_per_rack = 0;  // systems (or compute trays) per rack
  std::uint64_t racks = 0;           // compute racks: ceil(nodes / nodes_per_rack)
  double kw_per_rack_low = 0;        // the documents' power per rack (a range where they differ)
  double kw_per_rack_high = 0;
  std::string cooling;  // "air" | "liquid"
  std::string source;   // the documents the figures come from
};

/// The rack plan of `inv`'s compute systems, or nothing when its GPU has no stated rack figures
/// (lockstep then prints none rather than guessing).
std::optional<RackPlan> rack_plan(const Inventory& inv);

/// The plan as a small table (figure, value), for `topo --racks`.
std::string format_rack_plan(const std::optional<RackPlan>& plan);

/// The scale-out switches' racks (derived: their datasheets' heights stacked in 42U racks, as no
/// reference architecture's network rack layout could be checked) and power (the catalog's), and
/// the floor of compute plus network racks (derived: two 600 mm tiles per 600 x 1200 mm rack).
struct NetworkRacks {
  std::uint64_t switches = 0;    // scale-out switches of a stated height
  std::uint64_t rack_units = 0;  // their heights summed
  std::uint64_t racks = 0;       // ceil(rack_units / kRackUnits)
  double kw = 0;                 // the switches' catalog power
  std::string unstated;          // switch models without a stated height ("" if none)
};
inline constexpr std::uint32_t kRackUnits = 42;    // a full-height rack (assumption)
inline constexpr std::uint32_t kTilesPerRack = 2;  // 600 x 1200 mm on 600 mm tiles (assumption)

NetworkRacks network_racks(const Inventory& inv);

/// Network racks, then totals with the compute plan's racks and kW and the floor tiles, for
/// `topo --racks`.
std::string format_network_racks(const NetworkRacks& net, const std::optional<RackPlan>& plan);

}  // namespace lockstep
