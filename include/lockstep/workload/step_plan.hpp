#pragma once
// The numbers of one training iteration derived from a TrainConfig and the GPU: which layers each
// pipeline stage holds, kernel durations, message sizes, gradient buckets and memory per GPU.
// Everything here is closed-form (docs/training.md gives each formula and its source); the
// step builder turns it into per-rank programs.
#include <cstdint>
#include <string>
#include <vector>

#include "lockstep/collective/collective.hpp"
#include "lockstep/core/units.hpp"
#include "lockstep/topology/catalog.hpp"
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
/// Expert buckets hold routed-expert gradients, which only the dp / ep ranks holding the same
/// experts share (Megatron's expert-data-parallel group); the others reduce over all dp ranks.
struct GradientBucket {
  Bytes bytes;       // the parameters in BF16: what ZeRO's all-gather sends
  Bytes grad_bytes;  // the gradients in the buffer's dtype: what the reduce-scatter sends
  // (FP32 with grad_reduce_in_fp32, Megatron-Core's param_and_grad_buffer reduces grad_data)
  std::uint32_t ready_after_layer = 0;  // global layer index
  bool expert = false;
};

/// What a bucket's collective sends: the gradients' dtype for the reduction, the parameters'
/// BF16 for ZeRO's all-gather.
inline Bytes bucket_bytes(const GradientBucket& b, CollectiveOp op) {
  return op == CollectiveOp::AllGather ? b.bytes : b.grad_bytes;
}

/// One step of a pipeline stage's schedule: a forward or backward pass of model chunk `chunk`
/// (0 without interleaving) on micro-batch `micro`.
struct PipelineUnit {
  bool forward = true;
  std::uint32_t chunk = 0;
  std::uint32_t micro = 0;
};

/// The order in which stage `stage` of `pp` runs its passes. interleave == 1: 1F1B
/// (PipeDream-Flush): pp - stage - 1 warm-up forwards, alternate, drain. interleave = v > 1:
/// Megatron-LM's interleaved 1F1B (Narayanan et al. 2021, section 2.2; schedules.py
/// forward_backward_pipelining_with_interleaving): (pp - stage - 1) x 2 + (v - 1) x N warm-up
/// forwards, N = `group` micro-batches per group (microbatch_group_size_per_vp_stage; 0: pp, its
/// default; at most m: fewer micro-batches than stages run as one group, as Llama 3's schedule
/// allows, arXiv:2407.21783 section 3.3.2), all of them when micro_batches == pp; units follow
/// Megatron-core's schedule table (get_schedule_table): micro-batches in groups of N, each group
/// through chunk 0, then chunk 1, ..., the last group taking what is left. Forward unit k is entry
/// k; backward unit k is entry k on chunk v - 1 - its chunk. With m % N == 0, entry k is chunk (k /
/// N) % v of micro-batch (k / (N v)) N + k % N.
std::vector<PipelineUnit> pipeline_order(std::uint32_t pp, std::uint32_t interleave,
                                         std::uint64_t micro_batches, std::uint32_t stage,
                                         std::uint32_t group = 0);

/// How a layer's kernel time divides: the attention block's share of the forward and backward
/// times (the rest is the MLP or MoE block), and the attention core's share of the attention
/// block's (context parallelism's ring runs beside it).
struct LayerSplit {
  double attention_fwd = 0.5, attention_bwd = 0.5;
  double core_fwd = 0, core_bwd = 0;
};

struct StepPlan {
  std::uint32_t stages = 1;
  std::uint32_t chunks = 1;  // model chunks per stage (interleave)
  // First layer of each virtual stage k = chunk x stages + stage, size stages x chunks + 1:
  // virtual stage k feeds k + 1, so chunk c of the last stage feeds chunk c + 1 of stage 0.
  std::vector<std::uint32_t> chunk_first_layer;
  std::uint64_t micro_batches = 1;
  std::uint64_t tokens_per_micro = 0;  // sequences x seq of one micro-batch
  std::uint64_t tokens_per_rank = 0;   // of them, one context-parallel rank's: / cp
  double achieved_flops = 0;           // per GPU: BF16 peak x efficiency (0: the kernel model)
  double gemm_speedup = 1;             // weight-GEMM peak / BF16 peak (precision fp8, fp4)
  // tp_comm_overlap: tp_comm_overlap_sms / the GPU's SMs, held by the userbuffers kernels of the
  // overlapped reduce-scatters from the GEMM each drains (0: none taken, or no GPU given).
  double tp_overlap_sm_share = 0;
  double comm_sm_share = 0;          // DualPipe: communication_sms / the GPU's SMs (0: none taken)
  std::vector<Time> forward;         // per layer, one TP rank's kernel time per micro-batch
  std::vector<Time> backward;        // per layer (with recomputation's rerun)
  std::vector<LayerSplit> split;     // per layer: where the TP collectives cut its time
  Time head_forward, head_backward;  // output layer and loss on the last stage
  Bytes tp_bytes;                    // nccl-tests size of each TP collective (the full activation)
  Bytes pp_bytes;                    // per TP rank, per micro-batch, activations or their gradients
  Bytes ep_bytes;                    // all-to-all send buffer per rank (dispatch and combine each)
  // nccl-tests size of the expert TP all-gather of the dispatched tokens and of the
  // reduce-scatter of the experts' outputs, etp x ep_bytes; 0 unless 1 < etp < tp.
  Bytes expert_tp_bytes;
  // Context parallelism's ring attention: the K and V block one rank holds of one layer, sent
  // to the next CP rank in each of cp - 1 steps of the forward pass (the backward pass sends it
  // with its gradients dK, dV: twice the bytes).
  Bytes cp_block_bytes;
  std::vector<Bytes> layer_grad_bytes;         // per layer and rank, BF16, reduced over dp ranks
  std::vector<Bytes> layer_expert_grad_bytes;  // per layer and rank, routed experts (dp / ep)
  std::vector<std::vector<GradientBucket>> buckets;  // per stage
  // Per stage: the optimizer step over the rank's shard, at the end of the step between the
  // gradient reduction and ZeRO-1/2's parameter all-gather (zero without a GPU's HBM figures).
  std::vector<Time> optimizer_step;
  double model_flops_per_iteration = 0;  // 6N + attention, whole job (the MFU numerator)
  MemoryEstimate memory;                 // the most loaded stage

  std::uint32_t virtual_stage(std::uint32_t stage, std::uint32_t chunk) const {
    return chunk * stages + stage;
  }
  std::uint32_t first_layer(std::uint32_t stage, std::uint32_t chunk) const {
    return chunk_first_layer[virtual_stage(stage, chunk)];
  }
  std::uint32_t end_layer(std::uint32_t stage, std::uint32_t chunk) const {
    return chunk_first_layer[virtual_stage(stage, chunk) + 1];
  }
  // Whether stage s gathers bucket b's parameters before the next step: all of them, or with
  // overlap_param_gather only those holding the stage's first layer (the rest hide behind the
  // next forward pass).
  bool gather_exposed(std::uint32_t stage, const GradientBucket& b, bool overlap) const {
    return !overlap || b.ready_after_layer == stage_first_layer(stage);
  }
  // The stage's lowest layer: its first chunk's, or the next chunk's when a chunk is empty (the
  // embedding counted as a layer); the last gradient bucket completes there.
  std::uint32_t stage_first_layer(std::uint32_t stage) const {
    for (std::uint32_t c = 0; c < chunks; ++c)
      if (end_layer(stage, c) > first_layer(stage, c)) return first_layer(stage, c);
    return first_layer(stage, 0);
  }
  std::uint32_t layers_in(std::uint32_t stage) const {
    std::uint32_t n = 0;
    for (std::uint32_t c = 0; c < chunks; ++c) n += end_layer(stage, c) - first_layer(stage, c);
    return n;
  }
};

/// The plan's layer split, message sizes, gradient bytes and buckets: no kernel times and no
/// memory peak (which walks each stage's schedule, one entry per micro-batch), so its cost does
/// not grow with the batch. The expansion estimate (expansion.hpp) sizes the job from it.
StepPlan make_step_shapes(const TrainConfig& config);

/// Derives the plan (make_step_shapes', then the kernel times and the memory); `peak_flops` is the
/// GPU's peak dense BF16 FLOP/s, `gemm_peak_flops` the peak of the layers' weight GEMMs at the
/// config's precision (0: the BF16 peak). The attention core and the output layer run at the BF16
/// peak. Kernel times come from the kernel model of `gpu` (kernel_model.hpp) unless
/// config.efficiency > 0 sets one fraction of the peaks for every kernel; InputError("efficiency")
/// when it is 0 and no GPU is given.
StepPlan make_step_plan(const TrainConfig& config, double peak_flops, double gemm_peak_flops = 0,
                        const GpuSpec* gpu = nullptr);

/// InputError("memory", ...) when the plan's memory exceeds `hbm`, saying by how much and what
/// to try; does nothing when it fits.
void check_memory(const StepPlan& plan, Bytes hbm, const TrainConfig& config);

}  // namespace lockstep
