#pragma once
// The numbers of one training iteration derived from a TrainConfig and the GPU: which layers each
// pipeline stage holds, kernel durations, message sizes, gradient buckets and memory per GPU.
// Everything here is closed-form (docs/training.md gives each formula and its source); the
// step builder turns it into per-rank programs.
#include <cstdint>
#include <string>
#include <vector>

#include "lockstep/core/units.hpp"
#include "lockstep/workload/train_config.hpp"

namespace lockstep {

/// Memory per GPU of the most loaded pipeline stage (stage 0 holds the most activations).
struct MemoryEstimate {
  Bytes weights;
  Bytes gradients;
  Bytes optimizer;
  Bytes activations;
  Bytes total() const { return weights + gradients + optimizer + activations; }
};

/// A data-parallel gradient bucket of one stage: its size per rank and the layer whose backward
/// pass (in the last micro-batch) completes it. Buckets fill in backward order (last layer first).
struct GradientBucket {
  Bytes bytes;
  std::uint32_t ready_after_layer = 0;  // global layer index
};

struct StepPlan {
  std::uint32_t stages = 1;
  std::vector<std::uint32_t> stage_first_layer;  // size stages + 1
  std::uint64_t micro_batches = 1;
  std::uint64_t tokens_per_micro = 0;  // sequences x seq of one micro-batch
  double achieved_flops = 0;           // per GPU: peak x efficiency
  std::vector<Time> forward;           // per layer, one TP rank's kernel time per micro-batch
  std::vector<Time> backward;          // per layer (2x forward, +1x with recomputation)
  Time head_forward, head_backward;    // output layer and loss on the last stage
  Bytes tp_bytes;  // nccl-tests size of each TP collective (the full activation)
  Bytes pp_bytes;  // per TP rank, per micro-batch, activations or their gradients
  Bytes ep_bytes;  // all-to-all send buffer per rank (dispatch and combine each)
  std::vector<Bytes> layer_grad_bytes;               // per layer, gradient bytes per rank (BF16)
  std::vector<std::vector<GradientBucket>> buckets;  // per stage
  double model_flops_per_iteration = 0;  // 6N + attention, whole job (the MFU numerator)
  MemoryEstimate memory;                 // the most loaded stage

  std::uint32_t layers_in(std::uint32_t stage) const {
    return stage_first_layer[stage + 1] - stage_first_layer[stage];
  }
};

/// Derives the plan; `peak_flops` is the GPU's peak dense BF16 FLOP/s.
StepPlan make_step_plan(const TrainConfig& config, double peak_flops);

/// InputError("memory", ...) when the plan's memory exceeds `hbm`, saying by how much and what
/// to try; does nothing when it fits.
void check_memory(const StepPlan& plan, Bytes hbm, const TrainConfig& config);

}  // namespace lockstep
