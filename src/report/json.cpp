// The JSON writer of every result kind: results.json and the commands' `--format json` print
// the same objects. ordered_json keeps keys in the order written here, so the file reads
// top-down like the report and is byte-identical for identical results.
#include "lockstep/report/json.hpp"

#include <cmath>

#include "lockstep/report/summary.hpp"

namespace lockstep::report {
namespace {

using Json = nlohmann::ordered_json;

// JSON has no NaN or infinity; a non-finite figure means "not available", which is null.
Json number(double value) {
  return std::isfinite(value) ? Json(value) : Json(nullptr);
}

Json optional_number(const std::optional<double>& value) {
  return value ? number(*value) : Json(nullptr);
}

Json strings(const std::vector<std::string>& items) {
  Json out = Json::array();
  for (const auto& s : items) out.push_back(s);
  return out;
}

Json jitter_to_json(const JitterStats& j) {
  Json samples = Json::array();
  for (double v : j.iteration_time_us) samples.push_back(number(v));
  return {
      {"trials", j.trials},
      {"p50_us", number(j.p50_us)},
      {"p99_us", number(j.p99_us)},
      {"max_us", number(j.max_us)},
      {"mean_us", number(j.mean_us)},
      {"lockstep_waste_gpu_s", number(j.lockstep_waste_gpu_s)},
      {"lockstep_waste_usd", number(j.lockstep_waste_usd)},
      {"lockstep_waste_fraction", number(j.lockstep_waste_fraction)},
      {"lockstep_waste_per_trillion_tokens_usd", number(j.lockstep_waste_per_trillion_tokens_usd)},
      {"straggler_wait_us", number(j.straggler_wait_us)},
      {"seed", j.seed},
      {"iteration_time_us", std::move(samples)}};
}

Json heatmap_to_json(const LinkHeatmap& h) {
  Json links = Json::array();
  for (std::size_t i = 0; i < h.links.size(); ++i) {
    Json series = Json::array();
    if (i < h.utilisation.size()) {
      for (double u : h.utilisation[i]) series.push_back(number(u));
    }
    links.push_back({{"link", h.links[i]}, {"utilisation", std::move(series)}});
  }
  return {{"bucket_us", number(h.bucket_us)},
          {"step_us", number(h.step_us)},
          {"source", h.source},
          {"links", std::move(links)}};
}

// null when no training step ran; else the analytical baseline and one record per case.
Json sensitivity_to_json(const Variant& v) {
  if (!v.sensitivity_baseline_us) return nullptr;
  Json cases = Json::array();
  for (const SensitivityCase& c : v.sensitivity) {
    cases.push_back(
        {{"case", c.name},
         {"description", c.description},
         {"iteration_time_us", c.iteration_time_us ? number(*c.iteration_time_us) : Json(nullptr)},
         {"note", c.note}});
  }
  return {{"engine", "analytical"},
          {"baseline_iteration_time_us", number(*v.sensitivity_baseline_us)},
          {"cases", std::move(cases)}};
}

Json summary_to_json(const SummaryRow& s) {
  return {{"variant", s.variant},
          {"gpus", s.gpus},
          {"cost_usd", number(s.cost_usd)},
          {"power_w", number(s.power_w)},
          {"feasible", s.feasible},
          {"peak_busbw_GBps", optional_number(s.peak_busbw_GBps)},
          {"peak_busbw_op", s.peak_busbw_op},
          {"iteration_time_us", optional_number(s.iteration_time_us)},
          {"p99_iteration_time_us", optional_number(s.p99_iteration_time_us)},
          {"mfu", optional_number(s.mfu)},
          {"tokens_per_s", optional_number(s.tokens_per_s)},
          {"cost_per_step_usd", optional_number(s.cost_per_step_usd)},
          {"lockstep_waste_usd", optional_number(s.lockstep_waste_usd)},
          {"ttft_p50_ms", optional_number(s.ttft_p50_ms)},
          {"ttft_p99_ms", optional_number(s.ttft_p99_ms)},
          {"tpot_p50_ms", optional_number(s.tpot_p50_ms)},
          {"tpot_p99_ms", optional_number(s.tpot_p99_ms)},
          {"output_tokens_per_s_per_gpu", optional_number(s.output_tokens_per_s_per_gpu)},
          {"cost_per_million_tokens_usd", optional_number(s.cost_per_million_tokens_usd)}};
}

}  // namespace

namespace {

// One link's counters (definitions/link): the packet engine's only where it ran (`packet`).
Json link_to_json(const LinkReport& l, bool packet) {
  Json out = Json::object();
  if (l.link != kNone) {
    out["link"] = l.link;
    out["name"] = l.name;
    out["utilisation"] = number(l.utilisation);
  }
  out["bytes"] = number(l.bytes);
  if (l.wire_bytes > 0) out["wire_bytes"] = number(l.wire_bytes);
  if (l.link != kNone && l.peak_utilisation > 0) {
    out["peak_utilisation"] = number(l.peak_utilisation);
    out["peak_at_us"] = number(l.peak_at.microseconds());
  }
  if (l.link != kNone && !l.series.empty()) {
    Json values = Json::array();
    for (float u : l.series) values.push_back(number(u));
    out["utilisation_series"] = {{"period_us", number(l.series_period.microseconds())},
                                 {"values", std::move(values)}};
    out["above_90_us"] = number(l.above_90.microseconds());
  }
  if (!packet) return out;
  if (l.link != kNone) {
    out["queue_p50_bytes"] = number(l.queue_p50);
    out["queue_p99_bytes"] = number(l.queue_p99);
  }
  if (l.link != kNone && l.last_sent > Time::zero()) {
    out["first_sent_us"] = number(l.first_sent.microseconds());
    out["last_sent_us"] = number(l.last_sent.microseconds());
  }
  out["queue_max_bytes"] = number(l.queue_max);
  out["drops"] = l.drops;
  out["trims"] = l.trims;
  out["dropped_bytes"] = number(l.dropped_bytes);
  out["ecn_marks"] = l.ecn_marks;
  out["pfc_pauses"] = l.pauses;
  out["pfc_paused_us"] = number(l.paused.microseconds());
  out["credit_stalls"] = l.credit_stalls;
  out["cnps"] = l.cnps;
  out["retransmissions"] = l.retransmissions;
  return out;
}

}  // namespace

Json sweep_to_json(const Sweep& sweep) {
  Json rows = Json::array();
  for (const auto& r : sweep.rows) {
    rows.push_back({{"bytes", r.bytes},
                    {"count", r.count},
                    {"type", r.type},
                    {"redop", r.redop},
                    {"algorithm", r.algorithm},
                    {"protocol", r.protocol},
                    {"channels", r.channels},
                    {"time_us", number(r.time_us)},
                    {"algbw_GBps", number(r.algbw_GBps)},
                    {"busbw_GBps", number(r.busbw_GBps)}});
    // Only engines that move bytes over links have them: analytical records stay as they were.
    if (!r.links.empty()) {
      Json links = Json::array();
      for (const LinkReport& l : r.links) links.push_back(link_to_json(l, r.network.has_value()));
      rows.back()["links"] = std::move(links);
    }
    if (r.network) rows.back()["network"] = link_to_json(*r.network, true);
  }
  Json out = {{"op", sweep.op}, {"algorithm", sweep.algorithm}, {"engine", sweep.engine}};
  if (!sweep.faults.empty()) out["faults"] = sweep.faults;  // only when given: healthy records stay
  out["rows"] = std::move(rows);
  return out;
}

Json sweeps_to_json(const std::vector<Sweep>& sweeps) {
  Json out = Json::array();
  for (const auto& s : sweeps) out.push_back(sweep_to_json(s));
  return out;
}

namespace {

// The job keys of TrainingOptions, each by its job name; null where the job left it to a default
// that is not a value (the catalog's peak, Megatron's bucket, no LoRA).
Json options_to_json(const TrainingOptions& o) {
  return {{"efficiency", o.efficiency > 0 ? Json(number(o.efficiency)) : Json("kernels")},
          {"peak_tflops", o.peak_tflops > 0 ? Json(number(o.peak_tflops)) : Json(nullptr)},
          {"tp_comm_overlap", o.tp_comm_overlap},
          {"tp_comm_overlap_sms", o.tp_comm_overlap ? Json(o.tp_comm_overlap_sms) : Json(nullptr)},
          {"overlap_dp", o.overlap_dp},
          {"overlap_param_gather", o.overlap_param_gather},
          {"grad_reduce_in_fp32", o.grad_reduce_in_fp32},
          {"bucket_bytes", o.bucket_bytes ? Json(o.bucket_bytes) : Json(nullptr)},
          {"optimizer_step", o.optimizer_step},
          {"clip_grad", number(o.clip_grad)},
          {"moe_imbalance", number(o.moe_imbalance)},
          {"lora_rank", o.lora_rank},
          {"lora_targets", o.lora_rank ? Json(o.lora_targets) : Json(nullptr)},
          {"account_for_embedding_in_pipeline_split", o.account_for_embedding_in_pipeline_split},
          {"account_for_loss_in_pipeline_split", o.account_for_loss_in_pipeline_split},
          {"communication_sms", o.communication_sms}};
}

}  // namespace

Json training_to_json(const Training& t) {
  Json slow = Json::array();
  for (const TrainingSlowGpu& g : t.slow_gpus) {
    slow.push_back({{"fault", g.fault},
                    {"factor", number(g.factor)},
                    {"rank", g.rank},
                    {"node", g.node},
                    {"gpu", g.gpu},
                    {"stage", g.stage},
                    {"replica", g.replica},
                    {"tp_rank", g.tp_rank}});
  }
  const TrainingWaste& w = t.waste;
  Json parts = Json::array();
  for (const auto& p : t.breakdown)
    parts.push_back({{"name", p.name}, {"time_us", number(p.time_us)}});
  const TrainingParallel& par = t.parallel;
  const TrainingBatch& b = t.batch;
  const TrainingMemory& m = t.memory;
  return {{"model", t.model},
          {"model_map", t.model_map},
          {"parallelism", t.parallelism},
          {"gpus", t.gpus},
          {"iteration_time_us", number(t.iteration_time_us)},
          {"breakdown", std::move(parts)},
          {"mfu", number(t.mfu)},
          {"tokens_per_s", number(t.tokens_per_s)},
          {"gpu_hours_per_step", number(t.gpu_hours_per_step)},
          {"cost_per_step_usd", number(t.cost_per_step_usd)},
          {"cost_per_trillion_tokens_usd", number(t.cost_per_trillion_tokens_usd)},
          {"jitter", t.jitter ? jitter_to_json(*t.jitter) : Json(nullptr)},
          {"engine", t.engine},
          {"expansion", t.expansion},
          {"parallel",
           {{"tp", par.tp},
            {"pp", par.pp},
            {"dp", par.dp},
            {"ep", par.ep},
            {"etp", par.etp ? par.etp : par.tp},
            {"cp", par.cp},
            {"interleave", par.interleave},
            {"sequence_parallel", par.sequence_parallel},
            {"zero_stage", par.zero_stage},
            {"fsdp", par.fsdp},
            {"microbatch_group_size_per_vp_stage",
             par.microbatch_group ? Json(par.microbatch_group) : Json(nullptr)},
            {"pipeline", par.pipeline},
            {"pipeline_timing", par.pipeline_timing}}},
          {"precision", t.precision},
          {"attention_kernel", t.attention_kernel},
          {"optimizer_moments", t.optimizer_moments},
          {"recompute", t.recompute},
          {"recompute_modules",
           t.recompute_modules.empty() ? Json(nullptr) : Json(t.recompute_modules)},
          {"options", options_to_json(t.options)},
          {"batch",
           {{"global_batch", b.global_batch},
            {"micro_batch", b.micro_batch},
            {"micro_batches", b.micro_batches},
            {"sequence_length", b.sequence_length},
            {"tokens_per_iteration", b.tokens_per_iteration}}},
          {"memory_per_gpu",
           {{"weights_bytes", m.weights_bytes},
            {"gradients_bytes", m.gradients_bytes},
            {"optimizer_bytes", m.optimizer_bytes},
            {"activations_bytes", m.activations_bytes},
            {"total_bytes", m.total_bytes},
            {"hbm_bytes", m.hbm_bytes}}},
          {"gpu_hours_per_trillion_tokens", number(t.gpu_hours_per_trillion_tokens)},
          {"warnings", strings(t.warnings)},
          {"slow_gpus", std::move(slow)},
          {"lockstep_waste",
           {{"gpu_s_per_step", number(w.gpu_s_per_step)},
            {"usd_per_step", number(w.usd_per_step)},
            {"fraction", number(w.fraction)},
            {"usd_per_trillion_tokens", number(w.usd_per_trillion_tokens)},
            {"gpu_hours_per_day", number(w.gpu_hours_per_day)},
            {"usd_per_day", number(w.usd_per_day)}}}};
}

Json inventory_to_json(const Inventory& inv) {
  Json tiers = Json::array();
  for (const auto& t : inv.tiers) {
    tiers.push_back({{"tier", t.tier},
                     {"switches", t.switches},
                     {"ports_used", t.ports_used},
                     {"ports_free", t.ports_free},
                     {"oversubscription", number(t.oversubscription)}});
  }
  Json lines = Json::array();
  for (const auto& l : inv.lines) {
    const double n = static_cast<double>(l.count);
    lines.push_back({{"item", l.item},
                     {"category", l.category},
                     {"tier", l.tier},
                     {"count", l.count},
                     {"unit_power_w", number(l.unit_power_w)},
                     {"unit_price_usd", number(l.unit_price_usd)},
                     {"power_w", number(n * l.unit_power_w)},
                     {"cost_usd", number(n * l.unit_price_usd)},
                     {"price_note", l.price_note}});
  }
  return {{"design", inv.design},
          {"gpus", inv.gpus},
          {"nodes", inv.nodes},
          {"nics", inv.nics},
          {"tiers", std::move(tiers)},
          {"lines", std::move(lines)},
          {"cables", inv.cables},
          {"transceivers", inv.transceivers},
          {"ports_per_gpu", inv.ports_per_gpu},
          {"injection_per_gpu_GBps", number(inv.injection_per_gpu.gigabytes_per_second())},
          {"bisection_GBps", number(inv.bisection.gigabytes_per_second())},
          {"diameter_switch_hops", inv.diameter_switch_hops},
          {"max_one_way_latency_us", number(inv.max_one_way_latency.microseconds())},
          {"power_w", number(inv.power_w)},
          {"cost_usd", number(inv.cost_usd)},
          {"network_cost_usd", number(network_cost_usd(inv))},
          {"network_cost_per_gpu_usd", number(network_cost_per_gpu_usd(inv))},
          {"feasible", inv.feasible},
          {"problems", strings(inv.problems)},
          {"graph_built", inv.graph_built}};
}

Json variant_to_json(const Variant& v) {
  Json subs = Json::object();
  for (const auto& [key, value] : v.substitutions) subs[key] = value;
  Json sweeps = Json::array();
  for (const auto& s : v.sweeps) sweeps.push_back(sweep_to_json(s));
  return {{"name", v.name},
          {"substitutions", std::move(subs)},
          {"inventory", inventory_to_json(v.inventory)},
          {"collectives", std::move(sweeps)},
          {"training", v.training ? training_to_json(*v.training) : Json(nullptr)},
          {"inference", v.inference ? *v.inference : Json(nullptr)},
          {"link_heatmap", v.heatmap ? heatmap_to_json(*v.heatmap) : Json(nullptr)},
          {"sensitivity", sensitivity_to_json(v)},
          {"why", strings(v.why)},
          {"notes", strings(v.notes)}};
}

Json results_to_json(const RunResults& results) {
  Json summary = Json::array();
  for (const auto& row : summarize(results)) summary.push_back(summary_to_json(row));
  Json variants = Json::array();
  for (const auto& v : results.variants) variants.push_back(variant_to_json(v));
  return {{"schema_version", kResultsSchemaVersion},
          {"lockstep_version", results.lockstep_version},
          {"title", results.title},
          {"scenario", {{"path", results.scenario_path}, {"text", results.scenario_text}}},
          {"seed", results.seed},
          {"variant_keys", strings(results.variant_keys)},
          {"summary", std::move(summary)},
          {"variants", std::move(variants)},
          {"notes", strings(results.notes)}};
}

std::string json_text(const Json& value) {
  // Replace invalid UTF-8 rather than throw: scenario text and names are user input.
  return value.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

std::string results_json_text(const RunResults& results) {
  return json_text(results_to_json(results));
}

}  // namespace lockstep::report
