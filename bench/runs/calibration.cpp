// Whole-process run (not Google Benchmark): prints its own figures, see bench/CMakeLists.txt.
// bench_calibration: compares the engines' predictions with measured nccl-tests / rccl-tests rows
// and prints, per CSV file and per engine, each row's predicted vs measured bus bandwidth and its
// error, then the rows compared out of the file's, the median, p90 and maximum absolute error and
// the rows over 25%; on flow and packet also each row's wall and CPU time and peak memory and the
// slowest row (by CPU time). Rows become clusters through scenario/calibration_row.hpp
// and scenario/calibration_run.hpp (docs/calibration.md).
//   bench_calibration [--csv FILE]... [--engine analytical|flow|packet[,...]]... [--no-usage]
//                     [--lines A[-B][,...]] [--terms]
// Without --csv: every *.csv of ../shared/calibration/ that has the nccl-tests columns. A FILE
// that does not exist is looked up in that directory too. --no-usage leaves out the times and
// memory (for snapshots: the rest is deterministic). --lines runs only the rows on those file
// lines (the header is line 1), e.g. to time the slowest rows alone; the summary covers them.
// --terms adds a line under each row with the model's terms (docs/calibration.md "Mid-size rows
// decomposed"): the per-call launch cost, NCCL's latency term, the transfer at the bus bandwidth,
// the pipeline fill, what the engine adds over their sum (its graph), and the measured time the
// prediction lacks.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../error_stats.hpp"
#include "../process_usage.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/nccl/constants.hpp"
#include "lockstep/nccl/tuner.hpp"
#include "lockstep/scenario/calibration_row.hpp"
#include "lockstep/scenario/calibration_run.hpp"
#include "lockstep/topology/presets.hpp"

namespace {

using namespace lockstep;
using bench::calibration_dir;
using bench::median;
using bench::over_25;
using bench::p90;
namespace fs = std::filesystem;

struct Figures {
  std::string file, engine;
  std::size_t in_file = 0;
  std::vector<double> errors;              // |busbw error| %, rows compared
  double slowest_cpu_s = 0, peak_mib = 0;  // the row of most CPU time; the largest row peak
  std::string slowest;
};

std::string cluster_name(const PresetCluster& c) {
  return fmt::format("{}x{} {}x{}G {}", c.nodes, c.system.name, c.nics_per_node,
                     c.nic_speed.gigabits_per_second(), c.fabric.name);
}

// The prediction's time split as the tuner prices it (tuner.hpp Prediction): the time is
// launch + latency + transfer + fill, and an engine's run may add what its graph costs above.
void print_terms(const Prediction& p, double measured_us) {
  const double launch = nccl::kLaunchOverheadUs, latency = p.latency.microseconds();
  const double transfer = p.transfer.microseconds(), fill = p.fill.microseconds();
  const double time = p.time.microseconds();
  double graph = time - (launch + latency + transfer + fill);
  if (std::fabs(graph) < 0.005) graph = 0;  // rounding of the sum, not a cost: print 0.00
  std::printf(
      "     terms: channels %u, bus %.2f GB/s; launch %.2f + latency %.2f + transfer %.2f + fill "
      "%.2f + graph %.2f us; measured - predicted %+.2f us\n",
      p.channels, p.bus_GBps, launch, latency, transfer, fill, graph, measured_us - time);
}

// Inclusive ranges of file lines; empty: every line.
using LineFilter = std::vector<std::pair<std::size_t, std::size_t>>;

bool wanted(const LineFilter& lines, std::size_t line) {
  return lines.empty() || std::any_of(lines.begin(), lines.end(), [&](const auto& range) {
           return line >= range.first && line <= range.second;
         });
}

// "47,48" or "40-48,60": false on anything else.
bool parse_lines(const std::string& text, LineFilter& out) {
  for (std::size_t at = 0; at <= text.size();) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    const std::string item = text.substr(at, comma - at);
    const std::size_t dash = item.find('-');
    const std::string first = item.substr(0, dash);
    const std::string last = dash == std::string::npos ? first : item.substr(dash + 1);
    const auto whole = [](const std::string& s) {
      return !s.empty() && s.size() < 10 &&
             std::all_of(s.begin(), s.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
    };
    if (!whole(first) || !whole(last)) return false;
    out.emplace_back(std::stoul(first), std::stoul(last));
    if (out.back().first > out.back().second) return false;
    at = comma + 1;
  }
  return true;
}

Figures run_file(const fs::path& path, const std::vector<CalibrationRow>& rows,
                 const std::string& engine, bool usage, const LineFilter& lines, bool terms) {
  Figures fig;
  fig.file = path.filename().string();
  fig.engine = engine;
  for (std::size_t i = 0; i < rows.size(); ++i) fig.in_file += wanted(lines, i + 2) ? 1 : 0;
  const bool timed = usage && engine != "analytical";
  std::printf("== %s, engine %s ==\n", fig.file.c_str(), engine.c_str());
  std::printf("%4s %-34s %-10s %11s %-9s %-6s %10s %10s %9s %9s %7s%s\n", "line", "cluster",
              "collective", "bytes", "algo", "proto", "meas_us", "pred_us", "meas_bus", "pred_bus",
              "err%", timed ? "  wall_s   cpu_s  rss_MiB" : "");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::size_t line = i + 2;  // the header is line 1
    if (!wanted(lines, line)) continue;
    try {
      if (timed) bench::reset_peak_rss();
      const auto start = std::chrono::steady_clock::now();
      const double cpu_start = bench::cpu_seconds();
      const CalibrationRun run = run_calibration_row(rows[i], engine);
      const CalibrationCase& c = run.c;
      const PresetCluster& preset = run.preset;
      const Prediction& p = run.prediction;
      const double wall_s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      const double err = (p.busbw_GBps / c.measured_busbw_GBps - 1) * 100;
      fig.errors.push_back(std::fabs(err));
      const std::string name = cluster_name(preset);
      std::printf("%4zu %-34s %-10s %11llu %-9s %-6s %10.2f %10.2f %9.3f %9.3f %+7.1f", line,
                  name.c_str(), rows[i].collective.c_str(),
                  static_cast<unsigned long long>(c.tuner.bytes.count()),
                  nccl::algorithm_name(p.algo), nccl::to_string(p.proto), c.measured_time_us,
                  p.time.microseconds(), c.measured_busbw_GBps, p.busbw_GBps, err);
      if (timed) {
        // CPU time is the figure to compare on a shared machine; wall time is what a user waits.
        const double cpu_s = bench::cpu_seconds() - cpu_start;
        const double rss = bench::peak_rss_mib();
        std::printf("  %6.2f %7.2f %8.0f", wall_s, cpu_s, rss);
        fig.peak_mib = std::max(fig.peak_mib, rss);
        if (cpu_s > fig.slowest_cpu_s) {
          fig.slowest_cpu_s = cpu_s;
          fig.slowest = fmt::format(
              "line {} ({}, {} {} B): {:.2f} s CPU, {:.2f} s wall, {:.0f} "
              "MiB peak",
              line, name, rows[i].collective, c.tuner.bytes.count(), cpu_s, wall_s, rss);
        }
      }
      std::printf("\n");
      if (terms) print_terms(p, c.measured_time_us);
    } catch (const std::exception& e) {
      std::printf("%4zu skipped (%s): %s\n", line, e.what(), rows[i].system.c_str());
    }
  }
  const auto& v = fig.errors;
  if (v.empty()) {
    std::printf("rows 0 of %zu compared\n", fig.in_file);
  } else {
    std::printf(
        "rows %zu of %zu  median |error| %.1f%%  p90 |error| %.1f%%  max |error| %.1f%%  rows over "
        "25%%: %zu\n",
        v.size(), fig.in_file, median(v), p90(v), *std::max_element(v.begin(), v.end()),
        over_25(v));
  }
  if (timed && !fig.slowest.empty()) std::printf("slowest row: %s\n", fig.slowest.c_str());
  std::printf("\n");
  return fig;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<fs::path> files;
  std::vector<std::string> engines;
  bool usage = true, terms = false;
  LineFilter lines;
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (std::strcmp(argv[i], "--csv") == 0 && has_value) {
      fs::path f = argv[++i];
      if (!fs::exists(f) && fs::exists(calibration_dir() / f)) f = calibration_dir() / f;
      files.push_back(f);
    } else if (std::strcmp(argv[i], "--engine") == 0 && has_value) {
      std::string list = argv[++i];
      for (std::size_t at = 0; at <= list.size();) {
        const std::size_t comma = std::min(list.find(',', at), list.size());
        engines.push_back(list.substr(at, comma - at));
        at = comma + 1;
      }
    } else if (std::strcmp(argv[i], "--no-usage") == 0) {
      usage = false;
    } else if (std::strcmp(argv[i], "--terms") == 0) {
      terms = true;
    } else if (std::strcmp(argv[i], "--lines") == 0 && has_value) {
      if (!parse_lines(argv[++i], lines)) {
        std::fprintf(stderr,
                     "bench_calibration: --lines: expected file lines such as 47,48 or 40-48, got "
                     "'%s'\n",
                     argv[i]);
        return 2;
      }
    } else {
      std::fprintf(stderr,
                   "bench_calibration: unknown argument '%s' (--csv FILE, --engine NAME[,NAME], "
                   "--no-usage, --lines A[-B][,...], --terms)\n",
                   argv[i]);
      return 2;
    }
  }
  if (engines.empty()) engines.push_back("analytical");
  for (const std::string& e : engines) {
    if (e != "analytical" && e != "flow" && e != "packet") {
      std::fprintf(stderr,
                   "bench_calibration: --engine: unknown engine '%s' (analytical, flow, packet)\n",
                   e.c_str());
      return 2;
    }
  }
  const bool every_file = files.empty();
  if (every_file) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(calibration_dir(), ec))
      if (entry.path().extension() == ".csv") files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    if (files.empty()) {
      std::printf("calibration: no CSV in %s; nothing to compare (use --csv FILE)\n",
                  calibration_dir().c_str());
      return 0;
    }
  }
  std::vector<Figures> all;
  for (const fs::path& f : files) {
    std::ifstream in(f);
    if (!in) {
      std::fprintf(stderr, "bench_calibration: --csv: cannot read '%s'\n", f.c_str());
      return 2;
    }
    std::vector<CalibrationRow> rows;
    try {
      rows = read_calibration_csv(in, f.filename().string());
    } catch (const InputError& e) {
      if (every_file) continue;  // another kind of table (training_public.csv)
      std::fprintf(stderr, "bench_calibration: %s\n", e.what());
      return 2;
    }
    for (const std::string& e : engines) all.push_back(run_file(f, rows, e, usage, lines, terms));
  }
  if (all.size() < 2) return 0;
  std::printf("%-28s %-10s %11s %8s %8s %8s %8s", "file", "engine", "rows", "median%", "p90%",
              "max%", "over25%");
  const bool timed = usage && std::any_of(engines.begin(), engines.end(),
                                          [](const std::string& e) { return e != "analytical"; });
  std::printf("%s\n", timed ? "  slowest_cpu_s  peak_MiB" : "");
  for (const Figures& f : all) {
    const std::string rows = fmt::format("{} of {}", f.errors.size(), f.in_file);
    std::printf("%-28s %-10s %11s", f.file.c_str(), f.engine.c_str(), rows.c_str());
    if (f.errors.empty()) {
      std::printf(" %8s %8s %8s %8s", "-", "-", "-", "-");
    } else {
      std::printf(" %8.1f %8.1f %8.1f %8zu", median(f.errors), p90(f.errors),
                  *std::max_element(f.errors.begin(), f.errors.end()), over_25(f.errors));
    }
    if (timed && f.engine != "analytical")
      std::printf("  %13.2f %9.0f", f.slowest_cpu_s, f.peak_mib);
    std::printf("\n");
  }
  return 0;
}
