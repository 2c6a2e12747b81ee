// CSV tables of a run (RFC 4180). Numbers print in their shortest round-trip form, so a table
// reads back to exactly the values in results.json.
#include "lockstep/report/csv.hpp"

#include <fmt/format.h>

#include <cmath>

#include "lockstep/report/summary.hpp"

namespace lockstep::report {
namespace {

std::string integer(std::uint64_t v) {
  return std::to_string(v);
}
std::string optional(const std::optional<double>& v) {
  return v ? csv_number(*v) : "";
}

CsvTable summary_table(const RunResults& results) {
  CsvTable t{
      "summary",
      {"variant", "gpus", "cost_usd", "power_w", "feasible", "peak_busbw_op", "peak_busbw_GBps",
       "iteration_time_us", "p99_iteration_time_us", "mfu", "tokens_per_s", "cost_per_step_usd",
       "lockstep_waste_usd", "ttft_p50_ms", "ttft_p99_ms", "tpot_p50_ms", "tpot_p99_ms",
       "output_tokens_per_s_per_gpu", "cost_per_million_tokens_usd"},
      {}};
  for (const auto& s : summarize(results)) {
    t.rows.push_back({s.variant, integer(s.gpus), csv_number(s.cost_usd), csv_number(s.power_w),
                      s.feasible ? "true" : "false", s.peak_busbw_op, optional(s.peak_busbw_GBps),
                      optional(s.iteration_time_us), optional(s.p99_iteration_time_us),
                      optional(s.mfu), optional(s.tokens_per_s), optional(s.cost_per_step_usd),
                      optional(s.lockstep_waste_usd), optional(s.ttft_p50_ms),
                      optional(s.ttft_p99_ms), optional(s.tpot_p50_ms), optional(s.tpot_p99_ms),
                      optional(s.output_tokens_per_s_per_gpu),
                      optional(s.cost_per_million_tokens_usd)});
  }
  return t;
}

void add_inventory_tables(const RunResults& results, std::vector<CsvTable>& out) {
  CsvTable bom{"bill_of_materials",
               {"variant", "item", "category", "tier", "count", "unit_power_w", "unit_price_usd",
                "power_w", "cost_usd", "price_note"},
               {}};
  CsvTable tiers{
      "tiers", {"variant", "tier", "switches", "ports_used", "ports_free", "oversubscription"}, {}};
  for (const auto& v : results.variants) {
    for (const auto& l : v.inventory.lines) {
      const double n = static_cast<double>(l.count);
      bom.rows.push_back({v.name, l.item, l.category, l.tier, integer(l.count),
                          csv_number(l.unit_power_w), csv_number(l.unit_price_usd),
                          csv_number(n * l.unit_power_w), csv_number(n * l.unit_price_usd),
                          l.price_note});
    }
    for (const auto& tier : v.inventory.tiers) {
      tiers.rows.push_back({v.name, tier.tier, integer(tier.switches), integer(tier.ports_used),
                            integer(tier.ports_free), csv_number(tier.oversubscription)});
    }
  }
  out.push_back(std::move(bom));
  out.push_back(std::move(tiers));
}

CsvTable collectives_table(const RunResults& results) {
  // nccl-tests' columns (as `lockstep collective --format csv`), behind variant and op.
  CsvTable t{"collectives",
             {"variant", "op", "requested_algorithm", "engine", "bytes", "count", "type",
              "algorithm", "protocol", "time_us", "algbw_GBps", "busbw_GBps"},
             {}};
  for (const auto& v : results.variants) {
    for (const auto& s : v.sweeps) {
      for (const auto& r : s.rows) {
        t.rows.push_back({v.name, s.op, s.algorithm, s.engine, integer(r.bytes), integer(r.count),
                          r.type, r.algorithm, r.protocol, csv_number(r.time_us),
                          csv_number(r.algbw_GBps), csv_number(r.busbw_GBps)});
      }
    }
  }
  return t;
}

void add_training_tables(const RunResults& results, std::vector<CsvTable>& out) {
  CsvTable training{
      "training",
      {"variant", "model", "parallelism", "gpus", "iteration_time_us", "mfu", "tokens_per_s",
       "gpu_hours_per_step", "cost_per_step_usd", "cost_per_trillion_tokens_usd", "trials",
       "p50_us", "p99_us", "max_us", "mean_us", "lockstep_waste_gpu_s", "lockstep_waste_usd"},
      {}};
  CsvTable breakdown{"breakdown", {"variant", "part", "time_us"}, {}};
  CsvTable jitter{"jitter_cdf", {"variant", "trial", "iteration_time_us", "cdf"}, {}};
  for (const auto& v : results.variants) {
    if (!v.training) continue;
    const Training& t = *v.training;
    std::vector<std::string> row{v.name,
                                 t.model,
                                 t.parallelism,
                                 integer(t.gpus),
                                 csv_number(t.iteration_time_us),
                                 csv_number(t.mfu),
                                 csv_number(t.tokens_per_s),
                                 csv_number(t.gpu_hours_per_step),
                                 csv_number(t.cost_per_step_usd),
                                 csv_number(t.cost_per_trillion_tokens_usd)};
    if (t.jitter) {
      const JitterStats& j = *t.jitter;
      for (std::string s : {integer(j.trials), csv_number(j.p50_us), csv_number(j.p99_us),
                            csv_number(j.max_us), csv_number(j.mean_us),
                            csv_number(j.lockstep_waste_gpu_s), csv_number(j.lockstep_waste_usd)}) {
        row.push_back(std::move(s));
      }
      const auto n = j.iteration_time_us.size();
      for (std::size_t i = 0; i < n; ++i) {
        // Empirical CDF: the i-th smallest of n samples sits at (i+1)/n.
        jitter.rows.push_back({v.name, integer(i + 1), csv_number(j.iteration_time_us[i]),
                               csv_number(static_cast<double>(i + 1) / static_cast<double>(n))});
      }
    } else {
      row.resize(training.header.size());
    }
    training.rows.push_back(std::move(row));
    for (const auto& p : t.breakdown) {
      breakdown.rows.push_back({v.name, p.name, csv_number(p.time_us)});
    }
  }
  out.push_back(std::move(training));
  out.push_back(std::move(breakdown));
  out.push_back(std::move(jitter));
}

CsvTable heatmap_table(const RunResults& results) {
  CsvTable t{"link_utilisation", {"variant", "link", "bucket_start_us", "utilisation"}, {}};
  for (const auto& v : results.variants) {
    if (!v.heatmap) continue;
    const LinkHeatmap& h = *v.heatmap;
    for (std::size_t l = 0; l < h.links.size() && l < h.utilisation.size(); ++l) {
      for (std::size_t b = 0; b < h.utilisation[l].size(); ++b) {
        t.rows.push_back({v.name, h.links[l], csv_number(static_cast<double>(b) * h.bucket_us),
                          csv_number(h.utilisation[l][b])});
      }
    }
  }
  return t;
}

}  // namespace

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string csv_number(double value) {
  if (!std::isfinite(value)) return "";  // "not available", as null in results.json
  return fmt::format("{}", value);
}

std::string to_csv(const CsvTable& table) {
  std::string out;
  auto line = [&out](const std::vector<std::string>& fields) {
    for (std::size_t i = 0; i < fields.size(); ++i) {
      if (i > 0) out += ',';
      out += csv_field(fields[i]);
    }
    out += '\n';
  };
  line(table.header);
  for (const auto& row : table.rows) line(row);
  return out;
}

std::vector<std::string> all_table_names() {
  return {"summary",  "bill_of_materials", "tiers",      "collectives",
          "training", "breakdown",         "jitter_cdf", "link_utilisation"};
}

std::vector<CsvTable> results_tables(const RunResults& results) {
  std::vector<CsvTable> all;
  all.push_back(summary_table(results));
  add_inventory_tables(results, all);
  all.push_back(collectives_table(results));
  add_training_tables(results, all);
  all.push_back(heatmap_table(results));
  std::vector<CsvTable> kept;
  for (auto& t : all) {
    if (!t.rows.empty()) kept.push_back(std::move(t));
  }
  return kept;
}

}  // namespace lockstep::report
