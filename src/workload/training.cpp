#include "lockstep/workload/training.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <tuple>

#include "lockstep/core/error.hpp"
#include "lockstep/core/rng.hpp"
#include "lockstep/nccl/groups.hpp"
#include "lockstep/topology/catalog.hpp"
#include "lockstep/workload/moe_comm.hpp"
#include "lockstep/workload/waste.hpp"
#include "training_detail.hpp"

namespace lockstep {
namespace {

using train_detail::check_topology;
using train_detail::default_engines;
using train_detail::gpus_per_node_of;
using train_detail::perturbed;
using train_detail::RankTimes;
using train_detail::Runner;

// Above this many GPUs `auto` expansion simulates one replica (docs/training.md, "Symmetry").
constexpr std::uint32_t kFullExpansionLimit = 64;

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
void check_in_range(const Trial& trial, const TrainConfig& c) {
  if (trial.iteration.is_finite()) return;
  const std::string range = fmt::format("longer than lockstep's time range ({})", kTimeRange);
  if (!trial.compute_past_range) {
    throw InputError("cluster", fmt::format("one iteration's communication would take {}: the "
                                            "links are too slow for this job (nic_speed, a "
                                            "link's bandwidth or a degraded-link fault)",
                                            range));
  }
  if (c.peak_flops > 0) {
    throw InputError(
        c.peak_tflops_field,
        fmt::format("{} TFLOP/s makes one iteration's compute take {}", c.peak_flops / 1e12, range),
        c.peak_tflops_where);
  }
  throw InputError(
      c.global_batch_field,
      fmt::format("{} sequences make one iteration's compute take {}", c.global_batch, range),
      c.global_batch_where);
}

// The ranks a trace records: the job's list, or ranks 0-7.
std::vector<std::uint32_t> traced_ranks(const TrainConfig& c) {
  std::vector<std::uint32_t> ranks = c.trace_ranks;
  if (ranks.empty()) {
    for (std::uint32_t g = 0; g < std::min(c.par.world(), 8u); ++g) ranks.push_back(g);
  }
  return ranks;
}

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
  // The data-parallel group of (t, s): all dp x cp ranks, or for expert gradients the dp / ep ranks
  // d = e, e + ep, ... that hold the same experts.
  std::vector<std::uint32_t> dp_group(std::uint32_t t, std::uint32_t s, bool expert = false,
                                      std::uint32_t e = 0) const {
    std::vector<std::uint32_t> g;
    const std::uint32_t step = expert ? p_.ep : 1;
    for (std::uint32_t d = expert ? e : 0; d < p_.replicas(); d += step)
      g.push_back(t + p_.tp * (d + p_.replicas() * s));
    return g;
  }
  Time dp_time(Runner& runner, CollectiveOp op, Bytes bytes, std::uint32_t s, bool expert = false);
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

Time Simulation::dp_time(Runner& runner, CollectiveOp op, Bytes bytes, std::uint32_t s,
                         bool expert) {
  std::vector<std::vector<std::uint32_t>> groups;
  for (std::uint32_t t = 0; t < p_.tp; ++t) {
    for (std::uint32_t e = 0; e < (expert ? p_.ep : 1); ++e)
      groups.push_back(dp_group(t, s, expert, e));
  }
  if (groups[0].size() < 2) return Time::zero();
  return runner.collective(op, bytes, groups, gpus_per_node_of(runner.topology()));
}

void Simulation::schedule_buckets(Runner& runner, std::vector<RankTimes>& times,
                                  std::vector<Time>& finish) {
  // Gradient buckets of each (stage, tp) group run one after the other on each rank's
  // communication stream; each starts when every member of its group has produced it (lockstep)
  // and finished the bucket before.
  const CollectiveOp op =
      p_.zero == ZeroStage::None ? CollectiveOp::AllReduce : CollectiveOp::ReduceScatter;
  const bool gather_after = p_.zero == ZeroStage::Optimizer || p_.zero == ZeroStage::Gradients;
  // ends[s x tp + t][d]: the end of rank (t, d, s)'s communication stream.
  std::vector<std::vector<Time>> ends(std::size_t{p_.pp} * p_.tp,
                                      std::vector<Time>(p_.replicas(), Time::zero()));
  auto run_bucket = [&](std::uint32_t s, std::uint32_t t, const GradientBucket& b,
                        CollectiveOp what, std::size_t k, bool ready) {
    std::vector<Time>& end = ends[s * p_.tp + t];
    const std::uint32_t classes = b.expert ? p_.ep : 1;
    const Time duration = dp_time(runner, what, bucket_bytes(b, what), s, b.expert);
    for (std::uint32_t e = 0; e < classes; ++e) {
      const auto group = dp_group(t, s, b.expert, e);
      Time start = Time::zero();
      for (std::uint32_t g : group) {
        const std::uint32_t d = (g / p_.tp) % p_.replicas();
        start = std::max(start, end[d]);
        if (ready) {
          start = std::max(start, c_.overlap_dp ? times[g].bucket_ready[k] : times[g].chain_end);
        }
      }
      for (std::uint32_t g : group) end[(g / p_.tp) % p_.replicas()] = start + duration;
    }
  };
  auto global = [&](std::uint32_t t, std::uint32_t d, std::uint32_t s) {
    return t + p_.tp * (d + p_.replicas() * s);
  };
  Time reduced = Time::zero();  // every rank's kernels and gradient reduction done
  for (std::uint32_t s = 0; s < p_.pp; ++s) {
    for (std::uint32_t t = 0; t < p_.tp; ++t) {
      const auto& buckets = plan_.buckets[s];
      if (p_.replicas() > 1) {
        for (std::size_t k = 0; k < buckets.size(); ++k) run_bucket(s, t, buckets[k], op, k, true);
      }
      for (std::uint32_t d = 0; d < p_.replicas(); ++d) {
        Time& end = ends[s * p_.tp + t][d];
        RankTimes& rank = times[global(t, d, s)];
        end = std::max(end, rank.chain_end);
        rank.reduced = end;
        reduced = std::max(reduced, end);
      }
    }
  }
  // The gradient-norm all-reduce (docs/training.md) ties every rank's end together.
  if (c_.clip_grad > 0 && p_.world() > 1) {
    std::vector<std::uint32_t> all(p_.world());
    for (std::uint32_t g = 0; g < p_.world(); ++g) all[g] = g;
    const Time norm = runner.collective(CollectiveOp::AllReduce, Bytes(4), {all},
                                        gpus_per_node_of(runner.topology()));
    for (auto& end : ends) std::fill(end.begin(), end.end(), reduced + norm);
  }
  for (std::uint32_t s = 0; s < p_.pp; ++s) {
    for (std::uint32_t t = 0; t < p_.tp; ++t) {
      std::vector<Time>& end = ends[s * p_.tp + t];
      const auto& buckets = plan_.buckets[s];
      // The optimizer step follows the rank's kernels, its gradient reduction and the norm.
      const Time step = plan_.optimizer_step.empty() ? Time::zero() : plan_.optimizer_step[s];
      for (std::uint32_t d = 0; d < p_.replicas(); ++d) end[d] += step;
      if (p_.replicas() > 1 && gather_after) {
        for (std::size_t k = 0; k < buckets.size(); ++k) {
          if (plan_.gather_exposed(s, buckets[k], c_.overlap_param_gather))
            run_bucket(s, t, buckets[k], CollectiveOp::AllGather, k, false);
        }
      }
      for (std::uint32_t d = 0; d < p_.replicas(); ++d) {
        const std::uint32_t g = global(t, d, s);
        finish[g] = std::max(times[g].engine_finish, end[d]);
      }
    }
  }
}

CommDelays Simulation::measure_delays(Runner& runner) {
  CommDelays d;
  const std::uint32_t gpn = gpus_per_node_of(runner.topology());
  if (p_.tp > 1) {
    std::vector<std::uint32_t> tp;
    for (std::uint32_t t = 0; t < p_.tp; ++t) tp.push_back(t);
    // Only the collectives the layers use: sequence parallelism's pair, or the all-reduce.
    if (p_.sequence_parallel) {
      d.tp_all_gather = runner.collective(CollectiveOp::AllGather, plan_.tp_bytes, {tp}, gpn);
      d.tp_reduce_scatter =
          runner.collective(CollectiveOp::ReduceScatter, plan_.tp_bytes, {tp}, gpn);
    } else {
      d.tp_all_reduce = runner.collective(CollectiveOp::AllReduce, plan_.tp_bytes, {tp}, gpn);
    }
  }
  if (p_.ep > 1) {
    std::vector<std::vector<std::uint32_t>> groups;
    for (std::uint32_t t = 0; t < p_.tp; ++t) {
      groups.emplace_back();
      for (std::uint32_t e = 0; e < p_.ep; ++e) groups.back().push_back(t + p_.tp * e);
    }
    if (c_.model.deepep_training()) {
      // DeepSeek-V3 (docs/training.md): DeepEP's normal kernels over the first EP group, each
      // rank's tokens routed to top_k experts on at most moe_max_nodes nodes, dispatch in FP8
      // or BF16, combine in BF16. The backward's pair has the same shapes: the gradient before
      // the down projections goes out as the dispatch did (FP8 too, section 3.3.3), the one of
      // the dispatched inputs comes back as the combine.
      std::vector<std::uint32_t> placement;
      const MoeSpec s =
          moe_group_spec(deepep_training_spec(c_, plan_), groups[0], runner.topology(), placement);
      if (s.tokens > 0) {
        d.ep_all_to_all =
            runner.run(*make_moe_programs(s, MoePhase::Dispatch), placement, false, false).makespan;
        d.ep_combine =
            runner.run(*make_moe_programs(s, MoePhase::Combine), placement, false, false).makespan;
      }
    } else {
      d.ep_all_to_all = runner.collective(CollectiveOp::AllToAll, plan_.ep_bytes, groups, gpn);
    }
  }
  if (p_.cp > 1) {
    // The cp ranks of replica 0 for each TP rank, rings at once as in the full expansion.
    std::vector<std::vector<std::uint32_t>> groups;
    for (std::uint32_t t = 0; t < p_.tp; ++t) {
      groups.emplace_back();
      for (std::uint32_t c = 0; c < p_.cp; ++c) groups.back().push_back(t + p_.tp * c);
    }
    const std::uint64_t block = plan_.cp_block_bytes.count() * p_.cp;
    d.cp_ring_forward = runner.collective(CollectiveOp::AllGather, Bytes(block), groups, gpn);
    d.cp_ring_backward = runner.collective(CollectiveOp::AllGather, Bytes(2 * block), groups, gpn);
  }
  // Per layer of the plan (the model's and its multi-token-prediction blocks).
  d.zero3_gather.assign(plan_.layer_grad_bytes.size(), Time::zero());
  if (p_.zero == ZeroStage::Parameters && p_.replicas() > 1) {
    for (std::uint32_t l = 0; l < plan_.layer_grad_bytes.size(); ++l) {
      d.zero3_gather[l] = dp_time(runner, CollectiveOp::AllGather, plan_.layer_grad_bytes[l], 0);
      if (plan_.layer_expert_grad_bytes[l].count() > 0) {
        d.zero3_gather[l] +=
            dp_time(runner, CollectiveOp::AllGather, plan_.layer_expert_grad_bytes[l], 0, true);
      }
    }
  }
  return d;
}

Simulation::Expanded Simulation::expand(const Topology& topo, const ComputeNoise* noise,
                                        std::uint64_t seed, bool trace, bool cacheable,
                                        const StepPlan& plan) {
  auto engine = engines_(c_.engine);
  auto router = make_router(topo, fabric_routing(topo));
  std::optional<NcclGroups> nccl;
  if (nccl_) nccl.emplace(topo);
  const bool base_topology = &topo == &topo_;  // unperturbed: translation symmetric
  // As `lockstep collective --engine analytical`, the analytical engine's collectives take the
  // NCCL model's times; other engines run NCCL's programs.
  Runner runner(topo, *engine, *router, nccl ? &*nccl : nullptr, c_.engine == kNcclModelEngine,
                cacheable ? &collective_times_[&topo] : nullptr, base_topology);
  const std::uint32_t world = p_.world();
  std::vector<double> factors;
  if (noise) {
    Rng rng = Rng(seed).split(0x5eed);
    factors = noise->draw_rank_factors(world, rng);
  }
  StepBuildOptions o;
  o.full = full_;
  o.gpus_per_node = gpus_per_node_of(topo);
  o.collectives = default_collective_factory();
  if (nccl) {
    o.group_collectives = [&nccl](CollectiveOp op, Bytes bytes,
                                  const std::vector<std::uint32_t>& globals) {
      return nccl->plan(op, bytes, train_detail::collective_type(bytes), globals);
    };
  }
  // The full expansion runs DeepEP's exchanges themselves, as the reduced one measures them.
  if (full_ && c_.model.deepep_training())
    o.moe_exchange = deepep_training_exchanges(topo, deepep_training_spec(c_, plan_));
  o.rank_factors = noise ? &factors : nullptr;
  o.noise = noise;
  o.noise_seed = seed;
  o.collapse_tp = noise != nullptr;
  Time pp_transfer = Time::zero();
  if (p_.pp > 1) pp_transfer = runner.transfer(0, p_.tp * p_.replicas(), plan_.pp_bytes);

  Trial trial;
  trial.expanded_micro_batches = plan.micro_batches;
  if (trace) trial.factors = factors;
  trial.finish.assign(world, Time::zero());
  trial.extra_compute.assign(world, Time::zero());
  std::vector<RankTimes> times(world);
  auto collect = [&](StepPrograms& programs, RunResult& result, bool keep, std::uint32_t key) {
    for (std::size_t r = 0; r < programs.noisy_compute.size(); ++r) {
      if (!programs.noisy_compute[r].is_finite() || !programs.ideal_compute[r].is_finite())
        trial.compute_past_range = true;
    }
    auto ranks = train_detail::analyse(programs, result, pp_transfer);
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      const auto& globals = programs.represented[r];
      for (std::size_t i = 0; i < globals.size(); ++i) {
        trial.extra_compute[globals[i]] = programs.represented_extra[r][i];
        times[globals[i]] = ranks[r];
      }
    }
    if (keep) trial.traced[key] = {std::move(programs), std::move(result)};
  };

  if (full_) {
    StepPrograms programs = build_step_programs(c_, plan, o);
    engine->set_progress(progress_);
    RunResult result = runner.run(*programs.programs, programs.global_rank, true, trace);
    engine->set_progress(nullptr);
    collect(programs, result, trace, 0);
    for (std::uint32_t g = 0; g < world; ++g) trial.finish[g] = times[g].engine_finish;
  } else {
    const CommDelays delays = measure_delays(runner);
    o.delays = &delays;
    // Without noise every replica is the same: simulate replica 0 and copy it.
    const std::uint32_t replicas = noise ? p_.replicas() : 1;
    const std::vector<std::uint32_t> traced =
        trace ? traced_ranks(c_) : std::vector<std::uint32_t>{};
    for (std::uint32_t j = 0; j < replicas; ++j) {
      if (progress_) progress_->fraction(static_cast<double>(j) / replicas);
      const bool keep =
          trace && (j == 0 || std::any_of(traced.begin(), traced.end(), [&](std::uint32_t g) {
                      return (g / p_.tp) % p_.replicas() == j;
                    }));
      ReplicaKey key{&topo, j, plan.micro_batches, {}};
      const bool reusable = noise && !noise->has_kernel_jitter() && cacheable && !keep;
      if (reusable) {
        for (std::uint32_t s = 0; s < p_.pp; ++s)
          for (std::uint32_t t = 0; t < p_.tp; ++t)
            std::get<3>(key).push_back(factors[t + p_.tp * (j + p_.replicas() * s)]);
        if (auto it = replicas_.find(key); it != replicas_.end()) {
          const ReplicaOutcome& out = it->second;
          for (std::size_t i = 0; i < out.global.size(); ++i) {
            times[out.global[i]] = out.times[i];
            trial.extra_compute[out.global[i]] = out.extra_compute[i];
          }
          continue;
        }
      }
      o.replica = j;
      StepPrograms programs = build_step_programs(c_, plan, o);
      // A replica's run is its share of the step's progress (the replicas take alike).
      ScaledProgress share(progress_, static_cast<double>(j) / replicas,
                           static_cast<double>(j + 1) / replicas);
      if (progress_) engine->set_progress(&share);
      RunResult result =
          runner.run(*programs.programs, programs.global_rank, true, trace && j == 0);
      engine->set_progress(nullptr);
      if (reusable) {
        ReplicaOutcome out;
        for (const auto& globals : programs.represented) {
          for (std::uint32_t g : globals) out.global.push_back(g);
        }
        collect(programs, result, false, j);
        for (std::uint32_t g : out.global) {
          out.times.push_back(times[g]);
          out.extra_compute.push_back(trial.extra_compute[g]);
        }
        replicas_.emplace(std::move(key), std::move(out));
        continue;
      }
      collect(programs, result, keep, j);
    }
    if (replicas == 1) {
      for (std::uint32_t s = 0; s < p_.pp; ++s)
        for (std::uint32_t d = 1; d < p_.replicas(); ++d)
          for (std::uint32_t t = 0; t < p_.tp; ++t)
            times[t + p_.tp * (d + p_.replicas() * s)] = times[t + p_.tp * p_.replicas() * s];
    }
    schedule_buckets(runner, times, trial.finish);
  }
  return {std::move(trial), std::move(times)};
}

namespace {

// x(m1) + k (x(m2) - x(m1)) when x(m3) - x(m2) == x(m2) - x(m1), else nullopt.
std::optional<Time> extrapolated(Time x1, Time x2, Time x3, std::int64_t k) {
  if (!x1.is_finite() || !x2.is_finite() || !x3.is_finite() || x3 - x2 != x2 - x1)
    return std::nullopt;
  return x1 + (x2 - x1) * k;
}

}  // namespace

std::optional<Simulation::Expanded> Simulation::fast_forward(const Topology& topo,
                                                             const ComputeNoise* noise,
                                                             std::uint64_t seed, bool cacheable) {
  // A period of the schedule: one micro-batch in 1F1B, a group of N interleaved (each stage
  // runs its chunks N micro-batches at a time, microbatch_group_size_per_vp_stage, default pp).
  // From m = 2 pp on (2 N with N > pp; a whole number of groups) the steady phase is long
  // enough that one more period adds the same to every time (at m = pp, 1F1B's first stage has
  // a single steady pair and interleaving runs every forward first: not yet periodic).
  // Worth it only when the three runs expand fewer micro-batches than the job.
  const std::uint64_t m = plan_.micro_batches;
  const std::uint64_t group = p_.microbatch_group ? p_.microbatch_group : p_.pp;
  // DualPipe: one micro-batch per direction, its steady phase from m = 2 pp on (every rank
  // runs a pair of pairs there, dualpipe_order).
  const bool dualpipe = c_.pipeline == PipelineSchedule::DualPipe;
  const std::uint64_t period = p_.interleave > 1 ? group : dualpipe ? 2 : 1;
  const std::uint64_t least = 2 * std::max<std::uint64_t>(p_.pp, period);
  const std::uint64_t m1 = (least + period - 1) / period * period;
  if (!fast_forward_ || (noise && noise->has_kernel_jitter()) || m <= 3 * (m1 + period) ||
      (m - m1) % period != 0)
    return std::nullopt;
  StepPlan small = plan_;
  std::vector<Expanded> runs;
  for (std::uint64_t points : {m1, m1 + period, m1 + 2 * period}) {
    small.micro_batches = points;
    runs.push_back(expand(topo, noise, seed, false, cacheable, small));
  }
  const auto k = static_cast<std::int64_t>((m - m1) / period);
  Expanded out = std::move(runs[0]);
  const Expanded &b = runs[1], &c = runs[2];
  bool periodic = true;
  auto extend = [&](Time& x, Time x2, Time x3) {
    const std::optional<Time> y = extrapolated(x, x2, x3, k);
    periodic = periodic && y.has_value();
    if (y) x = *y;
  };
  for (std::size_t g = 0; g < out.times.size() && periodic; ++g) {
    RankTimes& t = out.times[g];
    const RankTimes &t2 = b.times[g], &t3 = c.times[g];
    extend(t.chain_end, t2.chain_end, t3.chain_end);
    extend(t.engine_finish, t2.engine_finish, t3.engine_finish);
    extend(t.send_end, t2.send_end, t3.send_end);
    extend(t.reduced, t2.reduced, t3.reduced);
    for (std::size_t i = 0; i < t.bucket_ready.size(); ++i)
      extend(t.bucket_ready[i], t2.bucket_ready[i], t3.bucket_ready[i]);
    TrainBreakdown& p = t.parts;
    const TrainBreakdown &p2 = t2.parts, &p3 = t3.parts;
    extend(p.compute, p2.compute, p3.compute);
    extend(p.tp, p2.tp, p3.tp);
    extend(p.ep, p2.ep, p3.ep);
    extend(p.cp, p2.cp, p3.cp);
    extend(p.pp, p2.pp, p3.pp);
    extend(p.bubble, p2.bubble, p3.bubble);
    extend(p.dp, p2.dp, p3.dp);
    extend(p.imbalance, p2.imbalance, p3.imbalance);
    extend(out.trial.finish[g], b.trial.finish[g], c.trial.finish[g]);
    extend(out.trial.extra_compute[g], b.trial.extra_compute[g], c.trial.extra_compute[g]);
  }
  if (!periodic) return std::nullopt;
  out.trial.expanded_micro_batches = m1;
  for (const RankTimes& t : out.times)
    out.trial.compute_past_range = out.trial.compute_past_range || !t.parts.compute.is_finite();
  return out;
}

Trial Simulation::run(const Topology& topo, const ComputeNoise* noise, std::uint64_t seed,
                      bool trace, bool cacheable, bool unless_fast_forwarded) {
  // A trace shows every micro-batch: it runs them all.
  std::optional<Expanded> fast;
  if (!trace || unless_fast_forwarded) fast = fast_forward(topo, noise, seed, cacheable);
  Expanded expanded = fast ? std::move(*fast) : expand(topo, noise, seed, trace, cacheable, plan_);
  Trial& trial = expanded.trial;
  std::vector<RankTimes>& times = expanded.times;
  const std::uint32_t world = p_.world();
  trial.iteration = *std::max_element(trial.finish.begin(), trial.finish.end());
  check_in_range(trial, c_);
  // The gradient-norm all-reduce starts when the last rank has reduced its gradients: until
  // then a rank waits for the others (the pipeline's drain), not for data-parallel traffic.
  Time norm_start = Time::zero();
  if (c_.clip_grad > 0 && world > 1) {
    for (const RankTimes& t : times) norm_start = std::max(norm_start, t.reduced);
  }
  for (std::uint32_t g = 0; g < world; ++g) {
    TrainBreakdown& b = times[g].parts;
    // After the compute chain: the last pipeline send is exposed PP communication, what follows
    // it is data-parallel communication (gradient reduction, ZeRO parameter gathers).
    const Time chain_end = times[g].chain_end;
    const Time sends =
        std::clamp(times[g].send_end, chain_end, std::max(chain_end, trial.finish[g]));
    b.pp += sends - chain_end;
    b.dp += std::max(trial.finish[g], sends) - sends;
    const Time waited =
        std::min(b.dp, std::max(Time::zero(), norm_start - std::max(sends, times[g].reduced)));
    b.dp -= waited;
    (p_.pp > 1 ? b.bubble : b.imbalance) += waited;
    // Idle at the end while other ranks finish: in a pipeline that is mostly the drain of the
    // 1F1B schedule (stage s ends its last backward before stage s - 1), so it counts as bubble.
    (p_.pp > 1 ? b.bubble : b.imbalance) += trial.iteration - trial.finish[g];
    trial.parts.compute += b.compute.picoseconds();
    trial.parts.tp += b.tp.picoseconds();
    trial.parts.ep += b.ep.picoseconds();
    trial.parts.cp += b.cp.picoseconds();
    trial.parts.pp += b.pp.picoseconds();
    trial.parts.bubble += b.bubble.picoseconds();
    trial.parts.dp += b.dp.picoseconds();
    trial.parts.imbalance += b.imbalance.picoseconds();
  }
  return std::move(trial);
}

// The weight GEMMs' peak over the BF16 peak at the job's precision, from the datasheet figures
// (a peak_tflops override keeps the GPU's ratio); a format the GPU lacks is an input error.
double gemm_speedup(const GpuSpec& gpu, const TrainConfig& c) {
  if (c.precision == Precision::Bf16) return 1.0;
  const double dense = c.precision == Precision::Fp8 ? gpu.fp8_dense_flops : gpu.fp4_dense_flops;
  if (dense <= 0) {
    throw InputError(c.precision_field,
                     fmt::format("the {} ({}) has no dense {} tensor-core peak in its datasheet "
                                 "(use bf16{})",
                                 gpu.display, gpu.name, to_string(c.precision),
                                 gpu.fp8_dense_flops > 0 ? " or fp8" : ""),
                     c.precision_where);
  }
  return dense / gpu.bf16_dense_flops;
}

}  // namespace

StepPlan training_plan(const Topology& topo, const TrainConfig& config) {
  std::vector<std::string> warnings;
  check_topology(topo, config, warnings);
  const GpuSpec& gpu = gpu_spec(topo.traits().gpu, "gpu");
  const double peak = config.peak_flops > 0 ? config.peak_flops : gpu.bf16_dense_flops;
  StepPlan plan = make_step_plan(config, peak, peak * gemm_speedup(gpu, config), &gpu);
  check_memory(plan, config.hbm.count() ? config.hbm : gpu.hbm, config);
  return plan;
}

TrainResult simulate_training(const Topology& topo, const TrainConfig& config,
                              const SimulateOptions& options) {
  TrainResult r;
  check_topology(topo, config, r.warnings);
  const TrainConfig c = train_detail::with_placed_faults(topo, config);
  r.slow_gpus = train_detail::slow_gpu_places(topo, c);
  const GpuSpec& gpu = gpu_spec(topo.traits().gpu, "gpu");
  const double peak = c.peak_flops > 0 ? c.peak_flops : gpu.bf16_dense_flops;
  r.hbm = c.hbm.count() ? c.hbm : gpu.hbm;
  const StepPlan plan = make_step_plan(c, peak, peak * gemm_speedup(gpu, c), &gpu);
  check_memory(plan, r.hbm, c);
  if (c.communication_sms > 0 && c.communication_sms >= gpu.kernels.sms) {
    throw InputError("communication_sms",
                     fmt::format("{} of the {}'s {} SMs leave none for compute",
                                 c.communication_sms, gpu.name, gpu.kernels.sms));
  }
  if (c.tp_comm_overlap && c.par.tp > 1 && c.tp_comm_overlap_sms >= gpu.kernels.sms) {
    throw InputError("tp_comm_overlap_sms",
                     fmt::format("{} of the {}'s {} SMs leave none for the GEMMs",
                                 c.tp_comm_overlap_sms, gpu.name, gpu.kernels.sms));
  }
  r.memory = plan.memory;

  const std::uint32_t world = c.par.world();
  const bool full = c.expansion == Expansion::Full ||
                    (c.expansion == Expansion::Auto && world <= kFullExpansionLimit);
  Simulation sim(topo, c, plan, full, options.engines ? options.engines : default_engines(),
                 options.nccl, options.fast_forward, options.progress);
  r.model = c.model.name;
  r.engine = c.engine;
  r.expansion = full ? "full" : "reduced";
  r.gpus = world;
  r.tokens_per_iteration = c.tokens_per_iteration();

  const bool noisy = c.noisy();
  const bool trace_base = options.record_timeline && !noisy;
  const bool maybe = options.record_unless_fast_forwarded;
  const std::uint32_t steps = noisy ? 1 + c.trials : 1;
  auto stepped = [&](std::uint32_t done) {
    if (options.on_step) options.on_step(done, steps);
  };
  stepped(0);
  Trial base = sim.run(topo, nullptr, c.seed, trace_base, true, maybe);
  stepped(1);
  r.iteration = base.iteration;
  r.expanded_micro_batches = base.expanded_micro_batches;
  const auto mean = [&](PsSum sum) { return Time::ps(static_cast<std::int64_t>(sum / world)); };
  r.breakdown = {mean(base.parts.compute), mean(base.parts.tp),        mean(base.parts.ep),
                 mean(base.parts.cp),      mean(base.parts.pp),        mean(base.parts.bubble),
                 mean(base.parts.dp),      mean(base.parts.imbalance), Time::zero()};

  const double t = r.iteration.seconds();
  r.mfu = plan.model_flops_per_iteration / (world * peak * t);
  r.tokens_per_second = static_cast<double>(r.tokens_per_iteration) / t;
  r.gpu_hours_per_step = world * t / 3600;
  r.cost_per_step_usd = r.gpu_hours_per_step * c.gpu_hour_usd;
  const double steps_per_trillion = 1e12 / static_cast<double>(r.tokens_per_iteration);
  r.gpu_hours_per_trillion_tokens = r.gpu_hours_per_step * steps_per_trillion;
  r.cost_per_trillion_tokens_usd = r.cost_per_step_usd * steps_per_trillion;

  Trial* traced = trace_base && !base.traced.empty() ? &base : nullptr;
  Trial first_noisy;
  r.trials = c.trials;
  if (!noisy) {
    r.trial_times.assign(c.trials, r.iteration);
  } else {
    const ComputeNoise noise(c.jitter, c.faults);
    double waste = 0;
    // Link faults without link jitter give every trial the same topology: build it once.
    const bool perturb = c.link_jitter > 0 || !c.faults.empty();
    const bool fixed = perturb && c.link_jitter == 0;
    const Topology faulted = fixed ? perturbed(topo, c, nullptr) : Topology{};
    for (std::uint32_t i = 0; i < c.trials; ++i) {
      const std::uint64_t seed = mix64(c.seed * 0x9E3779B97F4A7C15ULL + i);
      Rng link_rng = Rng(seed).split(0x11a7);
      const Topology variant = perturb && !fixed ? perturbed(topo, c, &link_rng) : Topology{};
      const Topology& trial_topo = fixed ? faulted : perturb ? variant : topo;
      Trial trial = sim.run(trial_topo, &noise, seed, options.record_timeline && i == 0,
                            !perturb || fixed, maybe);
      const bool trace = options.record_timeline && i == 0 && !trial.traced.empty();
      r.trial_times.push_back(trial.iteration);
      r.expanded_micro_batches = std::max(r.expanded_micro_batches, trial.expanded_micro_batches);
      waste += lockstep_waste_gpu_seconds(trial.iteration, r.iteration, trial.extra_compute);
      stepped(2 + i);
      if (trace) {
        // Link ids are the trial topology's (a failed link is not in it).
        r.links =
            train_detail::busiest_links(trial_topo, trial.traced.at(0).run, options.busiest_links);
        first_noisy = std::move(trial);
        traced = &first_noisy;
      }
    }
    r.waste_gpu_seconds = waste / c.trials;
  }
  r.p50 = percentile(r.trial_times, 0.50);
  r.p99 = percentile(r.trial_times, 0.99);
  r.max = percentile(r.trial_times, 1.0);
  Time sum = Time::zero();
  for (Time x : r.trial_times) sum += x;
  r.mean = sum / static_cast<std::int64_t>(r.trial_times.size());
  r.breakdown.straggler = Time::s(r.waste_gpu_seconds / world);
  r.waste_fraction = r.waste_gpu_seconds / (world * r.mean.seconds());
  r.waste_cost_per_step_usd = r.waste_gpu_seconds / 3600 * c.gpu_hour_usd;
  r.waste_cost_per_trillion_tokens_usd = r.waste_cost_per_step_usd * steps_per_trillion;
  // A day of back-to-back steps of the mean (noisy) iteration.
  const double steps_per_day = r.mean > Time::zero() ? 86'400 / r.mean.seconds() : 0;
  r.waste_cost_per_day_usd = r.waste_cost_per_step_usd * steps_per_day;
  r.waste_gpu_hours_per_day = r.waste_gpu_seconds / 3600 * steps_per_day;

  if (traced) {
    if (traced == &base) {
      r.links = train_detail::busiest_links(topo, traced->traced.at(0).run, options.busiest_links);
    }
    // The link series are in r.links now: only the ops' times are left to draw.
    for (auto& kept : traced->traced) kept.second.run.link_series = {};
    r.timeline_ranks = traced_ranks(c);
    r.timeline_names = std::make_shared<SliceNames>();
    const std::uint32_t tp = c.par.tp, replicas = c.par.replicas();
    auto factor = [&](std::uint32_t g) {
      return traced->factors.empty() ? 1.0 : traced->factors[g];
    };
    for (std::uint32_t g : r.timeline_ranks) {
      if (g >= world) {
        throw InputError("trace_ranks", fmt::format("rank {} does not exist ({} ranks)", g, world));
      }
      // Reduced expansion: without noise every replica is the same and replica 0's equivalent
      // rank stands for the others; with noise each traced rank's own replica was kept.
      const std::uint32_t t = g % tp, s = g / (tp * replicas), d = (g / tp) % replicas;
      const std::uint32_t replica = full || !noisy ? 0 : d;
      const std::uint32_t drawn = full ? g : t + tp * (replica + replicas * s);
      // Noisy reduced runs collapse each TP group into one program rank that moves as its
      // slowest member: a member is drawn with its own kernels at its own factor and waits for
      // that member (exact for per-rank factors; per-kernel jitter is drawn on the group).
      const std::uint32_t program_rank = full ? g : noisy ? s : t + tp * s;
      train_detail::MemberView member;
      if (!full && noisy) {
        const std::uint32_t first = drawn - t;
        std::uint32_t slowest = first;
        for (std::uint32_t m = first; m < first + tp; ++m)
          if (factor(m) > factor(slowest)) slowest = m;
        member.own_fraction = factor(drawn) / factor(slowest);
        member.waits_for = slowest;
      }
      const std::size_t begin = r.timeline.size();
      const auto& kept = traced->traced.at(replica);
      train_detail::append_timeline(kept.programs, kept.run, program_rank, g, r.timeline, member,
                                    c.trace_ops, *r.timeline_names);
      train_detail::append_end_waits(r.timeline, begin, g, traced->finish[drawn],
                                     traced->iteration);
      // Ranks draw about as many slices as the first: room for all of them at once, rather
      // than doubling (which holds the old and the new array together, 3x the slices).
      if (r.timeline_slowdown.empty())
        r.timeline.reserve(r.timeline.size() * r.timeline_ranks.size() * 17 / 16);
      r.timeline_slowdown.push_back(factor(g));
      r.timeline_drawn_as.push_back(drawn);
    }
  }
  return r;
}

void check_training(const Topology& topology, const TrainConfig& config) {
  std::vector<std::string> warnings;
  train_detail::check_topology(topology, config, warnings);
  train_detail::with_placed_faults(topology, config);  // throws on a node or stage not there
}

}  // namespace lockstep
