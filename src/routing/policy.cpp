#include "lockstep/routing/policy.hpp"

#include <fmt/format.h>

#include <string>

#include "lockstep/core/error.hpp"

namespace lockstep {

namespace {
struct PolicyName {
  RoutingPolicy policy;
  const char* name;
};
constexpr PolicyName kPolicyNames[] = {
    {RoutingPolicy::Ecmp, "ecmp"},
    {RoutingPolicy::Adaptive, "adaptive"},
    {RoutingPolicy::Spray, "spray"},
    {RoutingPolicy::DimensionOrder, "dimension_order"},
    {RoutingPolicy::RailAligned, "rail_aligned"},
    {RoutingPolicy::DestinationModK, "d_mod_k"},
};
}  // namespace

const char* to_string(RoutingPolicy policy) {
  for (const auto& p : kPolicyNames)
    if (p.policy == policy) return p.name;
  return "?";
}

RoutingPolicy parse_routing_policy(std::string_view text, std::string_view field) {
  for (const auto& p : kPolicyNames)
    if (text == p.name) return p.policy;
  std::string known;
  for (const auto& p : kPolicyNames) known += (known.empty() ? "" : ", ") + std::string(p.name);
  throw InputError(std::string(field),
                   fmt::format("unknown routing policy '{}' (known: {})", text, known));
}

}  // namespace lockstep
