// `job: {type: inference}`: the model, its parallel layout, the request mix, the batching policy
// and the cluster's pools, read and checked as training's job is (docs/scenario-job.md).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "lockstep/config/arg_node.hpp"
#include "lockstep/config/spec_text.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/workload/inference.hpp"

namespace lockstep {
namespace {

constexpr std::int64_t kMaxTokens = std::int64_t{1} << 24;  // 16M tokens: past any context

std::uint64_t parse_count(std::string_view s, const ArgNode& node) {
  std::uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || v < 1 ||
      v > static_cast<std::uint64_t>(kMaxTokens)) {
    node.fail(fmt::format("expected a token count (1 to {}) or uniform:LO-HI, got '{}'", kMaxTokens,
                          node.text()));
  }
  return v;
}

// `512` or `uniform:128-1024`.
LengthSpec parse_length(const ArgNode& node) {
  if (node.kind() != ArgNode::Kind::Scalar) node.fail("expected a token count or uniform:LO-HI");
  LengthSpec l;
  l.text = node.text();
  const std::string_view t = node.text();
  constexpr std::string_view kUniform = "uniform:";
  if (t.substr(0, kUniform.size()) == kUniform) {
    const std::string_view range = t.substr(kUniform.size());
    const auto dash = range.find('-');
    if (dash == std::string_view::npos) node.fail("expected uniform:LO-HI, e.g. uniform:128-1024");
    l.lo = parse_count(range.substr(0, dash), node);
    l.hi = parse_count(range.substr(dash + 1), node);
    if (l.hi < l.lo) node.fail(fmt::format("'{}': HI is below LO", node.text()));
  } else {
    l.lo = l.hi = parse_count(t, node);
  }
  return l;
}

std::uint32_t get_u32(const ArgNode& n, const char* key, std::uint32_t fallback,
                      std::uint32_t max) {
  return static_cast<std::uint32_t>(n.get_int(key, fallback, 1, max));
}

// The expert-load keys against the layout: they describe the experts of an EP group, so they
// need ep > 1; EPLB needs whole GPUs' worth of physical experts (its num_replicas % num_gpus);
// a token picks an expert at most once, so no expert takes more than 1 / top_k of the slots.
template <class Fail>
void check_expert_load(const InferenceConfig& c, Fail fail) {
  if (c.ep < 2) {
    const char* why = "describes the experts of an expert-parallel group: needs ep > 1";
    if (c.expert_skew > 0) fail("expert_skew", why);
    if (c.redundant_experts > 0) fail("redundant_experts", why);
    if (c.eplb) fail("expert_placement", why);
    return;
  }
  if (c.redundant_experts > 0 && !c.eplb)
    fail("redundant_experts",
         "replicas are placed by EPLB: expert_placement: eplb (or leave it out)");
  if ((c.model.experts + c.redundant_experts) % c.ep != 0)
    fail("redundant_experts",
         fmt::format("{} experts + {} replicas do not fill the ep={} GPUs evenly (EPLB places "
                     "the same number on each)",
                     c.model.experts, c.redundant_experts, c.ep));
  double harmonic = 0;
  for (std::uint32_t i = 1; i <= c.model.experts; ++i) harmonic += std::pow(i, -c.expert_skew);
  if (c.model.top_k * (1 / harmonic) > 1)
    fail("expert_skew",
         fmt::format("{} gives the hottest expert {:.3f} of the slots, above 1 / top_k = {:.3f} "
                     "(a token picks an expert once)",
                     c.expert_skew, 1 / harmonic, 1.0 / c.model.top_k));
}

}  // namespace

const std::vector<std::string>& inference_job_keys() {
  static const std::vector<std::string> keys = {"type",
                                                "model",
                                                "tp",
                                                "pp",
                                                "ep",
                                                "expert_skew",
                                                "redundant_experts",
                                                "expert_placement",
                                                "attention_dp",
                                                "dp_balance",
                                                "replicas",
                                                "precision",
                                                "requests",
                                                "batching",
                                                "disaggregated",
                                                "gpu_memory_utilization",
                                                "jitter",
                                                "faults",
                                                "seed",
                                                "gpu_hour_usd",
                                                "engine",
                                                "trace"};
  return keys;
}

bool is_inference_job(const ArgNode& job) {
  const ArgNode* type = job.kind() == ArgNode::Kind::Map ? job.find("type") : nullptr;
  return type != nullptr && type->kind() == ArgNode::Kind::Scalar && type->text() == "inference";
}

const char* to_string(BatchPolicy p) {
  return p == BatchPolicy::Static ? "static" : p == BatchPolicy::Chunked ? "chunked" : "continuous";
}

const char* to_string(DpBalance b) {
  return b == DpBalance::ShortestQueue ? "shortest_queue" : "round_robin";
}

InferenceConfig parse_inference_config(const ArgNode& job) {
  if (job.kind() != ArgNode::Kind::Map) job.fail("expected a map of job settings");
  InferenceConfig c;
  // Unknown keys first: a training job's keys (dp, global_batch ...) under `type: inference`
  // are named before a missing `requests:` is.
  for (const std::string& key : job.keys()) {
    if (std::find(inference_job_keys().begin(), inference_job_keys().end(), key) ==
        inference_job_keys().end()) {
      const ArgNode& n = job.at(key);
      throw InputError(n.path(),
                       fmt::format("unknown key '{}' (an inference job takes {})", key,
                                   fmt::join(inference_job_keys(), ", ")),
                       n.where());
    }
  }
  job.find("type");
  c.model = parse_model(job.at("model"));
  c.tp = get_u32(job, "tp", 1, 1 << 16);
  c.pp = get_u32(job, "pp", 1, 1 << 16);
  c.ep = get_u32(job, "ep", 1, 1 << 16);
  c.attention_dp = get_u32(job, "attention_dp", 1, 1 << 16);
  if (const ArgNode* b = job.find("dp_balance")) {
    c.dp_balance = b->as_choice({"round_robin", "shortest_queue"}) == "shortest_queue"
                       ? DpBalance::ShortestQueue
                       : DpBalance::RoundRobin;
  }
  c.expert_skew = job.get_double("expert_skew", 0, 0, 10);
  c.redundant_experts =
      static_cast<std::uint32_t>(job.get_int("redundant_experts", 0, 0, std::int64_t{1} << 20));
  c.eplb = c.redundant_experts > 0;
  if (const ArgNode* pl = job.find("expert_placement"))
    c.eplb = pl->as_choice({"contiguous", "eplb"}) == "eplb";
  c.replicas = get_u32(job, "replicas", 1, 1 << 24);
  if (const ArgNode* pr = job.find("precision")) {
    const std::string v = pr->as_choice({"bf16", "fp8", "fp4"});
    c.precision = v == "fp8" ? Precision::Fp8 : v == "fp4" ? Precision::Fp4 : Precision::Bf16;
  }

  const ArgNode& req = job.at("requests");
  if (req.kind() != ArgNode::Kind::Map) req.fail("expected a map: prompt, output, rate, count");
  c.prompt = parse_length(req.at("prompt"));
  c.output = parse_length(req.at("output"));
  const ArgNode* rate = req.find("rate");
  const ArgNode* conc = req.find("concurrency");
  if ((rate == nullptr) == (conc == nullptr)) {
    (rate ? *rate : req)
        .fail("give one of rate (requests/s, Poisson) or concurrency (closed loop)");
  }
  if (rate) c.rate = rate->as_double(1e-6, 1e9);
  if (conc) c.concurrency = static_cast<std::uint32_t>(conc->as_int(1, 1 << 20));
  c.count = static_cast<std::uint64_t>(req.get_int("count", 1000, 1, 1'000'000));
  req.check_all_used();

  c.max_batch = 256;  // vLLM's max_num_seqs default
  if (const ArgNode* b = job.find("batching")) {
    if (b->kind() != ArgNode::Kind::Map)
      b->fail(
          "expected a map: max_batch, max_prefill_tokens, policy, max_partial_prefills, "
          "kv_cache_tokens");
    if (const ArgNode* m = b->find("max_batch"))
      c.max_batch = static_cast<std::uint32_t>(m->as_int(1, 1 << 20));
    c.max_prefill_tokens =
        static_cast<std::uint64_t>(b->get_int("max_prefill_tokens", 0, 1, kMaxTokens));
    if (const ArgNode* p = b->find("policy")) {
      const std::string policy = p->as_choice({"static", "continuous", "chunked"});
      c.policy = policy == "static"    ? BatchPolicy::Static
                 : policy == "chunked" ? BatchPolicy::Chunked
                                       : BatchPolicy::Continuous;
    }
    if (const ArgNode* n = b->find("max_partial_prefills")) {
      c.max_partial_prefills = static_cast<std::uint32_t>(n->as_int(1, 1 << 20));
      if (c.policy != BatchPolicy::Chunked)
        n->fail("several partial prefills need policy: chunked (vLLM's max_num_partial_prefills)");
    }
    // vLLM's num_gpu_blocks_override (x its 16-token blocks): the KV cache's size in tokens
    // instead of what HBM leaves, to study preemption.
    c.kv_cache_tokens =
        static_cast<std::uint64_t>(b->get_int("kv_cache_tokens", 0, 1, std::int64_t{1} << 40));
    b->check_all_used();
  }
  if (const ArgNode* d = job.find("disaggregated")) {
    if (d->kind() != ArgNode::Kind::Map) d->fail("expected a map: prefill_gpus, decode_gpus");
    c.prefill_gpus = static_cast<std::uint32_t>(d->at("prefill_gpus").as_int(1, 1 << 24));
    c.decode_gpus = static_cast<std::uint32_t>(d->at("decode_gpus").as_int(1, 1 << 24));
    d->check_all_used();
    for (const char* key : {"prefill_gpus", "decode_gpus"}) {
      const ArgNode& n = d->at(key);
      if (static_cast<std::uint64_t>(n.as_int(1, 1 << 24)) % c.replica_gpus() != 0) {
        n.fail(fmt::format("{} GPUs are not whole replicas of tp x pp = {}", n.text(),
                           c.replica_gpus()));
      }
    }
    if (job.find("replicas")) {
      job.at("replicas")
          .fail("a disaggregated job sizes its pools by prefill_gpus and decode_gpus");
    }
  }
  c.gpu_memory_utilization = job.get_double("gpu_memory_utilization", 0.9, 0.05, 1.0);
  c.jitter = parse_spec_list(
      job.find("jitter"), [](const ArgNode& n) { return parse_jitter(n.text(), n.path()); },
      "normal:5%");
  c.faults = parse_faults(job.find("faults"));
  for (const FaultSpec& f : c.faults) {
    if (f.kind != FaultSpec::Kind::SlowGpu || f.placed() || f.late) {
      throw InputError(
          f.field, fmt::format("'{}': an inference job takes slow-gpu:rank=R,x=X faults", f.text),
          f.where);
    }
  }
  c.seed = static_cast<std::uint64_t>(job.get_int("seed", 1, 0, INT64_MAX));
  c.gpu_hour_usd = job.get_double("gpu_hour_usd", c.gpu_hour_usd, 0, 1e6);
  if (const ArgNode* e = job.find("engine")) c.engine = e->as_choice({"analytical", "flow"});
  c.trace_path = job.get_string("trace", "");
  job.check_all_used();
  if (const ArgNode* r = job.find("replicas")) {
    c.world_field = r->path();
    c.world_where = r->where();
  } else {
    c.world_field = job.path().empty() ? "replicas" : job.path();
    c.world_where = job.where();
  }
  c.kv_field = c.world_field;
  c.kv_where = c.world_where;
  if (const ArgNode* b = job.find("batching"); b && b->find("kv_cache_tokens")) {
    c.kv_field = b->at("kv_cache_tokens").path();
    c.kv_where = b->at("kv_cache_tokens").where();
  }

  auto fail = [&](const char* key, const std::string& why) {
    if (const ArgNode* n = job.find(key)) n->fail(why);
    throw InputError(job.path().empty() ? key : job.path() + "." + key, why, job.where());
  };
  if (c.model.heads % c.tp != 0)
    fail("tp", fmt::format("{} attention heads do not split over tp={}", c.model.heads, c.tp));
  if (c.model.layers < c.pp)
    fail("pp", fmt::format("{} layers cannot fill pp={} stages", c.model.layers, c.pp));
  // The attention part runs on attention_dp groups of tp GPUs, each on its own sequences; the
  // routed experts on ep GPUs of the replica's tp x attention_dp (vLLM's EP over its TP group is
  // ep = tp; SGLang's DP attention with --ep-size, DeepSeek-V3's EP32 over DP8 x TP4, section
  // 3.4). Pipeline stages are not combined with DP attention here.
  const std::uint32_t moe_gpus = c.tp * c.attention_dp;
  // A dense model's attention groups would be replicas kept in step for no exchange.
  if (c.attention_dp > 1 && !c.model.is_moe())
    fail("attention_dp",
         "DP attention needs an MoE model (experts > 0); a dense model's data "
         "parallelism is replicas");
  if (c.attention_dp > 1 && c.pp > 1)
    fail("attention_dp",
         fmt::format("attention_dp={} with pp={}: DP attention is modelled without pipeline "
                     "stages (pp: 1)",
                     c.attention_dp, c.pp));
  if (c.ep > 1) {
    if (!c.model.is_moe()) fail("ep", "expert parallelism needs an MoE model (experts > 0)");
    if (moe_gpus % c.ep != 0)
      fail("ep", fmt::format("ep={} does not divide the replica's tp x attention_dp = {} x {} = {} "
                             "GPUs",
                             c.ep, c.tp, c.attention_dp, moe_gpus));
    if (c.model.experts % c.ep != 0)
      fail("ep", fmt::format("{} experts do not split over ep={}", c.model.experts, c.ep));
  }
  check_expert_load(c, fail);
  // vLLM's max_num_batched_tokens: with chunked prefill a step's token budget (2048, its default
  // with chunked prefill); without, the longest prompt a step takes whole.
  if (c.max_prefill_tokens == 0) {
    c.max_prefill_tokens =
        c.policy == BatchPolicy::Chunked ? 2048 : std::max<std::uint64_t>(c.model.seq, 2048);
  }
  // Each attention group schedules its own share of both limits (SGLang divides
  // --max-running-requests and --chunked-prefill-size by the DP size): a group needs one of each.
  if (c.attention_dp > 1) {
    const ArgNode* b = job.find("batching");
    auto refuse = [&](const char* key, std::uint64_t value) {
      const std::string why = fmt::format(
          "{}={} is below attention_dp={}: each attention group schedules {} / {} "
          "and would get none",
          key, value, c.attention_dp, key, c.attention_dp);
      if (const ArgNode* n = b ? b->find(key) : nullptr) n->fail(why);
      fail("attention_dp", why);
    };
    if (c.max_batch < c.attention_dp) refuse("max_batch", c.max_batch);
    if (c.max_prefill_tokens < c.attention_dp) refuse("max_prefill_tokens", c.max_prefill_tokens);
  }
  return c;
}

}  // namespace lockstep
