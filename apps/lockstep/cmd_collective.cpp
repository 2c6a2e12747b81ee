// 'lockstep collective': nccl-tests for clusters you don't own. One row per size with the
// algorithm and protocol NCCL would pick, time, algbw and busbw, from the NCCL model (analytical)
// or a timing engine run of the algorithm's programs (flow, packet).
#include <fmt/format.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "command.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/engine/collective_sweep.hpp"
#include "lockstep/nccl/sweep.hpp"
#include "lockstep/scenario/collective_sweep.hpp"
#include "lockstep/scenario/scenario.hpp"
#include "lockstep/topology/builder.hpp"
#include "lockstep/topology/presets.hpp"

namespace lockstep::cli {
namespace {

struct Flags {
  std::string system, fabric, scenario;
  std::string nodes, gpus_per_node, nics_per_node, nic_speed;
  bool sharp = false;
  std::string op, algo, proto, min_bytes, max_bytes, step_factor, type, channels, engine;
  std::string format = "table";
};

// CLI flags become an ArgNode so that they go through the same validation as scenario files.
void put(ArgNode& map, const std::string& key, const std::string& value, const char* flag) {
  if (!value.empty()) map.set(key, ArgNode::scalar(value, flag));
}

ArgNode sweep_args(const Flags& f) {
  ArgNode m = ArgNode::map("flags");
  put(m, "op", f.op, "--op");
  put(m, "algo", f.algo, "--algo");
  put(m, "proto", f.proto, "--proto");
  put(m, "min_bytes", f.min_bytes, "--min-bytes");
  put(m, "max_bytes", f.max_bytes, "--max-bytes");
  put(m, "step_factor", f.step_factor, "--step-factor");
  put(m, "type", f.type, "--type");
  put(m, "channels", f.channels, "--channels");
  put(m, "engine", f.engine, "--engine");
  if (f.sharp) put(m, "sharp", "true", "--sharp");
  return m;
}

ArgNode preset_args(const Flags& f) {
  ArgNode m = ArgNode::map("flags");
  put(m, "system", f.system.empty() ? "hgx-h100" : f.system, "--system");
  put(m, "fabric", f.fabric, "--fabric");
  put(m, "nodes", f.nodes, "--nodes");
  put(m, "gpus_per_node", f.gpus_per_node, "--gpus-per-node");
  put(m, "nics_per_node", f.nics_per_node, "--nics-per-node");
  put(m, "nic_speed", f.nic_speed, "--nic-speed");
  if (f.sharp) put(m, "sharp", "true", "--sharp");
  return m;
}

std::optional<Topology> build_graph(const ArgNode& cluster) {
  BuildResult built = build_topology(cluster);
  if (!built.graph) cluster.fail("the cluster is too large to build as a graph for this engine");
  return std::move(built.graph);
}

void run(const Flags& f) {
  std::vector<CollectiveSweep> sweeps;
  std::optional<Scenario> scenario;
  if (!f.scenario.empty()) {
    if (!f.system.empty() || !f.fabric.empty() || !f.nodes.empty())
      throw InputError("scenario", "give either --scenario or --system/--fabric/--nodes");
    scenario = load_scenario(f.scenario);
  }
  const bool flags_name_sweep =
      !f.op.empty() || !f.algo.empty() || !f.min_bytes.empty() || !f.max_bytes.empty();
  if (scenario && scenario->collectives && !flags_name_sweep) {
    const std::string engine = !f.engine.empty()  ? f.engine
                               : scenario->engine ? parse_engine_name(*scenario->engine)
                                                  : std::string("analytical");
    sweeps = parse_collectives_section(*scenario->collectives, engine);
  } else {
    CollectiveSweep s = parse_collective_sweep(sweep_args(f));
    if (f.engine.empty() && scenario && scenario->engine)
      s.engine = parse_engine_name(*scenario->engine);
    sweeps.push_back(s);
  }
  if (scenario)
    for (auto& s : sweeps) s.packet = scenario->packet;
  bool need_graph = false;
  for (const auto& s : sweeps) need_graph = need_graph || s.engine != "analytical";

  NcclCluster cluster;
  std::optional<Topology> graph;
  std::string title;
  const ArgNode* cluster_args = scenario ? &scenario->cluster : nullptr;
  const ArgNode* builder = cluster_args ? cluster_args->find("builder") : nullptr;
  const bool preset = !scenario || (cluster_args->has("system") &&
                                    (builder == nullptr || builder->text() == "preset"));
  if (preset) {
    const ArgNode args = scenario ? scenario->cluster : preset_args(f);
    const PresetCluster p = resolve_preset(preset_request(args));
    args.check_all_used();
    cluster = nccl_cluster(p);
    if (need_graph) graph = build_graph(rail_optimized_args(p, args.path()));
    title = fmt::format("{} x {} ({} GPUs), {}", p.nodes, p.system.name, p.ranks(), p.fabric.name);
  } else {
    graph = build_graph(*cluster_args);
    cluster = nccl_cluster(*graph);
    title = fmt::format("{} ({} GPUs)", scenario->name, graph->gpus().size());
  }
  for (const auto& s : sweeps) {
    const auto rows = run_collective_sweep(s, cluster, graph ? &*graph : nullptr);
    if (f.format == "table")
      fmt::print("# lockstep collective: {} on {}, engine {}\n", to_string(s.op), title, s.engine);
    fmt::print("{}", format_collective_rows(rows, f.format));
  }
}

const RegisterCommand kCollective(30, [](CLI::App& root) {
  auto* cmd = root.add_subcommand(
      "collective", "Predict nccl-tests output (time, algbw, busbw per size) for a cluster");
  auto f = std::make_shared<Flags>();
  cmd->add_option("--system", f->system,
                  "dgx-a100 | hgx-h100 | hgx-h200 | hgx-b200 | gb200-nvl72 | mi300x");
  cmd->add_option("--fabric", f->fabric,
                  "ib-hdr | ib-ndr | ib-xdr | roce-200g | roce-400g | roce-800g | efa | tcp");
  cmd->add_option("--nodes", f->nodes, "nodes (servers; GB200: 4-GPU trays), default 1");
  cmd->add_option("--gpus-per-node", f->gpus_per_node, "use fewer GPUs per node than shipped");
  cmd->add_option("--nics-per-node", f->nics_per_node, "NICs per node in use");
  cmd->add_option("--nic-speed", f->nic_speed, "NIC speed, e.g. 400Gbps");
  cmd->add_flag("--sharp", f->sharp, "in-network reduction (InfiniBand SHARP)");
  cmd->add_option("--scenario", f->scenario, "a scenario file (cluster, collectives, engine)");
  cmd->add_option("--op", f->op,
                  "all_reduce | all_gather | reduce_scatter | broadcast | reduce | alltoall | "
                  "sendrecv");
  cmd->add_option("--algo", f->algo,
                  "auto | ring | tree | nvls | nvls_tree | collnet | halving_doubling | direct | "
                  "pat");
  cmd->add_option("--proto", f->proto, "auto | ll | ll128 | simple");
  cmd->add_option("--min-bytes", f->min_bytes, "smallest size (default 8)");
  cmd->add_option("--max-bytes", f->max_bytes, "largest size (default 8GiB)");
  cmd->add_option("--step-factor", f->step_factor, "size multiplier per row (default 2)");
  cmd->add_option("--type", f->type, "element type (default float)");
  cmd->add_option("--channels", f->channels, "NCCL channels (default: as NCCL picks)");
  cmd->add_option("--engine", f->engine, "analytical | flow | packet (default analytical)");
  cmd->add_option("--format", f->format, "table | csv | json")
      ->check(CLI::IsMember({"table", "csv", "json"}));
  cmd->callback([f] { run(*f); });
});

}  // namespace
}  // namespace lockstep::cli
