#pragma once
// NCCL-style cost model and tuner: predicts how long a collective takes on a cluster, per
// (algorithm, protocol, channels), as time = latency x steps + bytes / bandwidth with NCCL's
// constants (nccl/constants.hpp), and picks the fastest algorithm and protocol as NCCL's tuner
// does. docs/nccl-model.md derives every formula.
//
//   NcclCluster c = nccl_cluster(resolve_preset({.system = "hgx-h100", .nodes = 1}));
//   Prediction p = predict(c, {.op = CollectiveOp::AllReduce, .bytes = Bytes::gib(1)});
//   // p.algo == Algorithm::Ring, p.proto == nccl::Proto::Simple, p.busbw_GBps ~ 370
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "lockstep/collective/collective.hpp"
#include "lockstep/core/units.hpp"
#include "lockstep/nccl/cluster.hpp"
#include "lockstep/nccl/constants.hpp"

namespace lockstep {

namespace nccl {

/// The NCCL model's algorithms by the names `lockstep collective --algo` and sweeps take: ring,
/// tree, nvls (Algorithm::NetReduce, as NCCL_ALGO spells it), nvls_tree, collnet, pat, and
/// lockstep's own halving_doubling, direct, hierarchical and torus_ring (never chosen by auto:
/// docs/nccl-model.md "Algorithms NCCL does not have"); nullopt is "auto" (NCCL's choice).
const char* algorithm_name(std::optional<Algorithm> a);
/// Parses those names ("auto" gives nullopt); InputError naming `field` and the accepted names.
std::optional<Algorithm> parse_algorithm(std::string_view name, std::string_view field = "algo");
/// auto (nullopt), ll, ll128, simple (also as NCCL spells them: LL, LL128, Simple).
std::optional<Proto> parse_protocol(std::string_view name, std::string_view field = "proto");

}  // namespace nccl

struct TunerRequest {
  CollectiveOp op = CollectiveOp::AllReduce;
  Bytes bytes;                          // nccl-tests size S
  std::optional<Algorithm> algo;        // nullopt: as NCCL's tuner picks
  std::optional<nccl::Proto> proto;     // nullopt: as NCCL's tuner picks
  std::uint32_t channels = 0;           // 0: as NCCL would pick
  bool include_launch_overhead = true;  // add nccl::kLaunchOverheadUs (nccl-tests semantics)
  double skew = 0;  // alltoallv: Zipf exponent of its matrix (skewed_alltoallv_row; 0: alltoall)
};

struct Prediction {
  Algorithm algo = Algorithm::Ring;
  nccl::Proto proto = nccl::Proto::Simple;
  std::uint32_t channels = 1;
  // The channels the bandwidth term was priced with: the request's when it fixes them, else the
  // communicator's (NCCL prices every size with them; fewer run small messages).
  std::uint32_t bandwidth_channels = 1;
  Time time;              // launch overhead + latency + transfer + fill
  Time latency;           // NCCL's latency term (base + steps x per-step latency)
  Time transfer;          // bytes / bandwidth
  Time fill;              // pipeline fill: the first chunk through every stage but the slowest
  Time formula;           // NCCL's ranking: no fill, tree at bw x tree_correction_factor
  double bus_GBps = 0;    // effective bandwidth of the bytes term (after protocol efficiency)
  double step_us = 0;     // per-step latency of the protocol on the local path
  double efficiency = 1;  // protocol payload efficiency (LL 0.5, LL128 0.92, Simple 1)
  double algbw_GBps = 0;  // S / time
  double busbw_GBps = 0;  // algbw x nccl-tests busbw factor
  double skew = 0;        // alltoallv: the request's skew, so an engine run builds that matrix
};

/// Predicts one collective. Without algo / proto, the enabled combination NCCL's tuner picks
/// wins: the fastest by NCCL's formula (Prediction::formula); a fixed algorithm that
/// cannot run the op on this cluster (nvls without NVLink SHARP, collnet without SHARP, tree for
/// all_gather, ...) is an InputError naming "algo".
Prediction predict(const NcclCluster& cluster, const TunerRequest& request);

/// Every enabled (algorithm, protocol) prediction for the request's op and size, NCCL's choice
/// first (by Prediction::formula).
std::vector<Prediction> candidates(const NcclCluster& cluster, const TunerRequest& request);

/// NCCL's latency of one network step of `a` with protocol `p` on this cluster (us): tuning.cc's
/// hwLat network row plus the fabric's extra step latency. With one GPU per node the ring's and
/// the tree's (and those priced as the ring) are the tree's, which NCCL leaves fully exposed;
/// CollNet with one GPU per node is NCCL's CollNetChain.
double network_step_us(const NcclCluster& cluster, Algorithm a, nccl::Proto p);

}  // namespace lockstep
