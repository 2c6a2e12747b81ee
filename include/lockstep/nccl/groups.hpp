#pragma once
// The one entry point to the NCCL model for a cluster: NCCL's view of any group of its GPUs (a
// communicator), the prediction for a collective in a group, its time when every group of a set
// runs it at once on an engine, and its programs for a larger program (a training step).
// `lockstep collective` (one group: every GPU), training steps (every data-parallel or tensor-
// parallel group at once) and the report time collectives here, so they agree.
//
//   NcclGroups nccl(topology);
//   Prediction p = nccl.predict({.op = CollectiveOp::AllReduce, .bytes = Bytes::mib(64)}, dp0);
//   Time t = nccl.time(p, CollectiveOp::AllReduce, Bytes::mib(64), DataType::Bf16, {dp0, dp1},
//                      engine.get());  // null engine: p.time, the model's own
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "lockstep/collective/collective.hpp"
#include "lockstep/collective/program.hpp"
#include "lockstep/engine/engine.hpp"
#include "lockstep/nccl/cluster.hpp"
#include "lockstep/nccl/engine_run.hpp"
#include "lockstep/nccl/tuner.hpp"
#include "lockstep/routing/router.hpp"
#include "lockstep/topology/graph.hpp"

namespace lockstep {

namespace nccl_detail {
struct GraphTerm;
}

/// The engine name under which collectives take the NCCL model's own prediction rather than an
/// engine run of its programs (`lockstep collective --engine analytical`; training steps too).
inline constexpr std::string_view kNcclModelEngine = "analytical";

/// GPUs of a topology by index (topology.gpus()[i]) forming one communicator.
using GpuGroup = std::vector<std::uint32_t>;

/// A collective planned for a group of GPUs inside a larger program: its programs and a delay
/// every member waits before starting them (fixed software costs). The programs are shared: a
/// training step plans the same collective for thousands of groups.
struct PlannedCollective {
  std::shared_ptr<const ProgramSet> programs;
  Time lead;
};

class NcclGroups {
 public:
  /// NCCL's view of `topology` (nccl_cluster) without in-network reduction, which is opt-in (a
  /// sweep's `sharp`); `pxn` false: NCCL_PXN_DISABLE=1 (NcclCluster::pxn).
  explicit NcclGroups(const Topology& topology, bool pxn = true);
  /// `cluster`: NCCL's view of every GPU; `topology`: the graph engine runs use (null: only
  /// predictions and the model's times). `run_on`, when given, is the graph the engines run on
  /// instead while the engine options still come from `topology`: the same devices with link
  /// faults applied after NCCL initialised (topology/faults.hpp).
  NcclGroups(const NcclCluster& cluster, const Topology* topology,
             const Topology* run_on = nullptr);

  const NcclCluster& cluster() const { return whole_; }
  /// Every GPU NCCL sees, as one group: 0 .. cluster().ranks() - 1.
  GpuGroup all() const;
  /// The group as NCCL sees it: its NVLink domains (nodes), GPUs per domain and their NICs.
  NcclCluster cluster_of(const GpuGroup& gpus) const;
  /// NCCL's choice and time for the request in one group (predict on cluster_of(gpus)).
  Prediction predict(const TunerRequest& request, const GpuGroup& gpus) const;
  /// NCCL's time for `op` of `bytes` as `p` (groups[0]'s prediction) run at once by every group
  /// on `engine`: the programs of p's algorithm over each group's GPUs with the engine options
  /// NCCL's model implies (nccl_engine_run), plus the fixed costs. A null engine is the
  /// analytical engine: the NCCL model priced on the graph (docs/analytical-engine.md), p.time
  /// plus what the graph adds where its links are slower or its paths longer than NCCL assumes;
  /// p.time itself without a topology. `late[r]`, when given, is rank r's late start (over the
  /// groups' ranks in order): engines run it; the analytical engine adds the latest
  /// (docs/scenario-collectives.md "Faults").
  Time time(const Prediction& p, CollectiveOp op, Bytes bytes, DataType type,
            const std::vector<GpuGroup>& groups, Engine* engine,
            const std::vector<std::optional<Time>>& late = {}) const;
  /// The programs NCCL would run for the group inside a larger program, their bytes stretched
  /// by the engine run's transfer efficiency, and the lead delay standing for launch overhead
  /// and NCCL's latency term (docs/training.md). Groups NCCL sees alike (the same size, nodes,
  /// GPUs and NICs per node, hop latency) share one plan, made once.
  PlannedCollective plan(CollectiveOp op, Bytes bytes, DataType type, const GpuGroup& gpus) const;

 private:
  const Topology& topology() const;

  const Router& router() const;
  /// Each group's spec for an engine run `how` (made for the first group) of `p`.
  std::vector<NcclGroupSpec> group_specs(const NcclEngineRun& how, const Prediction& p,
                                         CollectiveOp op,
                                         const std::vector<GpuGroup>& groups) const;
  /// `p` priced on the graph with every group at once (nccl_detail::price_on_graph), cached.
  const nccl_detail::GraphTerm& graph_term(const Prediction& p, CollectiveOp op, Bytes bytes,
                                           DataType type,
                                           const std::vector<GpuGroup>& groups) const;

  NcclCluster whole_;
  const Topology* topo_;
  const Topology* run_on_;
  mutable std::unique_ptr<Router> router_;  // for engine runs, made with the first
  // The graph's terms by (algorithm, protocol, op, channels, groups): they do not depend on the
  // size, so a sweep or a training step prices each shape once.
  struct GraphKey;
  struct GraphCache;
  mutable std::shared_ptr<GraphCache> graph_cache_;
  struct PlanKey;
  struct PlanCache;
  mutable std::shared_ptr<PlanCache> plan_cache_;
};

}  // namespace lockstep
