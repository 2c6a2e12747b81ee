#include "lockstep/workload/step_builder.hpp"

#include <algorithm>
#include <cmath>

#include "lockstep/core/rng.hpp"
#include "lockstep/topology/graph.hpp"

namespace lockstep {
namespace {

constexpr std::uint16_t kTpChannel = 0;
constexpr std::uint16_t kPpChannel = 1000;
constexpr std::uint16_t kDpChannel = 2000;
constexpr std::uint16_t kEpChannel = 3000;
constexpr std::uint16_t kGatherChannel = 4000;

// Index of a rank's op that adds a dependency only when it exists.
void depend(Op& op, OpIndex dep) {
  if (dep != kNone) op.add_dep(dep);
}

// Ranks of a group that share the first member's node, when the group is made of equal
// consecutive node blocks (what make_collective's ring order wants); 0 otherwise.
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

class Builder {
 public:
  Builder(const TrainConfig& c, const StepPlan& plan, const StepBuildOptions& o)
      : c_(c), p_(c.par), plan_(plan), o_(o) {}

  StepPrograms build();

 private:
  struct RankState {
    std::uint32_t global = 0;
    std::uint32_t t = 0, d = 0, s = 0;
    OpIndex chain = kNone;   // last op of the compute chain
    OpIndex comm = kNone;    // last op of the DP gradient chain
    OpIndex gather = kNone;  // last op of the ZeRO-3 parameter-gather chain
    Rng rng{0};
  };

  std::uint32_t global_of(std::uint32_t t, std::uint32_t d, std::uint32_t s) const {
    return t + p_.tp * (d + p_.dp * s);
  }
  std::uint32_t local_of(std::uint32_t t, std::uint32_t d, std::uint32_t s) const {
    return o_.full ? global_of(t, d, s) : t + p_.tp * s;
  }
  OpIndex add(std::uint32_t r, const Op& op, OpTag tag) {
    out_.tags[r].push_back(tag);
    return out_.programs->add(r, op);
  }
  OpIndex add_chain(std::uint32_t r, Op op, OpIndex side, OpTag tag) {
    depend(op, ranks_[r].chain);
    depend(op, side);
    tag.chain = true;
    return ranks_[r].chain = add(r, op, tag);
  }
  void compute(const std::vector<std::uint32_t>& rs, Time ideal, OpRole role, std::uint32_t layer,
               std::uint32_t micro, const std::vector<OpIndex>* side = nullptr);
  // A collective over groups of program ranks on a chain selected by `which`.
  void collective(const std::vector<std::vector<std::uint32_t>>& groups, CollectiveOp op,
                  Bytes bytes, Time delay, OpRole role, std::uint16_t channel, std::uint32_t layer,
                  std::uint32_t micro, OpIndex RankState::*which,
                  const std::vector<OpIndex>* extra_after = nullptr);
  void tp_collective(std::uint32_t s, CollectiveOp op, std::uint32_t layer, std::uint32_t micro);
  void ep_all_to_all(std::uint32_t s, std::uint32_t layer, std::uint32_t micro);
  void zero3_gather(std::uint32_t s, std::uint32_t layer);
  void forward(std::uint32_t s, std::uint32_t mb);
  void backward(std::uint32_t s, std::uint32_t mb);
  void layer_pass(std::uint32_t s, std::uint32_t layer, std::uint32_t mb, bool fwd);
  void after_backward_of(std::uint32_t s, std::uint32_t layer);
  void stage_end(std::uint32_t s);

  std::vector<std::vector<std::uint32_t>> tp_groups(std::uint32_t s) const;
  std::vector<std::vector<std::uint32_t>> dp_groups(std::uint32_t s) const;
  std::vector<std::vector<std::uint32_t>> ep_groups(std::uint32_t s) const;

  const TrainConfig& c_;
  const ParallelConfig& p_;
  const StepPlan& plan_;
  const StepBuildOptions& o_;
  StepPrograms out_;
  std::vector<RankState> ranks_;
  std::vector<std::vector<std::uint32_t>> stage_ranks_;
  std::vector<std::uint32_t> dps_;  // dp indices present
};

void Builder::compute(const std::vector<std::uint32_t>& rs, Time ideal, OpRole role,
                      std::uint32_t layer, std::uint32_t micro, const std::vector<OpIndex>* side) {
  for (std::size_t i = 0; i < rs.size(); ++i) {
    RankState& st = ranks_[rs[i]];
    double factor = o_.rank_factors ? (*o_.rank_factors)[st.global] : 1.0;
    if (o_.noise && o_.noise->has_kernel_jitter()) factor *= o_.noise->draw_kernel_factor(st.rng);
    const Time noisy = Time::ps(std::llround(static_cast<double>(ideal.picoseconds()) * factor));
    out_.ideal_compute[rs[i]] += ideal;
    out_.noisy_compute[rs[i]] += noisy;
    add_chain(rs[i], make_compute(noisy), side ? (*side)[i] : kNone, {role, true, layer, micro});
  }
}

void Builder::collective(const std::vector<std::vector<std::uint32_t>>& groups, CollectiveOp op,
                         Bytes bytes, Time delay, OpRole role, std::uint16_t channel,
                         std::uint32_t layer, std::uint32_t micro, OpIndex RankState::*which,
                         const std::vector<OpIndex>* extra_after) {
  const bool chain = which == &RankState::chain;
  std::size_t k = 0;
  // TP groups lie inside a replica, so the reduced expansion can run them for real too.
  const bool real = o_.full || (role == OpRole::TpComm && o_.real_tp);
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
    auto programs = o_.collectives(op, static_cast<Rank>(members.size()), bytes,
                                   ranks_per_node_of(globals, o_.gpus_per_node));
    std::vector<std::size_t> first(members.size());
    for (std::size_t i = 0; i < members.size(); ++i) first[i] = out_.programs->num_ops(members[i]);
    auto done = append_collective(*out_.programs, *programs, members, after, channel);
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
}

std::vector<std::vector<std::uint32_t>> Builder::tp_groups(std::uint32_t s) const {
  std::vector<std::vector<std::uint32_t>> groups;
  for (std::uint32_t d : dps_) {
    groups.emplace_back();
    for (std::uint32_t t = 0; t < p_.tp; ++t) groups.back().push_back(local_of(t, d, s));
  }
  return groups;
}

std::vector<std::vector<std::uint32_t>> Builder::dp_groups(std::uint32_t s) const {
  std::vector<std::vector<std::uint32_t>> groups;
  for (std::uint32_t t = 0; t < p_.tp; ++t) {
    groups.emplace_back();
    for (std::uint32_t d : dps_) groups.back().push_back(local_of(t, d, s));
  }
  return groups;
}

std::vector<std::vector<std::uint32_t>> Builder::ep_groups(std::uint32_t s) const {
  std::vector<std::vector<std::uint32_t>> groups;
  if (!o_.full) {
    // Reduced: one member per group stands for its EP group; the delay carries the time.
    for (std::uint32_t t = 0; t < p_.tp; ++t) groups.push_back({local_of(t, dps_[0], s)});
    return groups;
  }
  for (std::uint32_t t = 0; t < p_.tp; ++t) {
    for (std::uint32_t b = 0; b < p_.dp / p_.ep; ++b) {
      groups.emplace_back();
      for (std::uint32_t e = 0; e < p_.ep; ++e)
        groups.back().push_back(local_of(t, b * p_.ep + e, s));
    }
  }
  return groups;
}

void Builder::tp_collective(std::uint32_t s, CollectiveOp op, std::uint32_t layer,
                            std::uint32_t micro) {
  if (p_.tp < 2) return;
  const CommDelays* d = o_.delays;
  Time delay;
  if (d) {
    delay = op == CollectiveOp::AllGather       ? d->tp_all_gather
            : op == CollectiveOp::ReduceScatter ? d->tp_reduce_scatter
                                                : d->tp_all_reduce;
  }
  collective(tp_groups(s), op, plan_.tp_bytes, delay, OpRole::TpComm, kTpChannel, layer, micro,
             &RankState::chain);
}

void Builder::ep_all_to_all(std::uint32_t s, std::uint32_t layer, std::uint32_t micro) {
  if (p_.ep < 2 || !c_.model.is_moe_layer(layer)) return;
  auto groups = ep_groups(s);
  if (!o_.full) {
    for (std::uint32_t t = 0; t < p_.tp; ++t) {
      const std::uint32_t r = groups[t][0];
      Op delay = make_compute(o_.delays ? o_.delays->ep_all_to_all : Time::zero());
      depend(delay, ranks_[r].chain);
      ranks_[r].chain = add(r, delay, {OpRole::EpComm, true, layer, micro});
    }
    return;
  }
  collective(groups, CollectiveOp::AllToAll, plan_.ep_bytes, Time::zero(), OpRole::EpComm,
             kEpChannel, layer, micro, &RankState::chain);
}

void Builder::zero3_gather(std::uint32_t s, std::uint32_t layer) {
  if (p_.zero != ZeroStage::Parameters || p_.dp < 2) return;
  Time delay = o_.delays ? o_.delays->zero3_gather[layer] : Time::zero();
  auto groups = dp_groups(s);
  if (!o_.full) {
    for (auto& g : groups) {
      const std::uint32_t r = g[0];
      Op op = make_compute(delay);
      depend(op, ranks_[r].gather);
      ranks_[r].gather = add(r, op, {OpRole::ParamGather, false, layer, kNone});
    }
    return;
  }
  collective(groups, CollectiveOp::AllGather, plan_.layer_grad_bytes[layer], Time::zero(),
             OpRole::ParamGather, kGatherChannel, layer, kNone, &RankState::gather);
}

void Builder::layer_pass(std::uint32_t s, std::uint32_t layer, std::uint32_t mb, bool fwd) {
  const auto& rs = stage_ranks_[s];
  const ModelSpec& m = c_.model;
  // Split a layer's kernel time between attention and MLP in proportion to their FLOPs.
  const double seq = static_cast<double>(c_.sequence_length());
  const double attn = 2.0 * static_cast<double>(m.attention_params_per_layer()) +
                      4.0 * seq * m.heads * static_cast<double>(m.head_size());
  const double total = m.layer_forward_flops_per_token(layer, c_.sequence_length());
  const Time whole = fwd ? plan_.forward[layer] : plan_.backward[layer];
  const Time attn_time =
      Time::ps(std::llround(static_cast<double>(whole.picoseconds()) * attn / total));
  const Time mlp_time = whole - attn_time;
  const OpRole role = fwd ? OpRole::Forward : OpRole::Backward;
  const bool sp = p_.sequence_parallel;
  std::vector<OpIndex> gathered;
  const bool zero3 = p_.zero == ZeroStage::Parameters && p_.dp > 1;
  if (zero3) {
    zero3_gather(s, layer);
    for (std::uint32_t r : rs) gathered.push_back(ranks_[r].gather);
  }
  // Forward: [AG] attention [RS or AR] [AG] (dispatch) MLP (combine) [RS or AR]; backward runs
  // the mirror image with the same collectives.
  auto tp_in = [&] {
    if (sp) tp_collective(s, CollectiveOp::AllGather, layer, mb);
  };
  auto tp_out = [&] {
    tp_collective(s, sp ? CollectiveOp::ReduceScatter : CollectiveOp::AllReduce, layer, mb);
  };
  auto attention = [&](const std::vector<OpIndex>* side) {
    tp_in();
    compute(rs, attn_time, role, layer, mb, side);
    tp_out();
  };
  auto mlp = [&](const std::vector<OpIndex>* side) {
    tp_in();
    ep_all_to_all(s, layer, mb);
    compute(rs, mlp_time, role, layer, mb, side);
    ep_all_to_all(s, layer, mb);
    tp_out();
  };
  const std::vector<OpIndex>* side = zero3 ? &gathered : nullptr;
  if (fwd) {
    attention(side);
    mlp(nullptr);
  } else {
    mlp(side);
    attention(nullptr);
  }
}

void Builder::forward(std::uint32_t s, std::uint32_t mb) {
  const auto& rs = stage_ranks_[s];
  std::vector<OpIndex> recv(rs.size(), kNone);
  if (s > 0) {
    for (std::size_t i = 0; i < rs.size(); ++i) {
      const RankState& st = ranks_[rs[i]];
      Op op = make_recv(local_of(st.t, st.d, s - 1), {Buffer::Output, 0, plan_.pp_bytes.count()},
                        RecvMode::Copy, kPpChannel);
      recv[i] = add(rs[i], op, {OpRole::PpRecv, false, kNone, mb});
    }
    // The recv joins the chain so that the breakdown sees what the stage waited for.
    for (std::size_t i = 0; i < rs.size(); ++i) {
      Op join = make_compute(Time::zero());
      add_chain(rs[i], join, recv[i], {OpRole::PpRecv, true, kNone, mb});
    }
  }
  for (std::uint32_t l = plan_.stage_first_layer[s]; l < plan_.stage_first_layer[s + 1]; ++l) {
    layer_pass(s, l, mb, true);
  }
  if (s + 1 == p_.pp) compute(rs, plan_.head_forward, OpRole::Forward, kNone, mb);
  if (s + 1 < p_.pp) {
    for (std::uint32_t r : rs) {
      const RankState& st = ranks_[r];
      Op op = make_send(local_of(st.t, st.d, s + 1), {Buffer::Input, 0, plan_.pp_bytes.count()},
                        kPpChannel);
      depend(op, st.chain);
      add(r, op, {OpRole::PpSend, false, kNone, mb});
    }
  }
}

void Builder::backward(std::uint32_t s, std::uint32_t mb) {
  const auto& rs = stage_ranks_[s];
  if (s + 1 < p_.pp) {
    for (std::uint32_t r : rs) {
      const RankState& st = ranks_[r];
      Op op = make_recv(local_of(st.t, st.d, s + 1), {Buffer::Output, 0, plan_.pp_bytes.count()},
                        RecvMode::Copy, kPpChannel);
      const OpIndex recv = add(r, op, {OpRole::PpRecv, false, kNone, mb});
      add_chain(r, make_compute(Time::zero()), recv, {OpRole::PpRecv, true, kNone, mb});
    }
  } else {
    compute(rs, plan_.head_backward, OpRole::Backward, kNone, mb);
  }
  for (std::uint32_t l = plan_.stage_first_layer[s + 1]; l-- > plan_.stage_first_layer[s];) {
    layer_pass(s, l, mb, false);
    if (mb + 1 == plan_.micro_batches) after_backward_of(s, l);
  }
  if (s > 0) {
    for (std::uint32_t r : rs) {
      const RankState& st = ranks_[r];
      Op op = make_send(local_of(st.t, st.d, s - 1), {Buffer::Input, 0, plan_.pp_bytes.count()},
                        kPpChannel);
      depend(op, st.chain);
      add(r, op, {OpRole::PpSend, false, kNone, mb});
    }
  }
}

// The last micro-batch's backward of `layer` completes the gradient buckets that end with it.
void Builder::after_backward_of(std::uint32_t s, std::uint32_t layer) {
  const auto& buckets = plan_.buckets[s];
  for (std::size_t b = 0; b < buckets.size(); ++b) {
    if (buckets[b].ready_after_layer != layer) continue;
    std::vector<OpIndex> ready;
    for (std::uint32_t r : stage_ranks_[s]) {
      out_.bucket_ready[r].push_back(ranks_[r].chain);
      ready.push_back(ranks_[r].chain);
    }
    if (!o_.full || p_.dp < 2 || !c_.overlap_dp) continue;
    const CollectiveOp op =
        p_.zero == ZeroStage::None ? CollectiveOp::AllReduce : CollectiveOp::ReduceScatter;
    auto groups = dp_groups(s);
    std::vector<OpIndex> after;  // in dp_groups order
    for (const auto& g : groups)
      for (std::uint32_t r : g) after.push_back(ranks_[r].chain);
    collective(groups, op, buckets[b].bytes, Time::zero(), OpRole::DpComm, kDpChannel, layer, kNone,
               &RankState::comm, &after);
  }
}

void Builder::stage_end(std::uint32_t s) {
  if (!o_.full || p_.dp < 2) return;
  auto groups = dp_groups(s);
  std::vector<OpIndex> after;
  for (const auto& g : groups)
    for (std::uint32_t r : g) after.push_back(ranks_[r].chain);
  const auto& buckets = plan_.buckets[s];
  if (!c_.overlap_dp) {
    // Without overlap every bucket starts after the backward pass.
    const CollectiveOp op =
        p_.zero == ZeroStage::None ? CollectiveOp::AllReduce : CollectiveOp::ReduceScatter;
    for (const auto& b : buckets) {
      collective(groups, op, b.bytes, Time::zero(), OpRole::DpComm, kDpChannel, kNone, kNone,
                 &RankState::comm, &after);
    }
  }
  if (p_.zero == ZeroStage::Optimizer || p_.zero == ZeroStage::Gradients) {
    // ZeRO-1/2: after the (sharded) optimizer step each rank gathers the updated parameters.
    for (const auto& b : buckets) {
      collective(groups, CollectiveOp::AllGather, b.bytes, Time::zero(), OpRole::ParamGather,
                 kGatherChannel, kNone, kNone, &RankState::comm, &after);
    }
  }
}

StepPrograms Builder::build() {
  if (o_.full) {
    for (std::uint32_t d = 0; d < p_.dp; ++d) dps_.push_back(d);
  } else {
    dps_.push_back(o_.replica);
  }
  const std::uint32_t n = p_.tp * p_.pp * static_cast<std::uint32_t>(dps_.size());
  out_.programs = std::make_unique<MaterializedProgramSet>(n, DataType::Bf16);
  out_.programs->set_label("train_step");
  out_.global_rank.resize(n);
  out_.tags.resize(n);
  out_.bucket_ready.resize(n);
  out_.ideal_compute.assign(n, Time::zero());
  out_.noisy_compute.assign(n, Time::zero());
  ranks_.resize(n);
  stage_ranks_.resize(p_.pp);
  const Rng base(o_.noise_seed);
  for (std::uint32_t s = 0; s < p_.pp; ++s) {
    for (std::uint32_t d : dps_) {
      for (std::uint32_t t = 0; t < p_.tp; ++t) {
        const std::uint32_t r = local_of(t, d, s);
        RankState& st = ranks_[r];
        st.t = t;
        st.d = d;
        st.s = s;
        st.global = global_of(t, d, s);
        st.rng = base.split(st.global);
        out_.global_rank[r] = st.global;
        stage_ranks_[s].push_back(r);
      }
    }
    std::sort(stage_ranks_[s].begin(), stage_ranks_[s].end());
  }
  // 1F1B (PipeDream-Flush, Narayanan et al. 2021): stage s runs pp - s - 1 warm-up forwards,
  // then alternates one forward and one backward, then drains the remaining backwards.
  const std::uint32_t m = static_cast<std::uint32_t>(plan_.micro_batches);
  for (std::uint32_t s = 0; s < p_.pp; ++s) {
    const std::uint32_t warmup = std::min(p_.pp - s - 1, m);
    std::uint32_t f = 0, b = 0;
    for (; f < warmup; ++f) forward(s, f);
    while (f < m) {
      forward(s, f++);
      backward(s, b++);
    }
    while (b < m) backward(s, b++);
    stage_end(s);
  }
  return std::move(out_);
}

}  // namespace

const char* to_string(OpRole role) {
  switch (role) {
    case OpRole::Forward:
      return "forward";
    case OpRole::Backward:
      return "backward";
    case OpRole::TpComm:
      return "tp";
    case OpRole::EpComm:
      return "ep";
    case OpRole::PpSend:
      return "pp_send";
    case OpRole::PpRecv:
      return "pp_recv";
    case OpRole::DpComm:
      return "dp";
    case OpRole::ParamGather:
      return "param_gather";
    case OpRole::Join:
      return "join";
  }
  return "?";
}

CollectiveFactory default_collective_factory() {
  return [](CollectiveOp op, Rank n, Bytes bytes, std::uint32_t ranks_per_node) {
    CollectiveSpec spec;
    spec.op = op;
    spec.algorithm = op == CollectiveOp::AllToAll ? Algorithm::Direct : Algorithm::Ring;
    spec.ranks = n;
    spec.bytes = bytes;
    spec.ranks_per_node = ranks_per_node;
    return make_collective(spec);
  };
}

std::vector<OpIndex> append_collective(MaterializedProgramSet& out, const ProgramSet& coll,
                                       const std::vector<Rank>& members,
                                       const std::vector<OpIndex>& after,
                                       std::uint16_t channel_base) {
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

StepPrograms build_step_programs(const TrainConfig& config, const StepPlan& plan,
                                 const StepBuildOptions& options) {
  return Builder(config, plan, options).build();
}

}  // namespace lockstep
