#pragma once
// Figures of merit measured on a built graph that has no closed form (from_file, multi_site):
// diameter and worst latency from many sources, injection bandwidth per GPU, oversubscription per
// switch tier and a bisection estimate by max-flow. docs/scenario.md states the definitions.
#include "lockstep/topology/graph.hpp"
#include "lockstep/topology/inventory.hpp"

namespace lockstep::builders {

/// Fills diameter_switch_hops, max_one_way_latency, injection_per_gpu, bisection and each
/// tier's oversubscription of `inv` (which count_inventory has already filled) from `topo`.
void describe_measured_graph(const Topology& topo, Inventory& inv);

}  // namespace lockstep::builders
