#pragma once
// Racks, power per rack and cooling of a cluster's compute systems, where the vendor's documents
// state them (docs/topology.md "Racks and power"). Read from the bill of materials: the GPU line
// names the system.
#include <cstdint>
#include <optional>
#include <string>

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

}  // namespace lockstep
