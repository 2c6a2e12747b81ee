#pragma once
// `lockstep collective --op moe_dispatch | moe_combine` as a library call (docs/moe-dispatch.md):
// one MoE dispatch or combine over every GPU of the cluster, run on an engine.
//
//   api::MoeRequest r;
//   r.cluster.nodes = "4";
//   r.op = "moe_dispatch";
//   std::optional<api::MoeCollectiveRun> run = api::run_moe_collective(r, budget);
#include <optional>
#include <string>

#include "lockstep/collective/moe.hpp"
#include "lockstep/core/memory_budget.hpp"
#include "lockstep/scenario/cluster_source.hpp"
#include "lockstep/workload/moe_comm.hpp"

namespace lockstep::api {

/// The flags as given (empty: not given), so that errors name them (--tokens: ...).
struct MoeRequest {
  ClusterFlags cluster;
  std::string op;  // moe_dispatch | moe_combine
  std::string tokens, hidden, topk, experts, kernel, max_nodes, chunks, imbalance, engine;
  bool bf16_dispatch = false;
};

struct MoeCollectiveRun {
  std::string title;  // the cluster, as `collective` prints it
  std::string engine;
  MoePhase phase = MoePhase::Dispatch;
  MoeSpec spec;        // over every GPU, ranks_per_node = the NVLink domain's GPUs
  MoeTraffic traffic;  // expected bytes per rank and hop
  CommRun run;
};

/// Defaults: DeepSeek-V3's shape (4096 tokens per rank, hidden 7168, top-8 of 256 experts), the
/// normal kernel, the flow engine. InputError naming the flag. Empty when the budget is a dry run.
std::optional<MoeCollectiveRun> run_moe_collective(const MoeRequest& request,
                                                   const MemoryBudget& budget);

}  // namespace lockstep::api
