#pragma once
// Minimum cuts of a topology, for the bisection bandwidth of graphs that have no formula
// (irregular graphs read from a file).
#include <span>

#include "lockstep/topology/graph.hpp"

namespace lockstep::builders {

/// Maximum flow from `sources` to `sinks` (which equals the capacity of the smallest set of link
/// directions separating them), every link carrying its bandwidth in each direction. Dinic's
/// algorithm with an iterative search, so long chains cannot overflow the stack.
Bandwidth max_flow(const Topology& topo, std::span<const DeviceId> sources,
                   std::span<const DeviceId> sinks);

/// The min cut between the first and the second half of the GPUs in rank order (node-major).
/// For the symmetric designs this is their bisection; for an irregular graph it is an upper
/// bound on the worst balanced cut. Zero with fewer than two GPUs.
Bandwidth rank_halves_cut(const Topology& topo);

}  // namespace lockstep::builders
