#pragma once
// The commands as library calls: what `lockstep topo`, `collective`, `train` and `run` compute,
// without their printing, so that the CLI (apps/lockstep) and the Python module (python/) run the
// same code in process. Options arrive as the CLI gives them (strings located at their flag, so
// that errors read "--nodes: ..." in both); bad input throws InputError with the CLI's message.
//
//   api::CollectiveRun run = *api::run_collective(flags, sweep_args, budget, /*progress=*/false);
//   for (const auto& sweep : run.sweeps) ...  // report::sweeps_to_json(run.sweeps)
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lockstep/config/arg_node.hpp"
#include "lockstep/core/memory_budget.hpp"
#include "lockstep/nccl/cluster.hpp"
#include "lockstep/report/results.hpp"
#include "lockstep/report/run.hpp"
#include "lockstep/scenario/cluster_source.hpp"
#include "lockstep/scenario/collective_sweep.hpp"
#include "lockstep/scenario/scenario.hpp"
#include "lockstep/topology/builder.hpp"
#include "lockstep/workload/inference.hpp"
#include "lockstep/workload/training.hpp"

namespace lockstep::api {

/// --max-memory (empty: default_memory_budget()), --max-events and --dry-run as a budget.
MemoryBudget memory_budget(const std::string& max_memory, double max_events, bool dry_run);

/// Sets the ClusterFlags field a cluster option names (`key` in scenario spelling: system, nodes,
/// gpus_per_node, ..., scenario, sharp ("true"/"false")). False when `key` is no cluster option.
bool set_cluster_flag(ClusterFlags& flags, const std::string& key, const std::string& value);

/// `lockstep topo`: the bill of materials of a `cluster:` section (a scenario's, or a builder's
/// arguments as a map).
Inventory topo(const ArgNode& cluster);

/// `lockstep collective`.
struct CollectiveRun {
  std::string title;                   // the cluster: "2 x hgx-h100 (16 GPUs), ib-ndr"
  NcclCluster cluster;                 // as NCCL sees it (ranks, GPUs per node, GPU)
  std::vector<CollectiveSweep> specs;  // what ran, one per sweep
  std::vector<report::Sweep> sweeps;   // its rows, as --format json prints them
};
/// `sweep_args` is the map of the sweep options given (op, algo, proto, min_bytes, max_bytes,
/// step_factor, type, channels, engine, skew, faults: a list), each located at its flag; with a
/// scenario and none of op, algo, min_bytes, max_bytes, the scenario's `collectives:` run
/// (engine and faults given replace theirs). Empty when the budget is a dry run. `progress`
/// draws a bar on stderr while the flow or packet engine runs the rows. `types`, when it names
/// more than one datatype (nccl-tests' -d all), runs the flags' sweep once per type, in order.
/// `check` sees the sweeps and the cluster before anything runs (a caller's own input checks).
using CollectiveCheck =
    std::function<void(const std::vector<CollectiveSweep>&, const NcclCluster&)>;
std::optional<CollectiveRun> run_collective(const ClusterFlags& cluster, const ArgNode& sweep_args,
                                            const MemoryBudget& budget, bool progress,
                                            const std::vector<std::string>& types = {},
                                            const CollectiveCheck& check = {});

/// `lockstep train`: its job options (scenario keys, e.g. global_batch for --global-batch) with
/// their help texts, in --help's order.
const std::vector<std::pair<std::string, std::string>>& train_job_options();
/// `--global-batch` for global_batch.
std::string flag_of(const std::string& key);

struct TrainRequest {
  ClusterFlags cluster;
  std::vector<std::pair<std::string, std::string>> job;  // (key of train_job_options(), value)
  std::vector<std::string> jitter, faults;               // --jitter, --fault
  std::string pxn;     // --pxn true|false (NCCL_PXN_DISABLE); empty: the scenario's collectives.pxn
  bool force = false;  // replace a --trace file lockstep did not write
  bool progress = false;  // a bar on stderr while the steps run
  // The CLI's SIGINT/SIGTERM cleanup of a staged trace (report::install_interrupt_handler); not
  // in a Python interpreter, whose Ctrl-C is its own.
  bool handle_interrupt = false;
  MemoryBudget budget;
};
struct TrainRun {
  TrainConfig config;
  TrainResult result;
  std::string trace_path;  // the Perfetto trace written, or empty
  Topology topology;       // the cluster it ran on (train --chakra-out exports on it)
};
/// Simulates the step and writes the trace the job names. Empty when the budget is a dry run.
std::optional<TrainRun> run_train(const TrainRequest& request);

/// NCCL_PXN_DISABLE for a training or serving job: `--pxn` when given (`flag`, "true" or "false";
/// it settles a file whose sweeps set pxn both ways), else the scenario's `collectives.pxn`
/// (collectives_pxn), else true (NCCL's default).
bool job_pxn(const std::string& flag, const std::optional<Scenario>& scenario);

/// `lockstep serve`: a scenario's `job: {type: inference}` on its cluster (docs/inference.md).
struct ServeRequest {
  ClusterFlags cluster;
  std::string trace;  // --trace FILE, else the job's `trace:`
  std::string pxn;    // --pxn true|false; empty: the scenario's collectives.pxn
  bool force = false;
  MemoryBudget budget = MemoryBudget{default_memory_budget(), kDefaultMaxEvents, false};
};
struct ServeRun {
  InferenceConfig config;
  InferenceResult result;
  std::string trace_path;
};
/// Serves the job's requests and writes the trace it names. Empty when the budget is a dry run
/// (the estimate printed).
std::optional<ServeRun> run_serve(const ServeRequest& request);

/// `lockstep run`'s input: the scenario file read once (it may be a pipe) and parsed; the caller
/// checks report::estimate_run against its budget and calls report::run_scenario.
report::RunInput run_input(const std::string& path, const std::string& lockstep_version);

}  // namespace lockstep::api
