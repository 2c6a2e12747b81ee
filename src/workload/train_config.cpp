#include "lockstep/workload/train_config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <string_view>
#include <utility>
#include <vector>

#include "lockstep/config/arg_node.hpp"
#include "lockstep/config/spec_text.hpp"
#include "lockstep/core/error.hpp"

namespace lockstep {
namespace {

std::uint32_t get_u32(const ArgNode& job, const char* key, std::uint32_t fallback,
                      std::uint32_t max) {
  return static_cast<std::uint32_t>(job.get_int(key, fallback, 1, max));
}

std::uint32_t parse_u32(std::string_view s, std::string_view field, std::string_view text) {
  std::uint32_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) {
    throw InputError(std::string(field), fmt::format("bad rank list '{}'", text));
  }
  return v;
}

}  // namespace

const char* to_string(ZeroStage z) {
  switch (z) {
    case ZeroStage::None:
      return "none";
    case ZeroStage::Optimizer:
      return "zero-1";
    case ZeroStage::Gradients:
      return "zero-2";
    case ZeroStage::Parameters:
      return "zero-3";
  }
  return "?";
}

const char* to_string(Recompute r) {
  switch (r) {
    case Recompute::None:
      return "none";
    case Recompute::Selective:
      return "selective";
    case Recompute::Full:
      return "full";
  }
  return "?";
}

namespace {

// Megatron-Core's names (TransformerConfig.recompute_modules).
constexpr std::pair<const char*, RecomputeModule> kRecomputeModules[] = {
    {"core_attn", kRecomputeCoreAttn},
    {"mlp", kRecomputeMlp},
    {"moe", kRecomputeMoe},
    {"moe_act", kRecomputeMoeAct},
    {"layernorm", kRecomputeLayernorm},
    {"mla_up_proj", kRecomputeMlaUpProj},
    {"shared_experts", kRecomputeSharedExperts},
};

// A list, or one scalar of names separated by commas (the CLI's --recompute-modules a,b).
std::uint8_t parse_recompute_modules(const ArgNode& node) {
  std::vector<std::pair<std::string, const ArgNode*>> names;
  if (node.kind() == ArgNode::Kind::List) {
    for (const ArgNode& item : node.items()) names.emplace_back(item.text(), &item);
  } else {
    std::string_view text = node.text();
    while (!text.empty()) {
      const std::size_t comma = text.find(',');
      std::string_view name = text.substr(0, comma);
      while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
      while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
      names.emplace_back(std::string(name), &node);
      text = comma == std::string_view::npos ? "" : text.substr(comma + 1);
    }
  }
  std::uint8_t bits = 0;
  for (const auto& [name, where] : names) {
    bool known = false;
    for (const auto& [key, bit] : kRecomputeModules) {
      if (name == key) {
        bits |= bit;
        known = true;
      }
    }
    if (!known) {
      where->fail(
          fmt::format("unknown module '{}' (expected core_attn, mlp, moe, moe_act, "
                      "layernorm, mla_up_proj or shared_experts)",
                      name));
    }
  }
  if (bits == 0) node.fail("names no module");
  return bits;
}

}  // namespace

double TrainConfig::lora_params(std::uint32_t layer) const {
  if (lora_rank == 0) return 0;
  const ModelSpec& m = model;
  const double r = lora_rank, h = static_cast<double>(m.hidden);
  const double out_in = static_cast<double>(m.heads * m.v_head_size());  // O's input
  const double qkv_out = static_cast<double>(m.attention_params_per_layer()) / h - out_in;
  double n = r * (h + qkv_out) + r * (out_in + h);  // QKV (fused) and the output projection
  if (lora_mlp && !m.is_moe_layer(layer)) {
    const double ffn = static_cast<double>(m.ffn);
    n += r * (h + (m.gated_mlp ? 2.0 : 1.0) * ffn) + r * (ffn + h);  // FC1 (fused gate) and FC2
  }
  return n;
}

std::string recompute_module_names(std::uint8_t modules) {
  std::string out;
  for (const auto& [key, bit] : kRecomputeModules) {
    if ((modules & bit) == 0) continue;
    if (!out.empty()) out += ',';
    out += key;
  }
  return out;
}

const char* to_string(Precision p) {
  switch (p) {
    case Precision::Bf16:
      return "bf16";
    case Precision::Fp8:
      return "fp8";
    case Precision::Fp4:
      return "fp4";
  }
  return "?";
}

bool TrainConfig::noisy() const {
  return !ComputeNoise(jitter, faults).empty() || link_jitter > 0 || !faults.empty();
}

std::vector<std::uint32_t> parse_rank_list(std::string_view text, std::string_view field) {
  constexpr std::size_t kMaxRankListEntries = std::size_t{1} << 20;
  std::vector<std::uint32_t> ranks;
  std::string_view rest = text;
  while (!rest.empty()) {
    auto comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    auto dash = item.find('-');
    std::uint32_t lo = parse_u32(item.substr(0, dash), field, text);
    std::uint32_t hi =
        dash == std::string_view::npos ? lo : parse_u32(item.substr(dash + 1), field, text);
    if (hi < lo || hi - lo > 1'000'000) {
      throw InputError(std::string(field), fmt::format("bad rank range '{}'", item));
    }
    // In total, not only per range: "0-1000000,0-1000000,..." in a few hundred bytes would
    // otherwise ask for gigabytes (found by tests/fuzz).
    if (ranks.size() + (hi - lo) >= kMaxRankListEntries) {
      throw InputError(std::string(field),
                       fmt::format("names more than {} ranks", kMaxRankListEntries));
    }
    // 64-bit counter: with hi = 4294967295 a 32-bit one wraps to 0 and never ends.
    for (std::uint64_t r = lo; r <= hi; ++r) ranks.push_back(static_cast<std::uint32_t>(r));
  }
  if (ranks.empty()) throw InputError(std::string(field), "empty rank list");
  return ranks;
}

namespace {

// `optimizer: {moments: fp32 | bf16}`, or the CLI's `--optimizer moments=bf16`; true for BF16
// moments.
bool parse_bf16_moments(const ArgNode& node) {
  if (node.kind() == ArgNode::Kind::List) node.fail("expected a map (moments: fp32 | bf16)");
  const ArgNode map = node.kind() == ArgNode::Kind::Map ? node : key_value_map(node);
  bool bf16 = false;
  if (const ArgNode* moments = map.find("moments"))
    bf16 = moments->as_choice({"fp32", "bf16"}) == "bf16";
  map.check_all_used();
  return bf16;
}

}  // namespace

TrainConfig parse_train_config(const ArgNode& job) {
  if (job.kind() != ArgNode::Kind::Map) job.fail("expected a map of job settings");
  TrainConfig c;
  // `type: train` selects this parser in scenario files; an inference job is not a step.
  if (const ArgNode* type = job.find("type"); type && type->text() == "inference")
    type->fail("an inference job: run it with lockstep serve or lockstep run");
  c.model = parse_model(job.at("model"));

  auto& p = c.par;
  p.tp = get_u32(job, "tp", 1, 1 << 16);
  p.cp = get_u32(job, "cp", 1, 1 << 16);
  p.pp = get_u32(job, "pp", 1, 1 << 16);
  p.dp = get_u32(job, "dp", 1, 1 << 24);
  p.ep = get_u32(job, "ep", 1, 1 << 16);
  p.etp = get_u32(job, "etp", 0, 1 << 16);
  p.sequence_parallel = job.get_bool("sequence_parallel", true);
  p.interleave = get_u32(job, "interleave", 1, 64);
  const char* group_key = "microbatch_group_size_per_vp_stage";
  const bool group_given = job.has(group_key);
  p.microbatch_group = get_u32(job, group_key, 0, 1 << 16);  // checked with the batch below
  // Megatron-LM's distributed optimizer (ZeRO-1) unless `zero: 0` says otherwise: NeMo turns
  // it on by default and Megatron's published configurations use it.
  p.zero = static_cast<ZeroStage>(job.get_int("zero", 1, 0, 3));
  p.fsdp = job.get_bool("fsdp", false);
  if (p.fsdp) p.zero = ZeroStage::Parameters;

  const std::int64_t kBig = std::int64_t{1} << 40;
  const ArgNode& batch = job.at("global_batch");
  c.global_batch = static_cast<std::uint64_t>(batch.as_int(1, kBig));
  c.global_batch_field = batch.path();
  c.global_batch_where = batch.where();
  c.micro_batch = static_cast<std::uint64_t>(job.get_int("micro_batch", 1, 1, kBig));
  c.seq = static_cast<std::uint64_t>(job.get_int("seq", 0, 1, kBig));
  // `kernels`: the per-operation kernel model (opt-in, docs/kernel-model.md says why); else one
  // fraction of the peak for every kernel, 0.5 by default.
  const ArgNode* eff = job.find("efficiency");
  const bool word = eff != nullptr && eff->kind() == ArgNode::Kind::Scalar &&
                    !eff->text().empty() &&
                    std::isalpha(static_cast<unsigned char>(eff->text()[0]));
  if (word && eff->text() != "kernels")
    eff->fail(fmt::format("expected a fraction of the peak or kernels, got '{}'", eff->text()));
  c.efficiency = word ? 0.0 : job.get_double("efficiency", 0.5, 0.01, 1.0);
  c.peak_flops = job.get_double("peak_tflops", 0, 0.001, 1e9) * 1e12;
  if (const ArgNode* peak = job.find("peak_tflops")) {
    c.peak_tflops_field = peak->path();
    c.peak_tflops_where = peak->where();
  }
  if (const ArgNode* hbm = job.find("hbm")) {
    c.hbm = hbm->as_bytes();
    // 0 would mean "the catalog's" (the field's default) and silently ignore what was written.
    if (c.hbm.count() == 0) hbm->fail(fmt::format("'{}' is zero", hbm->text()));
  }
  if (const ArgNode* r = job.find("recompute")) {
    // true / false: the full / no recomputation this key meant before selective existed.
    const std::string v = r->as_choice({"none", "selective", "full", "true", "false"});
    c.recompute = v == "selective"             ? Recompute::Selective
                  : v == "full" || v == "true" ? Recompute::Full
                                               : Recompute::None;
  }
  if (const ArgNode* mods = job.find("recompute_modules")) {
    // Megatron-Core reads the list with recompute_granularity selective only.
    if (job.has("recompute") && c.recompute != Recompute::Selective)
      mods->fail(
          fmt::format("needs recompute: selective (recompute is {})", to_string(c.recompute)));
    c.recompute = Recompute::Selective;
    c.recompute_modules = parse_recompute_modules(*mods);
  }
  if (const ArgNode* pr = job.find("precision")) {
    const std::string v = pr->as_choice({"bf16", "fp8", "fp4"});
    c.precision = v == "fp8" ? Precision::Fp8 : v == "fp4" ? Precision::Fp4 : Precision::Bf16;
    c.precision_field = pr->path();
    c.precision_where = pr->where();
  }
  c.moe_imbalance = job.get_double("moe_imbalance", 1.0, 1.0, 1 << 16);
  if (const ArgNode* bucket = job.find("bucket")) c.bucket = bucket->as_bytes();
  c.overlap_dp = job.get_bool("overlap_dp", true);
  c.embedding_in_pipeline_split = job.get_bool("account_for_embedding_in_pipeline_split", false);
  c.lora_rank = static_cast<std::uint32_t>(job.get_int("lora_rank", 0, 0, 1 << 16));
  if (const ArgNode* t = job.find("lora_targets"))
    c.lora_mlp = t->as_choice({"attention", "attention_mlp"}) == "attention_mlp";
  c.loss_in_pipeline_split = job.get_bool("account_for_loss_in_pipeline_split", false);
  c.grad_reduce_in_fp32 = job.get_bool("grad_reduce_in_fp32", true);
  if (const ArgNode* opt = job.find("optimizer")) c.bf16_moments = parse_bf16_moments(*opt);
  if (const ArgNode* a = job.find("attention_kernel"))
    c.unfused_attention = a->as_choice({"flash", "unfused"}) == "unfused";
  if (const ArgNode* pipe = job.find("pipeline"))
    c.pipeline = pipe->as_choice({"1f1b", "dualpipe"}) == "dualpipe" ? PipelineSchedule::DualPipe
                                                                     : PipelineSchedule::OneFOneB;
  c.tp_comm_overlap = job.get_bool("tp_comm_overlap", false);
  c.tp_comm_overlap_sms =
      static_cast<std::uint32_t>(job.get_int("tp_comm_overlap_sms", 16, 0, 1 << 16));
  if (job.find("tp_comm_overlap_sms") && !c.tp_comm_overlap)
    job.at("tp_comm_overlap_sms").fail("needs tp_comm_overlap: true");
  c.communication_sms = static_cast<std::uint32_t>(job.get_int("communication_sms", 0, 0, 1 << 16));
  if (c.communication_sms > 0 && c.pipeline != PipelineSchedule::DualPipe) {
    job.at("communication_sms")
        .fail("needs pipeline: dualpipe (its all-to-all is the only one run beside compute)");
  }
  // Megatron-LM asserts it: userbuffers overlap the sequence-parallel all-gather and
  // reduce-scatter, not the all-reduce of tensor parallelism alone (arguments.py).
  if (c.tp_comm_overlap && p.tp > 1 && !p.sequence_parallel) {
    job.at("tp_comm_overlap")
        .fail(
            "needs sequence_parallel: true (Megatron-LM overlaps the "
            "sequence-parallel all-gather and reduce-scatter only)");
  }
  c.overlap_param_gather = job.get_bool("overlap_param_gather", false);
  c.optimizer_step = job.get_bool("optimizer_step", true);
  c.clip_grad = job.get_double("clip_grad", 1.0, 0, 1e30);
  c.jitter = parse_spec_list(
      job.find("jitter"), [](const ArgNode& n) { return parse_jitter(n.text(), n.path()); },
      "normal:5%");
  c.faults = parse_faults(job.find("faults"));
  c.link_jitter = job.get_double("link_jitter", 0, 0, 10);
  c.trials = get_u32(job, "trials", 1, 1'000'000);
  c.seed = static_cast<std::uint64_t>(job.get_int("seed", 1, 0, INT64_MAX));
  c.gpu_hour_usd = job.get_double("gpu_hour_usd", c.gpu_hour_usd, 0, 1e6);
  if (const ArgNode* engine = job.find("engine")) {
    c.engine = engine->as_choice({"flow", "analytical", "packet"});
  }
  if (const ArgNode* e = job.find("expansion")) {
    const std::string v = e->as_choice({"auto", "reduced", "full"});
    c.expansion = v == "full"      ? Expansion::Full
                  : v == "reduced" ? Expansion::Reduced
                                   : Expansion::Auto;
  }
  c.trace_path = job.get_string("trace", "");
  if (const ArgNode* tr = job.find("trace_ranks")) {
    try {
      c.trace_ranks = parse_rank_list(tr->text(), tr->path());
    } catch (const InputError& e) {
      tr->fail(e.bare_message());
    }
  }
  if (const ArgNode* d = job.find("trace_detail"))
    c.trace_ops = d->as_choice({"layer", "op"}) == "op";
  job.check_all_used();
  // tp x cp x pp x dp must match the cluster: a mismatch is reported at dp (or the job).
  if (const ArgNode* dp = job.find("dp")) {
    c.world_field = dp->path();
    c.world_where = dp->where();
  } else {
    c.world_field = job.path().empty() ? "dp" : job.path();
    c.world_where = job.where();
  }

  // Checks that need only the config (the topology-dependent ones live in simulate_training).
  auto fail = [&](const char* key, const std::string& why) {
    const ArgNode* n = job.find(key);
    if (n) n->fail(why);
    throw InputError(job.path().empty() ? key : job.path() + "." + key, why, job.where());
  };
  const std::uint64_t per_replica = c.global_batch / p.dp;
  if (c.global_batch % p.dp != 0) {
    fail("global_batch",
         fmt::format("{} sequences do not split evenly over dp={} replicas", c.global_batch, p.dp));
  }
  if (per_replica % c.micro_batch != 0) {
    fail("micro_batch", fmt::format("{} sequences per replica are not a multiple of micro_batch {}",
                                    per_replica, c.micro_batch));
  }
  // Token counts are products of job and model sizes: bounded so that none wraps around. 2^40
  // tokens per iteration is 65,536 times Llama 3 405B's 16M (Dubey et al. 2024, section 3.4.1);
  // a micro-batch's keys and values (the context-parallel block) must fit 2^62 bytes.
  const ArgNode* seq_node = job.find("seq");
  if (seq_node == nullptr && job.at("model").kind() == ArgNode::Kind::Map)
    seq_node = job.at("model").find("seq");
  auto fail_tokens = [&](const std::string& why) {
    if (seq_node) seq_node->fail(why);
    fail("global_batch", why);
  };
  const long double seq = static_cast<long double>(c.sequence_length());
  const long double tokens = static_cast<long double>(c.global_batch) * seq;
  if (tokens > 0x1p40L) {
    fail_tokens(
        fmt::format("{} sequences of {} tokens make {:.3g} tokens per iteration, over "
                    "lockstep's limit of 2^40",
                    c.global_batch, c.sequence_length(), static_cast<double>(tokens)));
  }
  const long double kv_bytes =
      static_cast<long double>(c.micro_batch) * seq * 2 * c.model.kv_heads *
      static_cast<long double>(c.model.qk_head_size() + c.model.v_head_size());
  if (kv_bytes > 0x1p62L) {
    fail_tokens(fmt::format("a micro-batch's keys and values would take {:.3g} bytes",
                            static_cast<double>(kv_bytes)));
  }
  if (job.has("lora_targets") && c.lora_rank == 0)
    fail("lora_targets", "needs lora_rank (the adapters' rank, e.g. 16)");
  // The kernel model prices every GEMM's weight gradient; LoRA's frozen base has none.
  if (c.lora_rank > 0 && c.efficiency == 0)
    fail("lora_rank",
         "needs a single efficiency (the kernel model prices the base's weight "
         "gradients)");
  if (c.unfused_attention && c.efficiency != 0)
    fail("attention_kernel", "unfused needs efficiency: kernels (the kernel model prices it)");
  const std::uint32_t vstages = p.pp * p.interleave;
  if (c.embedding_in_pipeline_split || c.loss_in_pipeline_split) {
    // Megatron-LM asserts an even split when either counts as a layer (arguments.py).
    const std::uint64_t units = c.model.layers + (c.embedding_in_pipeline_split ? 1 : 0) +
                                (c.loss_in_pipeline_split ? 1 : 0);
    if (units % vstages != 0) {
      fail(c.embedding_in_pipeline_split ? "account_for_embedding_in_pipeline_split"
                                         : "account_for_loss_in_pipeline_split",
           fmt::format("{} layers with the embedding / loss make {} units, which do not split "
                       "evenly over pp={} x interleave={} = {} virtual stages",
                       c.model.layers, units, p.pp, p.interleave, vstages));
    }
  } else if (c.model.layers < vstages) {
    fail("pp", fmt::format("{} layers cannot fill pp={} x interleave={} stages", c.model.layers,
                           p.pp, p.interleave));
  }
  if (p.interleave > 1 && p.pp < 2) {
    fail("interleave", "interleaving needs pipeline parallelism (pp > 1)");
  }
  // Megatron-Core runs micro-batches through the chunks in groups of N
  // (microbatch_group_size_per_vp_stage, default pp) and refuses N outside [pp, M] (schedules.py,
  // forward_backward_pipelining_with_interleaving: a ValueError). Below pp its warm-up of
  // (pp - s - 1) x 2 + (v - 1) x N deadlocks: with pp 4, v 2, N 2 stage 0 warms up through
  // micro-batch 3's chunk 1, which needs stage 3's chunk 0 of it, which stage 3 runs after a
  // backward that waits for stage 0's first (docs/training.md). The Llama 3 paper's schedule
  // allows N below pp (arXiv:2407.21783, section 3.3.2) but does not publish its order. It also
  // runs "fewer micro-batches than the number of stages": lockstep takes them as one group, N =
  // m (the breadth-first schedule, N = M in the paper's words) with Megatron-Core's warm-up,
  // which never deadlocks there (docs/training.md).
  if (group_given && p.interleave < 2)
    fail(group_key, "groups micro-batches over model chunks: needs interleave > 1");
  const bool few = p.interleave > 1 && c.micro_batches() < p.pp;
  const auto m = static_cast<std::uint32_t>(std::min<std::uint64_t>(c.micro_batches(), p.pp));
  const std::uint32_t n = group_given ? p.microbatch_group : few ? m : p.pp;
  if (few && n < m) {
    fail(group_key, fmt::format("{} is below the {} micro-batches per replica: with fewer than pp "
                                "({}) they run as one group (N = {})",
                                n, m, p.pp, m));
  }
  if (p.interleave > 1 && !few && n < p.pp) {
    fail(group_key, fmt::format("{} is below pp ({}): Megatron-Core's interleaved schedule needs "
                                "N in [pp, micro-batches per replica]",
                                n, p.pp));
  }
  if (p.interleave > 1 && c.micro_batches() < n) {
    fail(group_key, fmt::format("a group of {} micro-batches is more than the {} per replica", n,
                                c.micro_batches()));
  }
  // and a last group of 0 < M mod N < pp micro-batches: "it introduces dependency bubbles"
  // (schedules.py raises a RuntimeError; lockstep's programs deadlock on it).
  const std::uint64_t rest = c.micro_batches() % n;
  if (p.interleave > 1 && rest > 0 && rest < p.pp) {
    if (!group_given) {
      fail(
          "interleave",
          fmt::format("{} micro-batches per replica are not a multiple of pp ({}): Megatron-Core's "
                      "interleaved schedule refuses a last group of {}",
                      c.micro_batches(), p.pp, rest));
    }
    fail(group_key,
         fmt::format("{} micro-batches per replica leave a last group of {} (N = {}), fewer than "
                     "pp ({}): Megatron-Core's interleaved schedule refuses it",
                     c.micro_batches(), rest, n, p.pp));
  }
  p.microbatch_group = n;
  // DualPipe feeds half the micro-batches from each end of pp / 2 rank pairs; DeepSeek's
  // dualpipe.py (DualPipe.step) asserts an even rank count and an even micro-batch count of at
  // least 2 pp, which its steady phase needs (m / 2 - pp + 1 rounds on the end ranks).
  if (c.pipeline == PipelineSchedule::DualPipe) {
    if (p.pp < 2 || p.pp % 2 != 0)
      fail("pipeline", fmt::format("dualpipe needs an even pp of 2 or more, got pp={}", p.pp));
    if (p.interleave > 1) fail("pipeline", "dualpipe has no interleaved chunks (interleave 1)");
    if (c.micro_batches() < 2 * p.pp || c.micro_batches() % 2 != 0)
      fail("pipeline",
           fmt::format("dualpipe needs an even number of micro-batches per replica, at least 2 "
                       "x pp ({}), got {}",
                       2 * p.pp, c.micro_batches()));
  }
  // Megatron-LM splits each sequence into 2 x cp chunks and gives rank r chunks r and
  // 2cp - 1 - r, so that causal attention's work balances (get_batch_on_this_cp_rank).
  if (p.cp > 1 && c.sequence_length() % (2 * p.cp) != 0) {
    fail("cp", fmt::format("a sequence of {} tokens does not split into 2 x cp = {} chunks",
                           c.sequence_length(), 2 * p.cp));
  }
  if (c.model.heads % p.tp != 0) {
    fail("tp", fmt::format("{} attention heads do not split over tp={}", c.model.heads, p.tp));
  }
  if (p.etp > 0 && !c.model.is_moe()) fail("etp", "expert tensor parallelism needs an MoE model");
  // Megatron-Core's MoE parallel folding: the expert layers' ETP x EP x EDP takes the same ranks
  // as the attention's TP x CP x DP (parallel_state.py raises when ETP x EP x PP does not divide
  // the world size).
  // Lockstep lays each expert TP group inside one attention TP group (etp consecutive ranks, so
  // that its collectives stay on the TP group's links): etp must divide tp. Megatron-Core's
  // folding would also take etp above tp or not dividing it; those are refused here.
  if (p.etp > 0 && p.tp % p.etp != 0) {
    fail("etp", fmt::format("etp={} does not divide tp={}: lockstep lays each expert TP group "
                            "inside one attention TP group",
                            p.etp, p.tp));
  }
  // The routed experts of an expert TP below tp take each rank's sequence-parallel shard of the
  // tokens; Megatron-LM asserts sequence parallelism for MoE layers under TP anyway.
  if (p.expert_tp() != p.tp && !p.sequence_parallel)
    fail("etp", fmt::format("etp={} below tp={} needs sequence_parallel", p.etp, p.tp));
  if (p.ep > 1 || p.etp > 0) {
    if (!c.model.is_moe()) fail("ep", "expert parallelism needs an MoE model (experts > 0)");
    const std::uint32_t folded = p.tp * p.replicas(), expert = p.expert_tp() * p.ep;
    if (folded % expert != 0) {
      fail(p.etp > 0 ? "etp" : "ep",
           fmt::format("ep={} x etp={} = {} does not divide tp x cp x dp = {} x {} x {} = {}: "
                       "the expert layers fold ETP x EP x EDP over the attention's TP x CP x DP",
                       p.ep, p.expert_tp(), expert, p.tp, p.cp, p.dp, folded));
    }
    if (c.model.experts % p.ep != 0) {
      fail("ep", fmt::format("{} experts do not split over ep={}", c.model.experts, p.ep));
    }
  }
  // The busiest of ep ranks receives at most every token: ep times the mean.
  if (c.moe_imbalance > p.ep) {
    const ArgNode* imbalance = job.find("moe_imbalance");
    imbalance->fail(
        fmt::format("{:g} exceeds ep={}: the busiest of ep ranks gets at most ep times "
                    "the mean tokens",
                    c.moe_imbalance, p.ep));
  }
  return c;
}

}  // namespace lockstep
