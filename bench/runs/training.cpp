// Whole-process run (not Google Benchmark): prints its own figures, see bench/CMakeLists.txt.
// bench_training: runs the published training runs of ../shared/calibration (training_public.csv
// and any CSV with its columns) as `lockstep train` jobs and prints, per row, the configuration,
// the published MFU (and what it was derived from), the predicted MFU and the relative error, or
// why the row is not expressible; then the rows expressible of the file's, the median and p90 of
// |relative MFU error|, the rows over 25%, and the rows not expressible counted by reason (the
// field lockstep refused). Rows become jobs through scenario/training_row.hpp
// (docs/training-calibration.md).
//   bench_training [--csv FILE]... [--engine analytical|flow] [--efficiency F|kernels]
//                  [--commands] [--ignore KEY]... [--set KEY=VALUE]... [--supplement FILE|none]
// --efficiency sets every row's job efficiency (`kernels`: the kernel model, docs/kernel-model.md);
// --commands prints each row's `lockstep train` line; --ignore KEY drops a job key the rows state
// (e.g. precision, cp) to see what the rest predicts: a what-if, labelled as such; --set KEY=VALUE
// gives every row a job key the rows do not state (e.g. tp_comm_overlap=true), a what-if too.
// --supplement: configurations a table cites but does not print, filled into the rows' blank
// cells (default bench/data/training_supplement.csv, Korthikanti et al. 2022's Table 3 for the
// Megatron-LM README rows; such rows are marked "supplement" after their basis).
#include "lockstep/workload/training.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "../error_stats.hpp"
#include "lockstep/config/arg_node.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/scenario/calibration_row.hpp"
#include "lockstep/scenario/training_row.hpp"
#include "lockstep/topology/builder.hpp"
#include "lockstep/topology/presets.hpp"

namespace {

using namespace lockstep;
using bench::calibration_dir;
using bench::median;
using bench::over_25;
using bench::p90;
namespace fs = std::filesystem;

struct Options {
  std::string engine = "analytical";
  std::string efficiency;  // empty: the job's default
  bool commands = false;
  std::vector<std::string> ignore;
  std::vector<std::pair<std::string, std::string>> set;
  std::vector<TrainingRow> supplement;
};

std::string value_of(const TrainingCase& c, const char* key) {
  for (const auto& [k, v] : c.job)
    if (k == key) return v;
  return "";
}

// "16x hgx-h100 tp4 pp8 dp4 vp6 gbs256 mbs1 seq2048 fp8" (rc-selective: recompute)
std::string describe(const TrainingCase& c) {
  std::string s = fmt::format("{}x {} tp{} pp{} dp{}", c.preset.nodes, c.preset.system,
                              value_of(c, "tp"), value_of(c, "pp"), value_of(c, "dp"));
  for (const auto& [key, label] : {std::pair{"cp", "cp"}, {"ep", "ep"}, {"interleave", "vp"}})
    if (const std::string v = value_of(c, key); !v.empty()) s += fmt::format(" {}{}", label, v);
  s += fmt::format(" gbs{} mbs{} seq{}", value_of(c, "global_batch"), value_of(c, "micro_batch"),
                   value_of(c, "seq"));
  if (const std::string p = value_of(c, "precision"); !p.empty()) s += " " + p;
  if (const std::string r = value_of(c, "recompute"); !r.empty()) s += " rc-" + r;
  if (const std::string p = value_of(c, "pipeline"); !p.empty()) s += " " + p;
  return s;
}

// One row: the predicted MFU; InputError (from the row, the job or the simulation) when the row
// is not expressible.
double predict(TrainingCase& c, const Options& o) {
  c.job.emplace_back("engine", o.engine);
  if (!o.efficiency.empty()) c.job.emplace_back("efficiency", o.efficiency);
  for (const auto& kv : o.set) c.job.push_back(kv);
  ArgNode job = ArgNode::map("row");
  for (const auto& [key, value] : c.job) {
    if (std::find(o.ignore.begin(), o.ignore.end(), key) != o.ignore.end()) continue;
    job.set(key, ArgNode::scalar(value, key));
  }
  const TrainConfig config = parse_train_config(job);
  const PresetCluster preset = resolve_preset(c.preset);
  const BuildResult built = build_topology(rail_optimized_args(preset));
  return simulate_training(*built.graph, config).mfu;
}

struct Figures {
  std::size_t in_file = 0;
  std::vector<double> errors;  // |relative MFU error| %, rows expressible
  std::map<std::string, std::size_t> reasons;
};

Figures run_file(const fs::path& path, const std::vector<TrainingRow>& rows, const Options& o) {
  Figures fig;
  fig.in_file = rows.size();
  std::string ignored, set;
  for (const std::string& key : o.ignore) ignored += (ignored.empty() ? "" : ", ") + key;
  for (const auto& [key, value] : o.set)
    set += fmt::format("{}{}={}", set.empty() ? "" : ", ", key, value);
  std::printf("== %s, engine %s%s%s ==\n", path.filename().c_str(), o.engine.c_str(),
              ignored.empty() ? "" : fmt::format(" (what-if: rows' {} ignored)", ignored).c_str(),
              set.empty() ? "" : fmt::format(" (what-if: every row {})", set).c_str());
  std::printf("%4s %-14s %-54s %7s %-32s %7s %7s\n", "line", "model", "configuration", "pub_mfu",
              "published as", "pred", "err%");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::size_t line = i + 2;  // the header is line 1
    TrainingCase c;
    std::string stage = "row";
    TrainingRow row = rows[i];
    const std::string supplied = supplement_row(row, o.supplement);
    try {
      c = training_case(row);
      if (!supplied.empty()) c.mfu_basis += ", config " + supplied;
      stage = "job";
      const double pred = predict(c, o);
      const double err = (pred / c.published_mfu - 1) * 100;
      fig.errors.push_back(std::fabs(err));
      std::printf("%4zu %-14s %-54s %6.1f%% %-32s %6.1f%% %+7.1f\n", line, c.model_text.c_str(),
                  describe(c).c_str(), c.published_mfu * 100, c.mfu_basis.c_str(), pred * 100, err);
    } catch (const InputError& e) {
      ++fig.reasons[e.field()];
      std::printf("%4zu %-14s not expressible: %s\n", line, rows[i].model.c_str(), e.what());
      if (stage == "job") std::printf("     %-14s %s\n", "", describe(c).c_str());
    } catch (const std::exception& e) {
      // Not the input's fault: a defect of lockstep, counted apart so that it is seen.
      ++fig.reasons["internal error"];
      std::printf("%4zu %-14s internal error: %s\n", line, rows[i].model.c_str(), e.what());
    }
    if (o.commands && stage == "job") std::printf("     %s\n", c.command().c_str());
  }
  const auto& v = fig.errors;
  std::printf("rows expressible %zu of %zu", v.size(), fig.in_file);
  if (!v.empty()) {
    std::printf(
        "  median |error| %.1f%%  p90 |error| %.1f%%  max |error| %.1f%%  rows over 25%%: %zu",
        median(v), p90(v), *std::max_element(v.begin(), v.end()), over_25(v));
  }
  std::printf("\nnot expressible by reason:");
  if (fig.reasons.empty()) std::printf(" none");
  for (const auto& [reason, n] : fig.reasons) std::printf(" %s %zu;", reason.c_str(), n);
  std::printf("\n\n");
  return fig;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<fs::path> files;
  Options o;
  std::string supplement =
      (fs::path(LOCKSTEP_SOURCE_DIR) / "bench" / "data" / "training_supplement.csv").string();
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (std::strcmp(argv[i], "--csv") == 0 && has_value) {
      fs::path f = argv[++i];
      if (!fs::exists(f) && fs::exists(calibration_dir() / f)) f = calibration_dir() / f;
      files.push_back(f);
    } else if (std::strcmp(argv[i], "--engine") == 0 && has_value) {
      o.engine = argv[++i];
    } else if (std::strcmp(argv[i], "--efficiency") == 0 && has_value) {
      o.efficiency = argv[++i];
    } else if (std::strcmp(argv[i], "--ignore") == 0 && has_value) {
      o.ignore.emplace_back(argv[++i]);
    } else if (std::strcmp(argv[i], "--set") == 0 && has_value &&
               std::strchr(argv[i + 1], '=') != nullptr) {
      const std::string kv = argv[++i];
      o.set.emplace_back(kv.substr(0, kv.find('=')), kv.substr(kv.find('=') + 1));
    } else if (std::strcmp(argv[i], "--supplement") == 0 && has_value) {
      supplement = argv[++i];
    } else if (std::strcmp(argv[i], "--commands") == 0) {
      o.commands = true;
    } else {
      std::fprintf(stderr,
                   "bench_training: unknown argument '%s' (--csv FILE, --engine analytical|flow, "
                   "--efficiency F|kernels, --commands, --ignore KEY, --set KEY=VALUE, "
                   "--supplement FILE|none)\n",
                   argv[i]);
      return 2;
    }
  }
  if (o.engine != "analytical" && o.engine != "flow") {
    std::fprintf(stderr, "bench_training: --engine: unknown engine '%s' (analytical, flow)\n",
                 o.engine.c_str());
    return 2;
  }
  if (supplement != "none") {
    std::ifstream in(supplement);
    if (!in) {
      std::fprintf(stderr, "bench_training: --supplement: cannot read '%s'\n", supplement.c_str());
      return 2;
    }
    try {
      o.supplement = read_training_csv(in, fs::path(supplement).filename().string());
    } catch (const InputError& e) {
      std::fprintf(stderr, "bench_training: --supplement: %s\n", e.what());
      return 2;
    }
  }
  const bool every_file = files.empty();
  if (every_file) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(calibration_dir(), ec))
      if (entry.path().extension() == ".csv") files.push_back(entry.path());
    std::sort(files.begin(), files.end());
  }
  std::size_t tables = 0;
  for (const fs::path& f : files) {
    std::ifstream in(f);
    if (!in) {
      std::fprintf(stderr, "bench_training: --csv: cannot read '%s'\n", f.c_str());
      return 2;
    }
    std::vector<TrainingRow> rows;
    try {
      rows = read_training_csv(in, f.filename().string());
    } catch (const InputError& e) {
      if (every_file) continue;  // another kind of table (nccl-tests rows)
      std::fprintf(stderr, "bench_training: %s\n", e.what());
      return 2;
    }
    ++tables;
    run_file(f, rows, o);
  }
  if (tables == 0) {
    std::printf("bench_training: no training table in %s; nothing to compare (use --csv FILE)\n",
                calibration_dir().c_str());
  }
  return 0;
}
