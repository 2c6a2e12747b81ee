// 'lockstep serve': an inference job (`job: {type: inference}`) answering a stream of requests:
// TTFT, TPOT and latency percentiles, throughput, utilisation and cost (docs/inference.md).
#include <fmt/format.h>

#include <memory>

#include "cluster_options.hpp"
#include "command.hpp"
#include "lockstep/api/commands.hpp"
#include "lockstep/report/inference.hpp"
#include "lockstep/report/json.hpp"
#include "memory_options.hpp"

namespace lockstep::cli {
namespace {

struct ServeFlags {
  api::ServeRequest request;
  std::string format = "text";
  MemoryFlags memory;
};

void run(ServeFlags& f) {
  f.request.budget = f.memory.budget();
  const std::optional<api::ServeRun> run = api::run_serve(f.request);
  if (!run) return;  // a dry run
  const api::ServeRun& done = *run;
  if (f.format == "json") {
    fmt::print("{}", report::json_text(report::inference_to_json(done.result, done.config)));
    return;
  }
  fmt::print("{}", report::format_inference_text(done.result, done.config));
  if (!done.trace_path.empty()) fmt::print("trace              {}\n", done.trace_path);
}

const RegisterCommand kServe(45, [](CLI::App& root) {
  auto* cmd = root.add_subcommand(
      "serve", "Simulate inference serving: TTFT, TPOT, latency percentiles, tokens/s, cost");
  auto f = std::make_shared<ServeFlags>();
  cmd->add_option("scenario", f->request.cluster.scenario,
                  "a scenario file with cluster: and job: {type: inference} sections")
      ->required();
  add_cluster_options(*cmd, f->request.cluster);
  cmd->add_option("--trace", f->request.trace,
                  "write a Perfetto trace-event JSON of each replica's engine steps");
  cmd->add_flag("--force", f->request.force, "replace a --trace file that lockstep did not write");
  cmd->add_option(
      "--pxn", f->request.pxn,
      "false: NCCL_PXN_DISABLE=1, the job's NCCL alltoall / send / recv leave by the sender's "
      "own NIC, not over NVLink to the receiver's rail (default: the scenario's "
      "collectives.pxn, else true)");
  cmd->add_option("--format", f->format, "text | json")->check(CLI::IsMember({"text", "json"}));
  add_memory_options(*cmd, f->memory);
  cmd->callback([f] { run(*f); });
});

}  // namespace
}  // namespace lockstep::cli
