// 'lockstep calibrate --from log.txt': an nccl-tests log from the user's own cluster, every size
// predicted on the cluster the flags describe, and the error per size with its median and p90
// (docs/nccl-tests.md).
#include <fmt/format.h>

#include <fstream>
#include <memory>
#include <optional>
#include <string>

#include "cluster_options.hpp"
#include "command.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/engine/registry/registry.hpp"
#include "lockstep/nccl/sweep.hpp"
#include "lockstep/report/nccl_tests.hpp"
#include "lockstep/scenario/cluster_source.hpp"
#include "lockstep/scenario/collective_sweep.hpp"
#include "lockstep/scenario/memory_estimate.hpp"
#include "lockstep/scenario/nccl_tests_log.hpp"
#include "lockstep/scenario/scenario.hpp"
#include "memory_options.hpp"

namespace lockstep::cli {
namespace {

struct Flags {
  ClusterFlags cluster;
  std::string from, op, algo, proto, engine = "analytical", ngpus;
  std::string format = "table";
  bool in_place = false;
  MemoryFlags memory;
};

void run(Flags f) {
  std::ifstream in(f.from);
  if (!in) throw InputError("--from", fmt::format("cannot read '{}'", f.from));
  std::optional<CollectiveOp> op;
  if (!f.op.empty()) op = parse_sweep_op(f.op, "--op");
  const NcclTestsLog log = read_nccl_tests_log(in, f.from, op, f.in_place);
  if (log.unmodelled_rows > 0) {
    fmt::print(stderr,
               "lockstep: note: {} rows of {} passed over (types lockstep has no size for)\n",
               log.unmodelled_rows, fmt::join(log.unmodelled_types, ", "));
  }
  CalibrationRequest request;
  if (!f.algo.empty()) request.algo = nccl::parse_algorithm(f.algo, "--algo");
  if (!f.proto.empty()) request.proto = nccl::parse_protocol(f.proto, "--proto");
  request.engine = f.engine;
  request.sharp = f.cluster.sharp;
  if (!f.ngpus.empty()) {
    if (!f.cluster.gpus_per_node.empty() && f.cluster.gpus_per_node != f.ngpus)
      throw InputError("-g", "give -g or --gpus-per-node, not both");
    f.cluster.gpus_per_node = f.ngpus;
  }
  const std::optional<Scenario> scenario = load_cluster_scenario(f.cluster, "--scenario");
  std::optional<ClusterSource> source;
  source.emplace(scenario ? &*scenario : nullptr, f.cluster);
  // Without --nodes the log's "#  Rank" lines say how many nodes of the preset ran.
  if (!scenario && f.cluster.nodes.empty() && source->preset() && log.ranks > 0) {
    const std::uint32_t per_node = nccl_cluster(*source->preset()).gpus_per_node;
    if (log.ranks % per_node == 0 && log.ranks > per_node) {
      f.cluster.nodes = std::to_string(log.ranks / per_node);
      source.emplace(nullptr, f.cluster);
    }
  }
  // The estimate as `collective` makes it, one sweep a row, before the graph and engines allocate.
  std::vector<CollectiveSweep> sweeps;
  for (const NcclTestsLogRow& row : log.rows)
    sweeps.push_back(calibration_sweep(log, row, request));
  const Inventory inventory = source->build(BuildOptions{.want_graph = false}).inventory;
  RunEstimate estimate;
  estimate.add("lockstep", kBaseBytes);
  add_graph_estimate(estimate, inventory.gpus);
  add_sweeps_estimate(estimate, sweeps, inventory.gpus, inventory.diameter_switch_hops + 1);
  if (!admit(estimate, f.memory.budget(), "try fewer --nodes or --engine analytical")) return;
  const bool need_graph = !source->preset() || request.engine != "analytical";
  std::optional<Topology> graph = need_graph ? source->build().graph : std::optional<Topology>();
  if (!graph && need_graph)
    source->build_args().fail("the cluster is too large to build as a graph for this engine");
  const NcclCluster cluster =
      source->preset() ? nccl_cluster(*source->preset()) : nccl_cluster(*graph);
  const auto rows = compare_nccl_tests_log(log, cluster, graph ? &*graph : nullptr, request);
  const std::string title = fmt::format("{} ({} rows) on {}, engine {}", f.from, rows.size(),
                                        source->title(graph ? &*graph : nullptr), request.engine);
  fmt::print("{}", report::format_calibration(rows, title, f.format));
}

// Errors at --gpus-per-node name -g when -g gave it.
void run_naming_g(const Flags& f) {
  try {
    run(f);
  } catch (const InputError& e) {
    if (e.field() != "--gpus-per-node" || f.ngpus.empty()) throw;
    throw InputError("-g", e.bare_message(), e.where());
  }
}

const RegisterCommand kCalibrate(35, [](CLI::App& root) {
  auto* cmd = root.add_subcommand(
      "calibrate", "Compare an nccl-tests log from your cluster with lockstep's prediction");
  auto f = std::make_shared<Flags>();
  cmd->add_option("--from", f->from, "the nccl-tests log (all_reduce_perf ... output)")->required();
  add_cluster_options(*cmd, f->cluster);
  cmd->add_option("-g,--ngpus", f->ngpus, "GPUs per node, as nccl-tests' -g (one process a node)");
  cmd->add_option("--scenario", f->cluster.scenario, "a scenario file (its cluster)");
  cmd->add_option("--op", f->op,
                  "the collective when the log does not name it ('# Collective test starting')");
  cmd->add_option("--algo", f->algo, "the algorithm the log forced (NCCL_ALGO; default: NCCL's)");
  cmd->add_option("--proto", f->proto, "the protocol the log forced (NCCL_PROTO; default: NCCL's)");
  cmd->add_flag("--in-place", f->in_place,
                "compare the in-place columns (default: out-of-place; lockstep predicts one time "
                "for both)");
  cmd->add_option("--engine", f->engine, "analytical | flow | packet (default analytical)")
      ->check(CLI::IsMember(engine_names()));
  cmd->add_option("--format", f->format, "table | csv | json")
      ->check(CLI::IsMember({"table", "csv", "json"}));
  add_memory_options(*cmd, f->memory);
  cmd->callback([f] { run_naming_g(*f); });
});

}  // namespace
}  // namespace lockstep::cli
