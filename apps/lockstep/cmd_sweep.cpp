// 'lockstep sweep grid.yaml': one base scenario at every point of a grid or a list of points
// (any dotted scenario key), run in parallel on this machine's cores (one process per point) or,
// under `mpirun -n N`, spread over N ranks on any machines, rank 0 gathering one sweep.csv,
// results.json, report.html and the run's CSV tables. Resumable: each point's results are kept
// in --out/points/ with a manifest, and a rerun skips the finished ones. docs/sweeps.md.
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "command.hpp"
#include "lockstep/config/args_file.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/report/csv.hpp"
#include "lockstep/report/html.hpp"
#include "lockstep/report/json.hpp"
#include "lockstep/report/output.hpp"
#include "lockstep/report/progress.hpp"
#include "lockstep/sweep/sweep.hpp"
#include "memory_options.hpp"
#include "sweep_mpi.hpp"

namespace lockstep::cli {
namespace {

struct SweepOptions {
  std::string file;
  std::string out = "lockstep-sweep";
  unsigned jobs = 0;  // 0: one per core
  bool force = false;
  bool quiet = false;
  MemoryFlags memory;
};

std::vector<std::string> output_names() {
  std::vector<std::string> names = {"sweep.csv", "results.json", "report.html"};
  for (const auto& name : report::all_table_names()) names.push_back(name + ".csv");
  return names;
}

// The largest point's estimate, times the points that run at once on one machine.
RunEstimate sweep_estimate(const sweep::SweepPlan& plan, unsigned concurrent) {
  RunEstimate largest;
  for (const sweep::SweepPoint& point : plan.points) {
    const RunEstimate e = report::estimate_run(sweep::point_input(plan, point));
    if (e.total() > largest.total()) largest = e;
  }
  if (concurrent > 1) {
    for (auto& part : largest.parts) {
      part.what = fmt::format("{} x {}", concurrent, part.what);
      part.bytes *= concurrent;
    }
  }
  return largest;
}

void run_sweep(const SweepOptions& options) {
  report::install_interrupt_handler();
  const auto start = std::chrono::steady_clock::now();
  SweepMpi mpi;  // rank 0 of 1 unless started by mpirun (sweep_mpi.hpp)
  // Every rank reads and checks the same files; only rank 0 says what is wrong (the others
  // stop with the same exit code, quietly).
  try {
    const std::string text = read_text_file(options.file, "sweep");
    const sweep::SweepPlan plan = sweep::parse_sweep(text, options.file, LOCKSTEP_VERSION);
    sweep::check_points(plan);
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    // Under MPI the ranks are the parallelism (start one per core); a rank runs one point at a
    // time, as forking inside an MPI process is not portable.
    const unsigned jobs = mpi.size() > 1 ? 1 : (options.jobs == 0 ? cores : options.jobs);
    if (!admit(sweep_estimate(plan, jobs), options.memory.budget(),
               "try fewer --jobs, fewer nodes, smaller max_bytes or global_batch")) {
      return;
    }
    const std::filesystem::path points_dir = std::filesystem::path(options.out) / "points";
    std::unique_ptr<report::StagedOutput> out;
    std::vector<std::size_t> pending;
    std::size_t finished_before = 0;
    std::string setup_error;
    if (mpi.rank() == 0) {
      try {
        out = std::make_unique<report::StagedOutput>(options.out);
        out->guard(output_names(), options.force);
        std::filesystem::create_directories(points_dir);
        for (std::size_t i = 0; i < plan.points.size(); ++i) {
          const auto file = points_dir / (plan.points[i].id + ".json");
          if (!options.force && sweep::point_finished(plan, plan.points[i], file)) {
            ++finished_before;
          } else {
            pending.push_back(i);
          }
        }
      } catch (const InputError& e) {
        setup_error = e.what();
      }
    }
    if (!mpi.share_pending(pending, !setup_error.empty())) {
      if (mpi.rank() == 0) throw InputError("", setup_error);
      mpi.quiet_exit(2);
    }

    report::Progress progress(
        !options.quiet && mpi.rank() == 0 && report::Progress::stderr_is_terminal(),
        pending.size() + 1);
    auto done = [&](std::size_t i) {
      progress.begin(plan.points[i].spec.name);
      progress.advance();
    };
    if (mpi.size() > 1) {
      mpi.run_points(plan, pending, points_dir, done);
      if (mpi.rank() != 0) return;
    } else {
      sweep::run_points_locally(plan, pending, jobs, points_dir, done);
    }

    progress.begin("writing report");
    std::vector<report::Variant> variants;
    for (const sweep::SweepPoint& point : plan.points) {
      const auto file = points_dir / (point.id + ".json");
      variants.push_back(sweep::read_point(read_text_file(file.string(), "point file")));
    }
    const report::RunResults merged = sweep::merge_points(plan, std::move(variants));
    out->add("sweep.csv", report::to_csv(sweep::sweep_table(plan, merged)));
    out->add("results.json", report::results_json_text(merged));
    for (const auto& table : report::results_tables(merged))
      out->add(table.name + ".csv", report::to_csv(table));
    out->add("report.html", report::render_html(merged));
    out->commit();
    progress.advance();
    progress.finish();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!options.quiet) {
      fmt::print(stderr,
                 "lockstep: {} points: {} run ({} rank{} x {} job{}), {} finished before; done "
                 "in {:.1f} s\n",
                 plan.points.size(), pending.size(), mpi.size(), mpi.size() == 1 ? "" : "s", jobs,
                 jobs == 1 ? "" : "s", finished_before, seconds);
    }
    fmt::print("Sweep: {}\nReport: {}\n", (out->dir() / "sweep.csv").string(),
               (out->dir() / "report.html").string());
  } catch (const InputError&) {
    if (mpi.rank() != 0) mpi.quiet_exit(2);
    throw;
  }
}

const RegisterCommand kSweep(15, [](CLI::App& root) {
  auto* cmd = root.add_subcommand(
      "sweep",
      "Run a base scenario at every point of a grid or list of scenario keys (job.tp, "
      "cluster.fabric, engine ...), on all cores or under mpirun, resumable; one sweep.csv, "
      "results.json and report.html");
  auto options = std::make_shared<SweepOptions>();
  cmd->add_option("file", options->file,
                  "sweep file (YAML): scenario: BASE.yaml and grid: or points:")
      ->required();
  cmd->add_option("--out,-o", options->out,
                  "output directory (created if needed; points/ keeps each point's results)")
      ->capture_default_str();
  cmd->add_option("--jobs,-j", options->jobs,
                  "points run at once on this machine (default: one per core; 1 under mpirun)")
      ->check(CLI::Range(1u, 4096u));
  add_memory_options(*cmd, options->memory);
  cmd->add_flag("--force", options->force,
                "run every point again, and replace files of the output directory that lockstep "
                "did not write");
  cmd->add_flag("--quiet,-q", options->quiet, "no progress bar and no closing line");
  cmd->callback([options] { run_sweep(*options); });
});

}  // namespace
}  // namespace lockstep::cli
