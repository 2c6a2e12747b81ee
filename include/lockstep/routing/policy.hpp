#pragma once
// Routing policies by name: how a router picks among equal-cost paths (docs/routing.md).
#include <cstdint>
#include <string_view>

namespace lockstep {

enum class RoutingPolicy : std::uint8_t {
  Ecmp,
  Adaptive,
  Spray,
  DimensionOrder,
  RailAligned,
  DestinationModK,
};

/// "ecmp", "adaptive", "spray", "dimension_order", "rail_aligned", "d_mod_k".
const char* to_string(RoutingPolicy policy);
/// Parses the names above; throws InputError naming `field` otherwise.
RoutingPolicy parse_routing_policy(std::string_view text, std::string_view field = "routing");

}  // namespace lockstep
