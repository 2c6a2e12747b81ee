#pragma once
// How an engine run reproduces NCCL for one prediction: the programs to build, the engine options
// that make the engine move bytes and pay latencies as NCCL's model does, and the fixed cost added
// to the engine's makespan (docs/nccl-model.md "Engines").
//
//   Prediction p = predict(cluster, {.op = CollectiveOp::AllReduce, .bytes = Bytes::gib(1)});
//   NcclEngineRun how = nccl_engine_run(cluster, p, CollectiveOp::AllReduce, Bytes::gib(1),
//                                       DataType::Float32, topology);
//   Time t = run_nccl_engine(how, topology, *make_engine("flow"));

#include <cstdint>
#include <optional>
#include <vector>

#include "lockstep/collective/collective.hpp"
#include "lockstep/engine/engine.hpp"
#include "lockstep/nccl/cluster.hpp"
#include "lockstep/nccl/tuner.hpp"
#include "lockstep/routing/router.hpp"
#include "lockstep/topology/graph.hpp"

namespace lockstep {

/// The programs, engine options and fixed cost of one NCCL collective on an engine.
struct NcclEngineRun {
  CollectiveSpec spec;             // the prediction's algorithm and channels over cluster.ranks()
  Time per_message_overhead;       // NCCL's per-step latency less the NVLink path's latency
  double transfer_efficiency = 1;  // protocol efficiency x NCCL's link speed / the raw link's
  double network_transfer_efficiency = 0;  // the same for NICs and switches (0: none in use)
  Time network_message_latency;  // NCCL's network step latency less the above and the path's
  Time fixed;                    // launch overhead + NCCL's base latency
  // Pipelined algorithms (chunks through a chain or tree, PAT) pay NCCL's step latency once per
  // step, not per chunk: charge the overhead as latency. The ring keeps it serialised per
  // message (one message per step per channel, where it agrees best; docs/collectives.md).
  bool overhead_as_latency = false;
  // NCCL's speed of one channel (payload); zero: no limit. Ring all-reduce / all-gather /
  // reduce-scatter: bus bandwidth / channels, protocol caps included, so that a channel waiting
  // out its step latency does not lend its share to the others. Tree all-reduce (LL128, Simple):
  // its share the same way (the busiest rank's load per lane x bus / lanes), at most NCCL's
  // per-channel tree ceiling, one thread block's speed. Flow and packet runs cap each (rank,
  // channel)'s sends at it (EngineOptions::channel_send_bandwidth).
  Bandwidth channel_bandwidth;
  // NCCL_PXN_DISABLE unset (the cluster's pxn): the engines route alltoall, alltoallv and
  // sendrecv through PXN relays (nccl_detail::routes_with_pxn, docs/routing.md "PXN").
  bool pxn = true;
  /// Copies the overheads, efficiencies and channel speed above into engine options (the
  /// channel cap in wire bytes: channel_bandwidth / transfer_efficiency).
  void apply(EngineOptions& options) const;
};

/// The engine run of prediction `p` for `op` of `bytes` over every GPU of `cluster` placed on
/// `topology`'s GPUs in order.
NcclEngineRun nccl_engine_run(const NcclCluster& cluster, const Prediction& p, CollectiveOp op,
                              Bytes bytes, DataType type, const Topology& topology);

/// Sum of link latencies on the routed path from the GPU of rank `from` to that of rank `to`
/// (zero if `to` does not exist): the path NCCL's per-step latency is taken to include (GPU 0 to
/// 1 for a scale-up hop, 0 to the first GPU of the next node for a network one); a message pays
/// what its own path takes beyond that, on every engine.
Time gpu_path_latency(const Topology& topology, std::size_t from, std::size_t to);

/// One communicator of an engine run: its GPUs (indices into topology.gpus()) and the spec of
/// its programs (how.spec over the group's ranks; NcclGroups::time derives it).
struct NcclGroupSpec {
  CollectiveSpec spec;
  std::vector<std::uint32_t> gpus;
};

/// Runs `how` on `engine` at once in every group (one program set: a single group's own, or the
/// groups' side by side) with how's engine options, and returns NCCL's time: how.fixed plus the
/// engine's makespan. The engine takes what it needs from the programs (ProgramSet::lookahead,
/// split_channels), not from the algorithm's name.
Time run_nccl_engine(const NcclEngineRun& how, const Topology& topology, const Router& router,
                     Engine& engine, const std::vector<NcclGroupSpec>& groups);
/// `late[r]`, when given, is rank r's late start (a straggler, docs/scenario-collectives.md
/// "Faults"): its program begins that much later, and the ranks that need its data wait.
Time run_nccl_engine(const NcclEngineRun& how, const Topology& topology, const Router& router,
                     Engine& engine, const std::vector<NcclGroupSpec>& groups,
                     const std::vector<std::optional<Time>>& late);
/// The same for one group: how.spec over the first how.spec.ranks GPUs of `topology`.
Time run_nccl_engine(const NcclEngineRun& how, const Topology& topology, Engine& engine);

}  // namespace lockstep
