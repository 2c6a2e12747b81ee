// Reading results.json's variant records back (json.cpp writes them). Numbers are written in
// their shortest round-trip form, so each double reads back to the value written; a null number
// is a figure that was not finite and reads back as NaN (written as null again).
#include "lockstep/report/json_read.hpp"

#include <limits>

namespace lockstep::report {
namespace {

using Json = nlohmann::ordered_json;

double number(const Json& j, const char* key) {
  const Json& v = j.at(key);
  return v.is_null() ? std::numeric_limits<double>::quiet_NaN() : v.get<double>();
}

std::optional<double> optional_number(const Json& j, const char* key) {
  const Json& v = j.at(key);
  if (v.is_null()) return std::nullopt;
  return v.get<double>();
}

std::uint64_t count(const Json& j, const char* key) {
  return j.at(key).get<std::uint64_t>();
}

std::uint32_t small(const Json& j, const char* key) {
  return j.at(key).get<std::uint32_t>();
}

std::string text(const Json& j, const char* key) {
  return j.at(key).get<std::string>();
}

std::vector<std::string> strings(const Json& j, const char* key) {
  std::vector<std::string> out;
  for (const Json& s : j.at(key)) out.push_back(s.get<std::string>());
  return out;
}

std::vector<double> numbers(const Json& array) {
  std::vector<double> out;
  for (const Json& v : array) {
    out.push_back(v.is_null() ? std::numeric_limits<double>::quiet_NaN() : v.get<double>());
  }
  return out;
}

// link_to_json's record: every key is optional there (which ones depends on the engine).
LinkReport link_from_json(const Json& j) {
  LinkReport l;
  auto num = [&](const char* key, double fallback) {
    return j.contains(key) ? number(j, key) : fallback;
  };
  auto n = [&](const char* key) { return j.contains(key) ? count(j, key) : 0; };
  if (j.contains("link")) {
    l.link = j.at("link").get<DirLinkId>();
    l.name = text(j, "name");
    l.utilisation = number(j, "utilisation");
  }
  l.bytes = num("bytes", 0);
  l.wire_bytes = num("wire_bytes", 0);
  l.peak_utilisation = num("peak_utilisation", 0);
  l.peak_at = Time::us(num("peak_at_us", 0));
  l.queue_p50 = num("queue_p50_bytes", 0);
  l.queue_p99 = num("queue_p99_bytes", 0);
  l.first_sent = Time::us(num("first_sent_us", 0));
  l.last_sent = Time::us(num("last_sent_us", 0));
  l.queue_max = num("queue_max_bytes", 0);
  l.drops = n("drops");
  l.trims = n("trims");
  l.dropped_bytes = num("dropped_bytes", 0);
  l.ecn_marks = n("ecn_marks");
  l.pauses = n("pfc_pauses");
  l.paused = Time::us(num("pfc_paused_us", 0));
  l.credit_stalls = n("credit_stalls");
  l.cnps = n("cnps");
  l.retransmissions = n("retransmissions");
  return l;
}

Sweep sweep_from_json(const Json& j) {
  Sweep s;
  s.op = text(j, "op");
  s.algorithm = text(j, "algorithm");
  s.engine = text(j, "engine");
  if (j.contains("faults")) s.faults = strings(j, "faults");
  for (const Json& r : j.at("rows")) {
    SweepRow row;
    row.bytes = count(r, "bytes");
    row.count = count(r, "count");
    row.type = text(r, "type");
    row.redop = text(r, "redop");
    row.algorithm = text(r, "algorithm");
    row.protocol = text(r, "protocol");
    row.channels = small(r, "channels");
    row.time_us = number(r, "time_us");
    row.algbw_GBps = number(r, "algbw_GBps");
    row.busbw_GBps = number(r, "busbw_GBps");
    if (r.contains("links")) {
      for (const Json& l : r.at("links")) row.links.push_back(link_from_json(l));
    }
    if (r.contains("network")) row.network = link_from_json(r.at("network"));
    s.rows.push_back(std::move(row));
  }
  return s;
}

JitterStats jitter_from_json(const Json& j) {
  JitterStats s;
  s.trials = count(j, "trials");
  s.p50_us = number(j, "p50_us");
  s.p99_us = number(j, "p99_us");
  s.max_us = number(j, "max_us");
  s.mean_us = number(j, "mean_us");
  s.lockstep_waste_gpu_s = number(j, "lockstep_waste_gpu_s");
  s.lockstep_waste_usd = number(j, "lockstep_waste_usd");
  s.lockstep_waste_fraction = number(j, "lockstep_waste_fraction");
  s.lockstep_waste_per_trillion_tokens_usd = number(j, "lockstep_waste_per_trillion_tokens_usd");
  s.straggler_wait_us = number(j, "straggler_wait_us");
  s.seed = count(j, "seed");
  s.iteration_time_us = numbers(j.at("iteration_time_us"));
  return s;
}

Training training_from_json(const Json& j) {
  Training t;
  t.model = text(j, "model");
  if (j.contains("model_map")) t.model_map = j.at("model_map");
  t.parallelism = text(j, "parallelism");
  t.gpus = count(j, "gpus");
  t.iteration_time_us = number(j, "iteration_time_us");
  for (const Json& p : j.at("breakdown"))
    t.breakdown.push_back({text(p, "name"), number(p, "time_us")});
  t.mfu = number(j, "mfu");
  t.tokens_per_s = number(j, "tokens_per_s");
  t.gpu_hours_per_step = number(j, "gpu_hours_per_step");
  t.cost_per_step_usd = number(j, "cost_per_step_usd");
  t.cost_per_trillion_tokens_usd = number(j, "cost_per_trillion_tokens_usd");
  if (!j.at("jitter").is_null()) t.jitter = jitter_from_json(j.at("jitter"));
  t.engine = text(j, "engine");
  t.expansion = text(j, "expansion");
  const Json& par = j.at("parallel");
  t.parallel = {
      small(par, "tp"),         small(par, "pp"),           small(par, "dp"),
      small(par, "ep"),         small(par, "interleave"),   par.at("sequence_parallel").get<bool>(),
      small(par, "zero_stage"), par.at("fsdp").get<bool>(), small(par, "cp")};
  // Expert TP is written resolved; read back, it is left at 0 ("as tp") when it equals tp.
  if (par.contains("etp") && small(par, "etp") != t.parallel.tp) t.parallel.etp = small(par, "etp");
  const Json& group = par.at("microbatch_group_size_per_vp_stage");
  t.parallel.microbatch_group =
      group.is_null() ? 0 : small(par, "microbatch_group_size_per_vp_stage");
  t.parallel.pipeline = text(par, "pipeline");
  t.parallel.pipeline_timing = text(par, "pipeline_timing");
  t.precision = text(j, "precision");
  t.attention_kernel = text(j, "attention_kernel");
  t.optimizer_moments = text(j, "optimizer_moments");
  t.recompute = text(j, "recompute");
  if (!j.at("recompute_modules").is_null()) t.recompute_modules = text(j, "recompute_modules");
  const Json& o = j.at("options");
  TrainingOptions& opt = t.options;
  const Json& eff = o.at("efficiency");
  opt.efficiency = eff.is_string() ? 0.0 : number(o, "efficiency");
  if (!o.at("peak_tflops").is_null()) opt.peak_tflops = number(o, "peak_tflops");
  opt.tp_comm_overlap = o.at("tp_comm_overlap").get<bool>();
  if (o.contains("tp_comm_overlap_sms") && !o.at("tp_comm_overlap_sms").is_null())
    opt.tp_comm_overlap_sms = small(o, "tp_comm_overlap_sms");
  opt.overlap_dp = o.at("overlap_dp").get<bool>();
  opt.overlap_param_gather = o.at("overlap_param_gather").get<bool>();
  opt.grad_reduce_in_fp32 = o.at("grad_reduce_in_fp32").get<bool>();
  if (!o.at("bucket_bytes").is_null()) opt.bucket_bytes = count(o, "bucket_bytes");
  opt.optimizer_step = o.at("optimizer_step").get<bool>();
  opt.clip_grad = number(o, "clip_grad");
  opt.moe_imbalance = number(o, "moe_imbalance");
  opt.lora_rank = small(o, "lora_rank");
  if (!o.at("lora_targets").is_null()) opt.lora_targets = text(o, "lora_targets");
  opt.account_for_embedding_in_pipeline_split =
      o.at("account_for_embedding_in_pipeline_split").get<bool>();
  opt.account_for_loss_in_pipeline_split = o.at("account_for_loss_in_pipeline_split").get<bool>();
  opt.communication_sms = small(o, "communication_sms");
  const Json& b = j.at("batch");
  t.batch = {count(b, "global_batch"), count(b, "micro_batch"), count(b, "micro_batches"),
             count(b, "sequence_length"), count(b, "tokens_per_iteration")};
  const Json& m = j.at("memory_per_gpu");
  t.memory = {count(m, "weights_bytes"),   count(m, "gradients_bytes"),
              count(m, "optimizer_bytes"), count(m, "activations_bytes"),
              count(m, "total_bytes"),     count(m, "hbm_bytes")};
  t.gpu_hours_per_trillion_tokens = number(j, "gpu_hours_per_trillion_tokens");
  t.warnings = strings(j, "warnings");
  for (const Json& g : j.at("slow_gpus")) {
    t.slow_gpus.push_back({text(g, "fault"), number(g, "factor"), small(g, "rank"),
                           small(g, "node"), small(g, "gpu"), small(g, "stage"),
                           small(g, "replica"), small(g, "tp_rank")});
  }
  const Json& w = j.at("lockstep_waste");
  t.waste = {number(w, "gpu_s_per_step"),    number(w, "usd_per_step"),
             number(w, "fraction"),          number(w, "usd_per_trillion_tokens"),
             number(w, "gpu_hours_per_day"), number(w, "usd_per_day")};
  return t;
}

Inventory inventory_from_json(const Json& j) {
  Inventory inv;
  inv.design = text(j, "design");
  inv.gpus = count(j, "gpus");
  inv.nodes = count(j, "nodes");
  inv.nics = count(j, "nics");
  for (const Json& t : j.at("tiers")) {
    inv.tiers.push_back({text(t, "tier"), count(t, "switches"), count(t, "ports_used"),
                         count(t, "ports_free"), number(t, "oversubscription")});
  }
  // power_w and cost_usd of a line are count x unit figures, derived again when written.
  for (const Json& l : j.at("lines")) {
    inv.lines.push_back({text(l, "item"), text(l, "category"), text(l, "tier"), count(l, "count"),
                         number(l, "unit_power_w"), number(l, "unit_price_usd")});
    if (l.contains("price_note")) inv.lines.back().price_note = text(l, "price_note");
  }
  inv.cables = count(j, "cables");
  inv.transceivers = count(j, "transceivers");
  inv.ports_per_gpu = count(j, "ports_per_gpu");
  inv.injection_per_gpu = Bandwidth::gBps(number(j, "injection_per_gpu_GBps"));
  inv.bisection = Bandwidth::gBps(number(j, "bisection_GBps"));
  inv.diameter_switch_hops = small(j, "diameter_switch_hops");
  inv.max_one_way_latency = Time::us(number(j, "max_one_way_latency_us"));
  inv.power_w = number(j, "power_w");
  inv.cost_usd = number(j, "cost_usd");
  inv.feasible = j.at("feasible").get<bool>();
  inv.problems = strings(j, "problems");
  inv.graph_built = j.at("graph_built").get<bool>();
  return inv;
}

LinkHeatmap heatmap_from_json(const Json& j) {
  LinkHeatmap h;
  h.bucket_us = number(j, "bucket_us");
  h.step_us = number(j, "step_us");
  h.source = text(j, "source");
  for (const Json& l : j.at("links")) {
    h.links.push_back(text(l, "link"));
    h.utilisation.push_back(numbers(l.at("utilisation")));
  }
  return h;
}

}  // namespace

Variant variant_from_json(const Json& j) {
  Variant v;
  v.name = text(j, "name");
  for (const auto& [key, value] : j.at("substitutions").items()) {
    v.substitutions.emplace_back(key, value.get<std::string>());
  }
  v.inventory = inventory_from_json(j.at("inventory"));
  for (const Json& s : j.at("collectives")) v.sweeps.push_back(sweep_from_json(s));
  if (!j.at("training").is_null()) v.training = training_from_json(j.at("training"));
  if (j.contains("inference") && !j.at("inference").is_null()) v.inference = j.at("inference");
  if (!j.at("link_heatmap").is_null()) v.heatmap = heatmap_from_json(j.at("link_heatmap"));
  if (const Json& s = j.at("sensitivity"); !s.is_null()) {
    v.sensitivity_baseline_us = number(s, "baseline_iteration_time_us");
    for (const Json& c : s.at("cases")) {
      v.sensitivity.push_back({text(c, "case"), text(c, "description"),
                               optional_number(c, "iteration_time_us"), text(c, "note")});
    }
  }
  v.why = strings(j, "why");
  v.notes = strings(j, "notes");
  return v;
}

}  // namespace lockstep::report
