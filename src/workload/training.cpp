#include "lockstep/workload/training.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "lockstep/core/error.hpp"
#include "lockstep/core/rng.hpp"
#include "lockstep/topology/catalog.hpp"
#include "lockstep/workload/waste.hpp"
#include "training_detail.hpp"
#if __has_include("lockstep/engine/registry.hpp")
#include "lockstep/engine/registry.hpp"
#define LOCKSTEP_HAVE_ENGINE_REGISTRY 1
#endif

namespace lockstep {
namespace {

using train_detail::RankTimes;
using train_detail::Runner;

// Above this many GPUs `auto` expansion simulates one replica (docs/training.md, "Symmetry").
constexpr std::uint32_t kFullExpansionLimit = 64;

std::uint32_t gpus_per_node_of(const Topology& topo) {
  if (topo.traits().gpus_per_node) return topo.traits().gpus_per_node;
  std::uint32_t count = 0;
  for (DeviceId g : topo.gpus()) count += topo.device(g).node == topo.device(topo.gpus()[0]).node;
  return count;
}

// A copy of the topology with the trial's link latency jitter and the link faults applied.
Topology perturbed(const Topology& topo, const TrainConfig& c, Rng* rng) {
  TopologyBuilder b(topo.name());
  b.set_traits(topo.traits());
  b.reserve(topo.num_devices(), topo.num_links());
  for (const Device& d : topo.devices()) b.add_device(d);
  for (LinkId l = 0; l < topo.num_links(); ++l) {
    Link link = topo.link(l);
    bool failed = false;
    for (const FaultSpec& f : c.faults) {
      if (f.kind == FaultSpec::Kind::FailedLink && f.link == l) failed = true;
      if (f.kind == FaultSpec::Kind::DegradedLink && f.link == l)
        link.bandwidth = link.bandwidth * f.factor;
    }
    if (rng && c.link_jitter > 0) {
      const double factor = std::max(0.0, 1.0 + c.link_jitter * rng->normal());
      link.latency =
          Time::ps(std::llround(static_cast<double>(link.latency.picoseconds()) * factor));
    }
    // A failed link is removed: the router finds the paths around it, if there are any.
    if (!failed) b.add_link(link);
  }
  Topology out = std::move(b).build();
  if (!out.connected()) {
    throw InputError("faults",
                     "the failed links disconnect the cluster: no route goes around them");
  }
  return out;
}

struct Trial {
  Time iteration;
  std::vector<Time> finish;         // per global rank
  std::vector<Time> extra_compute;  // per global rank: noisy - ideal kernel time
  TrainBreakdown parts;             // summed over ranks (baseline only)
  StepPrograms traced_programs;     // programs of the traced replica / job
  RunResult traced_run;
  std::vector<std::uint32_t> traced_global;  // program rank -> global rank for the traced set
};

class Simulation {
 public:
  Simulation(const Topology& topo, const TrainConfig& c, const StepPlan& plan, bool full,
             EngineFactory engines)
      : topo_(topo), c_(c), p_(c.par), plan_(plan), full_(full), engines_(std::move(engines)) {}

  Trial run(const Topology& topo, const ComputeNoise* noise, std::uint64_t seed, bool trace);

 private:
  CommDelays measure_delays(Runner& runner);
  std::vector<std::uint32_t> dp_group(std::uint32_t t, std::uint32_t s) const {
    std::vector<std::uint32_t> g;
    for (std::uint32_t d = 0; d < p_.dp; ++d) g.push_back(t + p_.tp * (d + p_.dp * s));
    return g;
  }
  Time dp_time(Runner& runner, CollectiveOp op, Bytes bytes, std::uint32_t s);

  const Topology& topo_;
  const TrainConfig& c_;
  const ParallelConfig& p_;
  const StepPlan& plan_;
  bool full_;
  EngineFactory engines_;
};

Time Simulation::dp_time(Runner& runner, CollectiveOp op, Bytes bytes, std::uint32_t s) {
  std::vector<std::vector<std::uint32_t>> groups;
  for (std::uint32_t t = 0; t < p_.tp; ++t) groups.push_back(dp_group(t, s));
  return runner.collective(op, bytes, groups, gpus_per_node_of(runner.topology()));
}

CommDelays Simulation::measure_delays(Runner& runner) {
  CommDelays d;
  const std::uint32_t gpn = gpus_per_node_of(runner.topology());
  if (p_.tp > 1) {
    std::vector<std::uint32_t> tp;
    for (std::uint32_t t = 0; t < p_.tp; ++t) tp.push_back(t);
    d.tp_all_gather = runner.collective(CollectiveOp::AllGather, plan_.tp_bytes, {tp}, gpn);
    d.tp_reduce_scatter = runner.collective(CollectiveOp::ReduceScatter, plan_.tp_bytes, {tp}, gpn);
    d.tp_all_reduce = runner.collective(CollectiveOp::AllReduce, plan_.tp_bytes, {tp}, gpn);
  }
  if (p_.ep > 1) {
    std::vector<std::vector<std::uint32_t>> groups;
    for (std::uint32_t t = 0; t < p_.tp; ++t) {
      groups.emplace_back();
      for (std::uint32_t e = 0; e < p_.ep; ++e) groups.back().push_back(t + p_.tp * e);
    }
    d.ep_all_to_all = runner.collective(CollectiveOp::AllToAll, plan_.ep_bytes, groups, gpn);
  }
  d.zero3_gather.assign(c_.model.layers, Time::zero());
  if (p_.zero == ZeroStage::Parameters && p_.dp > 1) {
    for (std::uint32_t s = 0; s < p_.pp; ++s) {
      for (std::uint32_t l = plan_.stage_first_layer[s]; l < plan_.stage_first_layer[s + 1]; ++l) {
        d.zero3_gather[l] = dp_time(runner, CollectiveOp::AllGather, plan_.layer_grad_bytes[l], 0);
      }
    }
  }
  return d;
}

Trial Simulation::run(const Topology& topo, const ComputeNoise* noise, std::uint64_t seed,
                      bool trace) {
  auto engine = engines_(c_.engine);
  auto router = make_router(topo, RouterOptions{});
  Runner runner(topo, *engine, *router);
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
  o.rank_factors = noise ? &factors : nullptr;
  o.noise = noise;
  o.noise_seed = seed;
  o.real_tp = noise != nullptr;
  Time pp_transfer = Time::zero();
  if (p_.pp > 1) pp_transfer = runner.transfer(0, p_.tp * p_.dp, plan_.pp_bytes);

  Trial trial;
  trial.finish.assign(world, Time::zero());
  trial.extra_compute.assign(world, Time::zero());
  std::vector<RankTimes> times(world);
  auto collect = [&](StepPrograms& programs, RunResult& result, bool keep) {
    auto ranks = train_detail::analyse(programs, result, pp_transfer);
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      const std::uint32_t g = programs.global_rank[r];
      trial.extra_compute[g] = programs.noisy_compute[r] - programs.ideal_compute[r];
      times[g] = std::move(ranks[r]);
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
    const std::uint32_t replicas = noise ? p_.dp : 1;
    for (std::uint32_t j = 0; j < replicas; ++j) {
      o.replica = j;
      StepPrograms programs = build_step_programs(c_, plan_, o);
      RunResult result =
          runner.run(*programs.programs, programs.global_rank, true, trace && j == 0);
      collect(programs, result, trace && j == 0);
    }
    if (replicas == 1) {
      for (std::uint32_t s = 0; s < p_.pp; ++s)
        for (std::uint32_t d = 1; d < p_.dp; ++d)
          for (std::uint32_t t = 0; t < p_.tp; ++t)
            times[t + p_.tp * (d + p_.dp * s)] = times[t + p_.tp * p_.dp * s];
    }
    // Data-parallel gradient buckets of each (stage, tp) group run one after the other on the
    // communication stream; each starts when every replica has produced it (lockstep).
    for (std::uint32_t s = 0; s < p_.pp; ++s) {
      for (std::uint32_t t = 0; t < p_.tp; ++t) {
        const auto group = dp_group(t, s);
        Time end = Time::zero();
        if (p_.dp > 1) {
          const auto& buckets = plan_.buckets[s];
          const CollectiveOp op =
              p_.zero == ZeroStage::None ? CollectiveOp::AllReduce : CollectiveOp::ReduceScatter;
          for (std::size_t k = 0; k < buckets.size(); ++k) {
            Time ready = Time::zero();
            for (std::uint32_t g : group) {
              ready =
                  std::max(ready, c_.overlap_dp ? times[g].bucket_ready[k] : times[g].chain_end);
            }
            end = std::max(end, ready) + dp_time(runner, op, buckets[k].bytes, s);
          }
          if (p_.zero == ZeroStage::Optimizer || p_.zero == ZeroStage::Gradients) {
            for (const auto& b : buckets)
              end += dp_time(runner, CollectiveOp::AllGather, b.bytes, s);
          }
        }
        for (std::uint32_t g : group) trial.finish[g] = std::max(times[g].engine_finish, end);
      }
    }
  }
  trial.iteration = *std::max_element(trial.finish.begin(), trial.finish.end());
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
    trial.parts.compute += b.compute;
    trial.parts.tp += b.tp;
    trial.parts.ep += b.ep;
    trial.parts.pp += b.pp;
    trial.parts.bubble += b.bubble;
    trial.parts.dp += b.dp;
    trial.parts.imbalance += b.imbalance;
  }
  return trial;
}

EngineFactory default_engines() {
#ifdef LOCKSTEP_HAVE_ENGINE_REGISTRY
  return [](std::string_view name) { return make_engine(std::string(name)); };
#else
  return [](std::string_view name) -> std::unique_ptr<Engine> {
    throw InputError("engine", fmt::format("engine '{}' is not available in this build", name));
  };
#endif
}

void check_topology(const Topology& topo, const TrainConfig& c,
                    std::vector<std::string>& warnings) {
  const ParallelConfig& p = c.par;
  const std::uint64_t world = std::uint64_t{p.tp} * p.pp * p.dp;
  if (world != topo.gpus().size()) {
    throw InputError("dp", fmt::format("tp x pp x dp = {} x {} x {} = {} ranks but the cluster "
                                       "has {} GPUs",
                                       p.tp, p.pp, p.dp, world, topo.gpus().size()));
  }
  const std::uint32_t gpn = gpus_per_node_of(topo);
  if (gpn && (p.tp > gpn || gpn % p.tp != 0)) {
    warnings.push_back(
        fmt::format("tensor-parallel groups of {} GPUs span servers of {} GPUs: "
                    "their collectives cross the scale-out network",
                    p.tp, gpn));
  }
  for (const FaultSpec& f : c.faults) {
    if (f.kind == FaultSpec::Kind::SlowGpu && f.rank >= world) {
      throw InputError(
          "faults", fmt::format("'{}': rank {} does not exist ({} ranks)", f.text, f.rank, world));
    }
    if (f.kind != FaultSpec::Kind::SlowGpu && f.link >= topo.num_links()) {
      throw InputError("faults", fmt::format("'{}': link {} does not exist ({} links)", f.text,
                                             f.link, topo.num_links()));
    }
  }
}

}  // namespace

TrainResult simulate_training(const Topology& topo, const TrainConfig& c,
                              const SimulateOptions& options) {
  TrainResult r;
  check_topology(topo, c, r.warnings);
  const GpuSpec& gpu = gpu_spec(topo.traits().gpu, "gpu");
  const double peak = c.peak_flops > 0 ? c.peak_flops : gpu.bf16_dense_flops;
  r.hbm = c.hbm.count() ? c.hbm : gpu.hbm;
  const StepPlan plan = make_step_plan(c, peak);
  check_memory(plan, r.hbm, c);
  r.memory = plan.memory;

  const std::uint32_t world = c.par.world();
  const bool full = c.expansion == Expansion::Full ||
                    (c.expansion == Expansion::Auto && world <= kFullExpansionLimit);
  Simulation sim(topo, c, plan, full, options.engines ? options.engines : default_engines());
  r.model = c.model.name;
  r.engine = c.engine;
  r.expansion = full ? "full" : "reduced";
  r.gpus = world;
  r.tokens_per_iteration = c.tokens_per_iteration();

  const bool noisy = c.noisy();
  const bool trace_base = options.record_timeline && !noisy;
  Trial base = sim.run(topo, nullptr, c.seed, trace_base);
  r.iteration = base.iteration;
  const auto mean = [&](Time sum) { return sum / world; };
  r.breakdown = {mean(base.parts.compute),   mean(base.parts.tp),
                 mean(base.parts.ep),        mean(base.parts.pp),
                 mean(base.parts.bubble),    mean(base.parts.dp),
                 mean(base.parts.imbalance), Time::zero()};

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
    for (std::uint32_t i = 0; i < c.trials; ++i) {
      const std::uint64_t seed = mix64(c.seed * 0x9E3779B97F4A7C15ULL + i);
      Rng link_rng = Rng(seed).split(0x11a7);
      const bool perturb = c.link_jitter > 0 || !c.faults.empty();
      const Topology variant = perturb ? perturbed(topo, c, &link_rng) : Topology{};
      const bool trace = options.record_timeline && i == 0;
      Trial trial = sim.run(perturb ? variant : topo, &noise, seed, trace);
      r.trial_times.push_back(trial.iteration);
      waste += lockstep_waste_gpu_seconds(trial.iteration, r.iteration, trial.extra_compute);
      if (trace) {
        // Link ids are the trial topology's (a failed link is not in it).
        r.links =
            train_detail::busiest_links(perturb ? variant : topo, trial.traced_run,
                                        options.busiest_links, EngineOptions{}.link_sample_period);
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
      const std::uint32_t t = g % c.par.tp, s = g / (c.par.tp * c.par.dp);
      const std::uint32_t program_rank = full ? g : t + c.par.tp * s;
      if (!full && (g / c.par.tp) % c.par.dp != 0 && noisy) continue;  // not simulated in trace
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
