#pragma once
// A router under which no GPU forwards traffic (NCCL_NVB_DISABLE=1).
#include <memory>

#include "lockstep/routing/router.hpp"

namespace lockstep {

/// make_router's router, except that a GPU is only ever a path's end: by default a GPU may
/// forward traffic between two GPUs (a torus's chips; NVLink through a GPU, NCCL's PATH_NVB),
/// which NCCL_NVB_DISABLE=1 forbids inside a node (paths.cc lets no path cross a GPU). GPUs
/// without a direct NVLink then meet over the host's PCIe tree; GPUs joined only through GPUs
/// have no path (docs/routing.md "Transit rule"). Throws as make_router does.
std::unique_ptr<Router> make_router_without_gpu_transit(const Topology& topo,
                                                        const RouterOptions& options);

}  // namespace lockstep
