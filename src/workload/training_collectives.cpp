// The collectives a training step prices outside its engine runs: the reduced expansion's
// measured TP, EP, CP and ZeRO-3 delays, and its data-parallel buckets scheduled after the
// replicas' runs, with the gradient-norm all-reduce, the optimizer step and the parameter gather.
#include <algorithm>
#include <numeric>

#include "lockstep/workload/moe_comm.hpp"
#include "training_simulation.hpp"

namespace lockstep::train_detail {

Time Simulation::dp_time(Runner& runner, CollectiveOp op, Bytes bytes, std::uint32_t s, bool expert,
                         bool holders) {
  std::vector<std::vector<std::uint32_t>> groups;
  for (std::uint32_t t = 0; t < dp_classes(expert); ++t)
    groups.push_back(holders ? holder_group(t, s, expert) : dp_group(t, s, expert));
  if (groups[0].size() < 2) return Time::zero();
  return runner.collective(op, bytes, groups, gpus_per_node_of(runner.topology()));
}

void Simulation::schedule_buckets(Runner& runner, std::vector<RankTimes>& times,
                                  std::vector<Time>& finish) {
  // Gradient buckets of each (stage, tp) group run one after the other on each rank's
  // communication stream; each starts when every member of its group has produced it (lockstep)
  // and finished the bucket before. Under DualPipe a group holds both copies of its stage: the
  // pair of stages s and pp - 1 - s reduces both stages' buckets, the lower stage's first.
  const CollectiveOp op =
      p_.zero == ZeroStage::None ? CollectiveOp::AllReduce : CollectiveOp::ReduceScatter;
  const bool gather_after = p_.zero == ZeroStage::Optimizer || p_.zero == ZeroStage::Gradients;
  const bool dualpipe = c_.pipeline == PipelineSchedule::DualPipe;
  const std::uint32_t replicas = p_.replicas();
  // end[g]: the end of global rank g's communication stream.
  std::vector<Time> end(std::size_t{p_.pp} * p_.tp * replicas, Time::zero());
  auto stage_of = [&](std::uint32_t g) { return g / (p_.tp * replicas); };
  // Every TP rank's (or expert class's) group of bucket k at once: groups of one bucket are
  // disjoint, and each rank meets its buckets in order k.
  auto run_bucket = [&](std::uint32_t s, std::uint32_t stage, std::size_t k, CollectiveOp what,
                        bool ready) {
    const GradientBucket& b = plan_.buckets[stage][k];
    const Time duration = dp_time(runner, what, bucket_bytes(b, what), s, b.expert, true);
    for (std::uint32_t t = 0; t < dp_classes(b.expert); ++t) {
      const auto group = holder_group(t, s, b.expert);
      Time start = Time::zero();
      for (std::uint32_t g : group) {
        start = std::max(start, end[g]);
        if (!ready) continue;
        // A member's copy of the bucket: its own stage's, or (DualPipe) its second one's.
        const std::uint32_t own = stage_of(g);
        const std::size_t slot = stage == own ? k : plan_.buckets[own].size() + k;
        start = std::max(start, c_.overlap_dp ? times[g].bucket_ready[slot] : times[g].chain_end);
      }
      for (std::uint32_t g : group) end[g] = start + duration;
    }
  };
  // The pairs' lower stages under DualPipe, every stage otherwise; each with the stages whose
  // buckets its group reduces.
  auto stages_of = [&](std::uint32_t s) {
    return dualpipe ? std::vector<std::uint32_t>{s, p_.pp - 1 - s} : std::vector<std::uint32_t>{s};
  };
  const std::uint32_t groups_of_stages = dualpipe ? p_.pp / 2 : p_.pp;
  const bool reduce = holder_group(0, 0, false).size() > 1;
  for (std::uint32_t s = 0; s < groups_of_stages && reduce; ++s) {
    for (std::uint32_t stage : stages_of(s))
      for (std::size_t k = 0; k < plan_.buckets[stage].size(); ++k)
        run_bucket(s, stage, k, op, true);
  }
  Time reduced = Time::zero();  // every rank's kernels and gradient reduction done
  for (std::uint32_t g = 0; g < end.size(); ++g) {
    end[g] = std::max(end[g], times[g].chain_end);
    times[g].reduced = end[g];
    reduced = std::max(reduced, end[g]);
  }
  // The gradient-norm all-reduce (docs/training.md) ties every rank's end together.
  if (c_.clip_grad > 0 && p_.world() > 1) {
    std::vector<std::uint32_t> all(p_.world());
    for (std::uint32_t g = 0; g < p_.world(); ++g) all[g] = g;
    const Time norm = runner.collective(CollectiveOp::AllReduce, Bytes(4), {all},
                                        gpus_per_node_of(runner.topology()));
    std::fill(end.begin(), end.end(), reduced + norm);
  }
  // The optimizer step follows the rank's kernels, its gradient reduction and the norm.
  for (std::uint32_t g = 0; g < end.size(); ++g) {
    if (!plan_.optimizer_step.empty()) end[g] += plan_.optimizer_step[stage_of(g)];
  }
  if (reduce && gather_after) {
    for (std::uint32_t s = 0; s < groups_of_stages; ++s) {
      for (std::uint32_t stage : stages_of(s)) {
        for (std::size_t k = 0; k < plan_.buckets[stage].size(); ++k) {
          if (plan_.gather_exposed(stage, plan_.buckets[stage][k], c_.overlap_param_gather))
            run_bucket(s, stage, k, CollectiveOp::AllGather, false);
        }
      }
    }
  }
  for (std::uint32_t g = 0; g < end.size(); ++g)
    finish[g] = std::max(times[g].engine_finish, end[g]);
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
  if (plan_.expert_tp_bytes.count() > 0) {
    // Every expert TP group of replica 0's TP group at once (etp consecutive ranks each), as
    // in the full expansion.
    std::vector<std::vector<std::uint32_t>> groups;
    for (std::uint32_t t = 0; t < p_.tp; ++t) {
      if (t % p_.expert_tp() == 0) groups.emplace_back();
      groups.back().push_back(t);
    }
    d.expert_tp_all_gather =
        runner.collective(CollectiveOp::AllGather, plan_.expert_tp_bytes, groups, gpn);
    d.expert_tp_reduce_scatter =
        runner.collective(CollectiveOp::ReduceScatter, plan_.expert_tp_bytes, groups, gpn);
  }
  if (p_.ep > 1) {
    // The EP groups of the first lcm(etp x ep, tp) ranks of stage 0: whole TP groups, all at
    // once as in the full expansion (etp = tp: replica block 0's group of each TP rank).
    const std::uint32_t block = p_.expert_tp() * p_.ep;
    const std::uint32_t span = std::lcm(block, p_.tp);
    std::vector<std::vector<std::uint32_t>> groups;
    for (std::uint32_t i = 0; i < p_.expert_tp(); ++i)
      for (std::uint32_t k = 0; k < span / block; ++k) groups.push_back(p_.ep_group(i, k));
    if (c_.model.deepep_training()) {
      // DeepSeek-V3 (docs/training.md): DeepEP's normal kernels over every TP rank's EP group at
      // once (they share the links where their paths meet, as in the full expansion), each
      // rank's tokens routed to top_k experts on at most moe_max_nodes nodes, dispatch in FP8
      // or BF16, combine in BF16. The backward's pair has the same shapes: the gradient before
      // the down projections goes out as the dispatch did (FP8 too, section 3.3.3), the one of
      // the dispatched inputs comes back as the combine.
      const MoeSpec s = deepep_training_spec(c_, plan_);
      if (s.tokens > 0) {
        d.ep_all_to_all = train_detail::deepep_exchange_time(runner, s, MoePhase::Dispatch, groups);
        d.ep_combine = train_detail::deepep_exchange_time(runner, s, MoePhase::Combine, groups);
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
  // Per layer of the plan (the model's and its multi-token-prediction blocks), over the ranks
  // that hold the layer's shards: the data-parallel group, under DualPipe both copies' (2 x dp).
  d.zero3_gather.assign(plan_.layer_grad_bytes.size(), Time::zero());
  if (p_.zero == ZeroStage::Parameters && p_.replicas() > 1) {
    const bool holders = c_.pipeline == PipelineSchedule::DualPipe;
    for (std::uint32_t l = 0; l < plan_.layer_grad_bytes.size(); ++l) {
      d.zero3_gather[l] =
          dp_time(runner, CollectiveOp::AllGather, plan_.layer_grad_bytes[l], 0, false, holders);
      if (plan_.layer_expert_grad_bytes[l].count() > 0) {
        d.zero3_gather[l] += dp_time(runner, CollectiveOp::AllGather,
                                     plan_.layer_expert_grad_bytes[l], 0, true, holders);
      }
    }
  }
  return d;
}

}  // namespace lockstep::train_detail
