#pragma once
// Training-iteration simulation: compiles a step to per-rank programs, runs them on a timing
// engine (flow by default, or analytical) and turns the result into time, utilisation and money,
// with Monte Carlo trials over compute jitter, stragglers, link jitter and faults.
//
//   TrainConfig c = parse_train_config(job);           // or fill the struct
//   TrainResult r = simulate_training(topology, c);
//   fmt::print("{} s/iteration, MFU {:.1%}\n", r.iteration.seconds(), r.mfu);
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "lockstep/core/progress_hook.hpp"
#include "lockstep/engine/engine.hpp"
#include "lockstep/topology/graph.hpp"
#include "lockstep/workload/expansion.hpp"
#include "lockstep/workload/step_plan.hpp"
#include "lockstep/workload/train_config.hpp"

namespace lockstep {

/// Where an average GPU's iteration goes; the parts add up to the noise-free iteration time.
struct TrainBreakdown {
  Time compute;    // kernels
  Time tp;         // exposed tensor-parallel collectives
  Time ep;         // exposed expert all-to-all
  Time cp;         // exposed context-parallel KV ring
  Time pp;         // exposed pipeline transfers
  Time bubble;     // pipeline fill and drain
  Time dp;         // exposed data-parallel gradient / parameter communication
  Time imbalance;  // idle at the end while other ranks finish (e.g. the output-layer stage)
  Time straggler;  // mean per-GPU lockstep waste over the noisy trials (not in the sum)
};

/// One slice of a rank's timeline (stream 0: compute chain, 1: DP communication, 2: PP sends,
/// 3: the backward pass of a DualPipe pair, beside the chain).
/// The distinct names of a timeline's slices, each stored once (a 256-rank trace has 700k slices
/// and a few thousand names).
using SliceNames = std::unordered_set<std::string>;

struct TimelineSlice {
  std::uint32_t rank = 0;
  std::uint8_t stream = 0;
  std::string_view name;      // a literal, or one of TrainResult::timeline_names
  std::string_view category;  // a literal: forward, backward, tp, ep, pp, dp, bubble, wait
  Time start, end;
};

/// Utilisation of one of the busiest links over the iteration.
struct LinkTrack {
  std::string name;
  Time period;
  std::vector<float> utilisation;    // 0..1 per period
  std::vector<float> queue_bytes;    // packet engine: peak queue depth per period (else empty)
  std::vector<PeriodEvents> events;  // packet engine: the periods with congestion events
};

/// A slow-gpu fault placed in the job: rank = t + tp x (c + cp x (d + dp x s)), and rank r on
/// GPU r % gpus_per_node of node r / gpus_per_node (docs/training.md "Parallelism and placement").
struct SlowGpuPlace {
  std::string text;  // the fault as given
  double factor = 1;
  std::uint32_t rank = 0, node = 0, gpu = 0, stage = 0, replica = 0, tp_rank = 0;
};

struct TrainResult {
  std::string model;
  std::string engine;
  std::string expansion;  // "reduced" or "full"
  // Micro-batches per replica the engine ran (the most of any trial): all of them, or the
  // fewest of the fast-forward's three runs when the steady phase was extended (tracing always
  // runs them all).
  std::uint64_t expanded_micro_batches = 0;
  std::uint32_t gpus = 0;
  std::uint64_t tokens_per_iteration = 0;
  Time iteration;  // noise-free
  TrainBreakdown breakdown;
  double mfu = 0;
  double tokens_per_second = 0;
  double gpu_hours_per_step = 0;
  double cost_per_step_usd = 0;
  double gpu_hours_per_trillion_tokens = 0;
  double cost_per_trillion_tokens_usd = 0;
  MemoryEstimate memory;
  Bytes hbm;
  // Monte Carlo over trials (with no noise configured: one deterministic trial).
  std::uint32_t trials = 0;
  std::vector<Time> trial_times;
  Time p50, p99, max, mean;
  double waste_gpu_seconds = 0;  // mean per iteration
  double waste_fraction = 0;     // of the GPU time of a mean noisy iteration
  double waste_cost_per_step_usd = 0;
  double waste_cost_per_trillion_tokens_usd = 0;
  double waste_cost_per_day_usd = 0;  // steps of the mean noisy iteration in 24 h
  double waste_gpu_hours_per_day = 0;
  // Where each slow-gpu fault sits in the job (rank, node, GPU, pipeline stage, replica).
  std::vector<SlowGpuPlace> slow_gpus;
  std::vector<std::string> warnings;
  // Timeline of the recorded ranks (baseline, or the first trial when noisy).
  std::vector<std::uint32_t> timeline_ranks;
  // Per timeline rank: its slowdown factor in the traced trial (slow-gpu faults and straggler
  // draws; 1 for a GPU at full speed), and the rank whose simulated timeline it shows (itself,
  // or in reduced expansion the equivalent rank of the simulated replica).
  std::vector<double> timeline_slowdown;
  std::vector<std::uint32_t> timeline_drawn_as;
  std::vector<TimelineSlice> timeline;
  std::shared_ptr<SliceNames> timeline_names;  // what the timeline's names point into
  std::vector<LinkTrack> links;
};

/// Builds an engine by name ("flow", "analytical"); the default uses the engine registry.
using EngineFactory = std::function<std::unique_ptr<Engine>(std::string_view name)>;

struct SimulateOptions {
  EngineFactory engines;         // null: the engine registry
  bool record_timeline = false;  // fill TrainResult::timeline for config.trace_ranks
  // With record_timeline: record only a step that runs every micro-batch anyway; one that
  // fast-forwards its steady phase records nothing (no timeline, no link tracks).
  bool record_unless_fast_forwarded = false;
  std::size_t busiest_links = 8;  // link utilisation tracks kept with the timeline
  // Collectives as NCCL runs them (its algorithm, protocol, channels, launch and per-step costs,
  // as `lockstep collective` reports them); false: ring / direct programs at raw link speed.
  bool nccl = true;
  // With many micro-batches, run a few and extend the steady phase (docs/training.md, "Many
  // micro-batches"); false: expand every micro-batch (the reference the fast-forward must equal).
  bool fast_forward = true;
  // Called with (0, total) before the noise-free step and (k, total) after each of the `total`
  // simulations (the baseline, then every noisy trial): a progress bar's steps.
  std::function<void(std::uint32_t done, std::uint32_t total)> on_step;
  // Hears the share of the simulation under way done (replicas and the engine's ops; not
  // owned): a progress bar inside one long step. Null: nothing is polled.
  ProgressHook* progress = nullptr;
};

/// Simulates `config` on `topology` (ranks placed on topology.gpus() in order). Throws
/// InputError when the degrees do not match the GPU count, the model does not fit in memory,
/// or a fault names a link or rank that does not exist.
/// The ops the full expansion splices for each collective on `topology` (expansion.hpp): NCCL's
/// plans with `nccl`, the plain rings and direct programs without (SimulateOptions::nccl).
/// Keeps a reference to `topology`, which must outlive it.
CollectiveOpCount collective_op_count(const Topology& topology, bool nccl);

TrainResult simulate_training(const Topology& topology, const TrainConfig& config,
                              const SimulateOptions& options = {});

/// simulate_training's checks of `config` against `topology` alone (degrees vs GPU count, fault
/// ranks and links), for a caller that validates a whole scenario before simulating any of it.
void check_training(const Topology& topology, const TrainConfig& config);

/// The step plan simulate_training makes for `config` on `topology` (its GPU's peaks, the memory
/// check), for a caller that builds the step's programs itself (a Chakra export).
StepPlan training_plan(const Topology& topology, const TrainConfig& config);

}  // namespace lockstep
