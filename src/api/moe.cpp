// `lockstep collective --op moe_dispatch | moe_combine` (api/moe.hpp).
#include "lockstep/api/moe.hpp"

#include "lockstep/config/arg_node.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/engine/registry/registry.hpp"
#include "lockstep/nccl/cluster.hpp"
#include "lockstep/scenario/memory_estimate.hpp"

namespace lockstep::api {
namespace {

template <typename T>
T number(const std::string& text, const char* flag, T fallback, std::int64_t min,
         std::int64_t max) {
  if (text.empty()) return fallback;
  return static_cast<T>(ArgNode::scalar(text, flag).as_int(min, max));
}

}  // namespace

std::optional<MoeCollectiveRun> run_moe_collective(const MoeRequest& r,
                                                   const MemoryBudget& budget) {
  MoeCollectiveRun run;
  run.phase = parse_moe_phase(r.op, "--op");
  MoeSpec& s = run.spec;
  s.tokens = number<std::uint64_t>(r.tokens, "--tokens", s.tokens, 1, std::int64_t{1} << 32);
  s.hidden = number<std::uint32_t>(r.hidden, "--hidden", s.hidden, 1, 1 << 20);
  s.topk = number<std::uint32_t>(r.topk, "--topk", s.topk, 1, 1 << 16);
  s.experts = number<std::uint32_t>(r.experts, "--experts", s.experts, 1, 1 << 20);
  s.max_nodes = number<std::uint32_t>(r.max_nodes, "--max-nodes", 0, 0, 1 << 20);
  s.chunks = number<std::uint32_t>(r.chunks, "--chunks", s.chunks, 1, 64);
  if (!r.imbalance.empty())
    s.imbalance = ArgNode::scalar(r.imbalance, "--imbalance").as_double(1, 1e6);
  if (!r.kernel.empty()) s.kernel = parse_moe_kernel(r.kernel, "--kernel");
  s.fp8_dispatch = !r.bf16_dispatch;
  run.engine = r.engine.empty() ? "flow" : r.engine;
  make_engine(run.engine, "--engine");  // an unknown engine fails before the graph is built
  const std::optional<Scenario> scenario = load_cluster_scenario(r.cluster, "--scenario");
  const ClusterSource source(scenario ? &*scenario : nullptr, r.cluster);
  const Inventory inventory = source.build(BuildOptions{.want_graph = false}).inventory;
  RunEstimate estimate;
  estimate.add("lockstep", kBaseBytes);
  add_graph_estimate(estimate, inventory.gpus);
  // The programs, held in memory: per rank at most 2 (R - 1) ops (low latency) or, normal, about
  // chunks x (N (G - 1) x 2 + 2 N) (the forwarding fan-out dominates); N G = R.
  const double ops = 2.0 * static_cast<double>(inventory.gpus) * (s.chunks + 1);
  estimate.add("programs", static_cast<double>(inventory.gpus) * ops * sizeof(Op));
  if (!admit(estimate, budget, "try fewer --nodes")) return std::nullopt;
  std::optional<Topology> graph = source.build().graph;
  if (!graph) source.build_args().fail("the cluster is too large to build as a graph");
  // Nodes as NCCL sees them: an NVLink domain (an NVL72 rack's 72 GPUs, one HGX server's 8).
  const NcclCluster cluster =
      source.preset() ? nccl_cluster(*source.preset()) : nccl_cluster(*graph);
  s.ranks = cluster.ranks();
  s.ranks_per_node = cluster.gpus_per_node;
  // The spec's own checks, named at the flags that set them.
  try {
    validate(s);
  } catch (const InputError& e) {
    const std::string field = e.field() == "max_nodes" ? "--max-nodes" : "--" + e.field();
    throw InputError(field, e.bare_message());
  }
  run.title = source.title(&*graph);
  run.traffic = moe_traffic(s, run.phase);
  run.run = run_moe(s, run.phase, *graph, run.engine);
  return run;
}

}  // namespace lockstep::api
