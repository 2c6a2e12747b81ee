// The training step's trials: engine runs of the step's programs, in full or one replica at a
// time, the steady phase fast-forwarded, and the breakdown's closing terms.
#include "training_simulation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "lockstep/core/error.hpp"
#include "lockstep/routing/pxn.hpp"
#include "lockstep/workload/moe_comm.hpp"

namespace lockstep::train_detail {

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

std::vector<std::uint32_t> traced_ranks(const TrainConfig& c) {
  std::vector<std::uint32_t> ranks = c.trace_ranks;
  if (ranks.empty()) {
    for (std::uint32_t g = 0; g < std::min(c.par.world(), 8u); ++g) ranks.push_back(g);
  }
  return ranks;
}

Simulation::Expanded Simulation::expand(const Topology& topo, const ComputeNoise* noise,
                                        std::uint64_t seed, bool trace, bool cacheable,
                                        const StepPlan& plan) {
  auto engine = engines_(c_.engine);
  // With NCCL's collectives, its p2p sends between nodes (the full expansion's expert all-to-all
  // and both expansions' pipeline sends) relay over NVLink to the receiver's rail (PXN, on unless
  // the scenario's collectives.pxn is false: docs/routing.md "PXN"); rings pair their NICs rail
  // by rail, and DeepEP's exchanges cross the network between rail peers, so PXN changes neither
  // (docs/training.md "DeepEP and PXN"). NcclGroups routes the reduced expansion's collectives.
  const bool pxn = nccl_ && c_.pxn;
  auto router =
      pxn ? make_pxn_router(topo, fabric_routing(topo)) : make_router(topo, fabric_routing(topo));
  std::optional<NcclGroups> nccl;
  if (nccl_) nccl.emplace(topo, c_.pxn);
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

}  // namespace lockstep::train_detail
