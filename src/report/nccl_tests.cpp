// nccl-tests' text layout, from its src/common.cu (docs/nccl-tests.md quotes the formats), and
// `lockstep calibrate`'s comparison of a log with the prediction.
#include "lockstep/report/nccl_tests.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "lockstep/core/error.hpp"
#include "lockstep/report/json.hpp"

namespace lockstep::report {

std::string nccl_tests_time(double us) {
  if (us >= 10000.0) return fmt::format("{:7.0f}", us);
  if (us >= 100.0) return fmt::format("{:7.1f}", us);
  return fmt::format("{:7.2f}", us);
}

std::string format_nccl_tests(const NcclTestsHeader& h, const std::vector<NcclTestsBlock>& blocks) {
  std::string out = fmt::format("# Collective test starting: {}\n", h.program);
  out += fmt::format(
      "# nThread {} nGpus {} minBytes {} maxBytes {} step: {} warmup iters: {} iters: {} agg "
      "iters: {} validation: 0 graph: {}\n#\n",
      h.threads, h.gpus, h.min_bytes, h.max_bytes, h.step, h.warmup, h.iters, h.agg_iters, h.graph);
  // No process runs: the Pid and PCI bus id are printed as zeros.
  out += "# Using devices\n";
  const std::uint32_t per_node = std::max<std::uint32_t>(h.gpus_per_node, 1);
  for (std::uint32_t r = 0; r < h.ranks; ++r) {
    out += fmt::format("#  Rank {:2} Group {:2} Pid {:6} on {:>10} device {:2} [0000:00:00] {}\n",
                       r, 0, 0, fmt::format("node{}", r / per_node), r % per_node, h.gpu);
  }
  out += "#\n";
  out += fmt::format(
      "# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}           out-of-place                       "
      "in-place          \n",
      "", "", "", "", "");
  out += fmt::format(
      "# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6} {:>6}  {:>7}  {:>6}  {:>6} "
      "{:>6}\n",
      "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw",
      "busbw", "#wrong");
  out += fmt::format(
      "# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>5}  {:>7}  {:>6}  {:>6}  "
      "{:>5}\n",
      "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)",
      "");
  double busbw_sum = 0;
  std::size_t groups = 0;
  for (const NcclTestsBlock& b : blocks) {
    for (const SweepRow& r : b.rows) {
      out += fmt::format("{:12}  {:12}  {:>8}  {:>6}  {:6}", r.bytes, r.count, r.type, r.redop,
                         b.root);
      // Out-of-place, then in-place: one prediction for both.
      for (int place = 0; place < 2; ++place) {
        out += fmt::format("  {}  {:6.2f}  {:6.2f}  {:>5}", nccl_tests_time(r.time_us),
                           r.algbw_GBps, r.busbw_GBps, "N/A");
        busbw_sum += r.busbw_GBps;
        ++groups;
      }
      out += "\n";
    }
  }
  out += "# Out of bounds values : 0 OK\n";
  out += fmt::format("# Avg bus bandwidth    : {:g} \n#\n",
                     groups > 0 ? busbw_sum / static_cast<double>(groups) : 0.0);
  out += fmt::format("# Collective test concluded: {}\n", h.program);
  return out;
}

std::string format_calibration(const std::vector<LogComparison>& rows, const std::string& title,
                               const std::string& format) {
  const CalibrationSummary s = summarise(rows);
  std::string out;
  if (format == "table") {
    out += fmt::format("# lockstep calibrate: {}\n", title);
    out += fmt::format(
        "#{:>5} {:>14} {:>12} {:>8} {:>6} {:>12} {:>12} {:>8} {:>11} {:>11} {:>9} "
        "{:>8}\n",
        "line", "op", "size(B)", "type", "redop", "measured(us)", "predicted(us)", "error%",
        "meas busbw", "pred busbw", "algorithm", "protocol");
    for (const LogComparison& r : rows) {
      const NcclTestsLogRow& m = r.measured;
      out += fmt::format(
          " {:>5} {:>14} {:>12} {:>8} {:>6} {:>12.{}f} {:>12.{}f} {:>+8.1f} {:>11.2f} "
          "{:>11.2f} {:>9} {:>8}\n",
          m.line, to_string(m.op), m.bytes, nccl_tests_type_name(m.type), m.redop, m.time_us,
          m.time_decimals, r.predicted.time.microseconds(), m.time_decimals, r.error_pct,
          m.busbw_GBps, r.predicted.busbw_GBps, r.predicted.algorithm, r.predicted.protocol);
    }
    out +=
        fmt::format("# rows {}  median |error| {:.1f}%  p90 |error| {:.1f}%  max |error| {:.1f}%\n",
                    s.rows, s.median_pct, s.p90_pct, s.max_pct);
  } else if (format == "csv") {
    out +=
        "line,op,bytes,count,type,redop,measured_us,predicted_us,error_pct,measured_busbw_GBps,"
        "predicted_busbw_GBps,algorithm,protocol\n";
    for (const LogComparison& r : rows) {
      const NcclTestsLogRow& m = r.measured;
      out += fmt::format("{},{},{},{},{},{},{},{},{:.3f},{},{:.2f},{},{}\n", m.line,
                         to_string(m.op), m.bytes, m.count, nccl_tests_type_name(m.type), m.redop,
                         m.time_us, r.predicted.time.microseconds(), r.error_pct, m.busbw_GBps,
                         r.predicted.busbw_GBps, r.predicted.algorithm, r.predicted.protocol);
    }
  } else if (format == "json") {
    nlohmann::ordered_json j;
    j["title"] = title;
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const LogComparison& r : rows) {
      const NcclTestsLogRow& m = r.measured;
      list.push_back({{"line", m.line},
                      {"op", to_string(m.op)},
                      {"bytes", m.bytes},
                      {"count", m.count},
                      {"type", nccl_tests_type_name(m.type)},
                      {"redop", m.redop},
                      {"measured_us", m.time_us},
                      {"predicted_us", r.predicted.time.microseconds()},
                      {"error_pct", r.error_pct},
                      {"measured_busbw_GBps", m.busbw_GBps},
                      {"predicted_busbw_GBps", r.predicted.busbw_GBps},
                      {"algorithm", r.predicted.algorithm},
                      {"protocol", r.predicted.protocol}});
    }
    j["rows"] = list;
    j["summary"] = {{"rows", s.rows},
                    {"median_abs_error_pct", s.median_pct},
                    {"p90_abs_error_pct", s.p90_pct},
                    {"max_abs_error_pct", s.max_pct}};
    out = json_text(j);
  } else {
    throw InputError("format",
                     fmt::format("unknown format '{}' (expected table, csv or json)", format));
  }
  return out;
}

}  // namespace lockstep::report
