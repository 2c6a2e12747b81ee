#include "lockstep/workload/training.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <tuple>

#include "lockstep/core/error.hpp"
#include "lockstep/core/rng.hpp"
#include "lockstep/nccl/groups.hpp"
#include "lockstep/topology/catalog.hpp"
#include "lockstep/workload/expansion.hpp"
#include "lockstep/workload/moe_comm.hpp"
#include "lockstep/workload/waste.hpp"
#include "step_builder_detail.hpp"
#include "training_simulation.hpp"

namespace lockstep {
namespace {

using train_detail::check_topology;
using train_detail::default_engines;
using train_detail::gpus_per_node_of;
using train_detail::perturbed;
using train_detail::PsSum;
using train_detail::Simulation;
using train_detail::traced_ranks;
using train_detail::Trial;

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

CollectiveOpCount collective_op_count(const Topology& topo, bool nccl) {
  // One shape at a time: a step holds many collectives of a few shapes.
  struct State {
    std::optional<NcclGroups> groups;
    std::map<std::tuple<int, std::uint64_t, std::vector<std::uint32_t>>, double> counted;
  };
  auto state = std::make_shared<State>();
  const std::uint32_t gpn = train_detail::gpus_per_node_of(topo);
  return [&topo, nccl, gpn, state](CollectiveOp op, Bytes bytes,
                                   const std::vector<std::uint32_t>& group) {
    if (group.size() < 2) return 1.0;  // a group of one: the builder's zero-time op
    const auto key = std::make_tuple(static_cast<int>(op), bytes.count(), group);
    if (auto it = state->counted.find(key); it != state->counted.end()) return it->second;
    double ops = 0;
    if (nccl) {
      if (!state->groups) state->groups.emplace(topo);
      const PlannedCollective planned =
          state->groups->plan(op, bytes, train_detail::collective_type(bytes), group);
      // A lead delay is one op more on each member.
      ops = spliced_ops_per_rank(*planned.programs) + (planned.lead > Time::zero() ? 1 : 0);
    } else {
      ops = spliced_ops_per_rank(*default_collective_factory()(
          op, static_cast<Rank>(group.size()), bytes, step_detail::ranks_per_node_of(group, gpn)));
    }
    return state->counted[key] = ops;
  };
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
  const bool full = expands_fully(c, plan, collective_op_count(topo, options.nccl));
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
