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
#include "lockstep/core/error.hpp"
#include "lockstep/nccl/sweep.hpp"
#include "lockstep/report/collective_rows.hpp"
#include "lockstep/report/json.hpp"
#include "lockstep/report/progress.hpp"
#include "lockstep/scenario/cluster_source.hpp"
#include "lockstep/scenario/collective_sweep.hpp"
#include "lockstep/scenario/memory_estimate.hpp"
#include "lockstep/scenario/scenario.hpp"
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
  if (f.cluster.sharp) put("sharp", "true", "--sharp");
  if (!f.faults.empty()) m.set("faults", fault_list(f));
  return m;
}

// The scenario's `collectives:` unless the flags name a sweep themselves; --engine overrides the
// scenario's `engine:`.
std::vector<CollectiveSweep> sweeps_of(const Flags& f, const std::optional<Scenario>& scenario) {
  std::vector<CollectiveSweep> sweeps;
  const bool flags_name_sweep =
      !f.op.empty() || !f.algo.empty() || !f.min_bytes.empty() || !f.max_bytes.empty();
  if (scenario && scenario->collectives && !flags_name_sweep) {
    const std::string engine = !f.engine.empty()  ? f.engine
                               : scenario->engine ? parse_engine_name(*scenario->engine)
                                                  : std::string("analytical");
    sweeps = parse_collectives_section(*scenario->collectives, engine);
    // --fault replaces the sweeps' faults, as --engine their engine.
    if (!f.faults.empty()) {
      ArgNode m = ArgNode::map("flags");
      m.set("faults", fault_list(f));
      const std::vector<FaultSpec> faults = parse_collective_sweep(m).faults;
      for (auto& s : sweeps) s.faults = faults;
    }
  } else {
    CollectiveSweep s = parse_collective_sweep(sweep_args(f));
    if (f.engine.empty() && scenario && scenario->engine)
      s.engine = parse_engine_name(*scenario->engine);
    sweeps.push_back(s);
  }
  if (scenario)
    for (auto& s : sweeps) s.packet = scenario->packet;
  return sweeps;
}

void run(const Flags& f) {
  const std::optional<Scenario> scenario = load_cluster_scenario(f.cluster, "--scenario");
  const std::vector<CollectiveSweep> sweeps = sweeps_of(f, scenario);
  const ClusterSource source(scenario ? &*scenario : nullptr, f.cluster);
  // Every engine runs on the graph, the analytical one included (it prices the NCCL model on
  // it). NCCL sees a preset through the preset's own figures, other clusters through the graph;
  // a preset too large to build as a graph gets the NCCL model alone, unless faults need one.
  bool need_graph = !source.preset();
  for (const auto& s : sweeps)
    need_graph = need_graph || s.engine != "analytical" || !s.faults.empty();
  // The estimate from the inventory (closed form), before the graph and the engines allocate.
  const Inventory inventory = source.build(BuildOptions{.want_graph = false}).inventory;
  RunEstimate estimate;
  estimate.add("lockstep", kBaseBytes);
  add_graph_estimate(estimate, inventory.gpus);
  add_sweeps_estimate(estimate, sweeps, inventory.gpus, inventory.diameter_switch_hops + 1);
  if (!admit(estimate, f.memory.budget(),
             "try fewer --nodes, a smaller --max-bytes, or --engine analytical"))
    return;
  std::optional<Topology> graph = source.build().graph;
  if (!graph && need_graph)
    source.build_args().fail("the cluster is too large to build as a graph for this engine");
  const NcclCluster cluster =
      source.preset() ? nccl_cluster(*source.preset()) : nccl_cluster(*graph);
  const std::string title = source.title(graph ? &*graph : nullptr);
  // JSON is one document: the list of sweeps, as a variant's `collectives` in results.json.
  std::vector<report::Sweep> done;
  // A bar with an ETA on stderr while the flow or packet engine runs the rows (one step each;
  // the analytical engine is instant), when stderr is a terminal, as `run` draws.
  std::size_t rows = 0;
  bool slow = false;
  for (const auto& s : sweeps) {
    rows += s.sizes(cluster.ranks()).size();
    slow = slow || s.engine != "analytical";
  }
  report::Progress progress(slow && !f.quiet && report::Progress::stderr_is_terminal(), rows);
  for (const auto& s : sweeps) {
    progress.begin(fmt::format("{} on {}", to_string(s.op), s.engine));
    const auto row_done = [&progress](std::size_t, std::size_t) { progress.advance(); };
    const auto result =
        run_collective_sweep(s, cluster, graph ? &*graph : nullptr, row_done, progress.hook());
    progress.finish();
    report::Sweep sweep = report::sweep_record(s, result);
    if (f.format == "json") {
      done.push_back(std::move(sweep));
      continue;
    }
    if (f.format == "table") {
      std::string faults;
      for (const FaultSpec& fault : s.faults) faults += (faults.empty() ? "" : ", ") + fault.text;
      fmt::print("# lockstep collective: {}{} on {}, engine {}{}\n", to_string(s.op),
                 s.op == CollectiveOp::AllToAllV ? fmt::format(" (skew {})", s.skew) : "", title,
                 s.engine, faults.empty() ? "" : ", faults " + faults);
    }
    fmt::print("{}", report::format_collective_rows(sweep, f.format));
  }
  if (f.format == "json") fmt::print("{}", report::json_text(report::sweeps_to_json(done)));
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
