#pragma once
// How much of a training job the simulator expands, decided before expanding: `auto` takes every
// rank (full) while the job has at most kFullExpansionGpus GPUs and the full expansion's
// estimated simulator memory fits kFullExpansionBudgetBytes, one data-parallel replica (reduced)
// otherwise (docs/training.md, "Symmetry"). training.cpp and the dry-run estimate both ask here.
#include <cstdint>

#include "lockstep/workload/train_config.hpp"

namespace lockstep {

/// Above this many GPUs `auto` simulates one replica whatever the memory.
inline constexpr std::uint32_t kFullExpansionGpus = 64;
/// The simulator memory a full expansion may take under `auto` (issue 21: a training row should
/// run in 2 GB); a larger one is reduced.
inline constexpr double kFullExpansionBudgetBytes = 2.0 * 1024 * 1024 * 1024;

/// What an expansion emits on its simulated ranks, counted from the job's shape.
struct ExpansionSize {
  double ranks = 0;        // simulated ranks: every GPU (full) or pp x cp (reduced)
  double units = 0;        // layer passes on one rank: micro-batches x layers x passes
  double ops = 0;          // ops per layer pass on one rank
  double collectives = 0;  // collective instances per layer pass on one rank
  double bytes = 0;        // the step builder's memory for all of them
};

ExpansionSize expansion_size(const TrainConfig& c, bool full);

/// Whether the job is expanded in full (`full`, or `auto` within the GPU limit and the budget).
bool expands_fully(const TrainConfig& c);

}  // namespace lockstep
