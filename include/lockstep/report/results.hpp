#pragma once
// The results of one `lockstep run`: everything the report shows, as one plain data structure
// that the producers (topology + inventory, collective sweeps, training steps) fill and the
// writers (results.json, CSV tables, report.html) read. Field names carry their unit (time_us,
// busbw_GBps, cost_usd) exactly as results.json spells them; 1 GB = 1e9 bytes as in nccl-tests.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lockstep/telemetry/link_counters.hpp"
#include "lockstep/topology/inventory.hpp"

namespace lockstep::report {

/// One line of an nccl-tests style sweep.
struct SweepRow {
  std::uint64_t bytes = 0;
  std::uint64_t count = 0;  // elements of `type`
  std::string type;         // "float", "bfloat16", ...
  std::string algorithm;    // the one used (after auto selection): ring, tree, nvls, ...
  std::string protocol;     // LL, LL128, Simple
  double time_us = 0;
  double algbw_GBps = 0;
  double busbw_GBps = 0;
  std::string redop;           // "sum" or "none", as nccl-tests prints it
  std::uint32_t channels = 0;  // NCCL channels used
  // Flow and packet engines (docs/telemetry.md): the busiest links of the run, named; the packet
  // engine's counters summed over every link. Empty / absent with the analytical engine.
  std::vector<LinkReport> links;
  std::optional<LinkReport> network;
};

/// One collective swept over message sizes.
struct Sweep {
  std::string op;                   // all_reduce, all_gather, ...
  std::string algorithm;            // as requested: auto, ring, tree, ...
  std::string engine;               // analytical, flow, packet
  std::vector<std::string> faults;  // as given: "failed-link:link=nic3-leaf3"
  std::vector<SweepRow> rows;
};

/// One slice of the iteration time; the slices add up to the iteration time.
struct BreakdownPart {
  std::string name;  // compute, exposed_tp, exposed_dp, pipeline_bubble, straggler_wait, ...
  double time_us = 0;
};

/// The parallel degrees and sharding behind Training::parallelism.
struct TrainingParallel {
  std::uint32_t tp = 1, pp = 1, dp = 1, ep = 1;
  std::uint32_t interleave = 1;  // virtual pipeline stages per rank
  bool sequence_parallel = false;
  std::uint32_t zero_stage = 0;  // 0..3
  bool fsdp = false;
  std::uint32_t cp = 1;  // context parallel
  // Megatron-Core's microbatch_group_size_per_vp_stage (N) as the schedule ran it (pp when not
  // given); 0 without interleaving, where no group exists (null in results.json).
  std::uint32_t microbatch_group = 0;
  std::string pipeline = "1f1b";  // the job's `pipeline`: 1f1b or dualpipe
  // How the pipeline's figures were obtained: "simulated" (DualPipe too, since its schedule runs
  // as programs); "closed_form_on_1f1b" in files of earlier versions, whose DualPipe figures were
  // its closed form over a simulated 1F1B step (docs/training.md).
  std::string pipeline_timing = "simulated";
  // Expert tensor parallelism (Megatron-Core's expert_tensor_parallel_size); 0: as tp, the
  // default. results.json writes it resolved (tp when 0).
  std::uint32_t etp = 0;
};

/// The other job keys that change the result, named as the job names them (docs/scenario-job.md).
struct TrainingOptions {
  double efficiency = 0.5;  // one fraction of the peaks; 0: the kernel model ("kernels")
  double peak_tflops = 0;   // the job's override per GPU; 0: the catalog's (null)
  bool tp_comm_overlap = false;
  std::uint32_t tp_comm_overlap_sms = 16;  // with tp_comm_overlap (null without)
  bool overlap_dp = true;
  bool overlap_param_gather = false;
  bool grad_reduce_in_fp32 = true;
  std::uint64_t bucket_bytes = 0;  // 0: Megatron's default, max(40M, 1M x dp) parameters (null)
  bool optimizer_step = true;
  double clip_grad = 1.0;  // 0: no clipping
  double moe_imbalance = 1.0;
  std::uint32_t lora_rank = 0;  // 0: full training (lora_targets null)
  std::string lora_targets;     // attention or attention_mlp
  bool account_for_embedding_in_pipeline_split = false;
  bool account_for_loss_in_pipeline_split = false;
  std::uint32_t communication_sms = 0;  // held by the all-to-all beside DualPipe's compute
};

/// The batch of one iteration.
struct TrainingBatch {
  std::uint64_t global_batch = 0;     // sequences per iteration
  std::uint64_t micro_batch = 0;      // sequences per micro-batch
  std::uint64_t micro_batches = 0;    // per replica
  std::uint64_t sequence_length = 0;  // tokens per sequence
  std::uint64_t tokens_per_iteration = 0;
};

/// Memory per GPU of the most loaded pipeline stage, and the GPU's HBM, in bytes.
struct TrainingMemory {
  std::uint64_t weights_bytes = 0;
  std::uint64_t gradients_bytes = 0;
  std::uint64_t optimizer_bytes = 0;
  std::uint64_t activations_bytes = 0;
  std::uint64_t total_bytes = 0;
  std::uint64_t hbm_bytes = 0;
};

/// Monte Carlo statistics of the iteration time under noise.
struct JitterStats {
  std::uint64_t trials = 0;
  double p50_us = 0;
  double p99_us = 0;
  double max_us = 0;
  double mean_us = 0;
  std::vector<double> iteration_time_us;  // one per trial, sorted ascending (the CDF's points)
  double lockstep_waste_gpu_s = 0;        // GPU-seconds idle waiting for others, per iteration
  double lockstep_waste_usd = 0;          // its cost per iteration
  double lockstep_waste_fraction = 0;     // of the GPU time of a mean noisy iteration
  double lockstep_waste_per_trillion_tokens_usd = 0;
  double straggler_wait_us = 0;  // mean per GPU per noisy iteration
  std::uint64_t seed = 0;        // of the trials' random draws
};

/// A slow-gpu fault and where it sits in the job (docs/training.md "Parallelism and placement").
struct TrainingSlowGpu {
  std::string fault;  // as given: "slow-gpu:node=1,gpu=3,x=1.5"
  double factor = 1;  // its compute slowdown
  std::uint32_t rank = 0, node = 0, gpu = 0, stage = 0, replica = 0, tp_rank = 0;
};

/// GPU time lost waiting for slower GPUs (lockstep waste), per step and per day of steps.
struct TrainingWaste {
  double gpu_s_per_step = 0;
  double usd_per_step = 0;
  double fraction = 0;  // of the GPU time of a mean (noisy) iteration
  double usd_per_trillion_tokens = 0;
  double gpu_hours_per_day = 0;  // back-to-back steps of the mean iteration for 24 h
  double usd_per_day = 0;
};

/// One training step of a model with a given parallelism.
struct Training {
  std::string model;
  // The model as it ran, as a `model:` map (docs/scenario-job.md): every architectural key with
  // the value the preset and the job's overrides gave it (model_map_json, report/training.hpp).
  // Null when read from a results.json written before it was recorded.
  nlohmann::ordered_json model_map;
  std::string parallelism;  // "TP8 PP4 DP8", one line
  std::uint64_t gpus = 0;
  double iteration_time_us = 0;  // noise-free
  std::vector<BreakdownPart> breakdown;
  double mfu = 0;  // model FLOP/s utilisation, 0..1
  double tokens_per_s = 0;
  double gpu_hours_per_step = 0;
  double cost_per_step_usd = 0;
  double cost_per_trillion_tokens_usd = 0;
  std::optional<JitterStats> jitter;
  // What `lockstep train` prints besides the above (and results.json carries too).
  std::string engine;     // flow, analytical, packet
  std::string expansion;  // reduced or full (docs/training.md)
  TrainingParallel parallel;
  // The kernels' number formats and attention core: the weight GEMMs' precision (bf16, fp8,
  // fp4), the attention core (flash, unfused) and AdamW's moments (fp32, bf16).
  std::string precision = "bf16";
  std::string attention_kernel = "flash";
  std::string optimizer_moments = "fp32";
  // Activation recomputation (none, selective, full) and, when selective, its modules in
  // Megatron-Core's names ("core_attn,layernorm"; empty otherwise, null in results.json).
  std::string recompute = "none";
  std::string recompute_modules;
  TrainingOptions options;
  TrainingBatch batch;
  TrainingMemory memory;
  double gpu_hours_per_trillion_tokens = 0;
  std::vector<std::string> warnings;
  // What a slow GPU or noise costs, also with one trial (jitter is null then).
  std::vector<TrainingSlowGpu> slow_gpus;
  TrainingWaste waste;
};

/// Utilisation of the busiest links over time, for the heat map.
struct LinkHeatmap {
  double bucket_us = 0;                          // width of one time bucket
  std::string source;                            // which run it was recorded from
  std::vector<std::string> links;                // link names, busiest first
  std::vector<std::vector<double>> utilisation;  // [link][bucket], each 0..1
  double step_us = 0;                            // the step the buckets cover
};

/// The noise-free step re-run on the analytical engine with one thing changed (report/why.hpp).
struct SensitivityCase {
  std::string name;         // network_2x, straggler_1.5x, failed_spine
  std::string description;  // "2x faster scale-out network (every NIC and switch link)"
  std::optional<double> iteration_time_us;  // null when the case cannot be built (no spine)
  std::string note;                         // why it is null, or what was changed
};

/// One variant of the scenario: the cluster with some keys substituted.
struct Variant {
  std::string name;  // "fabric=ib-ndr", or "base" when the scenario declares no variants
  std::vector<std::pair<std::string, std::string>> substitutions;  // cluster key -> value
  Inventory inventory;
  std::vector<Sweep> sweeps;
  std::optional<Training> training;
  // An inference job's results.json object (report::inference_to_json, docs/inference.md).
  std::optional<nlohmann::ordered_json> inference;
  std::optional<LinkHeatmap> heatmap;
  // The step re-run on the analytical engine (the baseline first, then one change per case),
  // and the "why" section's sentences generated from the numbers (report/why.hpp).
  std::optional<double> sensitivity_baseline_us;
  std::vector<SensitivityCase> sensitivity;
  std::vector<std::string> why;
  std::vector<std::string> notes;  // what did not run for this variant, and why
};

struct RunResults {
  std::string title;
  std::string scenario_path;
  std::string scenario_text;  // the file as given, shown in the report
  std::string lockstep_version;
  std::uint64_t seed = 0;
  std::vector<std::string> variant_keys;  // the cluster keys the variants substitute
  std::vector<Variant> variants;
  std::vector<std::string> notes;  // run-wide diagnostics worth showing in the report
};

}  // namespace lockstep::report
