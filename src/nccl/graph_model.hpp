#pragma once
// Internal to the nccl layer: the NCCL model's collective priced on the topology graph
// (docs/analytical-engine.md). The collective the tuner chose (algorithm, protocol, channels)
// is compiled to the same programs the flow engine runs, its traffic routed over the graph phase
// by phase (engine/analytical/link_loads.hpp), and two terms come out:
//   - seconds per byte: the sum over phases of the phase's busiest link, load / (line rate x
//     the fraction of it NCCL's model assumes on that medium: its NVLink and network speeds
//     and the algorithm's protocol efficiency), per byte of the nccl-tests size S;
//   - latency excess: the longest chain of dependent transfers, each hop counting only the part
//     of its path's latency (cables, switches) beyond the path NCCL's per-step latency includes
//     (the cluster's nearest of the hop's medium, as the flow engine's run takes it).
// NcclGroups::time adds them to the NCCL model's prediction: time = model time + excess +
// max(0, S x seconds per byte - the model's transfer time).
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "lockstep/collective/collective.hpp"
#include "lockstep/nccl/cluster.hpp"
#include "lockstep/nccl/engine_run.hpp"
#include "lockstep/nccl/tuner.hpp"
#include "lockstep/routing/router.hpp"
#include "lockstep/topology/graph.hpp"

namespace lockstep::nccl_detail {

// Fraction of line rate at which NCCL's model runs each medium for this algorithm: the medium's
// speed as NCCL assumes it over the raw link's (370.8 / 450 GB/s NVLink on H100, 48 / 50 GB/s
// per NDR NIC; the flow engine's run takes the same ratios, nccl_engine_run), times the
// algorithm's protocol efficiency on that medium as cost.cpp applies it.
struct MediumEfficiency {
  double scale_up = 1;
  double network = 1;
};

// A tree's stages (tree_stage_term), per byte of S: what its one-chunk programs,
// level by level, need beyond the steady state; per link beyond the transfers' own, its steady
// time and how long the one-chunk walk runs before its first use and after its last.
struct StageTerm {
  double one_chunk = 0;
  std::vector<std::pair<double, double>> links;  // (steady, idle before and after)
};

struct GraphTerm {
  double seconds_per_byte = 0;   // sum over phases of the busiest link's time, per byte of S
  Time latency_excess;           // path latency beyond NCCL's reference paths, longest chain
  DirLinkId bottleneck = kNone;  // the link that set the slowest phase
  StageTerm stages;
  // The one fraction of line rate that, applied to every link, makes the phases' busiest links
  // take seconds_per_byte: the efficiency of the medium that binds (NVLink's or the network's,
  // exactly, when the same medium binds every phase at line rate and at NCCL's rates), else
  // the ratio of the two sums. A program that can carry only one efficiency (a training step's,
  // NcclGroups::plan) runs at NCCL's rate where it matters with it. 0: no link is loaded.
  double binding_efficiency = 0;
};

/// The stages of a tree's one-chunk `programs` (built at `nominal` bytes) run on `devices` of
/// `topo`, routed by `router`, each medium at its `efficiency` (graph_stages.cpp).
StageTerm tree_stage_term(const ProgramSet& programs, double nominal,
                          std::span<const DeviceId> devices, const Topology& topo,
                          const Router& router, const MediumEfficiency& efficiency);

/// Prices prediction `p` (made on `cluster`, NCCL's view of groups[0]) of `op` run at once by
/// every group, each with the spec its engine run would have (NcclGroups::time), on the graph
/// `run_on` (`router` routes over it): `topo` itself, or `topo` with link faults applied after
/// NCCL initialised (a degraded link slower, a failed one gone), whose efficiencies per medium
/// still come from the healthy `topo` NCCL saw.
GraphTerm price_on_graph(const NcclCluster& cluster, const Prediction& p, CollectiveOp op,
                         const std::vector<NcclGroupSpec>& groups, const Topology& topo,
                         const Topology& run_on, const Router& router);

}  // namespace lockstep::nccl_detail
