#pragma once
// Which of NCCL's collectives the engines route with PXN (docs/routing.md "PXN").
#include "lockstep/collective/collective.hpp"
#include "lockstep/nccl/engine_run.hpp"

namespace lockstep::nccl_detail {

/// NCCL's PXN serves its p2p operations (NCCL_P2P_PXN_LEVEL, default 2: always): alltoall,
/// alltoallv and sendrecv, which lockstep runs as direct programs. Rings and trees pair their
/// NICs rail by rail already, so only these are routed through the relays (make_pxn_router).
/// NCCL_PXN_DISABLE=1 (how.pxn false, `pxn: false`) turns it off.
inline bool routes_with_pxn(const NcclEngineRun& how) {
  const CollectiveSpec& spec = how.spec;
  const bool p2p = spec.op == CollectiveOp::AllToAll || spec.op == CollectiveOp::AllToAllV ||
                   spec.op == CollectiveOp::SendRecv;
  return how.pxn && p2p && spec.algorithm == Algorithm::Direct;
}

}  // namespace lockstep::nccl_detail
