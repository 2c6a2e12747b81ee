#pragma once
// What each command will hold in memory (and the packet engine's events), from the sizes the
// command knows before it allocates: GPUs, algorithm, message sizes, micro-batches. Each figure
// is a count of things held times the bytes one of them takes; the bytes per thing are the
// measured peak RSS of runs divided by their counts, listed beside measured peaks in
// docs/memory.md (within a factor of about 1.5, on the safe side at scale).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "lockstep/collective/collective.hpp"
#include "lockstep/core/memory_budget.hpp"
#include "lockstep/nccl/sweep.hpp"
#include "lockstep/workload/expansion.hpp"
#include "lockstep/workload/inference.hpp"
#include "lockstep/workload/train_config.hpp"

namespace lockstep {

/// The process before any work: code, libraries, catalog (the peak RSS of `lockstep units`).
inline constexpr double kBaseBytes = 8.0 * 1024 * 1024;

/// A cluster's graph and routing tables: 512 B per GPU (bench_topology_scale: 54 MiB for the
/// 131,072-GPU rail-optimised fabric, 432 B per GPU).
void add_graph_estimate(RunEstimate& e, std::uint64_t gpus);

/// One collective sweep on `ranks` GPUs with `diameter_links` links on the longest path: the
/// engine's state at its largest size, and for the packet engine the events of every size.
void add_sweep_estimate(RunEstimate& e, const CollectiveSweep& sweep, std::uint64_t ranks,
                        std::uint32_t diameter_links);

/// Sweeps that run one after another: the largest one's state, every one's events.
void add_sweeps_estimate(RunEstimate& e, const std::vector<CollectiveSweep>& sweeps,
                         std::uint64_t ranks, std::uint32_t diameter_links);

/// `lockstep plan`: the alltoallv matrix (ranks^2 sizes of 8 bytes) and its held programs,
/// before either exists.
void add_plan_matrix_estimate(RunEstimate& e, CollectiveOp op, std::uint64_t ranks);
/// `lockstep plan`: the functional executor's state for `ops` ops (150 B an op, and per-pair
/// message queues for direct algorithms).
void add_plan_executor_estimate(RunEstimate& e, std::uint64_t ops, std::uint64_t ranks,
                                bool all_pairs);

/// A training step's expansion: the ops the step builder emits for the simulated ranks (every
/// rank in full expansion, one replica in reduced) and, when the timeline is recorded, its
/// slices and the traced engine runs' link utilisation series. Kept to the sizes of TrainConfig
/// so that the step builder's owners can adjust it. `count`: each collective's ops per member,
/// as simulate_training counts them (training.hpp's collective_op_count on the job's cluster,
/// when counts_collectives_on_cluster); empty: a single ring's, fewer than NCCL's channels.
/// `busiest_links`: the link tracks the timeline keeps (SimulateOptions::busiest_links).
void add_training_estimate(RunEstimate& e, const TrainConfig& c, bool record_timeline,
                           const CollectiveOpCount& count = {}, std::size_t busiest_links = 8);

/// Whether the estimate should count `c`'s collectives with NCCL's plans on the built cluster
/// (add_training_estimate's `count`): it may expand in full and has at most kFullExpansionGpus
/// GPUs (the graph and each collective's plan are small), and NCCL's channels multiply a single
/// ring's ops. A larger job forced to `full` is counted in single rings (docs/memory.md).
bool counts_collectives_on_cluster(const TrainConfig& c);

/// An inference job (`lockstep serve`, `run` on `type: inference`): each request's timing and
/// scheduler state, the engine steps (their records and trace when recorded), and the steps as
/// work against MemoryBudget::max_events (kEventsPerInferenceStep packet-event equivalents each).
void add_inference_estimate(RunEstimate& e, const InferenceConfig& c, bool record_steps);

/// The fewest engine steps that serve `c`: every decode step at max_batch sequences, every
/// prefill step at its token budget (a lower bound: batches that are not full take more).
double inference_steps_lower_bound(const InferenceConfig& c);

/// The report's "why" section re-runs each trained variant on a copy of its graph with one
/// thing changed (report/why.hpp): a second graph of the cluster's size.
void add_sensitivity_estimate(RunEstimate& e, std::uint64_t gpus);

}  // namespace lockstep
