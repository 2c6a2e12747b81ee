#pragma once
// Internals of simulate_training shared by its translation units: collective timing by engine
// runs, and the per-rank analysis of an engine run of step programs.
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "lockstep/collective/collective.hpp"
#include "lockstep/core/rng.hpp"
#include "lockstep/engine/engine.hpp"
#include "lockstep/nccl/groups.hpp"
#include "lockstep/routing/router.hpp"
#include "lockstep/workload/step_builder.hpp"
#include "lockstep/workload/training.hpp"

namespace lockstep::train_detail {

/// The element type of a training collective: BF16 when the size allows it (training tensors
/// are BF16), bytes otherwise.
inline DataType collective_type(Bytes bytes) {
  return bytes.count() % 2 == 0 ? DataType::Bf16 : DataType::Uint8;
}

/// Collective durations by (op, bytes, groups' signature).
using CollectiveTimes = std::map<std::tuple<int, std::uint64_t, std::uint64_t>, Time>;

/// Runs programs on one engine over one topology (with the rank -> GPU placement given by
/// global rank numbers). With `nccl`, collectives are timed as `lockstep collective` times them
/// (NcclGroups::time: the NCCL model's own time when `nccl_model`, else an engine run of NCCL's
/// algorithm with its protocol costs on the same engine).
class Runner {
 public:
  /// `shared_cache`: collective times kept across runners over the same topology (trials).
  /// `translation_symmetric`: groups shifted by whole nodes take the same time (an unperturbed
  /// regular fabric, as the reduced expansion assumes of its replicas).
  Runner(const Topology& topo, Engine& engine, const Router& router,
         const NcclGroups* nccl = nullptr, bool nccl_model = false,
         CollectiveTimes* shared_cache = nullptr, bool translation_symmetric = false)
      : topo_(topo),
        engine_(engine),
        router_(router),
        nccl_(nccl),
        nccl_model_(nccl_model),
        cache_(shared_cache ? *shared_cache : own_cache_),
        translation_symmetric_(translation_symmetric) {}
  RunResult run(const ProgramSet& programs, const std::vector<std::uint32_t>& global_ranks,
                bool record_ops, bool record_links, const EngineOptions* options = nullptr);
  /// Duration of `op` of `bytes` run concurrently by each group of global ranks (cached).
  Time collective(CollectiveOp op, Bytes bytes,
                  const std::vector<std::vector<std::uint32_t>>& groups,
                  std::uint32_t gpus_per_node);
  /// Duration of one point-to-point transfer between two global ranks.
  Time transfer(std::uint32_t from, std::uint32_t to, Bytes bytes);
  const Topology& topology() const { return topo_; }
  /// False: collectives without NCCL's per-call host launch cost (kernels replayed from a CUDA
  /// graph, as an inference engine's decode step runs them; docs/inference.md).
  void set_launch_overhead(bool on) { launch_overhead_ = on; }

 private:
  const Topology& topo_;
  Engine& engine_;
  const Router& router_;
  const NcclGroups* nccl_;
  bool nccl_model_;  // NCCL's model's own times, not engine runs
  CollectiveTimes own_cache_;
  CollectiveTimes& cache_;
  bool translation_symmetric_;
  bool launch_overhead_ = true;
};

/// The router of a training step's engine runs (docs/training.md "DeepEP and PXN"): with `pxn`
/// (NCCL's PXN on: NCCL's collectives, `collectives.pxn`) NCCL's sends relay to the receiver's
/// rail (make_pxn_router); with `deepep` too, the sends on the EP channels, DeepEP's own
/// exchanges, route as DeepEP sends them, without relays (make_router), whatever their peers'
/// local indices. Without `pxn`, make_router's.
std::unique_ptr<Router> make_step_router(const Topology& topo, bool pxn, bool deepep);

/// DeepEP's exchange of `phase` (deepep_training_exchanges) run by every group of global ranks at
/// once on the runner's engine: its makespan.
Time deepep_exchange_time(Runner& runner, const MoeSpec& spec, MoePhase phase,
                          const std::vector<std::vector<std::uint32_t>>& groups);

/// One program rank's iteration, from the engine's op timings.
struct RankTimes {
  Time chain_end;                  // last op of the compute chain
  Time engine_finish;              // last op of any kind (trailing sends, full-mode DP)
  Time send_end;                   // last pipeline send
  Time reduced;                    // kernels and gradient reduction done (the norm may start)
  std::vector<Time> bucket_ready;  // per bucket of its stage
  TrainBreakdown parts;            // compute, tp, ep, pp, bubble, dp (ZeRO-3 waits) so far
};

/// Walks each rank's compute chain and attributes every interval (docs/training.md).
std::vector<RankTimes> analyse(const StepPrograms& programs, const RunResult& run,
                               Time pp_transfer);

/// A member of a collapsed TP group as drawn from the group's program rank: its kernels take
/// `own_fraction` of the group's, the rest of each is a wait for rank `waits_for`.
struct MemberView {
  double own_fraction = 1;
  std::uint32_t waits_for = 0;
};

/// Timeline slices of program rank `r` (reported as global rank `global`). Unless `per_op`, the
/// kernels and TP / EP / CP collectives of one layer pass that follow each other without a wait
/// are one slice, named after the pass.
void append_timeline(const StepPrograms& programs, const RunResult& run, std::uint32_t r,
                     std::uint32_t global, std::vector<TimelineSlice>& out,
                     const MemberView& member, bool per_op, SliceNames& names);

/// The waits that end rank `global`'s iteration, on its compute track after its slices from
/// out[begin]: for data-parallel communication (its own buckets and slower replicas') until
/// `finish`, then for the slowest rank until `iteration`.
void append_end_waits(std::vector<TimelineSlice>& out, std::size_t begin, std::uint32_t global,
                      Time finish, Time iteration);

/// GPUs per server (the traits', else those sharing GPU 0's node).
std::uint32_t gpus_per_node_of(const Topology& topo);
/// A copy of the topology with the trial's link latency jitter (drawn from `rng`, when given)
/// and the link faults applied; InputError when a failed link disconnects the cluster.
Topology perturbed(const Topology& topo, const TrainConfig& c, Rng* rng);
/// Engines from the engine registry.
EngineFactory default_engines();
/// InputError when the degrees do not match the GPUs or a fault names a missing rank or link;
/// a warning when TP groups span servers.
void check_topology(const Topology& topo, const TrainConfig& c, std::vector<std::string>& warnings);

/// A copy of `c` whose slow GPUs placed by node and GPU or by stage carry their rank (rank r runs
/// on the r-th GPU, node-major; stage S's first GPU is rank tp x cp x dp x S). InputError at the
/// fault's field for a node, GPU or stage the job does not have.
TrainConfig with_placed_faults(const Topology& topo, const TrainConfig& c);
/// Where each slow GPU of `c` (ranks resolved) sits: node, GPU, stage, replica, TP rank.
std::vector<SlowGpuPlace> slow_gpu_places(const Topology& topo, const TrainConfig& c);

/// The busiest directed links' utilisation series, named by their endpoints, at the run's
/// sample period.
std::vector<LinkTrack> busiest_links(const Topology& topo, const RunResult& run, std::size_t count);

}  // namespace lockstep::train_detail
