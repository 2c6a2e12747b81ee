// 'lockstep train': one training iteration of a model on a cluster, with its breakdown, MFU,
// cost, and Monte Carlo jitter statistics. Flags become the same ArgNode map a scenario's `job:`
// section is, so both go through parse_train_config (docs/scenario-job.md).
#include <fmt/format.h>

#include <memory>
#include <optional>

#include "cluster_options.hpp"
#include "command.hpp"
#include "lockstep/api/commands.hpp"
#include "lockstep/chakra/export.hpp"
#include "lockstep/report/json.hpp"
#include "lockstep/report/progress.hpp"
#include "lockstep/report/training.hpp"
#include "memory_options.hpp"

namespace lockstep::cli {
namespace {

struct TrainFlags {
  api::TrainRequest request;
  std::string format = "text";
  bool quiet = false;
  std::string chakra_out;  // a directory for the step as Chakra traces
  MemoryFlags memory;
};

void run(TrainFlags& f) {
  f.request.budget = f.memory.budget();
  f.request.progress = !f.quiet && report::Progress::stderr_is_terminal();
  f.request.handle_interrupt = true;
  const std::optional<api::TrainRun> done = api::run_train(f.request);
  if (!done) return;  // a dry run
  if (f.format == "json") {
    // The training object of results.json, from the same record.
    fmt::print("{}", report::json_text(report::training_to_json(
                         report::training_record(done->result, done->config))));
  } else {
    fmt::print("{}", report::format_training_text(done->result, done->config));
    if (!done->trace_path.empty()) fmt::print("trace              {}\n", done->trace_path);
  }
  if (!f.chakra_out.empty()) {
    // The noise-free step, every rank, as ASTRA-sim reads it (docs/chakra.md "Export").
    chakra::write_traces(chakra::export_training(done->topology, done->config), f.chakra_out,
                         "step");
    if (f.format != "json") fmt::print("chakra traces      {}/step.<rank>.et\n", f.chakra_out);
  }
}

const RegisterCommand kTrain(40, [](CLI::App& root) {
  auto* cmd = root.add_subcommand(
      "train", "Simulate a training iteration: time breakdown, MFU, cost, jitter and stragglers");
  auto f = std::make_shared<TrainFlags>();
  cmd->add_option("scenario", f->request.cluster.scenario,
                  "a scenario file with cluster: and job: sections");
  add_cluster_options(*cmd, f->request.cluster);
  f->request.job.reserve(api::train_job_options().size());
  for (const auto& [key, help] : api::train_job_options()) {
    cmd->add_option_function<std::string>(
        api::flag_of(key),
        [f, key = key](const std::string& v) { f->request.job.emplace_back(key, v); }, help);
  }
  cmd->add_option("--jitter", f->request.jitter,
                  "compute noise (repeatable): normal:5% | lognormal:0.1 | straggler:p=0.01,x=1.5");
  cmd->add_option(
      "--fault", f->request.faults,
      "fault (repeatable): slow-gpu:rank=R,x=X (or node=N,gpu=G or stage=S for rank=R) | "
      "degraded-link:link=L,x=F | "
      "failed-link:link=L; L an index of topo --emit's links or A-B device names "
      "(nic3-leaf3)");
  cmd->add_option(
      "--pxn", f->request.pxn,
      "false: NCCL_PXN_DISABLE=1, the job's NCCL alltoall / send / recv leave by the sender's "
      "own NIC, not over NVLink to the receiver's rail (default: the scenario's "
      "collectives.pxn, else true)");
  cmd->add_option("--format", f->format, "text | json")->check(CLI::IsMember({"text", "json"}));
  cmd->add_flag("--force", f->request.force, "replace a --trace file that lockstep did not write");
  cmd->add_flag("--quiet,-q", f->quiet, "no progress bar (drawn on stderr only when a terminal)");
  cmd->add_option("--chakra-out", f->chakra_out,
                  "write the noise-free step as Chakra traces DIR/step.<rank>.et (docs/chakra.md)");
  add_memory_options(*cmd, f->memory);
  cmd->callback([f] { run(*f); });
});

}  // namespace
}  // namespace lockstep::cli
