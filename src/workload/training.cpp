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
  StepPrograms traced_programs;     // programs of the traced replica / job
  RunResult traced_run;
  std::vector<std::uint32_t> traced_global;  // program rank -> global rank for the traced set
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

class Simulation {
 public:
  Simulation(const Topology& topo, const TrainConfig& c, const StepPlan& plan, bool full,
             EngineFactory engines, bool nccl)
      : topo_(topo),
        c_(c),
        p_(c.par),
        plan_(plan),
        full_(full),
        engines_(std::move(engines)),
        nccl_(nccl) {}

  /// `cacheable`: `topo` lives as long as the simulation and is the same in every trial (the
  /// cluster itself, or its faulted copy without link jitter), so results on it can be reused.
  Trial run(const Topology& topo, const ComputeNoise* noise, std::uint64_t seed, bool trace,
            bool cacheable = true);

 private:
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
  void schedule_buckets(Runner& runner, const std::vector<RankTimes>& times,
                        std::vector<Time>& finish);

  const Topology& topo_;
  const TrainConfig& c_;
  const ParallelConfig& p_;
  const StepPlan& plan_;
  bool full_;
  EngineFactory engines_;
  bool nccl_;  // collectives as NCCL runs them
  // Across trials on a cacheable topology: collective durations, and the outcome of a
  // replica whose ranks drew the same slowdown factors and no per-kernel jitter (a replica
  // without stragglers is the same in every trial).
  std::map<const Topology*, train_detail::CollectiveTimes> collective_times_;
  struct ReplicaOutcome {
    std::vector<std::uint32_t> global;
    std::vector<RankTimes> times;
    std::vector<Time> extra_compute;
  };
  using ReplicaKey = std::tuple<const Topology*, std::uint32_t, std::vector<double>>;
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

void Simulation::schedule_buckets(Runner& runner, const std::vector<RankTimes>& times,
                                  std::vector<Time>& finish) {
  // Gradient buckets of each (stage, tp) group run one after the other on each rank's
  // communication stream; each starts when every member of its group has produced it (lockstep)
  // and finished the bucket before.
  const CollectiveOp op =
      p_.zero == ZeroStage::None ? CollectiveOp::AllReduce : CollectiveOp::ReduceScatter;
  const bool gather_after = p_.zero == ZeroStage::Optimizer || p_.zero == ZeroStage::Gradients;
  std::vector<Time> end(p_.replicas());
  for (std::uint32_t s = 0; s < p_.pp; ++s) {
    for (std::uint32_t t = 0; t < p_.tp; ++t) {
      std::fill(end.begin(), end.end(), Time::zero());
      const auto& buckets = plan_.buckets[s];
      auto run_bucket = [&](const GradientBucket& b, CollectiveOp what, std::size_t k, bool ready) {
        const std::uint32_t classes = b.expert ? p_.ep : 1;
        const Time duration = dp_time(runner, what, b.bytes, s, b.expert);
        for (std::uint32_t e = 0; e < classes; ++e) {
          const auto group = dp_group(t, s, b.expert, e);
          Time start = Time::zero();
          for (std::uint32_t g : group) {
            const std::uint32_t d = (g / p_.tp) % p_.replicas();
            start = std::max(start, end[d]);
            if (ready) {
              start =
                  std::max(start, c_.overlap_dp ? times[g].bucket_ready[k] : times[g].chain_end);
            }
          }
          for (std::uint32_t g : group) end[(g / p_.tp) % p_.replicas()] = start + duration;
        }
      };
      if (p_.replicas() > 1) {
        for (std::size_t k = 0; k < buckets.size(); ++k) run_bucket(buckets[k], op, k, true);
        if (gather_after) {
          for (std::size_t k = 0; k < buckets.size(); ++k)
            run_bucket(buckets[k], CollectiveOp::AllGather, k, false);
        }
      }
      for (std::uint32_t d = 0; d < p_.replicas(); ++d) {
        const std::uint32_t g = t + p_.tp * (d + p_.replicas() * s);
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
    d.ep_all_to_all = runner.collective(CollectiveOp::AllToAll, plan_.ep_bytes, groups, gpn);
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
  d.zero3_gather.assign(c_.model.layers, Time::zero());
  if (p_.zero == ZeroStage::Parameters && p_.replicas() > 1) {
    for (std::uint32_t l = 0; l < c_.model.layers; ++l) {
      d.zero3_gather[l] = dp_time(runner, CollectiveOp::AllGather, plan_.layer_grad_bytes[l], 0);
      if (plan_.layer_expert_grad_bytes[l].count() > 0) {
        d.zero3_gather[l] +=
            dp_time(runner, CollectiveOp::AllGather, plan_.layer_expert_grad_bytes[l], 0, true);
      }
    }
  }
  return d;
}

Trial Simulation::run(const Topology& topo, const ComputeNoise* noise, std::uint64_t seed,
                      bool trace, bool cacheable) {
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
  o.rank_factors = noise ? &factors : nullptr;
  o.noise = noise;
  o.noise_seed = seed;
  o.collapse_tp = noise != nullptr;
  Time pp_transfer = Time::zero();
  if (p_.pp > 1) pp_transfer = runner.transfer(0, p_.tp * p_.replicas(), plan_.pp_bytes);

  Trial trial;
  trial.finish.assign(world, Time::zero());
  trial.extra_compute.assign(world, Time::zero());
  std::vector<RankTimes> times(world);
  auto collect = [&](StepPrograms& programs, RunResult& result, bool keep) {
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
    if (keep) {
      trial.traced_global = programs.global_rank;
      trial.traced_programs = std::move(programs);
      trial.traced_run = std::move(result);
    }
  };

  if (full_) {
    StepPrograms programs = build_step_programs(c_, plan_, o);
    RunResult result = runner.run(*programs.programs, programs.global_rank, true, trace);
    collect(programs, result, trace);
    for (std::uint32_t g = 0; g < world; ++g) trial.finish[g] = times[g].engine_finish;
  } else {
    const CommDelays delays = measure_delays(runner);
    o.delays = &delays;
    // Without noise every replica is the same: simulate replica 0 and copy it.
    const std::uint32_t replicas = noise ? p_.replicas() : 1;
    for (std::uint32_t j = 0; j < replicas; ++j) {
      const bool keep = trace && j == 0;
      ReplicaKey key{&topo, j, {}};
      const bool reusable = noise && !noise->has_kernel_jitter() && cacheable && !keep;
      if (reusable) {
        for (std::uint32_t s = 0; s < p_.pp; ++s)
          for (std::uint32_t t = 0; t < p_.tp; ++t)
            std::get<2>(key).push_back(factors[t + p_.tp * (j + p_.replicas() * s)]);
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
      StepPrograms programs = build_step_programs(c_, plan_, o);
      RunResult result = runner.run(*programs.programs, programs.global_rank, true, keep);
      if (reusable) {
        ReplicaOutcome out;
        for (const auto& globals : programs.represented) {
          for (std::uint32_t g : globals) out.global.push_back(g);
        }
        collect(programs, result, false);
        for (std::uint32_t g : out.global) {
          out.times.push_back(times[g]);
          out.extra_compute.push_back(trial.extra_compute[g]);
        }
        replicas_.emplace(std::move(key), std::move(out));
        continue;
      }
      collect(programs, result, keep);
    }
    if (replicas == 1) {
      for (std::uint32_t s = 0; s < p_.pp; ++s)
        for (std::uint32_t d = 1; d < p_.replicas(); ++d)
          for (std::uint32_t t = 0; t < p_.tp; ++t)
            times[t + p_.tp * (d + p_.replicas() * s)] = times[t + p_.tp * p_.replicas() * s];
    }
    schedule_buckets(runner, times, trial.finish);
  }
  trial.iteration = *std::max_element(trial.finish.begin(), trial.finish.end());
  check_in_range(trial, c_);
  for (std::uint32_t g = 0; g < world; ++g) {
    TrainBreakdown& b = times[g].parts;
    // After the compute chain: the last pipeline send is exposed PP communication, what follows
    // it is data-parallel communication (gradient reduction, ZeRO parameter gathers).
    const Time chain_end = times[g].chain_end;
    const Time sends =
        std::clamp(times[g].send_end, chain_end, std::max(chain_end, trial.finish[g]));
    b.pp += sends - chain_end;
    b.dp += std::max(trial.finish[g], sends) - sends;
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
  return trial;
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

TrainResult simulate_training(const Topology& topo, const TrainConfig& c,
                              const SimulateOptions& options) {
  TrainResult r;
  check_topology(topo, c, r.warnings);
  const GpuSpec& gpu = gpu_spec(topo.traits().gpu, "gpu");
  const double peak = c.peak_flops > 0 ? c.peak_flops : gpu.bf16_dense_flops;
  r.hbm = c.hbm.count() ? c.hbm : gpu.hbm;
  const StepPlan plan = make_step_plan(c, peak, peak * gemm_speedup(gpu, c), &gpu);
  check_memory(plan, r.hbm, c);
  r.memory = plan.memory;

  const std::uint32_t world = c.par.world();
  const bool full = c.expansion == Expansion::Full ||
                    (c.expansion == Expansion::Auto && world <= kFullExpansionLimit);
  Simulation sim(topo, c, plan, full, options.engines ? options.engines : default_engines(),
                 options.nccl);
  r.model = c.model.name;
  r.engine = c.engine;
  r.expansion = full ? "full" : "reduced";
  r.gpus = world;
  r.tokens_per_iteration = c.tokens_per_iteration();

  const bool noisy = c.noisy();
  const bool trace_base = options.record_timeline && !noisy;
  Trial base = sim.run(topo, nullptr, c.seed, trace_base);
  r.iteration = base.iteration;
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

  Trial* traced = trace_base ? &base : nullptr;
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
      const bool trace = options.record_timeline && i == 0;
      Trial trial = sim.run(trial_topo, &noise, seed, trace, !perturb || fixed);
      r.trial_times.push_back(trial.iteration);
      waste += lockstep_waste_gpu_seconds(trial.iteration, r.iteration, trial.extra_compute);
      if (trace) {
        // Link ids are the trial topology's (a failed link is not in it).
        r.links = train_detail::busiest_links(trial_topo, trial.traced_run, options.busiest_links,
                                              EngineOptions{}.link_sample_period);
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

  if (traced) {
    r.timeline_ranks = c.trace_ranks;
    if (r.timeline_ranks.empty()) {
      for (std::uint32_t g = 0; g < std::min(world, 8u); ++g) r.timeline_ranks.push_back(g);
    }
    for (std::uint32_t g : r.timeline_ranks) {
      if (g >= world) {
        throw InputError("trace_ranks", fmt::format("rank {} does not exist ({} ranks)", g, world));
      }
      // Reduced expansion: ranks of other replicas show replica 0's equivalent rank.
      const std::uint32_t t = g % c.par.tp, s = g / (c.par.tp * c.par.replicas());
      // Noisy reduced runs collapse each TP group into its tp = 0 rank.
      const std::uint32_t program_rank = full ? g : noisy ? s : t + c.par.tp * s;
      if (!full && (g / c.par.tp) % c.par.replicas() != 0 && noisy)
        continue;  // not simulated in trace
      train_detail::append_timeline(traced->traced_programs, traced->traced_run, program_rank, g,
                                    r.timeline);
    }
    if (traced == &base) {
      r.links = train_detail::busiest_links(topo, traced->traced_run, options.busiest_links,
                                            EngineOptions{}.link_sample_period);
    }
  }
  return r;
}

}  // namespace lockstep
