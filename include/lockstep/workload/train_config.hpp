#pragma once
// The configuration of a simulated training job: model, parallelism, batch, efficiency, noise,
// Monte Carlo trials and money. One validation path for CLI flags and scenario files: the CLI
// turns its flags into an ArgNode map with the same keys a scenario's `job:` section uses and
// both call parse_train_config (keys documented in docs/scenario-job.md).
#include <cstdint>
#include <string>
#include <vector>

#include "lockstep/core/error.hpp"
#include "lockstep/core/units.hpp"
#include "lockstep/workload/model.hpp"
#include "lockstep/workload/noise.hpp"

namespace lockstep {

class ArgNode;

/// Data-parallel sharding: ZeRO stages (Rajbhandari et al. 2020); FSDP shards like ZeRO-3.
/// ZeRO-1 is Megatron-LM's distributed optimizer (--use-distributed-optimizer, NeMo's default).
enum class ZeroStage : std::uint8_t { None = 0, Optimizer = 1, Gradients = 2, Parameters = 3 };

/// Activation recomputation (Korthikanti et al. 2022): None keeps what the backward pass needs;
/// Selective reruns the attention core (QK^T, softmax, attention over V) in the backward pass;
/// Full keeps each layer's input only and reruns the layer's whole forward pass.
enum class Recompute : std::uint8_t { None, Selective, Full };

/// Megatron-Core's `recompute_modules` (TransformerConfig; with recompute_granularity selective,
/// default ["core_attn"]): the submodules whose outputs are not kept but rerun in the backward
/// pass. A bit each; docs/training.md "Selective recomputation by module".
enum RecomputeModule : std::uint8_t {
  kRecomputeCoreAttn = 1,        // core_attn: QK^T, softmax, attention over V
  kRecomputeMlp = 2,             // mlp: a dense layer's MLP, keeping its input only
  kRecomputeMoe = 4,             // moe: a MoE layer's router, experts and shared experts
  kRecomputeMoeAct = 8,          // moe_act: the routed experts' activation (FC2's input)
  kRecomputeLayernorm = 16,      // layernorm: the norms' outputs (the next GEMM's input)
  kRecomputeMlaUpProj = 32,      // mla_up_proj: MLA's up-projected Q, K, V
  kRecomputeSharedExperts = 64,  // shared_experts: the shared experts' MLP
};

/// The number format of the layers' weight GEMMs (QKV, output projection, MLP, experts), as
/// Transformer Engine's FP8 / NVFP4 recipes run them; attention's score and value products, the
/// output layer and everything else stay BF16 (docs/training.md).
enum class Precision : std::uint8_t { Bf16, Fp8, Fp4 };

/// The pipeline schedule: Megatron's 1F1B (interleaved with `interleave`), or DeepSeek-V3's
/// DualPipe (arXiv:2412.19437, section 3.2.1; docs/training.md, "DualPipe").
enum class PipelineSchedule : std::uint8_t { OneFOneB, DualPipe };

struct ParallelConfig {
  std::uint32_t tp = 1;  // tensor parallel degree
  std::uint32_t cp = 1;  // context parallel degree (ring attention over sequence chunks)
  std::uint32_t pp = 1;  // pipeline stages
  std::uint32_t dp = 1;  // data-parallel replicas
  std::uint32_t ep = 1;  // expert parallel degree (MoE models only)
  // Expert tensor parallel degree (Megatron-Core's expert_tensor_parallel_size); 0: tp, the
  // default of Megatron-Core's ModelParallelConfig. The expert layers fold ETP x EP x EDP over
  // the attention's TP x CP x DP ranks of a stage (docs/training.md, "Expert parallel").
  std::uint32_t etp = 0;
  bool sequence_parallel = true;  // with tp > 1: all-gather/reduce-scatter instead of all-reduce
  std::uint32_t interleave = 1;   // virtual pipeline stages per rank (interleaved 1F1B)
  // Megatron-Core's microbatch_group_size_per_vp_stage (N): micro-batches that run through one
  // model chunk before the next chunk, interleaved only; 0: pp, its default.
  std::uint32_t microbatch_group = 0;
  // None here; parse_train_config (the CLI, scenario files) defaults to ZeRO-1, Megatron's
  // distributed optimizer.
  ZeroStage zero = ZeroStage::None;
  bool fsdp = false;  // reported name only; same communication and memory as ZeRO-3
  std::uint32_t world() const { return tp * cp * pp * dp; }
  // Ranks that hold the same weights of one (tp rank, stage): context-parallel ranks hold the
  // same weights as data-parallel ones, so gradients reduce (and the distributed optimizer
  // shards) over dp x cp (Megatron Core's data-parallel group "with context parallel").
  std::uint32_t replicas() const { return dp * cp; }
  std::uint32_t expert_tp() const { return etp ? etp : tp; }
  // Ranks of a stage that hold the same routed experts (the expert-data-parallel size).
  std::uint32_t expert_dp() const { return tp * replicas() / (expert_tp() * ep); }
  // Megatron-Core's expert rank order (parallel_state.py, the expert RankGenerator with
  // order "tp-cp-ep-dp-pp" and cp 1): stage-local rank r = i + etp x (e + ep x k) for expert
  // TP rank i, EP rank e and expert-DP rank k; r is t + tp x replica of the attention layout.
  std::uint32_t expert_rank(std::uint32_t i, std::uint32_t e, std::uint32_t k) const {
    return i + expert_tp() * (e + ep * k);
  }
  // The stage-local ranks of the EP group (i, k) and of the expert-DP group (i, e).
  std::vector<std::uint32_t> ep_group(std::uint32_t i, std::uint32_t k) const {
    std::vector<std::uint32_t> g;
    for (std::uint32_t e = 0; e < ep; ++e) g.push_back(expert_rank(i, e, k));
    return g;
  }
  std::vector<std::uint32_t> expert_dp_group(std::uint32_t i, std::uint32_t e) const {
    std::vector<std::uint32_t> g;
    for (std::uint32_t k = 0; k < expert_dp(); ++k) g.push_back(expert_rank(i, e, k));
    return g;
  }
};

/// How much of the job is expanded into the engine run (see docs/training.md).
enum class Expansion : std::uint8_t { Auto, Reduced, Full };

struct TrainConfig {
  ModelSpec model;
  ParallelConfig par;
  std::uint64_t global_batch = 0;  // sequences per iteration
  std::uint64_t micro_batch = 1;   // sequences per micro-batch per replica
  std::uint64_t seq = 0;           // tokens per sequence (0: the model's)
  // One fraction of the peaks for every kernel (docs/training.md); 0: the per-operation kernel
  // model (`efficiency: kernels`, opt-in, docs/kernel-model.md).
  double efficiency = 0.5;
  double peak_flops = 0;  // per GPU, FLOP/s; 0: from the hardware catalog
  Bytes hbm;              // per GPU; 0: from the hardware catalog
  // Megatron-LM's --account-for-embedding-in-pipeline-split / --account-for-loss-in-pipeline-split:
  // the input embedding and the output layer with its loss count as one layer each when the
  // layers are split over the pp x interleave virtual stages (evenly; the first / last virtual
  // stage holds one transformer layer fewer), as the Llama 3 paper's pipeline did (section 3.3.2).
  bool embedding_in_pipeline_split = false;
  // LoRA fine-tuning (Hu et al. 2021, arXiv:2106.09685): rank-r adapters beside the frozen base
  // weights of the attention projections (and the dense MLP's with lora_mlp); 0 = full training.
  std::uint32_t lora_rank = 0;
  bool lora_mlp = false;
  bool loss_in_pipeline_split = false;
  Recompute recompute = Recompute::None;
  // RecomputeModule bits, used with Recompute::Selective only.
  std::uint8_t recompute_modules = kRecomputeCoreAttn;
  Precision precision = Precision::Bf16;
  // Tokens routed to the busiest of the ep ranks over the mean (1: balanced, at most ep): its
  // expert GEMMs and its all-to-all traffic set every rank's pace (docs/training.md).
  double moe_imbalance = 1.0;
  Bytes bucket = Bytes(0);  // data-parallel gradient bucket; 0: 40M parameters' worth
  bool overlap_dp = true;   // overlap gradient communication with the backward pass
  // Megatron-Core's DistributedDataParallelConfig.grad_reduce_in_fp32: the gradient buffer in
  // FP32 (Megatron-LM forces it with --bf16) or in the parameters' BF16 (NeMo's optim
  // grad_sync_dtype: bf16). The memory check and the DP reduction's bytes (docs/training.md).
  bool grad_reduce_in_fp32 = true;
  // AdamW's first and second moments in BF16 (`optimizer: {moments: bf16}`), as DeepSeek-V3
  // trained (arXiv:2412.19437, section 3.3.3, "Low-Precision Optimizer States": master weights and
  // gradients stay FP32): 4 + 2 + 2 optimizer bytes per parameter instead of 12, and 8 fewer
  // streamed by the optimizer step.
  bool bf16_moments = false;
  PipelineSchedule pipeline = PipelineSchedule::OneFOneB;
  // SMs the communication kernels hold while a transfer runs beside compute (DeepSeek-V3,
  // arXiv:2412.19437 section 3.2.2: 20 SMs of the H800's 132 for the all-to-all; section 3.5.1):
  // DualPipe's paired compute runs on the rest meanwhile. 0: communication takes no SMs.
  std::uint32_t communication_sms = 0;
  // `attention_kernel: unfused`: the attention core as Megatron-LM ran it before FlashAttention
  // (baddbmm, fused scale-mask-softmax, dropout, bmm; the scores through HBM), priced by the
  // kernel model (docs/kernel-model.md, "Attention core"); default flash.
  bool unfused_attention = false;
  // Megatron-LM's --tp-comm-overlap (Transformer Engine userbuffers): each TP all-gather and
  // reduce-scatter runs beside the GEMM it feeds or drains; off by default as in Megatron-LM.
  bool tp_comm_overlap = false;
  // SMs the overlapped reduce-scatters' userbuffers kernels hold: Transformer Engine launches the
  // GEMM they drain on the others for its whole run (its "pipeline" and "bulk" overlaps set an
  // SM margin of num_sm, 16 by default; the all-gathers' "ring_exchange" runs on copy engines
  // and keeps every SM: `initialize_ub`, transformer_engine/pytorch/module/base.py).
  std::uint32_t tp_comm_overlap_sms = 16;
  // Megatron-LM's --overlap-param-gather: ZeRO-1/2's parameter all-gather hides behind the next
  // forward pass but for the first bucket it needs; off by default as in Megatron-LM.
  bool overlap_param_gather = false;
  // The optimizer step's time at the end of the step (memory-bound, docs/training.md); false
  // leaves it out (the step of hand-derived tests, or to compare with tables that exclude it).
  bool optimizer_step = true;
  // Megatron-LM's --clip-grad (default 1.0): clipping by the global gradient norm all-reduces one
  // FP32 over every rank before the optimizer step (optimizer/clip_grads.py); 0 turns it off.
  double clip_grad = 1.0;
  std::vector<JitterSpec> jitter;
  double link_jitter = 0;  // relative std-dev of each link's latency, drawn per trial
  std::vector<FaultSpec> faults;
  std::uint32_t trials = 1;
  std::uint64_t seed = 1;
  double gpu_hour_usd = 2.5;
  std::string engine = "flow";
  // NCCL_PXN_DISABLE unset (true) or set: NCCL's p2p sends between nodes relay to the receiver's
  // rail (docs/training.md "DeepEP and PXN"). Not a job key: the scenario's `collectives.pxn`
  // (api::run_train, report::run_training; scenario/collective_sweep.hpp collectives_pxn).
  bool pxn = true;
  Expansion expansion = Expansion::Auto;
  // Trace output (read by the CLI and `lockstep run`; the library only records the ranks).
  std::string trace_path;
  std::vector<std::uint32_t> trace_ranks;  // empty: ranks 0..7
  // trace_detail op: a slice per kernel and collective; layer (default): one per layer pass
  // (its kernels and TP / EP / CP collectives), waits apart.
  bool trace_ops = false;
  // Where global_batch and peak_tflops came from (a flag or file:line:column), for the error of
  // an iteration past Time's range (docs/units.md).
  std::string global_batch_field = "global_batch", peak_tflops_field = "peak_tflops";
  SourceLocation global_batch_where, peak_tflops_where;
  // Where precision came from, for the error of a GPU without that format.
  std::string precision_field = "precision";
  std::string world_field = "dp";  // where a degree product that misses the GPU count points
  SourceLocation world_where;
  SourceLocation precision_where;

  std::uint64_t sequence_length() const { return seq ? seq : model.seq; }
  /// LoRA adapter parameters of `layer` (before TP): r x (in + out) per adapted matrix.
  double lora_params(std::uint32_t layer) const;
  bool recomputes(RecomputeModule module) const {
    return recompute == Recompute::Selective && (recompute_modules & module) != 0;
  }
  std::uint64_t micro_batches() const { return global_batch / (micro_batch * par.dp); }
  std::uint64_t tokens_per_iteration() const { return global_batch * sequence_length(); }
  bool noisy() const;
};

/// Reads and validates a `job:` map (or the CLI's equivalent). Every key is optional except
/// model, global_batch and the parallel degrees' product matching the GPUs (checked later
/// against the topology by simulate_training). Unknown keys are errors.
TrainConfig parse_train_config(const ArgNode& job);

/// "0-7,12,64-71" -> ranks; InputError naming `field` for malformed text.
std::vector<std::uint32_t> parse_rank_list(std::string_view text, std::string_view field);

const char* to_string(ZeroStage z);
const char* to_string(Recompute r);
/// "core_attn,layernorm" in Megatron-Core's names and order of RecomputeModule.
std::string recompute_module_names(std::uint8_t modules);
const char* to_string(Precision p);

}  // namespace lockstep
