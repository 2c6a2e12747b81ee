// The time of one inference engine step on one replica (docs/inference.md): per layer, each
// kernel's roofline (FLOPs at the tensor cores' achievable rate against bytes at HBM's
// achievable bandwidth), the tensor-parallel all-reduces priced by the cluster's collective
// model (the training step's Runner: NCCL's algorithm and protocol on this topology), MoE
// dispatch and combine through InferenceComm, and pipeline stages in sequence.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numbers>

#include "lockstep/core/error.hpp"
#include "lockstep/core/rng.hpp"
#include "lockstep/routing/pxn.hpp"
#include "lockstep/routing/router.hpp"
#include "lockstep/topology/catalog.hpp"
#include "lockstep/workload/deepep_comm.hpp"
#include "lockstep/workload/expert_load.hpp"
#include "lockstep/workload/inference.hpp"
#include "lockstep/workload/moe_comm.hpp"
#include "training_detail.hpp"

namespace lockstep {
namespace {

constexpr double kBf16 = 2.0;

// Bytes per weight: BF16 2; FP8 E4M3 1 (per-tensor scales); NVFP4 4 bits plus one FP8 scale per
// block of 16 values (NVIDIA, "Introducing NVFP4", 2025).
double weight_bytes(Precision p) {
  return p == Precision::Fp8 ? 1.0 : p == Precision::Fp4 ? 0.5 + 1.0 / 16 : kBf16;
}

// P(every one of `bins` multinomial counts of `balls` is <= c): the first bin takes
// Binomial(m, 1 / bins_left) of the m balls left, the rest share the remainder. The binomial pmf
// by its ratio pmf(j + 1) / pmf(j) = (m - j) / (j + 1) x p / (1 - p).
double all_at_most(std::uint64_t balls, std::uint32_t bins, std::uint64_t c) {
  std::vector<double> f(balls + 1, 0.0);  // f[m]: the last bins hold m balls, each <= c
  for (std::uint64_t m = 0; m <= std::min(balls, c); ++m) f[m] = 1;
  for (std::uint32_t left = 2; left <= bins; ++left) {
    std::vector<double> g(balls + 1, 0.0);
    const double p = 1.0 / left, odds = p / (1 - p);
    for (std::uint64_t m = 0; m <= balls; ++m) {
      double pmf = std::pow(1 - p, static_cast<double>(m)), sum = 0;
      for (std::uint64_t j = 0; j <= std::min(m, c); ++j) {
        sum += pmf * f[m - j];
        pmf *= static_cast<double>(m - j) / static_cast<double>(j + 1) * odds;
      }
      g[m] = sum;
    }
    f = std::move(g);
  }
  return f[balls];
}

// E[max of n standard normals] = integral of x n phi(x) Phi(x)^(n-1), by the trapezoid rule.
double expected_max_normal(std::uint32_t n) {
  thread_local std::map<std::uint32_t, double> known;
  if (const auto it = known.find(n); it != known.end()) return it->second;
  double sum = 0;
  const double h = 1e-3;
  for (int i = -10'000; i <= 10'000; ++i) {
    const double x = i * h;
    const double phi = std::exp(-x * x / 2) / std::sqrt(2 * std::numbers::pi);
    const double cdf = 0.5 * std::erfc(-x / std::sqrt(2.0));
    sum += x * n * phi * std::pow(cdf, n - 1) * h;
  }
  return known[n] = sum;
}

}  // namespace

double expected_max_load(std::uint64_t balls, std::uint32_t bins) {
  if (bins <= 1 || balls == 0) return static_cast<double>(balls);
  const double mean = static_cast<double>(balls) / bins;
  if (balls > 256) return mean + std::sqrt(mean) * expected_max_normal(bins);
  // E[max] = sum over c >= 0 of P(max > c); P(max > c) = 1 below ceil(balls / bins).
  const std::uint64_t floor_c = (balls + bins - 1) / bins;
  double out = static_cast<double>(floor_c);
  for (std::uint64_t c = floor_c; c < balls; ++c) {
    const double tail = 1 - all_at_most(balls, bins, c);
    if (tail < 1e-13) break;
    out += tail;
  }
  return out;
}

BusiestRank expected_busiest_rank(std::uint64_t tokens, std::uint32_t top_k, std::uint32_t experts,
                                  std::uint32_t ranks) {
  BusiestRank out;
  const double t = static_cast<double>(tokens), e = experts, k = top_k;
  if (tokens == 0 || experts == 0) return out;
  if (ranks <= 1) {
    // One rank holds every expert: each is missed by a token with probability 1 - k / E.
    return {t * k, e * (1 - std::pow(1 - k / e, t))};
  }
  const std::uint32_t local = experts / ranks;
  const std::uint64_t slots = tokens * top_k;
  if (slots > 256) {
    // Gaussian limit: a token's counts over the ranks are multivariate hypergeometric, whose
    // covariance is the multinomial's x (E - k) / (E - 1); the busiest rank's M slots reach
    // local x (1 - (1 - 1 / local)^M) experts (all of them, at these loads).
    const double mean = static_cast<double>(slots) / ranks;
    const double shrink = experts > 1 ? (e - k) / (e - 1) : 0;
    out.slots = mean + std::sqrt(mean * shrink) * expected_max_normal(ranks);
    out.experts = local * (1 - std::pow(1 - 1.0 / local, out.slots));
    return out;
  }
  // Sampled: each trial routes every token to top_k distinct experts (Floyd's algorithm), the
  // trials sized to about 2^18 slots in all (a fixed seed: the same figure every run).
  const std::uint64_t trials = BusiestSampler::trials(slots);
  Rng rng(0x70b6);
  BusiestSampler sampler(ranks, local);
  std::vector<std::uint32_t> picked;
  for (std::uint64_t n = 0; n < trials; ++n) {
    sampler.start_trial();
    for (std::uint64_t q = 0; q < tokens; ++q) {
      picked.clear();
      for (std::uint32_t j = experts - top_k; j < experts; ++j) {
        auto x = static_cast<std::uint32_t>(rng.below(j + 1));
        if (std::find(picked.begin(), picked.end(), x) != picked.end()) x = j;
        picked.push_back(x);
        sampler.hit(x);
      }
    }
    sampler.end_trial();
  }
  const HottestGpu h = sampler.mean();
  out.slots = h.slots;
  out.experts = h.experts;
  return out;
}

struct InferenceStepModel::Impl {
  const Topology& topo;
  // A copy: a model may outlive the config it was built from (a temporary, a sweep's point).
  const InferenceConfig c;
  std::unique_ptr<Engine> engine;
  std::unique_ptr<Router> router;
  NcclGroups nccl;
  std::unique_ptr<train_detail::Runner> runner;
  std::shared_ptr<InferenceComm> comm;
  std::uint32_t gpn = 0;
  double gemm_rate = 0, attention_rate = 0, hbm = 0;
  double bf16_rate = 0, wb = 2, kv_per_layer = 0;  // KV bytes per token and layer per GPU
  std::vector<std::pair<std::uint32_t, std::uint32_t>> stages;  // [first, last) layers
  std::map<std::uint64_t, BusiestRank> busiest;  // tokens -> the busiest EP rank's expected share
  // The routed experts on an EP group's GPUs when they are not equally popular or EPLB places
  // them (every EP group alike: one popularity per job, every MoE layer alike).
  ExpertPlacement placement;
  std::vector<double> ep_load;  // each EP GPU's slots over the mean; empty: uniform
  // What a token reaches under that load (DeepEP's normal kernels), by EP group's GPUs: it
  // depends on which of the group's GPUs share an NVLink domain.
  std::map<std::vector<std::uint32_t>, ExpertReach> reach;
  const ExpertReach& group_reach(const std::vector<std::uint32_t>& gpus) {
    const auto it = reach.find(gpus);
    if (it != reach.end()) return it->second;
    return reach[gpus] = expert_reach(placement, c.model.top_k, nvlink_domains(topo, gpus));
  }
  const BusiestRank& busiest_rank(std::uint64_t tokens) {
    const auto it = busiest.find(tokens);
    if (it != busiest.end()) return it->second;
    if (ep_load.empty())
      return busiest[tokens] = expected_busiest_rank(tokens, c.model.top_k, c.model.experts, c.ep);
    // Skewed or EPLB-placed: the busiest GPU's expected slots and experts reached.
    const HottestGpu h = expected_hottest_gpu(placement, tokens, c.model.top_k);
    return busiest[tokens] = {h.slots, h.experts};
  }

  // One pass of a micro-batch through one pipeline stage.
  struct Pass {
    double compute = 0, tp = 0, ep = 0, flops = 0, bytes = 0;
    double seconds() const { return compute + tp + ep; }
  };
  Pass group_layer(std::uint32_t l, const std::vector<StepPiece>& pieces, double tokens, double ar);
  Pass stage_pass(std::uint32_t s, const std::vector<StepPiece>& pieces, bool decode);
  StepCost step(const std::vector<StepPiece>& pieces);

  Impl(const Topology& t, const InferenceConfig& cfg, const EngineFactory& engines)
      : topo(t),
        c(cfg),
        engine((engines ? engines : train_detail::default_engines())(cfg.engine)),
        // NCCL's pipeline sends relay by PXN as its collectives do, unless NCCL_PXN_DISABLE
        // (`collectives.pxn: false`); DeepEP's exchanges route apart (DeepEpComm,
        // docs/inference.md).
        router(cfg.pxn ? make_pxn_router(t, fabric_routing(t)) : make_router(t, fabric_routing(t))),
        nccl(t, cfg.pxn) {
    runner = std::make_unique<train_detail::Runner>(t, *engine, *router, &nccl,
                                                    cfg.engine == kNcclModelEngine);
    // vLLM and TensorRT-LLM replay decode steps from CUDA graphs, NCCL's kernels among them: no
    // per-call host launch (NCCL's graph-capture support; the CUDA Graphs programming guide).
    runner->set_launch_overhead(false);
    gpn = train_detail::gpus_per_node_of(t);
  }
  std::vector<std::uint32_t> tp_group(std::uint32_t replica, std::uint32_t stage) const {
    std::vector<std::uint32_t> g;
    for (std::uint32_t r = 0; r < c.tp; ++r)
      g.push_back(replica * c.replica_gpus() + stage * c.tp + r);
    return g;
  }
  // Replica 0's expert-parallel group of stage s whose first GPU is the stage's first + `first`.
  std::vector<std::uint32_t> ep_group(std::uint32_t stage, std::uint32_t first) const {
    std::vector<std::uint32_t> g;
    for (std::uint32_t r = 0; r < c.ep; ++r) g.push_back(stage * c.tp + first + r);
    return g;
  }
  double all_reduce(double bytes) {
    if (c.tp < 2) return 0;
    const auto b = std::max<std::uint64_t>(2, static_cast<std::uint64_t>(bytes));
    return runner->collective(CollectiveOp::AllReduce, Bytes(b), {tp_group(0, 0)}, gpn).seconds();
  }
};

InferenceStepModel::InferenceStepModel(const Topology& topology, const InferenceConfig& c,
                                       std::shared_ptr<InferenceComm> comm, EngineFactory engines)
    : impl_(std::make_unique<Impl>(topology, c, engines)) {
  Impl& m = *impl_;
  gpu_ = &gpu_spec(topology.traits().gpu, "gpu");
  const KernelRates& k = gpu_->kernels;
  if (k.hbm_bandwidth.bytes_per_second() <= 0 || k.hbm_fraction <= 0 || k.gemm_bf16 <= 0) {
    throw InputError(
        "gpu", fmt::format("the {} has no kernel-model figures in the catalog", gpu_->display));
  }
  const double peak = c.precision == Precision::Fp8   ? gpu_->fp8_dense_flops
                      : c.precision == Precision::Fp4 ? gpu_->fp4_dense_flops
                                                      : gpu_->bf16_dense_flops;
  const double fraction = c.precision == Precision::Fp8   ? k.gemm_fp8
                          : c.precision == Precision::Fp4 ? k.gemm_fp4
                                                          : k.gemm_bf16;
  if (peak <= 0 || fraction <= 0) {
    throw InputError("precision", fmt::format("the {} has no {} tensor cores in the catalog",
                                              gpu_->display, to_string(c.precision)));
  }
  m.gemm_rate = peak * fraction;
  m.attention_rate = gpu_->bf16_dense_flops * k.attention_fwd;
  m.bf16_rate = gpu_->bf16_dense_flops * k.gemm_bf16;
  m.wb = weight_bytes(c.precision);
  hbm_ = m.hbm = k.hbm_bandwidth.bytes_per_second() * k.hbm_fraction;
  // MoE and KV traffic as DeepEP and disaggregated serving move them, on the job's engine
  // (docs/moe-dispatch.md).
  m.comm = comm ? std::move(comm) : std::make_shared<DeepEpComm>(topology, c.engine);
  if (c.ep > 1 && !c.uniform_experts()) {
    const std::vector<double> shares = zipf_expert_shares(c.model.experts, c.expert_skew, c.seed);
    m.placement = c.eplb ? eplb_placement(shares, c.ep, c.redundant_experts)
                         : contiguous_placement(shares, c.ep);
    m.ep_load = m.placement.relative_load();
  }

  // Layers split evenly over the stages, the first stages taking one more (vLLM's
  // get_pp_indices).
  const ModelSpec& md = c.model;
  std::uint32_t first = 0;
  for (std::uint32_t s = 0; s < c.pp; ++s) {
    const std::uint32_t n = md.layers / c.pp + (s < md.layers % c.pp ? 1 : 0);
    m.stages.emplace_back(first, first + n);
    first += n;
  }
  // Weights on the busiest GPU (stage 0, or the last with the output layer).
  const double wb = weight_bytes(c.precision);
  double most = 0;
  for (std::uint32_t s = 0; s < c.pp; ++s) {
    double bytes = 0;
    for (std::uint32_t l = m.stages[s].first; l < m.stages[s].second; ++l) {
      // The routed experts split over the ep GPUs (whole experts) or, without EP, over the TP
      // ranks; everything else over the TP ranks.
      const double routed = md.is_moe_layer(l) ? static_cast<double>(md.experts) *
                                                     static_cast<double>(md.expert_params())
                                               : 0;
      const double shared = static_cast<double>(md.layer_params(l)) - routed;
      // EPLB's replicas add whole experts to every GPU ((E + redundant) / ep each).
      const double replicas =
          md.is_moe_layer(l) && c.ep > 1
              ? static_cast<double>(c.redundant_experts) * static_cast<double>(md.expert_params())
              : 0;
      bytes += shared * wb / c.tp + (routed + replicas) * wb / (c.ep > 1 ? c.ep : c.tp);
    }
    // The embedding and output layer stay BF16 (as Transformer Engine's recipes keep them).
    const double embed = static_cast<double>(md.vocab * md.hidden) * kBf16 / c.tp;
    if (s == 0) bytes += embed;
    if (s + 1 == c.pp && !md.tied_embeddings) bytes += embed;
    most = std::max(most, bytes);
  }
  weight_bytes_ = most;
  // K and V of every layer of the busiest stage: MLA keeps its compressed latent and rotary
  // key, the same on every TP rank (vLLM's MLA backend); GQA keeps ceil(kv_heads / tp) heads.
  const double per_layer =
      md.is_mla() ? static_cast<double>(md.kv_lora_rank + md.qk_rope_head_dim) * kBf16
                  : std::ceil(static_cast<double>(md.kv_heads) / c.tp) *
                        static_cast<double>(md.qk_head_size() + md.v_head_size()) * kBf16;
  m.kv_per_layer = per_layer;
  kv_token_bytes_ = per_layer * (m.stages[0].second - m.stages[0].first);
  // vLLM sizes the KV cache as gpu_memory_utilization x HBM less the weights and the peak of a
  // profiling forward pass of max_num_batched_tokens tokens and max_num_seqs sequences
  // (Worker.determine_num_available_blocks). That peak, counted: the residual stream
  // (T x hidden), the MLP's gate-up output and its activation (T x 3 x inner / tp; a fused MoE
  // keeps top_k rows per token), BF16, and the sampler's FP32 logits (B x vocab). T and B are
  // one attention group's: its GPUs run only its own scheduler's batch, 1 / attention_dp of the
  // replica's limits (SGLang divides --chunked-prefill-size and --max-running-requests by the DP
  // size); the experts' GEMMs on a GPU, fed by every group through the exchange, receive on
  // average T x top_k / tp rows as well (the replica's T x attention_dp x top_k over ep GPUs,
  // each EP group drawing from ep / tp groups' tokens, or from its share of one group's).
  const double expert_inner = static_cast<double>(md.expert_ffn ? md.expert_ffn : md.ffn);
  const double inner = md.is_moe() ? std::max(static_cast<double>(md.ffn),
                                              static_cast<double>(md.top_k) * expert_inner)
                                   : static_cast<double>(md.ffn);
  activation_bytes_ = static_cast<double>(c.group_prefill_tokens()) *
                          (static_cast<double>(md.hidden) + 3 * inner / c.tp) * kBf16 +
                      static_cast<double>(c.group_max_batch()) * static_cast<double>(md.vocab) * 4;
  kv_budget_ = static_cast<double>(gpu_->hbm.count()) * c.gpu_memory_utilization - weight_bytes_ -
               activation_bytes_;
}

InferenceStepModel::~InferenceStepModel() = default;

double InferenceStepModel::tp_all_reduce(std::uint64_t bytes) {
  return impl_->all_reduce(static_cast<double>(bytes));
}

AllReducePrice InferenceStepModel::price_all_reduce(std::uint64_t bytes) {
  Impl& m = *impl_;
  AllReducePrice out;
  out.bytes = bytes;
  if (m.c.tp < 2) return out;
  const std::vector<std::uint32_t> group = m.tp_group(0, 0);
  TunerRequest request;
  request.op = CollectiveOp::AllReduce;
  request.bytes = Bytes(bytes);
  request.include_launch_overhead = false;
  const Prediction pick = m.nccl.predict(request, group);
  out.picked = fmt::format("{}/{}", to_string(pick.algo), nccl::to_string(pick.proto));
  out.seconds = m.all_reduce(static_cast<double>(bytes));
  for (Algorithm a : {Algorithm::Ring, Algorithm::Tree, Algorithm::NetReduce, Algorithm::NvlsTree,
                      Algorithm::CollNet}) {
    request.algo = a;
    try {
      const Prediction p = m.nccl.predict(request, group);
      const Time t =
          m.nccl.time(p, CollectiveOp::AllReduce, Bytes(bytes), DataType::Bf16, {group}, nullptr);
      out.algorithms.emplace_back(fmt::format("{}/{}", to_string(p.algo), nccl::to_string(p.proto)),
                                  t.seconds());
    } catch (const InputError&) {
      // NCCL cannot run this algorithm here (no NVLink SHARP, no SHARP, one node).
    }
  }
  return out;
}

double InferenceStepModel::kv_transfer(std::uint64_t tokens, std::uint32_t p, std::uint32_t d) {
  const InferenceConfig& c = impl_->c;
  KvTransfer x;
  // A sequence lives in one attention group (tp x pp GPUs): the prefill replica's first sends
  // to the decode replica's first.
  for (std::uint32_t g = 0; g < c.tp * c.pp; ++g) {
    x.from.push_back(p * c.replica_gpus() + g);
    x.to.push_back((c.prefill_replicas() + d) * c.replica_gpus() + g);
  }
  // Every TP rank's share of every layer's K and V for the tokens.
  x.bytes = Bytes(static_cast<std::uint64_t>(impl_->kv_per_layer * c.model.layers * c.tp *
                                             static_cast<double>(tokens)));
  return impl_->comm->kv_transfer(x).seconds();
}

// A piece is one sequence's new tokens after its cached ones: a whole prompt (past 0), a chunk
// of one (chunked prefill), or one decode token (past = context - 1). Its tokens go through every
// weight GEMM; its attention is causal over past + tokens (writing the new K and V, reading the
// cached ones).
//
// One attention group's part of layer l on its own pieces: the attention projections, dense MLP
// and shared experts, the routed experts when they are split over its TP ranks (no EP), the
// attention itself, and its TP all-reduces (one when the MoE block's becomes an exchange).
InferenceStepModel::Impl::Pass InferenceStepModel::Impl::group_layer(
    std::uint32_t l, const std::vector<StepPiece>& pieces, double tokens, double ar) {
  const ModelSpec& md = c.model;
  const double tpd = c.tp;
  Pass p;
  auto roofline = [&](double flops, double rate, double bytes) {
    p.flops += flops;
    p.bytes += bytes;
    p.compute += std::max(flops / rate, bytes / hbm);
  };
  const bool moe = md.is_moe_layer(l);
  const double ex = static_cast<double>(md.expert_params());
  const double routed = moe ? static_cast<double>(md.experts) * ex : 0;
  const double dense = static_cast<double>(md.layer_params(l)) - routed;
  const double dense_active =
      static_cast<double>(md.layer_active_params(l)) - (moe ? md.top_k * ex : 0);
  // Attention projections, dense MLP and shared experts: every weight read once per pass.
  roofline(2 * dense_active * tokens / tpd, gemm_rate, dense * wb / tpd);
  if (moe && c.ep == 1) {
    // Routed experts split over the TP ranks: a rank reads its share of the experts its
    // tokens reach. Each token picks top_k distinct experts uniformly (what the
    // load-balancing loss aims at): an expert is missed by one with probability 1 - k / E.
    const BusiestRank all =
        expected_busiest_rank(static_cast<std::uint64_t>(tokens), md.top_k, md.experts, 1);
    roofline(2 * ex * all.slots / tpd, gemm_rate, ex * all.experts * wb / tpd);
  }
  double attn_flops = 0, kv_tokens = 0;
  for (const StepPiece& q : pieces) {
    const std::uint64_t n = q.past + q.tokens;
    const std::uint64_t span = md.attention_span(l, n);
    const double f = md.attention_score_flops_per_token(l, n);
    const double t = static_cast<double>(q.tokens), past = static_cast<double>(q.past);
    // A whole prompt: causal, half of the square (PaLM's accounting); a chunk or a decode
    // token: query i attends past + i + 1 positions, on average past + (tokens + 1) / 2 of n.
    // (A decode token, tokens = 1, attends all n: 1 without the division.)
    const double causal = span != n || q.tokens == 1 ? 1.0
                          : q.past == 0              ? 0.5
                                        : (past + (t + 1) / 2) / static_cast<double>(n);
    attn_flops += t * f * causal;
    kv_tokens += static_cast<double>(q.past == 0 ? q.tokens : span);
  }
  roofline(attn_flops / tpd, attention_rate, kv_tokens * kv_per_layer);
  // Megatron's tensor parallelism: an all-reduce after attention and after the MLP; with
  // expert parallelism the MoE block's all-reduce becomes the dispatch and combine.
  p.tp += moe && c.ep > 1 ? ar : 2 * ar;
  return p;
}

// A stage's pass: per layer, every attention group on its own pieces (DP attention: the layer
// waits for the slowest group, as the exchange that follows needs every group's tokens), then,
// under EP, the routed experts' dispatch, GEMMs on the busiest expert GPU and combine.
InferenceStepModel::Impl::Pass InferenceStepModel::Impl::stage_pass(
    std::uint32_t s, const std::vector<StepPiece>& pieces, bool decode) {
  const ModelSpec& md = c.model;
  const double h = static_cast<double>(md.hidden);
  // Each sequence on its attention group (the simulation's requests keep the group they were
  // given at admission); pieces without one dealt over the groups in turn.
  const std::uint32_t dp = c.attention_dp;
  std::vector<std::vector<StepPiece>> groups(dp);
  std::size_t dealt = 0;
  for (const StepPiece& q : pieces) groups[q.group < dp ? q.group : dealt++ % dp].push_back(q);
  std::vector<double> tokens(dp, 0.0), ar(dp, 0.0);
  double most_seqs = 0;
  for (std::uint32_t g = 0; g < dp; ++g) {
    double seqs = 0;
    for (const StepPiece& q : groups[g]) {
      tokens[g] += static_cast<double>(q.tokens);
      seqs += q.samples ? 1 : 0;
    }
    most_seqs = std::max(most_seqs, seqs);
    if (!groups[g].empty()) ar[g] = all_reduce(tokens[g] * h * kBf16);
  }
  // Each GPU routes its own group's tokens / tp (sequence-parallel, as V3's attention TP with
  // SP; the first ranks one more when they do not split evenly), a group without sequences none
  // (SGLang's idle batch: its GPUs still take part in the exchange, their messages empty); and
  // the tokens each group of ep GPUs takes into its experts.
  std::vector<std::uint64_t> routed(c.tp * dp);
  for (std::uint32_t gpu = 0; gpu < c.tp * dp; ++gpu) {
    const auto mine = static_cast<std::uint64_t>(std::llround(tokens[gpu / c.tp]));
    routed[gpu] = mine / c.tp + (gpu % c.tp < mine % c.tp ? 1 : 0);
  }
  std::uint64_t ep_tokens = 0;
  for (std::uint32_t first = 0; first < c.tp * dp && c.ep > 1; first += c.ep) {
    std::uint64_t in = 0;
    for (std::uint32_t gpu = first; gpu < first + c.ep; ++gpu) in += routed[gpu];
    ep_tokens = std::max(ep_tokens, in);
  }
  Pass p;
  for (std::uint32_t l = stages[s].first; l < stages[s].second; ++l) {
    Pass slowest;
    for (std::uint32_t g = 0; g < dp; ++g) {
      if (groups[g].empty()) continue;
      const Pass a = group_layer(l, groups[g], tokens[g], ar[g]);
      if (a.seconds() > slowest.seconds()) slowest = a;
    }
    p.compute += slowest.compute;
    p.tp += slowest.tp;
    p.flops += slowest.flops;
    p.bytes += slowest.bytes;
    if (!md.is_moe_layer(l) || c.ep == 1) continue;
    // Expert parallelism: a GPU holds E / ep whole experts (EPLB: (E + redundant) / ep) and the
    // layer waits for the busiest: its expected token-slots and experts reached.
    const double ex = static_cast<double>(md.expert_params());
    const BusiestRank& b = busiest_rank(ep_tokens);
    p.flops += 2 * ex * b.slots;
    p.bytes += ex * b.experts * wb;
    p.compute += std::max(2 * ex * b.slots / gemm_rate, ex * b.experts * wb / hbm);
    // Every EP group exchanges at once; the layer waits for the slowest.
    double slowest_exchange = 0;
    for (std::uint32_t first = 0; first < c.tp * dp; first += c.ep) {
      MoeExchange x;
      x.ranks = ep_group(s, first);
      x.tokens.assign(routed.begin() + first, routed.begin() + first + c.ep);
      x.hidden = md.hidden;
      x.top_k = md.top_k;
      x.experts = md.experts;
      // The model's moe_fp8_dispatch: DeepEP's dispatch in FP8 with a scale per 128 values
      // (DeepSeek-V3 section 3.3.3; its low-latency kernels' default), combine in BF16.
      x.bytes_per_element = md.moe_fp8_dispatch ? 1 : kBf16;
      x.decode = decode;
      x.load = ep_load;
      if (!decode && !ep_load.empty()) {
        const ExpertReach& r = group_reach(x.ranks);
        x.gpu_reach = r.gpu;
        x.domain_reach = r.domain;
      }
      slowest_exchange = std::max(slowest_exchange,
                                  comm->moe_dispatch(x).seconds() + comm->moe_combine(x).seconds());
    }
    p.ep += slowest_exchange;
  }
  if (s + 1 == c.pp) {
    // The output layer at each sampling sequence's last position, BF16, on the group with the
    // most.
    const double v = static_cast<double>(md.vocab);
    const double flops = 2 * v * h * most_seqs / c.tp, bytes = v * h * kBf16 / c.tp;
    p.flops += flops;
    p.bytes += bytes;
    p.compute += std::max(flops / bf16_rate, bytes / hbm);
  }
  return p;
}

// Pipeline parallelism as vLLM runs it: one virtual engine per stage, each with its own batch,
// the stages working on different engines' batches at once. A step's sequences run as
// min(pp, n) micro-batches (round robin), each passing every stage in turn with a send of its
// hidden states between stages. The step lasts the longer of the longest micro-batch's pass
// (fewer micro-batches than stages: the others idle, the bubbles) and the busiest stage's work
// over all micro-batches, each send holding both its stages' GPUs (NCCL's send and receive run
// on both): with pp = 2 and k equal micro-batches, k x (the slowest stage + one send).
StepCost InferenceStepModel::Impl::step(const std::vector<StepPiece>& pieces) {
  StepCost out;
  if (pieces.empty()) return out;
  bool decode = true;
  for (const StepPiece& q : pieces) decode = decode && q.tokens == 1 && q.past > 0;
  const std::size_t micro = std::min<std::size_t>(c.pp, pieces.size());
  std::vector<std::vector<StepPiece>> batches(micro);
  for (std::size_t i = 0; i < pieces.size(); ++i) batches[i % micro].push_back(pieces[i]);
  std::vector<double> stage_work(c.pp, 0.0);
  double longest = 0;
  for (const std::vector<StepPiece>& batch : batches) {
    double tokens = 0;
    for (const StepPiece& q : batch) tokens += static_cast<double>(q.tokens);
    const auto hidden_bytes = std::max<std::uint64_t>(
        2, static_cast<std::uint64_t>(tokens * static_cast<double>(c.model.hidden) * kBf16));
    const double hop = c.pp > 1 ? runner->transfer(0, c.tp, Bytes(hidden_bytes)).seconds() : 0;
    double chain = (c.pp - 1) * hop;
    for (std::uint32_t s = 0; s < c.pp; ++s) {
      const Pass p = stage_pass(s, batch, decode);
      out.compute += p.compute;
      out.tp += p.tp;
      out.ep += p.ep;
      out.flops += p.flops / c.pp;  // per GPU: every GPU sits in one stage
      out.hbm_bytes += p.bytes / c.pp;
      chain += p.seconds();
      const int sends = (s > 0 ? 1 : 0) + (s + 1 < c.pp ? 1 : 0);
      stage_work[s] += p.seconds() + sends * hop;
    }
    out.pp += (c.pp - 1) * hop;
    longest = std::max(longest, chain);
  }
  out.seconds = std::max(longest, *std::max_element(stage_work.begin(), stage_work.end()));
  // The parts in proportion to the work they do, summing to the step.
  const double work = out.compute + out.tp + out.ep + out.pp;
  const double stretch = work > 0 ? out.seconds / work : 1;
  out.compute *= stretch;
  out.tp *= stretch;
  out.ep *= stretch;
  out.pp *= stretch;
  return out;
}

StepCost InferenceStepModel::prefill(const std::vector<std::uint64_t>& prompts) {
  std::vector<StepPiece> pieces;
  for (std::uint64_t n : prompts) pieces.push_back({0, n, true});
  return impl_->step(pieces);
}

StepCost InferenceStepModel::decode(const std::vector<std::uint64_t>& contexts) {
  std::vector<StepPiece> pieces;
  for (std::uint64_t n : contexts) pieces.push_back({n - 1, 1, true});
  return impl_->step(pieces);
}

StepCost InferenceStepModel::step(const std::vector<StepPiece>& pieces) {
  return impl_->step(pieces);
}

}  // namespace lockstep
