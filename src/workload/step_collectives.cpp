// Collectives of a training step: groups of ranks (TP, DP, expert-DP, EP), each collective as
// real sends and receives spliced into the rank programs, or as a measured delay.
#include <algorithm>
#include <stdexcept>

#include "step_builder_detail.hpp"

namespace lockstep {
namespace step_detail {

std::uint32_t ranks_per_node_of(const std::vector<std::uint32_t>& globals,
                                std::uint32_t gpus_per_node) {
  if (gpus_per_node == 0 || globals.size() < 2) return 0;
  auto node = [&](std::uint32_t g) { return g / gpus_per_node; };
  std::uint32_t block = 1;
  while (block < globals.size() && node(globals[block]) == node(globals[0])) ++block;
  if (block == 1 || globals.size() % block != 0) return 0;
  for (std::size_t i = 0; i < globals.size(); ++i) {
    if (node(globals[i]) != node(globals[i - i % block])) return 0;
  }
  return block == globals.size() ? 0 : block;
}

void Builder::collective(const Groups& groups, CollectiveOp op, Bytes bytes, Time delay,
                         OpRole role, std::uint16_t channel, std::uint32_t layer,
                         std::uint32_t micro, OpIndex RankState::*which,
                         const std::vector<OpIndex>* extra_after) {
  const bool chain = which == &RankState::chain;
  std::size_t k = 0;
  const bool real = o_.full;
  for (const auto& members : groups) {
    if (!real || members.size() < 2) {
      // Reduced expansion (or a group of one): a fixed delay on the selected chain.
      for (std::uint32_t r : members) {
        Op op_delay = make_compute(members.size() < 2 ? Time::zero() : delay);
        depend(op_delay, ranks_[r].*which);
        if (extra_after) depend(op_delay, (*extra_after)[k]);
        ++k;
        ranks_[r].*which = add(r, op_delay, {role, chain, layer, micro});
      }
      continue;
    }
    std::vector<std::uint32_t> globals;
    std::vector<OpIndex> after;
    for (std::uint32_t r : members) {
      globals.push_back(ranks_[r].global);
      OpIndex a = ranks_[r].*which;
      if (extra_after) {
        Op join = make_compute(Time::zero());
        depend(join, a);
        depend(join, (*extra_after)[k]);
        a = add(r, join, {OpRole::Join, false, layer, micro});
      }
      ++k;
      after.push_back(a);
    }
    std::shared_ptr<const ProgramSet> programs;
    if (o_.group_collectives) {
      PlannedCollective planned = o_.group_collectives(op, bytes, globals);
      programs = std::move(planned.programs);
      if (planned.lead > Time::zero()) {
        for (std::size_t i = 0; i < members.size(); ++i) {
          Op lead = make_compute(planned.lead);
          depend(lead, after[i]);
          after[i] = add(members[i], lead, {role, false, layer, micro});
        }
      }
    } else {
      programs = o_.collectives(op, static_cast<Rank>(members.size()), bytes,
                                ranks_per_node_of(globals, o_.gpus_per_node));
    }
    splice(members, after, *programs, role, channel, layer, micro, which);
  }
}

void Builder::splice(const std::vector<std::uint32_t>& members, const std::vector<OpIndex>& after,
                     const ProgramSet& programs, OpRole role, std::uint16_t channel,
                     std::uint32_t layer, std::uint32_t micro, OpIndex RankState::*which) {
  const bool chain = which == &RankState::chain;
  std::vector<std::size_t> first(members.size());
  for (std::size_t i = 0; i < members.size(); ++i) first[i] = out_.programs->num_ops(members[i]);
  auto done = append_collective(*out_.programs, programs, members, after, channel);
  for (std::size_t i = 0; i < members.size(); ++i) {
    const std::uint32_t r = members[i];
    for (std::size_t j = first[i]; j < out_.programs->num_ops(r); ++j) {
      out_.tags[r].push_back({role, false, layer, micro});
    }
    if (chain) {
      // A zero-time op on the chain marks the collective's end for the breakdown.
      Op mark = make_compute(Time::zero());
      depend(mark, done[i]);
      ranks_[r].*which = add(r, mark, {role, true, layer, micro});
    } else {
      ranks_[r].*which = done[i];
    }
  }
}

Groups Builder::tp_groups(std::uint32_t s) const {
  Groups groups;
  for (std::uint32_t d : dps_) {
    groups.emplace_back();
    for (std::uint32_t t : tps_) groups.back().push_back(local_of(t, d, s));
  }
  return groups;
}

// Expert TP divides TP, so the expert TP group (e, k), stage-local ranks etp (e + ep k) + i
// (ParallelConfig::expert_rank), is a run of etp consecutive ranks of one TP group.
Groups Builder::expert_tp_groups(std::uint32_t s) const {
  Groups groups;
  const std::uint32_t etp = p_.expert_tp();
  for (const auto& tp_group : tp_groups(s)) {
    for (std::size_t first = 0; first < tp_group.size(); first += etp)
      groups.emplace_back(tp_group.begin() + static_cast<std::ptrdiff_t>(first),
                          tp_group.begin() + static_cast<std::ptrdiff_t>(first + etp));
  }
  return groups;
}

Groups Builder::dp_groups(std::uint32_t s) const {
  Groups groups;
  for (std::uint32_t t : tps_) {
    groups.emplace_back();
    for (std::uint32_t d : dps_) groups.back().push_back(local_of(t, d, s));
  }
  return groups;
}

Groups Builder::expert_dp_groups(std::uint32_t s) const {
  if (!o_.full) return dp_groups(s);  // reduced: one member per group, a delay stands for it
  Groups groups;
  for (std::uint32_t i = 0; i < p_.expert_tp(); ++i) {
    for (std::uint32_t e = 0; e < p_.ep; ++e) {
      groups.emplace_back();
      for (std::uint32_t r : p_.expert_dp_group(i, e))
        groups.back().push_back(local_of(r % p_.tp, r / p_.tp, s));
    }
  }
  return groups;
}

Groups Builder::ep_groups(std::uint32_t s) const {
  Groups groups;
  if (!o_.full) {
    // Reduced: one member per group stands for its EP group; the delay carries the time.
    for (std::uint32_t t : tps_) groups.push_back({local_of(t, dps_[0], s)});
    return groups;
  }
  for (std::uint32_t i = 0; i < p_.expert_tp(); ++i) {
    for (std::uint32_t k = 0; k < p_.expert_dp(); ++k) {
      groups.emplace_back();
      for (std::uint32_t r : p_.ep_group(i, k))
        groups.back().push_back(local_of(r % p_.tp, r / p_.tp, s));
    }
  }
  return groups;
}

Groups Builder::cp_groups(std::uint32_t s) const {
  Groups groups;
  for (std::uint32_t t : tps_) {
    for (std::uint32_t k = 0; k < p_.dp; ++k) {
      groups.emplace_back();
      for (std::uint32_t c = 0; c < p_.cp; ++c)
        groups.back().push_back(local_of(t, c + p_.cp * k, s));
    }
  }
  return groups;
}

void Builder::cp_ring(std::uint32_t s, std::uint32_t layer, std::uint32_t micro, bool fwd) {
  for (std::uint32_t r : stage_ranks_[s]) ranks_[r].ring = ranks_[r].chain;
  if (!o_.full) {
    const Time delay = !o_.delays ? Time::zero()
                       : fwd      ? o_.delays->cp_ring_forward
                                  : o_.delays->cp_ring_backward;
    for (std::uint32_t r : stage_ranks_[s]) {
      Op op = make_compute(delay);
      depend(op, ranks_[r].ring);
      ranks_[r].ring = add(r, op, {OpRole::CpComm, false, layer, micro});
    }
    return;
  }
  // cp - 1 steps, each sending the local block to the next rank: a ring all-gather of the cp
  // blocks (nccl-tests size: all of them); the backward pass sends K, V and dK, dV.
  const Bytes bytes = Bytes(plan_.cp_block_bytes.count() * p_.cp * (fwd ? 1 : 2));
  collective(cp_groups(s), CollectiveOp::AllGather, bytes, Time::zero(), OpRole::CpComm,
             static_cast<std::uint16_t>(kCpChannel + lane_), layer, micro, &RankState::ring);
}

void Builder::tp_collective(std::uint32_t s, CollectiveOp op, std::uint32_t layer,
                            std::uint32_t micro, OpIndex RankState::*which) {
  if (p_.tp < 2) return;
  const CommDelays* d = o_.delays;
  Time delay;
  if (d) {
    delay = op == CollectiveOp::AllGather       ? d->tp_all_gather
            : op == CollectiveOp::ReduceScatter ? d->tp_reduce_scatter
                                                : d->tp_all_reduce;
  }
  within_tp_groups(s, tp_groups(s), op, plan_.tp_bytes, delay, layer, micro, which);
}

void Builder::expert_tp_collective(std::uint32_t s, CollectiveOp op, std::uint32_t layer,
                                   std::uint32_t micro) {
  if (plan_.expert_tp_bytes.count() == 0 || !c_.model.is_moe_layer(layer)) return;
  const CommDelays* d = o_.delays;
  Time delay;
  if (d)
    delay = op == CollectiveOp::AllGather ? d->expert_tp_all_gather : d->expert_tp_reduce_scatter;
  within_tp_groups(s, expert_tp_groups(s), op, plan_.expert_tp_bytes, delay, layer, micro,
                   &RankState::chain);
}

void Builder::within_tp_groups(std::uint32_t s, const Groups& groups, CollectiveOp op, Bytes bytes,
                               Time delay, std::uint32_t layer, std::uint32_t micro,
                               OpIndex RankState::*which) {
  if (collapsed()) {
    // The group's one program rank: the collective starts when its slowest member is there
    // (for an expert TP group, a part of the TP group: approximately, the whole group meets).
    for (std::uint32_t r : stage_ranks_[s]) {
      if (which == &RankState::chain) {
        add_chain(r, make_compute(delay), kNone, {OpRole::TpComm, true, layer, micro});
      } else {
        Op op_delay = make_compute(delay);
        depend(op_delay, ranks_[r].*which);
        ranks_[r].*which = add(r, op_delay, {OpRole::TpComm, false, layer, micro});
      }
      meet(ranks_[r]);
    }
    return;
  }
  collective(groups, op, bytes, delay, OpRole::TpComm,
             static_cast<std::uint16_t>(kTpChannel + lane_), layer, micro, which);
}

void Builder::tp_overlapped(std::uint32_t s, CollectiveOp op, Time gemm, OpRole role,
                            std::uint32_t layer, std::uint32_t micro,
                            const std::vector<OpIndex>* side) {
  const auto& rs = stage_ranks_[s];
  for (std::uint32_t r : rs) ranks_[r].tp_side = ranks_[r].chain;
  tp_collective(s, op, layer, micro, &RankState::tp_side);
  compute(rs, gemm, role, layer, micro, side);
  // The part of the collective that outlasts the GEMM is exposed TP time.
  for (std::uint32_t r : rs) {
    add_chain(r, make_compute(Time::zero()), ranks_[r].tp_side,
              {OpRole::TpComm, true, layer, micro});
  }
}

void Builder::ep_all_to_all(std::uint32_t s, std::uint32_t layer, std::uint32_t micro,
                            bool combine) {
  if (p_.ep < 2 || !c_.model.is_moe_layer(layer)) return;
  auto groups = ep_groups(s);
  if (!o_.full) {
    Time t = Time::zero();
    if (o_.delays) {
      t = combine && o_.delays->ep_combine > Time::zero() ? o_.delays->ep_combine
                                                          : o_.delays->ep_all_to_all;
    }
    for (const auto& g : groups) {
      const std::uint32_t r = g[0];
      Op delay = make_compute(t);
      depend(delay, ranks_[r].chain);
      ranks_[r].chain = add(r, delay, {OpRole::EpComm, true, layer, micro});
    }
    return;
  }
  const auto channel = static_cast<std::uint16_t>(kEpChannel + lane_);
  if (!c_.model.deepep_training()) {
    collective(groups, CollectiveOp::AllToAll, plan_.ep_bytes, Time::zero(), OpRole::EpComm,
               channel, layer, micro, &RankState::chain);
    return;
  }
  // DeepEP's two hops, as the reduced expansion measures them: the first of the block's pair is
  // dispatch-shaped (forward: the dispatch; backward: the combine's gradient, FP8 too), the
  // second combine-shaped.
  if (!o_.moe_exchange)
    throw std::logic_error("full expansion of a DeepEP job needs StepBuildOptions::moe_exchange");
  const MoePhase phase = combine ? MoePhase::Combine : MoePhase::Dispatch;
  for (const auto& members : groups) {
    std::vector<std::uint32_t> globals;
    for (std::uint32_t r : members) globals.push_back(ranks_[r].global);
    const PlannedExchange x = o_.moe_exchange(phase, globals);
    std::vector<std::uint32_t> ordered;
    std::vector<OpIndex> after;
    for (std::uint32_t g : x.order) {
      const auto at = std::find(globals.begin(), globals.end(), g);
      if (at == globals.end()) throw std::logic_error("DeepEP exchange outside its EP group");
      ordered.push_back(members[static_cast<std::size_t>(at - globals.begin())]);
      after.push_back(ranks_[ordered.back()].chain);
    }
    splice(ordered, after, *x.programs, OpRole::EpComm, channel, layer, micro, &RankState::chain);
  }
}

std::vector<OpIndex> Builder::zero3_gather(std::uint32_t s, std::uint32_t layer) {
  std::vector<OpIndex> gathered;
  if (p_.zero != ZeroStage::Parameters || p_.replicas() < 2) return gathered;
  if (!o_.full) {
    const Time delay = o_.delays ? o_.delays->zero3_gather[layer] : Time::zero();
    for (auto& g : dp_groups(s)) {
      const std::uint32_t r = g[0];
      Op op = make_compute(delay);
      depend(op, ranks_[r].gather);
      ranks_[r].gather = add(r, op, {OpRole::ParamGather, false, layer, kNone});
    }
  } else if (dualpipe() && s >= p_.pp / 2) {
    // The upper stage of a pair: its lower stage gathered for it, in the same count per layer
    // (each rank runs half the micro-batches in each direction through both copies' layers).
    for (std::uint32_t r : stage_ranks_[s]) {
      std::deque<OpIndex>& held = zero3_held_[r][layer];
      if (held.empty()) throw std::logic_error("DualPipe ZeRO-3 gathers out of step");
      gathered.push_back(held.front());
      held.pop_front();
    }
    return gathered;
  } else {
    // Over the stage's data-parallel groups, under DualPipe its holders (both copies' ranks).
    collective(holder_groups(s, false), CollectiveOp::AllGather, plan_.layer_grad_bytes[layer],
               Time::zero(), OpRole::ParamGather, kGatherChannel, layer, kNone, &RankState::gather);
    if (plan_.layer_expert_grad_bytes[layer].count() > 0) {
      collective(holder_groups(s, true), CollectiveOp::AllGather,
                 plan_.layer_expert_grad_bytes[layer], Time::zero(), OpRole::ParamGather,
                 kGatherChannel + kExpertChannelOffset, layer, kNone, &RankState::gather);
    }
    if (dualpipe()) {
      if (zero3_held_.empty()) zero3_held_.resize(ranks_.size());
      for (std::uint32_t r : stage_ranks_[p_.pp - 1 - s])
        zero3_held_[r][layer].push_back(ranks_[r].gather);
    }
  }
  for (std::uint32_t r : stage_ranks_[s]) gathered.push_back(ranks_[r].gather);
  return gathered;
}

Groups Builder::holder_groups(std::uint32_t s, bool expert) const {
  Groups groups = expert ? expert_dp_groups(s) : dp_groups(s);
  if (!dualpipe()) return groups;
  // Rank s holds stage s as direction 0's copy, rank pp - 1 - s as direction 1's: both copies'
  // gradients are summed (docs/training.md, "DualPipe").
  const std::uint32_t other = p_.pp - 1 - s;
  const Groups copies = expert ? expert_dp_groups(other) : dp_groups(other);
  for (std::size_t i = 0; i < groups.size(); ++i) {
    groups[i].insert(groups[i].end(), copies[i].begin(), copies[i].end());
    std::sort(groups[i].begin(), groups[i].end(), [&](std::uint32_t a, std::uint32_t b) {
      return ranks_[a].global < ranks_[b].global;
    });
  }
  return groups;
}

void Builder::bucket_collective(std::uint32_t s, const GradientBucket& b, CollectiveOp op,
                                OpRole role, std::uint16_t channel, std::uint32_t layer,
                                const std::vector<OpIndex>* after) {
  const Groups groups = holder_groups(s, b.expert);
  std::vector<OpIndex> chains;  // in group order
  for (const auto& g : groups)
    for (std::uint32_t r : g) chains.push_back(ranks_[r].chain);
  collective(groups, op, bucket_bytes(b, op), Time::zero(), role,
             static_cast<std::uint16_t>(channel + (b.expert ? kExpertChannelOffset : 0)), layer,
             kNone, &RankState::comm, after ? after : &chains);
}

}  // namespace step_detail

std::vector<OpIndex> append_collective(MaterializedProgramSet& out, const ProgramSet& coll,
                                       const std::vector<Rank>& members,
                                       const std::vector<OpIndex>& after,
                                       std::uint16_t channel_base) {
  using step_detail::depend;
  std::vector<std::uint32_t> group_map(coll.num_groups());
  for (std::uint32_t g = 0; g < coll.num_groups(); ++g) {
    std::vector<Rank> mapped;
    for (Rank r : coll.group(g)) mapped.push_back(members[r]);
    group_map[g] = out.add_group(std::move(mapped));
  }
  std::vector<OpIndex> done(members.size());
  std::vector<char> referenced;
  std::vector<OpIndex> index;  // collective op -> op in `out`
  for (Rank i = 0; i < members.size(); ++i) {
    const Rank r = members[i];
    const OpIndex count = coll.num_ops(i);
    referenced.assign(count, 0);
    index.assign(count, 0);
    // The collective's roots wait for after[i]. They are released through a chain of zero-time
    // gates, one per root in program order, so that they post in program order even on an engine
    // that starts the dependents of one op in any order (FIFO matching follows posting).
    OpIndex gate = after[i];
    for (OpIndex k = 0; k < count; ++k) {
      Op op = coll.op(i, k);
      for (std::uint8_t j = 0; j < op.num_deps; ++j) {
        referenced[op.deps[j]] = 1;
        op.deps[j] = index[op.deps[j]];
      }
      if (op.num_deps == 0 && after[i] != kNone) {
        Op g = make_compute(Time::zero());
        g.add_dep(gate);
        gate = out.add(r, g);
        op.add_dep(gate);
      }
      if (op.kind == OpKind::Send || op.kind == OpKind::Recv) op.peer = members[op.peer];
      if (op.kind == OpKind::NetReduce) op.peer = group_map[op.peer];
      op.channel = static_cast<std::uint16_t>(op.channel + channel_base);
      index[k] = out.add(r, op);
    }
    // Join the sinks (ops nothing else waits for) in a tree of zero-time ops of <= 4 deps.
    std::vector<OpIndex> sinks;
    for (OpIndex k = 0; k < count; ++k)
      if (!referenced[k]) sinks.push_back(index[k]);
    if (sinks.empty()) sinks.push_back(after[i]);
    while (sinks.size() > 1 || sinks[0] == kNone) {
      std::vector<OpIndex> next;
      for (std::size_t k = 0; k < sinks.size(); k += kMaxDeps) {
        Op join = make_compute(Time::zero());
        for (std::size_t j = k; j < std::min(sinks.size(), k + kMaxDeps); ++j)
          depend(join, sinks[j]);
        next.push_back(out.add(r, join));
      }
      sinks = std::move(next);
    }
    done[i] = sinks[0];
  }
  return done;
}

}  // namespace lockstep
