#pragma once
// Which of NCCL's collectives the engines route with PXN (docs/routing.md "PXN").
#include "lockstep/collective/collective.hpp"

namespace lockstep::nccl_detail {

/// NCCL's PXN serves its p2p operations (NCCL_P2P_PXN_LEVEL, default 2: always): alltoall,
/// alltoallv and sendrecv, which lockstep runs as direct programs. Rings and trees pair their
/// NICs rail by rail already, so only these are routed through the relays (make_pxn_router).
inline bool routes_with_pxn(const CollectiveSpec& spec) {
  const bool p2p = spec.op == CollectiveOp::AllToAll || spec.op == CollectiveOp::AllToAllV ||
                   spec.op == CollectiveOp::SendRecv;
  return p2p && spec.algorithm == Algorithm::Direct;
}

}  // namespace lockstep::nccl_detail
