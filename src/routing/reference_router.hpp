#pragma once
// Internal to routing, for tests: the router that searches towards every destination itself,
// without the shortcut through gateways (DistanceField::find_gateway), whose routes must be the
// same hop for hop.
#include <memory>

#include "lockstep/routing/router.hpp"

namespace lockstep::routing_detail {

std::unique_ptr<Router> make_router_without_gateways(const Topology& topo,
                                                     const RouterOptions& options);

}  // namespace lockstep::routing_detail
