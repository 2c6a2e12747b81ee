// 'lockstep collective': nccl-tests for clusters you don't own. One row per size with the
// algorithm and protocol NCCL would pick, time, algbw and busbw, from the NCCL model (analytical)
// or a timing engine run of the algorithm's programs (flow, packet).
#include <fmt/format.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cluster_options.hpp"
#include "command.hpp"
#include "lockstep/api/commands.hpp"
#include "lockstep/report/collective_rows.hpp"
#include "lockstep/report/json.hpp"
#include "lockstep/report/progress.hpp"
#include "memory_options.hpp"

namespace lockstep::cli {
namespace {

struct Flags {
  ClusterFlags cluster;
  std::string op, algo, proto, min_bytes, max_bytes, step_factor, type, channels, engine, skew;
  std::vector<std::string> faults;
  std::string format = "table";
  bool quiet = false;
  MemoryFlags memory;
};

// --fault flags as a scenario's `faults:` list.
ArgNode fault_list(const Flags& f) {
  ArgNode list = ArgNode::list("--fault");
  for (const auto& text : f.faults) list.push(ArgNode::scalar(text, "--fault"));
  return list;
}

// CLI flags become an ArgNode so that they go through the same validation as scenario files.
ArgNode sweep_args(const Flags& f) {
  ArgNode m = ArgNode::map("flags");
  auto put = [&](const char* key, const std::string& value, const char* flag) {
    if (!value.empty()) m.set(key, ArgNode::scalar(value, flag));
  };
  put("op", f.op, "--op");
  put("algo", f.algo, "--algo");
  put("proto", f.proto, "--proto");
  put("min_bytes", f.min_bytes, "--min-bytes");
  put("max_bytes", f.max_bytes, "--max-bytes");
  put("step_factor", f.step_factor, "--step-factor");
  put("type", f.type, "--type");
  put("channels", f.channels, "--channels");
  put("engine", f.engine, "--engine");
  put("skew", f.skew, "--skew");
  if (!f.faults.empty()) m.set("faults", fault_list(f));
  return m;
}

void run(const Flags& f) {
  const std::optional<api::CollectiveRun> done =
      api::run_collective(f.cluster, sweep_args(f), f.memory.budget(),
                          !f.quiet && report::Progress::stderr_is_terminal());
  if (!done) return;  // a dry run
  // JSON is one document: the list of sweeps, as a variant's `collectives` in results.json.
  if (f.format == "json") {
    fmt::print("{}", report::json_text(report::sweeps_to_json(done->sweeps)));
    return;
  }
  for (std::size_t i = 0; i < done->specs.size(); ++i) {
    const CollectiveSweep& s = done->specs[i];
    if (f.format == "table") {
      std::string faults;
      for (const FaultSpec& fault : s.faults) faults += (faults.empty() ? "" : ", ") + fault.text;
      fmt::print("# lockstep collective: {}{} on {}, engine {}{}\n", to_string(s.op),
                 s.op == CollectiveOp::AllToAllV ? fmt::format(" (skew {})", s.skew) : "",
                 done->title, s.engine, faults.empty() ? "" : ", faults " + faults);
    }
    fmt::print("{}", report::format_collective_rows(done->sweeps[i], f.format));
  }
}

const RegisterCommand kCollective(30, [](CLI::App& root) {
  auto* cmd = root.add_subcommand(
      "collective", "Predict nccl-tests output (time, algbw, busbw per size) for a cluster");
  auto f = std::make_shared<Flags>();
  add_cluster_options(*cmd, f->cluster);
  cmd->add_option("--scenario", f->cluster.scenario,
                  "a scenario file (cluster, collectives, engine)");
  cmd->add_option("--op", f->op,
                  "all_reduce | all_gather | reduce_scatter | broadcast | reduce | alltoall | "
                  "alltoallv | sendrecv");
  cmd->add_option("--algo", f->algo,
                  "auto | ring | tree | nvls | nvls_tree | collnet | halving_doubling | direct | "
                  "pat | hierarchical | torus_ring");
  cmd->add_option("--skew", f->skew,
                  "alltoallv: Zipf exponent of the receivers' shares (default 0: alltoall's)");
  cmd->add_option("--proto", f->proto, "auto | ll | ll128 | simple");
  cmd->add_option("--min-bytes", f->min_bytes, "smallest size (default 8)");
  cmd->add_option("--max-bytes", f->max_bytes, "largest size (default 8GiB)");
  cmd->add_option("--step-factor", f->step_factor, "size multiplier per row (default 2)");
  cmd->add_option("--type", f->type, "element type (default float)");
  cmd->add_option("--channels", f->channels, "NCCL channels (default: as NCCL picks)");
  cmd->add_option("--engine", f->engine, "analytical | flow | packet (default analytical)");
  cmd->add_option("--fault", f->faults,
                  "fault (repeatable): degraded-link:link=L,x=F | failed-link:link=L | "
                  "slow-gpu:rank=R,delay=D (rank R starts D late); L an index of topo --emit's "
                  "links or A-B device names (nic3-leaf3)");
  cmd->add_option("--format", f->format, "table | csv | json")
      ->check(CLI::IsMember({"table", "csv", "json"}));
  cmd->add_flag("--quiet,-q", f->quiet, "no progress bar (drawn on stderr only when a terminal)");
  add_memory_options(*cmd, f->memory);
  cmd->callback([f] { run(*f); });
});

}  // namespace
}  // namespace lockstep::cli
