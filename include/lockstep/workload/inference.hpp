#pragma once
// Inference serving: a model on a cluster answering a stream of requests (docs/inference.md).
// Each engine step is priced from the model's shape and the GPU's datasheet (prefill GEMMs at the
// tensor cores' rate, decode weight and KV reads at HBM bandwidth) plus the tensor-parallel
// all-reduces priced by the cluster's collective model; a request-level simulation batches the
// requests as vLLM's scheduler does and measures TTFT, TPOT, latency, throughput and cost.
//
//   InferenceConfig c = parse_inference_config(job);
//   InferenceResult r = simulate_inference(topology, c);
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lockstep/core/error.hpp"
#include "lockstep/core/units.hpp"
#include "lockstep/topology/catalog.hpp"
#include "lockstep/topology/graph.hpp"
#include "lockstep/workload/inference_comm.hpp"
#include "lockstep/workload/model.hpp"
#include "lockstep/workload/noise.hpp"
#include "lockstep/workload/train_config.hpp"
#include "lockstep/workload/training.hpp"

namespace lockstep {

class ArgNode;

/// A token count per request: fixed, or uniform over [lo, hi].
struct LengthSpec {
  std::uint64_t lo = 0, hi = 0;
  std::string text;
  std::uint64_t max() const { return hi; }
  double mean() const { return (static_cast<double>(lo) + static_cast<double>(hi)) / 2; }
};

enum class BatchPolicy : std::uint8_t { Static, Continuous, Chunked };

/// How a replica deals the requests entering it to its attention groups (docs/inference.md,
/// "Each group's cache and queue"): in turn (SGLang's --load-balance-method round_robin), or to
/// the group holding the fewest requests, queued and running (its shortest_queue; ties: the
/// lowest group).
enum class DpBalance : std::uint8_t { RoundRobin, ShortestQueue };

/// Tokens per KV-cache block: vLLM's PagedAttention allocates the cache in blocks of 16 tokens
/// (its default block_size on CUDA); a sequence of n tokens holds ceil(n / 16) blocks.
constexpr std::uint64_t kKvBlockTokens = 16;
constexpr std::uint64_t kv_blocks(std::uint64_t tokens) {
  return (tokens + kKvBlockTokens - 1) / kKvBlockTokens;
}

struct InferenceConfig {
  ModelSpec model;
  // tp: the attention (and dense) part's tensor parallelism; attention_dp: data-parallel
  // attention groups of tp GPUs in one replica, each running attention on its own sequences
  // (SGLang's --enable-dp-attention with --dp-size); ep: the routed experts over ep GPUs of the
  // replica (a divisor of its tp x attention_dp GPUs, nodes apart or not).
  std::uint32_t tp = 1, pp = 1, ep = 1, attention_dp = 1;
  std::uint32_t replicas = 1;  // data-parallel copies of the model (the colocated pool)
  DpBalance dp_balance = DpBalance::RoundRobin;  // requests to attention groups
  // Expert load under ep > 1 (docs/inference.md, "Expert load and redundant experts"): the Zipf
  // exponent of the experts' popularity (0: uniform), the extra expert copies EPLB places, and
  // whether the experts are placed by EPLB (else contiguously, E / ep a GPU in index order).
  double expert_skew = 0;
  std::uint32_t redundant_experts = 0;
  bool eplb = false;
  /// Every expert equally popular and in place: the uniform routing model.
  bool uniform_experts() const { return expert_skew == 0 && !eplb; }
  Precision precision = Precision::Bf16;
  LengthSpec prompt, output;
  double rate = 0;                // requests/s, Poisson arrivals (0: closed loop)
  std::uint32_t concurrency = 0;  // closed loop: clients each with one request in flight
  std::uint64_t count = 0;        // requests simulated
  std::uint32_t max_batch = 0;    // sequences in a replica's running batch
  // Prompt tokens one prefill step takes at most (vLLM's max_num_batched_tokens; 0: its default
  // without chunked prefill, max(the model's context, 2048)); a longer prompt runs alone.
  std::uint64_t max_prefill_tokens = 0;
  BatchPolicy policy = BatchPolicy::Continuous;
  // Chunked prefill: prompts prefilled at once in a step (vLLM's max_num_partial_prefills).
  std::uint32_t max_partial_prefills = 1;
  // KV cache per replica in tokens, whole blocks of kKvBlockTokens (0: what HBM leaves).
  std::uint64_t kv_cache_tokens = 0;
  // Disaggregated serving (prefill and decode pools); 0: every replica does both.
  std::uint32_t prefill_gpus = 0, decode_gpus = 0;
  double gpu_memory_utilization = 0.9;  // vLLM's default share of HBM it manages
  std::vector<JitterSpec> jitter;
  std::vector<FaultSpec> faults;
  std::uint64_t seed = 1;
  double gpu_hour_usd = 2.5;
  std::string engine = "analytical";
  // NCCL_PXN_DISABLE unset (true) or set, from the scenario's `collectives.pxn`
  // (docs/inference.md): NCCL's collectives and pipeline sends only, not DeepEP's exchanges.
  bool pxn = true;
  std::string trace_path;
  // Where fields came from, for errors found against the cluster.
  std::string world_field = "replicas";
  std::string kv_field = "replicas";  // batching.kv_cache_tokens when given
  SourceLocation world_where, kv_where;

  std::uint32_t replica_gpus() const { return tp * pp * attention_dp; }
  // An attention group's own limits: max_batch and max_prefill_tokens stay the replica's (as
  // SGLang's --max-running-requests and --chunked-prefill-size are the server's), each group's
  // scheduler taking 1 / attention_dp of them, rounded down (docs/inference.md, "Each group's
  // cache and queue"). One group a replica without DP attention: the whole of both.
  std::uint32_t group_max_batch() const { return max_batch / attention_dp; }
  std::uint64_t group_prefill_tokens() const { return max_prefill_tokens / attention_dp; }
  bool disaggregated() const { return prefill_gpus > 0; }
  std::uint32_t prefill_replicas() const { return prefill_gpus / replica_gpus(); }
  std::uint32_t decode_replicas() const { return decode_gpus / replica_gpus(); }
  std::uint32_t gpus() const {
    return disaggregated() ? prefill_gpus + decode_gpus : replicas * replica_gpus();
  }
};

/// The expected largest of `bins` counts when `balls` fall independently and uniformly into them
/// (the multinomial's maximum): exact for balls <= 256, P(max <= c) by the bins' binomial chain;
/// above, the Gaussian limit balls / bins + sqrt(balls / bins) x E[max of `bins` standard
/// normals]. docs/inference.md ("The busiest expert rank").
double expected_max_load(std::uint64_t balls, std::uint32_t bins);

/// The busiest expert-parallel rank of one MoE layer: its expected token-slots and the expected
/// number of its experts they reach.
struct BusiestRank {
  double slots = 0, experts = 0;
};

/// `tokens` each routed to `top_k` distinct experts of `experts` (uniformly, without replacement,
/// as top-k picks them), the experts split in `ranks` contiguous groups (E / ranks each): the
/// busiest rank (most slots; ties: most experts reached), by sampling up to 256 slots, above by
/// the Gaussian limit with the without-replacement variance (x (E - k) / (E - 1)).
/// docs/inference.md ("The busiest expert rank").
BusiestRank expected_busiest_rank(std::uint64_t tokens, std::uint32_t top_k, std::uint32_t experts,
                                  std::uint32_t ranks);

/// The keys of an inference job, in docs/scenario-job.md's order.
const std::vector<std::string>& inference_job_keys();
/// True when the job map says `type: inference`.
bool is_inference_job(const ArgNode& job);

/// Reads and validates a `job: {type: inference}` map (keys in docs/scenario-job.md).
InferenceConfig parse_inference_config(const ArgNode& job);

/// The time of one engine step on one replica, and where it goes.
struct StepCost {
  double seconds = 0;    // the whole step (every pipeline stage, every micro-batch)
  double compute = 0;    // GEMM, attention and memory time (the roofline of each)
  double tp = 0;         // tensor-parallel all-reduces
  double ep = 0;         // MoE dispatch + combine
  double pp = 0;         // pipeline stage-to-stage transfers
  double flops = 0;      // per GPU, for utilisation
  double hbm_bytes = 0;  // per GPU: weights and KV read
};

/// A piece's attention group when none is given: the step deals such pieces to the groups in turn.
constexpr std::uint32_t kDealtGroup = 0xFFFFFFFFu;

/// One sequence's share of an engine step: `tokens` new tokens after `past` cached ones (a whole
/// prompt: past 0; a chunk of one; a decode token: past = context - 1); `samples` when the step
/// emits its next token (every decode, a prompt's last chunk); `group`: the attention group
/// holding the sequence (DP attention; kDealtGroup, or any group past attention_dp: dealt).
struct StepPiece {
  std::uint64_t past = 0, tokens = 0;
  bool samples = true;
  std::uint32_t group = kDealtGroup;
};

/// A TP all-reduce priced for the report: NCCL's pick and each algorithm it could run.
struct AllReducePrice {
  std::uint64_t bytes = 0;
  std::string picked;                                      // algorithm/protocol NCCL's tuner picks
  double seconds = 0;                                      // as picked
  std::vector<std::pair<std::string, double>> algorithms;  // each runnable algorithm's time
};

/// Per-step pricing of one replica (the same shape on every replica).
class InferenceStepModel {
 public:
  /// `comm` prices MoE and KV traffic; null: DeepEpComm on `topology` (docs/moe-dispatch.md).
  /// `engines` builds the engine of c.engine that runs the step's NCCL traffic (null: the engine
  /// registry). The model keeps a copy of `c`; `topology` must outlive it.
  InferenceStepModel(const Topology& topology, const InferenceConfig& c,
                     std::shared_ptr<InferenceComm> comm = nullptr, EngineFactory engines = {});
  ~InferenceStepModel();
  /// A prefill step of prompts of these lengths (each request's first token comes out of it).
  StepCost prefill(const std::vector<std::uint64_t>& prompts);
  /// A decode step: one token for each running sequence, whose context lengths are given.
  StepCost decode(const std::vector<std::uint64_t>& contexts);
  /// Any mix of prompt chunks and decode tokens in one step (chunked prefill).
  StepCost step(const std::vector<StepPiece>& pieces);
  /// One tensor-parallel all-reduce of `bytes` in replica 0's first TP group.
  double tp_all_reduce(std::uint64_t bytes);
  /// An all-reduce of `bytes` in replica 0's first TP group: NCCL's pick (the time steps use) and
  /// every algorithm NCCL could run it with, each priced by NCCL's model on the graph.
  AllReducePrice price_all_reduce(std::uint64_t bytes);
  /// The K and V of a request's `tokens` prefilled tokens from prefill replica `p` to decode
  /// replica `d`.
  double kv_transfer(std::uint64_t tokens, std::uint32_t p, std::uint32_t d);

  double weight_bytes_per_gpu() const { return weight_bytes_; }
  double kv_bytes_per_token_per_gpu() const { return kv_token_bytes_; }
  double kv_budget_bytes_per_gpu() const { return kv_budget_; }
  /// The peak activations of a forward pass of one attention group's prefill budget and batch
  /// (max_prefill_tokens and max_batch / attention_dp), per GPU.
  double activation_bytes_per_gpu() const { return activation_bytes_; }
  double hbm_bandwidth() const { return hbm_; }  // achievable, bytes/s
  const GpuSpec& gpu() const { return *gpu_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  const GpuSpec* gpu_ = nullptr;
  double weight_bytes_ = 0, kv_token_bytes_ = 0, kv_budget_ = 0, activation_bytes_ = 0, hbm_ = 0;
};

struct Percentiles {
  double p50 = 0, p90 = 0, p99 = 0, mean = 0, max = 0;
};

struct RequestTiming {
  double arrival = 0, first_token = 0, finish = 0;  // s
  std::uint64_t prompt = 0, output = 0;
  double ttft() const { return first_token - arrival; }
  double e2e() const { return finish - arrival; }
  double tpot() const {
    return output > 1 ? (finish - first_token) / static_cast<double>(output - 1) : 0;
  }
};

/// One engine step of one replica, for the trace.
struct StepRecord {
  std::uint32_t replica = 0;
  bool prefill = false;
  std::uint32_t batch = 0;
  std::uint64_t tokens = 0;
  double start = 0, end = 0;  // s
};

/// One attention group's KV cache and queue over the run (each replica's attention_dp groups; one
/// per replica without DP attention): utilisation = blocks its sequences hold / its blocks, the
/// mean weighted by each step's time over the makespan; the queue's depth integrated over time.
struct GroupUsage {
  std::uint32_t replica = 0, group = 0;
  std::uint64_t kv_token_capacity = 0;  // the group's cache, whole blocks
  double kv_utilisation_mean = 0, kv_utilisation_peak = 0;
  double queue_depth_mean = 0;  // requests waiting for the group, time-averaged
  std::uint64_t queue_depth_max = 0;
  // Entries into the group's cache: prompts admitted (recomputes again), KV caches joining a
  // decode batch.
  std::uint64_t admitted = 0;
};

struct InferenceResult {
  std::string model, gpu, engine, policy;
  std::uint32_t gpus = 0;
  std::uint64_t requests = 0, prompt_tokens = 0, output_tokens = 0;
  double makespan = 0;          // s: first arrival to last token
  Percentiles ttft, tpot, e2e;  // s
  double output_tokens_per_s = 0, output_tokens_per_s_per_gpu = 0, total_tokens_per_s = 0;
  double requests_per_s = 0;
  double gpu_busy = 0;                       // share of GPU time in engine steps
  double compute_share = 0;                  // share of GPU time in kernels
  double network_share = 0;                  // share of GPU time in TP / EP / PP / KV communication
  double mfu = 0;                            // model FLOPs / (peak x GPU time)
  double hbm_utilisation = 0;                // bytes read / (HBM peak x GPU time)
  double cost_per_million_tokens_usd = 0;    // output tokens, at gpu_hour_usd
  double energy_kwh_per_million_tokens = 0;  // at the GPUs' TDP while busy
  // Batch-1 decode, one token at context = mean prompt: the floor of TPOT.
  StepCost decode_batch1;
  StepCost prefill_one;              // one mean prompt alone: the floor of TTFT
  AllReducePrice decode_all_reduce;  // batch 1 x hidden x 2 B
  double weight_gib_per_gpu = 0, kv_gib_free_per_gpu = 0;
  // Tokens of KV cache a replica holds: its attention groups' caches (whole blocks) together.
  std::uint64_t kv_token_capacity = 0;
  // Sequences evicted from a full cache and recomputed (disaggregated: by the prefill pool, their
  // KV cache sent to a decode replica again).
  std::uint64_t preemptions = 0;
  std::uint32_t mean_decode_batch = 0;
  std::vector<GroupUsage> groups;  // replica by replica, group by group
  std::vector<RequestTiming> timings;
  std::vector<StepRecord> steps;
  std::vector<std::string> warnings;
};

struct InferenceOptions {
  std::shared_ptr<InferenceComm> comm;  // null: DeepEpComm
  bool record_steps = false;            // fill InferenceResult::steps (for a trace)
};

/// Serves `config.count` requests on `topology`. InputError naming the field when the layout
/// does not match the GPUs, the weights or the largest batch's KV cache do not fit in HBM.
InferenceResult simulate_inference(const Topology& topology, const InferenceConfig& config,
                                   const InferenceOptions& options = {});

const char* to_string(BatchPolicy p);
const char* to_string(DpBalance b);

}  // namespace lockstep
