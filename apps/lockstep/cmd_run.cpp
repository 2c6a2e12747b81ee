// 'lockstep run scenario.yaml': the main job. Runs everything the scenario names for each of its
// variants and writes report.html, results.json, one CSV per table and trace.json to --out.
// Results go to files and stdout, diagnostics and the progress bar to stderr. Files are staged
// under temporary names and renamed together at the end, so Ctrl-C never leaves half a report;
// the output directory is checked before the simulation (writable, and no file of the user's
// under a name lockstep writes unless --force: report/output.hpp).
#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "command.hpp"
#include "lockstep/config/args_file.hpp"
#include "lockstep/report/csv.hpp"
#include "lockstep/report/html.hpp"
#include "lockstep/report/json.hpp"
#include "lockstep/report/output.hpp"
#include "lockstep/report/progress.hpp"
#include "lockstep/report/run.hpp"
#include "lockstep/report/summary.hpp"
#include "lockstep/scenario/scenario.hpp"
#include "memory_options.hpp"

namespace lockstep::cli {
namespace {

struct RunOptions {
  std::string scenario;
  std::string out = "lockstep-out";
  bool quiet = false;
  bool force = false;
  MemoryFlags memory;
};

// Every name a run may write: the guard covers them all before the run knows which it writes.
std::vector<std::string> output_names() {
  std::vector<std::string> names = {"report.html", "results.json", "trace.json"};
  for (const auto& name : report::all_table_names()) names.push_back(name + ".csv");
  return names;
}

void run(const RunOptions& options) {
  report::install_interrupt_handler();
  const auto start = std::chrono::steady_clock::now();
  // Read once: the scenario may be a pipe (`lockstep run <(...)`), empty on a second read.
  const std::string text = read_text_file(options.scenario, "scenario");
  const report::RunInput input = report::run_input(parse_scenario(text, options.scenario), text,
                                                   options.scenario, LOCKSTEP_VERSION);
  if (!admit(report::estimate_run(input), options.memory.budget(),
             "try fewer nodes, smaller max_bytes or global_batch, or the analytical engine"))
    return;
  report::StagedOutput out(options.out);
  out.guard(output_names(), options.force);

  // One step for writing the files, after the scenario's own steps.
  report::Progress progress(!options.quiet && report::Progress::stderr_is_terminal(),
                            report::count_steps(input) + 1);
  report::RunArtifacts artifacts = report::run_scenario(input, progress);
  const report::RunResults& results = artifacts.results;

  progress.begin("writing report");
  out.add("results.json", report::results_json_text(results));
  for (const auto& table : report::results_tables(results))
    out.add(table.name + ".csv", to_csv(table));
  if (!artifacts.trace_json.empty()) out.add("trace.json", artifacts.trace_json);
  out.add("report.html", report::render_html(results));
  out.commit();
  progress.advance();
  progress.finish();

  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!options.quiet) {
    fmt::print("{} ({} variant{}):\n{}", results.title, results.variants.size(),
               results.variants.size() == 1 ? "" : "s", report::summary_text(results));
    for (const auto& note : results.notes) fmt::print(stderr, "lockstep: note: {}\n", note);
    for (const auto& v : results.variants) {
      for (const auto& note : v.notes) fmt::print(stderr, "lockstep: {}: {}\n", v.name, note);
    }
    fmt::print(stderr, "lockstep: done in {:.1f} s\n", seconds);
  }
  fmt::print("Report: {}\n", (out.dir() / "report.html").string());
}

const RegisterCommand kRun(10, [](CLI::App& root) {
  auto* cmd = root.add_subcommand(
      "run",
      "Run everything a scenario names (bill of materials, collective sweeps, training steps with "
      "noise, for each variant) and write report.html, results.json, CSV tables and trace.json");
  auto options = std::make_shared<RunOptions>();
  cmd->add_option("scenario", options->scenario,
                  "scenario file (YAML), e.g. scenarios/default.yaml")
      ->required();
  cmd->add_option("--out,-o", options->out, "output directory (created if needed)")
      ->capture_default_str();
  add_memory_options(*cmd, options->memory);
  cmd->add_flag("--force", options->force,
                "replace files of the output directory that lockstep did not write");
  cmd->add_flag("--quiet,-q", options->quiet,
                "no progress bar and no summary: print only where the report is");
  cmd->callback([options] { run(*options); });
});

}  // namespace
}  // namespace lockstep::cli
