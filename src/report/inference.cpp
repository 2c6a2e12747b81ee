#include "lockstep/report/inference.hpp"

#include <fmt/format.h>

namespace lockstep::report {
namespace {

using json = nlohmann::ordered_json;

std::string ms(double s) {
  return fmt::format("{:.3f} ms", s * 1e3);
}

std::string layout(const InferenceConfig& c) {
  std::string s = c.attention_dp > 1 ? fmt::format("attention tp {} x dp {}", c.tp, c.attention_dp)
                                     : fmt::format("tp {} x pp {}", c.tp, c.pp);
  if (c.attention_dp > 1 && c.dp_balance != DpBalance::RoundRobin)
    s += fmt::format(" ({} over the groups)", to_string(c.dp_balance));
  if (c.ep > 1) s += fmt::format(", ep {}", c.ep);
  if (c.expert_skew > 0) s += fmt::format(", expert skew {:g}", c.expert_skew);
  if (c.eplb) s += fmt::format(", EPLB +{} redundant experts", c.redundant_experts);
  if (c.disaggregated()) {
    s += fmt::format("; {} prefill + {} decode replicas ({} + {} GPUs)", c.prefill_replicas(),
                     c.decode_replicas(), c.prefill_gpus, c.decode_gpus);
  } else {
    s += fmt::format(" x {} replicas", c.replicas);
  }
  return s;
}

json percentiles(const Percentiles& p) {
  return json{{"p50", p.p50}, {"p90", p.p90}, {"p99", p.p99}, {"mean", p.mean}, {"max", p.max}};
}

json step(const StepCost& s) {
  return json{{"seconds", s.seconds},
              {"compute_s", s.compute},
              {"tp_s", s.tp},
              {"ep_s", s.ep},
              {"pp_s", s.pp},
              {"flops_per_gpu", s.flops},
              {"hbm_bytes_per_gpu", s.hbm_bytes}};
}

}  // namespace

std::string format_inference_text(const InferenceResult& r, const InferenceConfig& c) {
  std::string out;
  auto line = [&](const std::string& s) { out += s + "\n"; };
  line(fmt::format("# lockstep serve: {} on {} x {}, engine {}", r.model, r.gpus, r.gpu, r.engine));
  line(fmt::format("layout             {}, {}", layout(c), to_string(c.precision)));
  line(fmt::format("requests           {} of prompt {} and output {} tokens, {}", r.requests,
                   c.prompt.text, c.output.text,
                   c.rate > 0 ? fmt::format("Poisson at {:g} req/s", c.rate)
                              : fmt::format("closed loop of {} clients", c.concurrency)));
  line(fmt::format(
      "batching           {}, max_batch {}, {} prompt tokens per prefill step{} "
      "(mean decode batch {})",
      r.policy, c.max_batch, c.max_prefill_tokens,
      c.max_partial_prefills > 1 ? fmt::format(", {} prompts at once", c.max_partial_prefills) : "",
      r.mean_decode_batch));
  line(
      fmt::format("memory per GPU     weights {:.1f} GiB, KV cache {:.1f} GiB free ({} tokens "
                  "per replica), {} preemptions",
                  r.weight_gib_per_gpu, r.kv_gib_free_per_gpu, r.kv_token_capacity, r.preemptions));
  if (!r.groups.empty()) {
    line(fmt::format("{:<22} {:>12} {:>9} {:>9} {:>11} {:>10} {:>9}", "KV cache and queue",
                     "cache tokens", "KV mean", "KV peak", "queue mean", "queue max", "admitted"));
    for (const GroupUsage& g : r.groups) {
      line(fmt::format("{:<22} {:>12} {:>8.1f}% {:>8.1f}% {:>11.2f} {:>10} {:>9}",
                       fmt::format("  replica {} group {}", g.replica, g.group),
                       g.kv_token_capacity, 100 * g.kv_utilisation_mean,
                       100 * g.kv_utilisation_peak, g.queue_depth_mean, g.queue_depth_max,
                       g.admitted));
    }
  }
  line("");
  const StepCost& d = r.decode_batch1;
  line(fmt::format("decode, batch 1    {} per token (compute {}, TP {}, EP {}, PP {})",
                   ms(d.seconds), ms(d.compute), ms(d.tp), ms(d.ep), ms(d.pp)));
  const StepCost& p = r.prefill_one;
  line(fmt::format("prefill, 1 prompt  {} (compute {}, TP {}, EP {}, PP {})", ms(p.seconds),
                   ms(p.compute), ms(p.tp), ms(p.ep), ms(p.pp)));
  if (!r.decode_all_reduce.picked.empty()) {
    std::string alts;
    for (const auto& [name, s] : r.decode_all_reduce.algorithms)
      alts += fmt::format("{}{} {:.2f} us", alts.empty() ? "" : ", ", name, s * 1e6);
    line(fmt::format("TP all-reduce      {} B: {} {:.2f} us (NCCL's pick; {})",
                     r.decode_all_reduce.bytes, r.decode_all_reduce.picked,
                     r.decode_all_reduce.seconds * 1e6, alts));
  }
  line("");
  line(fmt::format("{:<18} {:>12} {:>12} {:>12} {:>12}", "latency", "p50", "p90", "p99", "mean"));
  auto row = [&](const char* name, const Percentiles& q) {
    line(fmt::format("{:<18} {:>12} {:>12} {:>12} {:>12}", name, ms(q.p50), ms(q.p90), ms(q.p99),
                     ms(q.mean)));
  };
  row("TTFT", r.ttft);
  row("TPOT", r.tpot);
  row("end to end", r.e2e);
  line("");
  line(fmt::format("makespan           {:.3f} s", r.makespan));
  line(
      fmt::format("throughput         {:.0f} output tokens/s ({:.1f} per GPU), {:.0f} tokens/s "
                  "with prompts, {:.2f} requests/s",
                  r.output_tokens_per_s, r.output_tokens_per_s_per_gpu, r.total_tokens_per_s,
                  r.requests_per_s));
  line(
      fmt::format("GPU time           {:.1f}% in steps: {:.1f}% kernels, {:.1f}% communication; "
                  "MFU {:.1f}% (of the BF16 peak), HBM {:.1f}% of peak",
                  100 * r.gpu_busy, 100 * r.compute_share, 100 * r.network_share, 100 * r.mfu,
                  100 * r.hbm_utilisation));
  line(
      fmt::format("cost               ${:.3f} per million output tokens at ${:.2f}/GPU-hour, "
                  "{:.2f} kWh at TDP",
                  r.cost_per_million_tokens_usd, c.gpu_hour_usd, r.energy_kwh_per_million_tokens));
  for (const std::string& w : r.warnings) line("warning: " + w);
  return out;
}

json inference_to_json(const InferenceResult& r, const InferenceConfig& c) {
  json j;
  j["model"] = r.model;
  j["gpu"] = r.gpu;
  j["gpus"] = r.gpus;
  j["engine"] = r.engine;
  j["policy"] = r.policy;
  j["tp"] = c.tp;
  j["pp"] = c.pp;
  j["ep"] = c.ep;
  j["replicas"] = c.disaggregated() ? c.prefill_replicas() + c.decode_replicas() : c.replicas;
  j["precision"] = to_string(c.precision);
  j["max_batch"] = c.max_batch;
  j["max_prefill_tokens"] = c.max_prefill_tokens;
  j["max_partial_prefills"] = c.max_partial_prefills;
  j["requests"] = r.requests;
  j["prompt_tokens"] = r.prompt_tokens;
  j["output_tokens"] = r.output_tokens;
  j["makespan_s"] = r.makespan;
  j["ttft_s"] = percentiles(r.ttft);
  j["tpot_s"] = percentiles(r.tpot);
  j["e2e_s"] = percentiles(r.e2e);
  j["output_tokens_per_s"] = r.output_tokens_per_s;
  j["output_tokens_per_s_per_gpu"] = r.output_tokens_per_s_per_gpu;
  j["total_tokens_per_s"] = r.total_tokens_per_s;
  j["requests_per_s"] = r.requests_per_s;
  j["gpu_busy"] = r.gpu_busy;
  j["compute_share"] = r.compute_share;
  j["network_share"] = r.network_share;
  j["mfu"] = r.mfu;
  j["hbm_utilisation"] = r.hbm_utilisation;
  j["cost_per_million_tokens_usd"] = r.cost_per_million_tokens_usd;
  j["energy_kwh_per_million_tokens"] = r.energy_kwh_per_million_tokens;
  j["weight_gib_per_gpu"] = r.weight_gib_per_gpu;
  j["kv_gib_free_per_gpu"] = r.kv_gib_free_per_gpu;
  j["kv_token_capacity"] = r.kv_token_capacity;
  j["preemptions"] = r.preemptions;
  j["mean_decode_batch"] = r.mean_decode_batch;
  json groups = json::array();
  for (const GroupUsage& g : r.groups) {
    groups.push_back(json{{"replica", g.replica},
                          {"group", g.group},
                          {"kv_token_capacity", g.kv_token_capacity},
                          {"kv_utilisation_mean", g.kv_utilisation_mean},
                          {"kv_utilisation_peak", g.kv_utilisation_peak},
                          {"queue_depth_mean", g.queue_depth_mean},
                          {"queue_depth_max", g.queue_depth_max},
                          {"admitted", g.admitted}});
  }
  j["groups"] = groups;
  j["decode_batch1"] = step(r.decode_batch1);
  j["prefill_one"] = step(r.prefill_one);
  json ar{{"bytes", r.decode_all_reduce.bytes},
          {"picked", r.decode_all_reduce.picked},
          {"seconds", r.decode_all_reduce.seconds}};
  json algos = json::array();
  for (const auto& [name, s] : r.decode_all_reduce.algorithms)
    algos.push_back(json{{"name", name}, {"seconds", s}});
  ar["algorithms"] = algos;
  j["decode_all_reduce"] = ar;
  j["warnings"] = r.warnings;
  return j;
}

std::string inference_trace_json(const InferenceResult& r) {
  // The head matches training's (report::is_lockstep_trace reads it).
  std::string out = "{\"otherData\":{\"generator\":\"lockstep\",";
  out += fmt::format("\"model\":{},\"gpus\":{}}},\n\"displayTimeUnit\":\"ns\",\n\"traceEvents\":[",
                     json(r.model).dump(), r.gpus);
  std::uint32_t replicas = 0;
  for (const StepRecord& s : r.steps) replicas = std::max(replicas, s.replica + 1);
  bool first = true;
  auto event = [&](const std::string& e) {
    out += first ? "\n" : ",\n";
    out += e;
    first = false;
  };
  for (std::uint32_t i = 0; i < replicas; ++i) {
    event(fmt::format(
        "{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{},\"tid\":0,\"args\":{{\"name\":"
        "\"replica {}\"}}}}",
        i, i));
  }
  for (const StepRecord& s : r.steps) {
    event(fmt::format(
        "{{\"ph\":\"X\",\"name\":\"{}\",\"cat\":\"{}\",\"pid\":{},\"tid\":0,\"ts\":{:.6f},"
        "\"dur\":{:.6f},\"args\":{{\"batch\":{},\"tokens\":{}}}}}",
        s.prefill ? "prefill" : "decode", s.prefill ? "prefill" : "decode", s.replica,
        s.start * 1e6, (s.end - s.start) * 1e6, s.batch, s.tokens));
  }
  out += "\n]}\n";
  return out;
}

}  // namespace lockstep::report
