// 'lockstep chakra run': a Chakra execution trace (one file per rank, as ASTRA-sim reads them) on
// a cluster, with the step time and where it goes (docs/chakra.md):
//   lockstep chakra run traces/step --system hgx-h100 --nodes 2 --engine flow
#include <fmt/format.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "cluster_options.hpp"
#include "command.hpp"
#include "lockstep/chakra/simulate.hpp"
#include "lockstep/chakra/trace.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/scenario/cluster_source.hpp"
#include "lockstep/scenario/scenario.hpp"

namespace lockstep::cli {
namespace {

struct ChakraFlags {
  std::string trace;
  ClusterFlags cluster;
  std::string engine = "analytical";
  std::string format = "text";
  double peak_tflops = 0;
};

std::string ms(Time t) {
  return fmt::format("{:.3f} ms", t.seconds() * 1e3);
}

/// "TP comm" for a parallel dimension, the collective type otherwise.
std::string label(const std::string& kind) {
  if (kind.size() != 2) return kind;
  std::string up = kind;
  for (char& c : up) c = static_cast<char>(c - 'a' + 'A');
  return up + " comm";
}

void print_text(const chakra::TraceResult& r, const std::string& trace, const std::string& title) {
  fmt::print("# lockstep chakra: {} ({} ranks) on {}, engine {}\n", trace, r.ranks, title,
             r.engine);
  fmt::print(
      "nodes              {} compute ({} timed from FLOPs), {} collectives in {} process "
      "groups, {} send/recv, {} skipped\n",
      r.compute_nodes, r.flops_timed, r.collectives, r.groups, r.transfers, r.skipped);
  fmt::print("\nstep time          {}\n", ms(r.step));
  const double step = r.step.seconds() > 0 ? r.step.seconds() : 1;
  // train's layout: "exposed TP comm" for a dimension, the type for a group without one.
  auto line = [&](const std::string& what, Time t) {
    fmt::print("  {:<16} {:>14}  {:5.1f}%\n", what, ms(t), 100 * t.seconds() / step);
  };
  line("compute", r.mean.compute);
  for (const auto& [kind, t] : r.mean.comm) line("exposed " + label(kind), t);
  line("idle (waiting)", r.mean.idle);
  fmt::print("(mean per rank; exposed: in flight while the GPU computes nothing)\n");
}

void print_json(const chakra::TraceResult& r, const std::string& trace, const std::string& title) {
  nlohmann::ordered_json j;
  j["trace"] = trace;
  j["cluster"] = title;
  j["engine"] = r.engine;
  j["ranks"] = r.ranks;
  j["nodes"] = {{"total", r.nodes},
                {"compute", r.compute_nodes},
                {"compute_from_flops", r.flops_timed},
                {"collectives", r.collectives},
                {"send_recv", r.transfers},
                {"skipped", r.skipped}};
  j["process_groups"] = r.groups;
  j["step_us"] = r.step.microseconds();
  // train's breakdown records: {"name": "exposed_tp", "time_us": ...}.
  nlohmann::ordered_json b = nlohmann::ordered_json::array();
  auto part = [&](const std::string& name, Time t) {
    b.push_back({{"name", name}, {"time_us", t.microseconds()}});
  };
  part("compute", r.mean.compute);
  for (const auto& [kind, t] : r.mean.comm) part("exposed_" + kind, t);
  part("idle", r.mean.idle);
  j["breakdown"] = b;
  nlohmann::ordered_json finish = nlohmann::ordered_json::array();
  for (Time t : r.rank_finish) finish.push_back(t.microseconds());
  j["rank_finish_us"] = finish;
  fmt::print("{}\n", j.dump(2));
}

void run(const ChakraFlags& f) {
  const std::vector<chakra::RankTrace> traces = chakra::read_traces(f.trace);
  const auto ranks = static_cast<std::uint32_t>(traces.size());
  const std::optional<Scenario> scenario = load_cluster_scenario(f.cluster, "--scenario");
  ClusterFlags flags = f.cluster;
  std::optional<ClusterSource> source(std::in_place, scenario ? &*scenario : nullptr, flags);
  std::optional<Topology> topo = source->build().graph;
  if (!topo) source->args().fail("the cluster is too large to build as a graph");
  // Without --nodes or a scenario: as many nodes as the trace's ranks need.
  const std::uint32_t per_node = topo->traits().gpus_per_node;
  if (!scenario && flags.nodes.empty() && per_node > 0 && topo->gpus().size() < ranks) {
    flags.nodes = std::to_string((ranks + per_node - 1) / per_node);
    source.emplace(nullptr, flags);
    topo = source->build().graph;
    if (!topo) source->args().fail("the cluster is too large to build as a graph");
  }
  chakra::RunOptions options;
  options.engine = f.engine;
  options.peak_flops = f.peak_tflops * 1e12;
  const chakra::TraceResult result = chakra::run_traces(traces, *topo, options);
  const std::string title = source->title(&*topo);
  if (f.format == "json") {
    print_json(result, f.trace, title);
  } else {
    print_text(result, f.trace, title);
  }
}

const RegisterCommand kChakra(45, [](CLI::App& root) {
  auto* cmd = root.add_subcommand("chakra", "Chakra execution traces (MLCommons): run one");
  cmd->require_subcommand(1);
  auto* run_cmd = cmd->add_subcommand(
      "run", "Run a Chakra trace on a cluster: step time, compute and exposed communication");
  auto f = std::make_shared<ChakraFlags>();
  run_cmd
      ->add_option("trace", f->trace,
                   "<prefix> of <prefix>.<rank>.et files, or a directory holding one trace")
      ->required();
  run_cmd->add_option("--scenario", f->cluster.scenario, "a scenario file with a cluster: section");
  add_cluster_options(*run_cmd, f->cluster);
  run_cmd
      ->add_option("--engine", f->engine,
                   "analytical (the NCCL model, default) | flow (an engine run of it)")
      ->check(CLI::IsMember({"analytical", "flow"}));
  run_cmd
      ->add_option("--peak-tflops", f->peak_tflops,
                   "dense TFLOP/s for compute nodes with FLOPs and no duration (default: the "
                   "GPU's BF16 peak)")
      ->check(CLI::PositiveNumber);
  run_cmd->add_option("--format", f->format, "text | json")->check(CLI::IsMember({"text", "json"}));
  run_cmd->callback([f] { run(*f); });
});

}  // namespace
}  // namespace lockstep::cli
