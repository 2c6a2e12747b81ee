// The collectives a training step prices outside its engine runs: the reduced expansion's
// measured TP, EP, CP and ZeRO-3 delays, and its data-parallel buckets scheduled after the
// replicas' runs, with the gradient-norm all-reduce, the optimizer step and the parameter gather.
#include <algorithm>

#include "lockstep/workload/moe_comm.hpp"
#include "training_simulation.hpp"

namespace lockstep::train_detail {

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

}  // namespace lockstep::train_detail
