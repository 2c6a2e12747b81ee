#pragma once
// NCCL's PXN for point-to-point traffic between nodes (docs/routing.md "PXN"): a GPU sending to
// a GPU of another node with another local index first moves the data over NVLink (or xGMI) to
// the GPU of its own node with the receiver's local index, which posts it to its own NIC, so the
// transfer leaves on the receiver's rail.
#include <memory>

#include "lockstep/routing/router.hpp"
#include "lockstep/topology/graph.hpp"

namespace lockstep {

/// make_router's router for `topo` and `options`, routing every send between GPUs of different
/// nodes through its PXN relay where it has one (docs/routing.md "PXN"); the same throws.
// gpu_transit = false: no GPU forwards between GPUs on the legs either (NCCL_NVB_DISABLE=1).
std::unique_ptr<Router> make_pxn_router(const Topology& topo, const RouterOptions& options,
                                        bool gpu_transit = true);

}  // namespace lockstep
