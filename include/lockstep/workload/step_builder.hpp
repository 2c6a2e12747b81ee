#pragma once
// Compiles one training iteration into per-rank programs (the IR of collective/program.hpp):
// every rank's compute kernels on a chain (one op after the other, as on a CUDA compute stream),
// pipeline sends/receives between (virtual) stages (1F1B or interleaved 1F1B, pipeline_order()
// in step_plan.hpp), tensor-parallel and expert all-to-all
// collectives on the chain, and data-parallel gradient collectives on a separate communication
// chain that overlaps the backward pass.
//
// Two expansions (docs/training.md, "Symmetry"):
//  - full: all tp x pp x dp ranks, every collective as real sends and receives;
//  - reduced: one data-parallel replica (tp x pp ranks, a given dp index; pp ranks with
//    collapse_tp); TP, EP and ZeRO-3 collectives become fixed delays measured once, and DP
//    gradient collectives are left out (their ready points are recorded; simulate_training
//    schedules them across replicas).
// Rank numbering (Megatron Core's order, TP fastest, then CP, then DP, then PP):
// rank = t + tp * (c + cp * (d + dp * s)).
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "lockstep/collective/collective.hpp"
#include "lockstep/collective/moe.hpp"
#include "lockstep/collective/program.hpp"
#include "lockstep/nccl/groups.hpp"
#include "lockstep/topology/graph.hpp"
#include "lockstep/workload/noise.hpp"
#include "lockstep/workload/step_plan.hpp"

namespace lockstep {

enum class OpRole : std::uint8_t {
  Forward,
  Backward,
  TpComm,
  EpComm,
  PpSend,
  PpRecv,
  DpComm,
  CpComm,       // exposed wait for the context-parallel KV ring
  ParamGather,  // ZeRO-3 parameter all-gather (and ZeRO-1/2's after the optimizer)
  Optimizer,    // the optimizer step at the end of the step, on the DP stream
  GradNorm,     // the gradient-norm all-reduce over every rank before the optimizer step
  Join,         // zero-time bookkeeping op
};
const char* to_string(OpRole role);

/// What an op of a training program is, for breakdowns and traces.
struct OpTag {
  OpRole role = OpRole::Join;
  bool chain = false;                 // on the rank's compute chain (the critical stream)
  std::uint32_t layer = 0xFFFFFFFFu;  // layer index, kNone for the output layer / none
  std::uint32_t micro = 0xFFFFFFFFu;  // micro-batch, kNone when not per micro-batch
  bool paired = false;                // on a DualPipe pair's second chain (its backward pass)
};

/// Durations of the collectives that the reduced expansion runs as delays.
struct CommDelays {
  Time tp_all_gather, tp_reduce_scatter, tp_all_reduce;
  Time expert_tp_all_gather, expert_tp_reduce_scatter;  // 1 < etp < tp: the expert TP pair
  Time ep_all_to_all;              // the first of an MoE block's pair (dispatch, or its gradient's)
  Time ep_combine;                 // the second (combine); zero: ep_all_to_all
  std::vector<Time> zero3_gather;  // per layer
  Time cp_ring_forward, cp_ring_backward;  // one layer's KV ring, without its overlap
};

/// Builds a collective's programs for `n` ranks whose first `ranks_per_node` share a node.
using CollectiveFactory = std::function<std::unique_ptr<ProgramSet>(
    CollectiveOp op, Rank n, Bytes bytes, std::uint32_t ranks_per_node)>;

/// Plans a collective for a group of global ranks (PlannedCollective, nccl/groups.hpp: its
/// programs and a delay every member waits before starting them).
using GroupCollectiveFactory = std::function<PlannedCollective(
    CollectiveOp op, Bytes bytes, const std::vector<std::uint32_t>& global_ranks)>;

/// One expert-parallel dispatch or combine as DeepEP's normal kernels run it (DeepSeek-V3's
/// training, docs/training.md "DeepSeek-V3's expert all-to-all"): the exchange's programs and
/// the global rank that runs each of its ranks (its ranks go NVLink domain by domain).
struct PlannedExchange {
  std::shared_ptr<const ProgramSet> programs;
  std::vector<std::uint32_t> order;  // exchange rank i runs on global rank order[i]
};

/// Plans `phase` of DeepEP's exchange for an expert-parallel group of global ranks.
using MoeExchangeFactory =
    std::function<PlannedExchange(MoePhase phase, const std::vector<std::uint32_t>& global_ranks)>;

/// DeepEP's exchange for a training job's EP groups (docs/training.md): each rank's tokens of a
/// micro-batch (/ tp) of `hidden`, top_k of the routed experts on at most moe_max_nodes nodes,
/// the normal kernels, dispatch in FP8 (moe_fp8_dispatch) or BF16, combine in BF16, the job's
/// moe_imbalance as the hot rank's share.
MoeSpec deepep_training_spec(const TrainConfig& config, const StepPlan& plan);
/// The full expansion's exchanges (StepBuildOptions::moe_exchange) on `topology` (which must
/// outlive the factory): each group's ranks placed by moe_group_spec, the programs built once
/// per group shape and phase.
MoeExchangeFactory deepep_training_exchanges(const Topology& topology, const MoeSpec& spec);

/// A factory using make_collective: ring for reductions and gathers, direct for all-to-all.
CollectiveFactory default_collective_factory();

struct StepBuildOptions {
  bool full = false;
  std::uint32_t replica = 0;           // reduced: the dp index simulated
  const CommDelays* delays = nullptr;  // reduced: required
  // Reduced: each TP group runs as one program rank (tp = 0's) whose kernels last as long as
  // its slowest member's and whose TP collectives are delays after them: with noise, the ranks
  // of a TP group meet at every collective, so the group moves as its slowest member
  // (docs/training.md, "Noisy trials").
  bool collapse_tp = false;
  CollectiveFactory collectives;             // full: required unless group_collectives is set
  GroupCollectiveFactory group_collectives;  // full: preferred when set (NCCL's choices)
  // Full, jobs whose expert all-to-all is DeepEP's (ModelSpec::deepep_training): required.
  MoeExchangeFactory moe_exchange;
  std::uint32_t gpus_per_node = 0;  // for ring ordering of collectives (0: flat)
  // Noise: per global rank factor (null: 1), per-kernel jitter drawn from Rng(seed).split(rank).
  const std::vector<double>* rank_factors = nullptr;
  const ComputeNoise* noise = nullptr;
  std::uint64_t noise_seed = 0;
};

struct StepPrograms {
  std::unique_ptr<MaterializedProgramSet> programs;
  std::vector<std::uint32_t> global_rank;          // per program rank
  std::vector<std::vector<OpTag>> tags;            // per program rank, per op
  std::vector<std::vector<OpIndex>> bucket_ready;  // per program rank, per bucket of its stage
  std::vector<Time> ideal_compute;                 // per program rank, noise-free kernel time
  std::vector<Time> noisy_compute;                 // per program rank, with noise
  // Global ranks each program rank stands for (itself, or its TP group when collapsed), and
  // each one's own noisy minus ideal kernel time.
  std::vector<std::vector<std::uint32_t>> represented;
  std::vector<std::vector<Time>> represented_extra;
};

StepPrograms build_step_programs(const TrainConfig& config, const StepPlan& plan,
                                 const StepBuildOptions& options);

/// Appends `coll`'s programs to `out` (collective rank i runs as out-rank members[i]); each
/// member's first ops wait for after[i] (kNone: nothing). Channels are offset by
/// `channel_base`, in-network groups re-registered. Returns each member's completion op (a
/// zero-time join when the collective ends in several ops).
std::vector<OpIndex> append_collective(MaterializedProgramSet& out, const ProgramSet& coll,
                                       const std::vector<Rank>& members,
                                       const std::vector<OpIndex>& after,
                                       std::uint16_t channel_base);

}  // namespace lockstep
