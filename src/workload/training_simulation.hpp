#pragma once
// The training step's simulation (simulate_training's engine runs): one trial expanded in full
// or as one replica per engine run, its data-parallel buckets scheduled after the replicas' runs
// (training_collectives.cpp), the steady phase fast-forwarded, the breakdown's closing terms
// (training_simulation.cpp).
#include <algorithm>
#include <map>
#include <optional>
#include <tuple>
#include <vector>

#include "lockstep/workload/noise.hpp"
#include "training_detail.hpp"

namespace lockstep::train_detail {

// Picoseconds summed over ranks, in 128 bits: 131,072 GPUs x a 70 s part pass Time's range
// although each part, and their mean, fit in it.
__extension__ typedef __int128 PsSum;

struct PartSums {
  PsSum compute = 0, tp = 0, ep = 0, cp = 0, pp = 0, bubble = 0, dp = 0, imbalance = 0;
};

struct Trial {
  Time iteration;
  std::vector<Time> finish;         // per global rank
  std::vector<Time> extra_compute;  // per global rank: noisy - ideal kernel time
  PartSums parts;                   // summed over ranks (baseline only)
  bool compute_past_range = false;  // some rank's kernels alone take longer than Time's range
  std::uint64_t expanded_micro_batches = 0;  // per replica, in the engine runs
  // The traced engine runs: the whole job (key 0) in full expansion; in reduced expansion
  // replica 0's and, with noise, every replica's that holds a traced rank.
  struct Traced {
    StepPrograms programs;
    RunResult run;
  };
  std::map<std::uint32_t, Traced> traced;
  std::vector<double> factors;  // per global rank slowdown (empty: none)
};

// An iteration past Time's range is an error at the input that made it so long (docs/units.md):
// a compute part that left the range blames the GPU's speed if the job set one, else the batch;
// otherwise the links were too slow for the communication.
void check_in_range(const Trial& trial, const TrainConfig& c);

// The ranks a trace records: the job's list, or ranks 0-7.
std::vector<std::uint32_t> traced_ranks(const TrainConfig& c);

class Simulation {
 public:
  Simulation(const Topology& topo, const TrainConfig& c, const StepPlan& plan, bool full,
             EngineFactory engines, bool nccl, bool fast_forward, ProgressHook* progress)
      : topo_(topo),
        c_(c),
        p_(c.par),
        plan_(plan),
        full_(full),
        engines_(std::move(engines)),
        nccl_(nccl),
        fast_forward_(fast_forward),
        progress_(progress) {}

  /// `cacheable`: `topo` lives as long as the simulation and is the same in every trial (the
  /// cluster itself, or its faulted copy without link jitter), so results on it can be reused.
  /// `unless_fast_forwarded`: trace only a step that runs every micro-batch anyway.
  Trial run(const Topology& topo, const ComputeNoise* noise, std::uint64_t seed, bool trace,
            bool cacheable = true, bool unless_fast_forwarded = false);

 private:
  // One engine run (or one per replica) of the step with `plan`'s micro-batches: each global
  // rank's times, finish and extra compute, before the breakdown's closing terms.
  struct Expanded {
    Trial trial;
    std::vector<RankTimes> times;  // per global rank
  };
  Expanded expand(const Topology& topo, const ComputeNoise* noise, std::uint64_t seed, bool trace,
                  bool cacheable, const StepPlan& plan);
  // The steady phase fast-forwarded (docs/training.md, "Many micro-batches"): the step run
  // with a few micro-batches m1 < m2 < m3 spaced one schedule period apart; when every rank's
  // times grow by the same amount from m1 to m2 as from m2 to m3 (a periodic steady phase),
  // the times at the job's micro-batches are m1's plus that growth per period. Null when the
  // job is too short to gain from it, or the runs are not periodic (per-kernel jitter).
  std::optional<Expanded> fast_forward(const Topology& topo, const ComputeNoise* noise,
                                       std::uint64_t seed, bool cacheable);
  CommDelays measure_delays(Runner& runner);
  // The data-parallel group of stage s: for dense gradients all dp x cp ranks of TP rank `t`;
  // for expert gradients the expert-DP group of expert class `t` = e + ep x i (EP rank e, expert
  // TP rank i): the ranks holding the same experts (ParallelConfig::expert_dp_group).
  std::vector<std::uint32_t> dp_group(std::uint32_t t, std::uint32_t s, bool expert = false) const {
    std::vector<std::uint32_t> g;
    const std::uint32_t stage_first = p_.tp * p_.replicas() * s;
    if (expert) {
      for (std::uint32_t r : p_.expert_dp_group(t / p_.ep, t % p_.ep)) g.push_back(stage_first + r);
      return g;
    }
    for (std::uint32_t d = 0; d < p_.replicas(); ++d) g.push_back(stage_first + t + p_.tp * d);
    return g;
  }
  // The groups a bucket's collective runs over at once: one per TP rank, or per expert class.
  std::uint32_t dp_classes(bool expert) const { return expert ? p_.expert_tp() * p_.ep : p_.tp; }
  // The ranks that reduce stage s's gradients together: dp_group, under DualPipe joined with
  // stage pp - 1 - s's (the other copy of the stage's parameters), in global rank order.
  std::vector<std::uint32_t> holder_group(std::uint32_t t, std::uint32_t s, bool expert) const {
    std::vector<std::uint32_t> g = dp_group(t, s, expert);
    if (c_.pipeline != PipelineSchedule::DualPipe) return g;
    const std::vector<std::uint32_t> copy = dp_group(t, p_.pp - 1 - s, expert);
    g.insert(g.end(), copy.begin(), copy.end());
    std::sort(g.begin(), g.end());
    return g;
  }
  // A collective over every TP rank's (or expert class's) group at once: dp_group's, or with
  // `holders` holder_group's.
  Time dp_time(Runner& runner, CollectiveOp op, Bytes bytes, std::uint32_t s, bool expert = false,
               bool holders = false);
  // Reduced expansion: the data-parallel buckets of every (stage, tp) group, scheduled after the
  // replicas' runs; fills finish[g] for the group's ranks.
  void schedule_buckets(Runner& runner, std::vector<RankTimes>& times, std::vector<Time>& finish);

  const Topology& topo_;
  const TrainConfig& c_;
  const ParallelConfig& p_;
  const StepPlan& plan_;
  bool full_;
  EngineFactory engines_;
  bool nccl_;  // collectives as NCCL runs them
  bool fast_forward_;
  ProgressHook* progress_;  // null: no reports
  // Across trials on a cacheable topology: collective durations, and the outcome of a
  // replica whose ranks drew the same slowdown factors and no per-kernel jitter (a replica
  // without stragglers is the same in every trial).
  std::map<const Topology*, train_detail::CollectiveTimes> collective_times_;
  struct ReplicaOutcome {
    std::vector<std::uint32_t> global;
    std::vector<RankTimes> times;
    std::vector<Time> extra_compute;
  };
  // (topology, replica, micro-batches, slowdown factors)
  using ReplicaKey = std::tuple<const Topology*, std::uint32_t, std::uint64_t, std::vector<double>>;
  std::map<ReplicaKey, ReplicaOutcome> replicas_;
};

}  // namespace lockstep::train_detail
