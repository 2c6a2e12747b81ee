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
// --speed [--cpu-limit S] [--memory-limit MIB]: whether lockstep expresses each row and how fast
// (default file bench/data/training_configs.csv, the published configurations users try; a
// published figure is optional there): each row runs in a child process, which prints per row
// "expressed" or the one-line refusal, the child's CPU seconds and peak resident memory, the
// iteration time and the MFU; then "expressed N of M, slowest X s, peak Y MiB". A row past the CPU
// limit (default 300 s) or the resident memory limit (default 4096 MiB) is stopped and counted as
// such.
#include "lockstep/workload/training.hpp"

#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
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
  bool speed = false;
  double cpu_limit_s = 300;
  double memory_limit_mib = 4096;
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
  if (const std::string r = value_of(c, "lora_rank"); !r.empty()) s += " lora" + r;
  return s;
}

// One row simulated; InputError (from the row, the job or the simulation) when the row is not
// expressible.
TrainResult predict(TrainingCase& c, const Options& o) {
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
  return simulate_training(*built.graph, config);
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
      const double pred = predict(c, o).mfu;
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

// --speed: one row in a child process, so that its CPU time and peak memory are its own (as a
// `lockstep train` run's) and a row that runs away is stopped without stopping the table.
struct RowRun {
  std::string outcome;  // "expressed", "not expressible", "internal error", "stopped"
  std::string text;     // the configuration and figures, or the refusal
  std::string reason;   // the refusing field
  double cpu_s = 0, peak_mib = 0;
};

// The child's report, one tab-separated line: outcome, reason, text.
[[noreturn]] void run_row_in_child(int out_fd, TrainingRow row, const Options& o) {
  std::string outcome = "expressed", reason, text;
  TrainingCase c;
  bool read = false;
  try {
    supplement_row(row, o.supplement);
    c = training_case(row, PublishedFigure::Optional);
    read = true;
    const TrainResult r = predict(c, o);
    text =
        fmt::format("{}: iteration {:.3f} s, MFU {:.1f}%, {:.1f} of {:.1f} GiB, {} expansion",
                    describe(c), r.iteration.seconds(), r.mfu * 100,
                    r.memory.total().as_double() / 0x1p30, r.hbm.as_double() / 0x1p30, r.expansion);
    if (c.published_mfu > 0) text += fmt::format(" (published {:.1f}%)", c.published_mfu * 100);
  } catch (const InputError& e) {
    outcome = "not expressible";
    reason = e.field();
    text = e.what();
    if (read) text += " [" + describe(c) + "]";
  } catch (const std::exception& e) {
    outcome = "internal error";
    reason = "internal error";
    text = e.what();
  }
  for (std::string* s : {&reason, &text})
    std::replace_if(
        s->begin(), s->end(), [](char ch) { return ch == '\t' || ch == '\n'; }, ' ');
  const std::string line = outcome + "\t" + reason + "\t" + text;
  for (std::size_t done = 0; done < line.size();) {
    const ssize_t n = write(out_fd, line.data() + done, line.size() - done);
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  std::fflush(nullptr);
  _exit(0);
}

// The resident memory of a running process in MiB (VmRSS), 0 when unread.
double resident_mib(pid_t pid) {
  std::ifstream status(fmt::format("/proc/{}/status", pid));
  std::string key;
  while (status >> key) {
    if (key == "VmRSS:") {
      double kib = 0;
      status >> kib;
      return kib / 1024;
    }
    status.ignore(1 << 12, '\n');
  }
  return 0;
}

RowRun run_row(const TrainingRow& row, const Options& o) {
  RowRun run;
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("bench_training: pipe failed");
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("bench_training: fork failed");
  if (pid == 0) {
    close(fds[0]);
    const auto limit = static_cast<rlim_t>(std::ceil(o.cpu_limit_s));
    const rlimit cpu{limit, limit + 5};  // SIGXCPU at the soft limit, SIGKILL at the hard one
    setrlimit(RLIMIT_CPU, &cpu);
    run_row_in_child(fds[1], row, o);
  }
  close(fds[1]);
  std::string report;
  char buf[4096];
  int status = 0;
  rusage usage{};
  bool over_memory = false;
  // The report fits the pipe's buffer, so the child never blocks on it: watch its memory until
  // it exits, then read.
  while (wait4(pid, &status, WNOHANG, &usage) == 0) {
    if (!over_memory && resident_mib(pid) > o.memory_limit_mib) {
      over_memory = true;
      kill(pid, SIGKILL);  // the child this call started, by its id
    }
    usleep(20'000);
  }
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) report.append(buf, std::size_t(n));
  close(fds[0]);
  run.cpu_s = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
              static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
  run.peak_mib = static_cast<double>(usage.ru_maxrss) / 1024.0;  // Linux reports KiB
  if (WIFSIGNALED(status) || report.empty()) {
    run.outcome = "stopped";
    run.reason =
        over_memory ? "memory limit"
        : WIFSIGNALED(status) && (WTERMSIG(status) == SIGXCPU || WTERMSIG(status) == SIGKILL)
            ? "cpu limit"
            : "crash";
    run.text = over_memory ? fmt::format("over {:.0f} MiB resident", o.memory_limit_mib)
               : run.reason == "cpu limit"
                   ? fmt::format("over {:.0f} s of CPU", o.cpu_limit_s)
                   : fmt::format("exited without a report (status {})", status);
    return run;
  }
  const std::size_t a = report.find('\t'), b = report.find('\t', a + 1);
  run.outcome = report.substr(0, a);
  run.reason = report.substr(a + 1, b - a - 1);
  run.text = report.substr(b + 1);
  return run;
}

void run_speed(const fs::path& path, const std::vector<TrainingRow>& rows, const Options& o) {
  std::printf("== %s, engine %s, --speed (CPU limit %.0f s, memory limit %.0f MiB per row) ==\n",
              path.filename().c_str(), o.engine.c_str(), o.cpu_limit_s, o.memory_limit_mib);
  std::printf("%4s %7s %8s %-16s %s\n", "line", "cpu_s", "peak_MiB", "model", "outcome");
  std::size_t expressed = 0;
  double slowest = 0, peak = 0;
  std::size_t slowest_line = 0, peak_line = 0;
  std::map<std::string, std::size_t> reasons;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::size_t line = i + 2;  // the header is line 1
    const RowRun run = run_row(rows[i], o);
    if (run.outcome == "expressed") {
      ++expressed;
    } else {
      ++reasons[run.outcome == "stopped" ? run.reason
                : run.reason.empty()     ? run.outcome
                                         : run.reason];
    }
    if (run.cpu_s > slowest) slowest = run.cpu_s, slowest_line = line;
    if (run.peak_mib > peak) peak = run.peak_mib, peak_line = line;
    std::printf("%4zu %7.2f %8.0f %-16s %s%s%s\n", line, run.cpu_s, run.peak_mib,
                rows[i].model.c_str(), run.outcome.c_str(), run.outcome == "expressed" ? " " : ": ",
                run.text.c_str());
    std::fflush(stdout);
  }
  std::printf("expressed %zu of %zu, slowest %.2f s CPU (line %zu), peak %.0f MiB (line %zu)\n",
              expressed, rows.size(), slowest, slowest_line, peak, peak_line);
  std::printf("not expressible by reason:");
  if (reasons.empty()) std::printf(" none");
  for (const auto& [reason, n] : reasons) std::printf(" %s %zu;", reason.c_str(), n);
  std::printf("\n\n");
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
    } else if (std::strcmp(argv[i], "--speed") == 0) {
      o.speed = true;
    } else if ((std::strcmp(argv[i], "--cpu-limit") == 0 ||
                std::strcmp(argv[i], "--memory-limit") == 0) &&
               has_value) {
      const bool cpu = argv[i][2] == 'c';
      char* end = nullptr;
      const double v = std::strtod(argv[++i], &end);
      if (*end != '\0' || !(v > 0)) {
        std::fprintf(stderr, "bench_training: %s: '%s' is not a positive number\n",
                     cpu ? "--cpu-limit" : "--memory-limit", argv[i]);
        return 2;
      }
      (cpu ? o.cpu_limit_s : o.memory_limit_mib) = v;
    } else {
      std::fprintf(stderr,
                   "bench_training: unknown argument '%s' (--csv FILE, --engine analytical|flow, "
                   "--efficiency F|kernels, --commands, --ignore KEY, --set KEY=VALUE, "
                   "--supplement FILE|none, --speed, --cpu-limit S, --memory-limit MIB)\n",
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
  if (files.empty() && o.speed)
    files.push_back(fs::path(LOCKSTEP_SOURCE_DIR) / "bench" / "data" / "training_configs.csv");
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
    if (o.speed) {
      run_speed(f, rows, o);
    } else {
      run_file(f, rows, o);
    }
  }
  if (tables == 0) {
    std::printf("bench_training: no training table in %s; nothing to compare (use --csv FILE)\n",
                calibration_dir().c_str());
  }
  return 0;
}
