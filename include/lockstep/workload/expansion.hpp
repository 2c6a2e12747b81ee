#pragma once
// How much of a training job the simulator expands, decided before expanding: `auto` takes every
// rank (full) while the job has at most kFullExpansionGpus GPUs and the full expansion's
// estimated simulator memory fits kFullExpansionBudgetBytes, one data-parallel replica (reduced)
// otherwise (docs/training.md, "Symmetry"). training.cpp and the dry-run estimate both ask here.
#include <cstdint>
#include <functional>
#include <vector>

#include "lockstep/collective/collective.hpp"
#include "lockstep/workload/step_plan.hpp"
#include "lockstep/workload/train_config.hpp"

namespace lockstep {

/// Above this many GPUs `auto` simulates one replica whatever the memory.
inline constexpr std::uint32_t kFullExpansionGpus = 64;
/// The simulator memory a full expansion may take under `auto` (issue 21: a training row should
/// run in 2 GB); a larger one is reduced.
inline constexpr double kFullExpansionBudgetBytes = 2.0 * 1024 * 1024 * 1024;

/// Ops the step builder splices into each member's program for one collective over the global
/// ranks `group` (the collective's own ops, its gates and joins), averaged over the members.
using CollectiveOpCount =
    std::function<double(CollectiveOp op, Bytes bytes, const std::vector<std::uint32_t>& group)>;

/// What an expansion emits on its simulated ranks, counted from the job's shape.
struct ExpansionSize {
  double ranks = 0;        // simulated ranks: every GPU (full) or pp x cp (reduced)
  double units = 0;        // layer passes on one rank: micro-batches x layers x passes
  double ops = 0;          // ops per layer pass on one rank (ZeRO-3's gathers included)
  double collectives = 0;  // collective instances per layer pass on one rank
  // Ops on one rank outside the layer passes, once per step: pipeline sends and receives, the
  // data-parallel buckets' reductions and ZeRO-1/2 gathers, the gradient-norm all-reduce.
  double step_ops = 0;
  double step_collectives = 0;  // their collective instances on one rank
  double bytes = 0;             // the step builder's memory for all of them

  /// Every op the expansion builds.
  double total_ops() const { return ranks * (units * ops + step_ops); }
};

/// The collectives' ops come from `count` when given (training.cpp: the programs NCCL's plans
/// give them on the job's topology), from a single ring's otherwise (the dry run, before the
/// cluster is built). The plan (make_step_plan's) gives the buckets and the messages' sizes.
ExpansionSize expansion_size(const TrainConfig& c, const StepPlan& plan, bool full,
                             const CollectiveOpCount& count = {});

/// Whether the job is expanded in full (`full`, or `auto` within the GPU limit and the budget).
bool expands_fully(const TrainConfig& c, const StepPlan& plan, const CollectiveOpCount& count = {});

/// The ops append_collective (step_builder.hpp) adds to a member for `programs`, averaged.
double spliced_ops_per_rank(const ProgramSet& programs);

}  // namespace lockstep
