// The pipeline schedule of a training step and the passes of each layer: compute kernels on
// each rank's chain, pipeline sends and receives between (virtual) stages, and the gradient
// buckets that follow the last micro-batch's backward pass.
#include "lockstep/workload/step_builder.hpp"

#include <algorithm>
#include <cmath>

#include "step_builder_detail.hpp"

namespace lockstep {
namespace step_detail {

double Builder::noise_factor(std::uint32_t global, Rng& rng) const {
  double factor = o_.rank_factors ? (*o_.rank_factors)[global] : 1.0;
  if (o_.noise && o_.noise->has_kernel_jitter()) factor *= o_.noise->draw_kernel_factor(rng);
  return factor;
}

void Builder::compute(const std::vector<std::uint32_t>& rs, Time ideal, OpRole role,
                      std::uint32_t layer, std::uint32_t micro, const std::vector<OpIndex>* side) {
  for (std::size_t i = 0; i < rs.size(); ++i) {
    RankState& st = ranks_[rs[i]];
    Time noisy;
    if (collapsed()) {
      // Every member draws from its own stream, as it would uncollapsed. Between two meetings
      // the group is as late as its slowest member: this kernel adds the growth of the largest
      // pending time (exact for several kernels between meetings, e.g. the output layer's
      // forward and backward passes).
      Time slowest;
      for (std::size_t t = 0; t < st.member_rngs.size(); ++t) {
        const Time own = ideal.scaled(
            noise_factor(st.global + static_cast<std::uint32_t>(t), st.member_rngs[t]));
        st.member_noisy[t] += own;
        st.member_pending[t] += own;
        slowest = std::max(slowest, st.member_pending[t]);
      }
      noisy = slowest - st.pending_emitted;
      st.pending_emitted = slowest;
    } else {
      noisy = ideal.scaled(noise_factor(st.global, st.rng));
    }
    out_.ideal_compute[rs[i]] += ideal;
    out_.noisy_compute[rs[i]] += noisy;
    Op op = make_compute(noisy);
    if (pairing_) depend(op, st.kernel);
    st.kernel = add_chain(rs[i], op, side ? (*side)[i] : kNone, {role, true, layer, micro});
  }
}

void Builder::layer_pass(std::uint32_t s, std::uint32_t layer, std::uint32_t mb, bool fwd,
                         Half half) {
  const auto& rs = stage_ranks_[s];
  // Split a layer's kernel time between attention and MLP as the plan's kernel times do.
  const LayerSplit& split = plan_.split[layer];
  Time whole = fwd ? plan_.forward[layer] : plan_.backward[layer];
  if (!fwd && input_only_) whole = std::max(Time::zero(), whole - weight_grad(layer));
  // A DualPipe pair's MoE blocks run beside the other pass's all-to-all, whose kernels hold
  // communication_sms of the GPU's SMs (DeepSeek-V3 section 3.2.2): the block's kernels run on
  // the rest, 1 / (1 - share) as long (exact while the transfer outlasts them, as DeepSeek-V3's
  // does in lockstep; an upper bound otherwise, dualpipe_pair).
  if (pairing_ && plan_.comm_sm_share > 0 && p_.ep > 1 && c_.model.is_moe_layer(layer))
    whole = whole.scaled(1.0 / (1.0 - plan_.comm_sm_share));
  const Time attn_time = whole.scaled(fwd ? split.attention_fwd : split.attention_bwd);
  const Time mlp_time = whole - attn_time;
  const OpRole role = fwd ? OpRole::Forward : OpRole::Backward;
  const bool sp = p_.sequence_parallel;
  std::vector<OpIndex> gathered;
  // The gather precedes the pass's first block (forward: attention; backward: MLP).
  const bool zero3 = p_.zero == ZeroStage::Parameters && p_.replicas() > 1 &&
                     half != (fwd ? Half::Mlp : Half::Attention);
  if (zero3) gathered = zero3_gather(s, layer);
  // Forward: [AG] attention [RS or AR] [AG] (dispatch) MLP (combine) [RS or AR]; backward runs
  // the mirror image with the same collectives.
  auto tp_in = [&] {
    if (sp) tp_collective(s, CollectiveOp::AllGather, layer, mb);
  };
  auto tp_out = [&] {
    tp_collective(s, sp ? CollectiveOp::ReduceScatter : CollectiveOp::AllReduce, layer, mb);
  };
  // tp_comm_overlap (Megatron-LM --tp-comm-overlap, Transformer Engine userbuffers): the
  // all-gather feeds the block's first GEMM chunk by chunk and the reduce-scatter drains its last
  // one, so each pair costs the longer of the two. Forward, the attention block's first GEMM is
  // QKV and its last the output projection, the MLP's FC1 and FC2; backward the mirror image.
  // Shares in proportion to the GEMMs' weights (FLOPs). MoE layers' grouped expert GEMMs are not
  // TE userbuffer GEMMs: their collectives stay on the chain.
  const bool overlap = c_.tp_comm_overlap && sp && p_.tp > 1;
  const ModelSpec& model = c_.model;
  const double out_proj = static_cast<double>(model.heads * model.v_head_size() * model.hidden);
  const double qkv_share = 1.0 - out_proj / static_cast<double>(model.attention_params_per_layer());
  const double fc1_share = model.gated_mlp ? 2.0 / 3.0 : 0.5;
  // A GEMM that an overlapped reduce-scatter drains runs on the SMs its userbuffers kernels
  // leave (Transformer Engine's SM margin, for the GEMM's whole run).
  auto drained = [&](Time gemm) { return gemm.scaled(1.0 / (1.0 - plan_.tp_overlap_sm_share)); };
  auto attention = [&](const std::vector<OpIndex>* side) {
    const Time core = attn_time.scaled(fwd ? split.core_fwd : split.core_bwd);
    const Time proj = attn_time - core;
    const Time first = proj.scaled(fwd ? qkv_share : 1.0 - qkv_share);
    if (overlap) {
      tp_overlapped(s, CollectiveOp::AllGather, first, role, layer, mb, side);
      side = nullptr;
    } else {
      tp_in();
    }
    if (p_.cp < 2) {
      compute(rs, overlap ? core : attn_time, role, layer, mb, side);
    } else {
      // Ring attention: the projections, then the score and value products block by block;
      // the KV ring's cp - 1 steps run beside the first cp - 1 blocks, the last block waits
      // for the ring's end (NVIDIA Megatron Core docs, "context parallelism").
      const Time last = core.scaled(1.0 / p_.cp);
      if (!overlap) compute(rs, proj, role, layer, mb, side);
      cp_ring(s, layer, mb, fwd);
      compute(rs, core - last, role, layer, mb);
      for (std::uint32_t r : rs) {
        add_chain(r, make_compute(Time::zero()), ranks_[r].ring, {OpRole::CpComm, true, layer, mb});
      }
      compute(rs, last, role, layer, mb);
    }
    if (overlap) {
      tp_overlapped(s, CollectiveOp::ReduceScatter, drained(proj - first), role, layer, mb,
                    nullptr);
    } else {
      tp_out();
    }
  };
  auto mlp = [&](const std::vector<OpIndex>* side) {
    if (overlap && !model.is_moe_layer(layer)) {
      const Time first = mlp_time.scaled(fwd ? fc1_share : 1.0 - fc1_share);
      tp_overlapped(s, CollectiveOp::AllGather, first, role, layer, mb, side);
      tp_overlapped(s, CollectiveOp::ReduceScatter, drained(mlp_time - first), role, layer, mb,
                    nullptr);
      return;
    }
    // Expert TP below TP (parallel folding): the routed experts take the sequence-parallel shard
    // as it is and hand it back so (gathering the dispatched tokens over etp ranks when etp > 1);
    // only shared experts, TP-split like a dense MLP, gather over TP.
    const bool gathers =
        !model.is_moe_layer(layer) || p_.expert_tp() == p_.tp || model.shared_experts > 0;
    if (gathers) tp_in();
    ep_all_to_all(s, layer, mb, false);
    expert_tp_collective(s, CollectiveOp::AllGather, layer, mb);
    compute(rs, mlp_time, role, layer, mb, side);
    expert_tp_collective(s, CollectiveOp::ReduceScatter, layer, mb);
    ep_all_to_all(s, layer, mb, true);
    if (gathers) tp_out();
  };
  const std::vector<OpIndex>* side = zero3 ? &gathered : nullptr;
  const bool attn = half != Half::Mlp, ffn = half != Half::Attention;
  if (fwd) {
    if (attn) attention(side);
    if (ffn) mlp(attn ? nullptr : side);
  } else {
    if (ffn) mlp(side);
    if (attn) attention(ffn ? nullptr : side);
  }
}

void Builder::pp_recv(std::uint32_t s, std::uint32_t from_stage, std::uint16_t channel,
                      std::uint32_t mb) {
  for (std::uint32_t r : stage_ranks_[s]) {
    const RankState& st = ranks_[r];
    Op op = make_recv(local_of(st.t, st.d, from_stage), {Buffer::Output, 0, plan_.pp_bytes.count()},
                      RecvMode::Copy, channel);
    const OpIndex recv = add(r, op, {OpRole::PpRecv, false, kNone, mb});
    if (collapsed()) meet(ranks_[r]);  // approximately: a member already past it does not wait
    // The recv joins the chain so that the breakdown sees what the stage waited for.
    add_chain(r, make_compute(Time::zero()), recv, {OpRole::PpRecv, true, kNone, mb});
  }
}

void Builder::pp_send(std::uint32_t s, std::uint32_t to_stage, std::uint16_t channel,
                      std::uint32_t mb) {
  for (std::uint32_t r : stage_ranks_[s]) {
    const RankState& st = ranks_[r];
    Op op = make_send(local_of(st.t, st.d, to_stage), {Buffer::Input, 0, plan_.pp_bytes.count()},
                      channel);
    depend(op, st.chain);
    add(r, op, {OpRole::PpSend, false, kNone, mb});
  }
}

// Virtual stage k = chunk x pp + s receives from k - 1 and sends to k + 1; the stage before
// stage 0 (for chunks > 0) is the last stage, the stage after the last is stage 0.
void Builder::forward(std::uint32_t s, std::uint32_t chunk, std::uint32_t mb) {
  const std::uint32_t k = plan_.virtual_stage(s, chunk), last = p_.pp * p_.interleave - 1;
  if (k > 0)
    pp_recv(s, (s + p_.pp - 1) % p_.pp, static_cast<std::uint16_t>(kPpChannel + 2 * chunk), mb);
  for (std::uint32_t l = plan_.first_layer(s, chunk); l < plan_.end_layer(s, chunk); ++l) {
    layer_pass(s, l, mb, true);
  }
  if (k == last) {
    compute(stage_ranks_[s], plan_.head_forward, OpRole::Forward, kNone, mb);
  } else {
    const std::uint32_t next_chunk = (k + 1) / p_.pp;
    pp_send(s, (s + 1) % p_.pp, static_cast<std::uint16_t>(kPpChannel + 2 * next_chunk), mb);
  }
}

void Builder::backward(std::uint32_t s, std::uint32_t chunk, std::uint32_t mb) {
  const std::uint32_t k = plan_.virtual_stage(s, chunk), last = p_.pp * p_.interleave - 1;
  if (k < last) {
    pp_recv(s, (s + 1) % p_.pp, static_cast<std::uint16_t>(kPpChannel + 2 * chunk + 1), mb);
  } else {
    compute(stage_ranks_[s], plan_.head_backward, OpRole::Backward, kNone, mb);
  }
  for (std::uint32_t l = plan_.end_layer(s, chunk); l-- > plan_.first_layer(s, chunk);) {
    layer_pass(s, l, mb, false);
    if (mb + 1 == plan_.micro_batches) after_backward_of(s, l, s);
  }
  if (k > 0) {
    const std::uint32_t prev_chunk = (k - 1) / p_.pp;
    pp_send(s, (s + p_.pp - 1) % p_.pp, static_cast<std::uint16_t>(kPpChannel + 2 * prev_chunk + 1),
            mb);
  }
}

namespace {
CollectiveOp gradient_op(ZeroStage z) {
  return z == ZeroStage::None ? CollectiveOp::AllReduce : CollectiveOp::ReduceScatter;
}
// Noise's extra compute. Compute past Time's range has none to speak of: its iteration is
// infinite, which simulate_training refuses, naming the input (docs/units.md).
Time extra_of(Time noisy, Time ideal) {
  return ideal.is_finite() ? noisy - ideal : Time::zero();
}
}  // namespace

void Builder::after_backward_of(std::uint32_t s, std::uint32_t layer, std::uint32_t stage) {
  const std::vector<GradientBucket>& buckets = plan_.buckets[stage];
  for (std::size_t k = 0; k < buckets.size(); ++k) {
    if (buckets[k].ready_after_layer != layer) continue;
    for (std::uint32_t r : stage_ranks_[s])
      out_.bucket_ready[r][bucket_slot(s, stage, k)] = ranks_[r].chain;
    // DualPipe's groups span two stages: dualpipe_buckets issues them once both are built.
    if (!o_.full || p_.replicas() < 2 || !c_.overlap_dp || dualpipe()) continue;
    bucket_collective(s, buckets[k], gradient_op(p_.zero), OpRole::DpComm, kDpChannel, layer);
  }
}

void Builder::dualpipe_buckets(bool gather) {
  if (!o_.full) return;  // reduced expansion schedules the step's end after the run
  const bool sharded = p_.zero == ZeroStage::Optimizer || p_.zero == ZeroStage::Gradients;
  if (gather && !sharded) return;
  const CollectiveOp op = gather ? CollectiveOp::AllGather : gradient_op(p_.zero);
  for (std::uint32_t s = 0; s < p_.pp / 2; ++s) {
    for (std::uint32_t stage : {s, p_.pp - 1 - s}) {
      const std::vector<GradientBucket>& buckets = plan_.buckets[stage];
      for (std::size_t k = 0; k < buckets.size(); ++k) {
        const GradientBucket& b = buckets[k];
        if (gather && !plan_.gather_exposed(stage, b, c_.overlap_param_gather)) continue;
        // A member's reduction starts once its own copy of the bucket is complete (without
        // overlap, after its backward passes); the gather after its optimizer step.
        const bool at_ready = !gather && c_.overlap_dp;
        std::vector<OpIndex> after;
        for (const auto& g : holder_groups(s, b.expert)) {
          for (std::uint32_t r : g) {
            after.push_back(at_ready ? out_.bucket_ready[r][bucket_slot(ranks_[r].s, stage, k)]
                                     : ranks_[r].chain);
          }
        }
        bucket_collective(s, b, op, gather ? OpRole::ParamGather : OpRole::DpComm,
                          gather ? kGatherChannel : kDpChannel,
                          at_ready ? b.ready_after_layer : kNone, &after);
      }
    }
  }
}

void Builder::stage_reduce(std::uint32_t s) {
  if (!o_.full) return;  // reduced expansion schedules the step's end after the run
  if (p_.replicas() >= 2 && !c_.overlap_dp) {
    // Without overlap every bucket starts after the backward pass.
    for (const GradientBucket& b : plan_.buckets[s])
      bucket_collective(s, b, gradient_op(p_.zero), OpRole::DpComm, kDpChannel, kNone);
  }
}

// Megatron-LM clips by the global gradient norm (--clip-grad, default 1.0): each rank's squared
// norm of its shard, then an all-reduce of one FP32 over the model- and data-parallel ranks,
// i.e. every rank (optimizer/clip_grads.py), after the rank's kernels and gradient reduction.
void Builder::grad_norm() {
  if (!o_.full || c_.clip_grad <= 0) return;
  Groups all(1);
  std::vector<OpIndex> chains;
  for (std::uint32_t r = 0; r < ranks_.size(); ++r) {
    all[0].push_back(r);
    chains.push_back(ranks_[r].chain);
  }
  collective(all, CollectiveOp::AllReduce, Bytes(4), Time::zero(), OpRole::GradNorm, kNormChannel,
             kNone, kNone, &RankState::comm, &chains);
}

void Builder::stage_update(std::uint32_t s) {
  if (!o_.full) return;
  // The optimizer step starts once the rank's kernels and its gradient reduction are done.
  const Time step = plan_.optimizer_step.empty() ? Time::zero() : plan_.optimizer_step[s];
  if (step > Time::zero()) {
    for (std::uint32_t r : stage_ranks_[s]) {
      Op op = make_compute(step);
      depend(op, ranks_[r].chain);
      depend(op, ranks_[r].comm);
      ranks_[r].comm = add(r, op, {OpRole::Optimizer, false, kNone, kNone});
    }
  }
  if (p_.replicas() >= 2 && !dualpipe() &&
      (p_.zero == ZeroStage::Optimizer || p_.zero == ZeroStage::Gradients)) {
    // ZeRO-1/2: after the (sharded) optimizer step each rank gathers the updated parameters.
    for (const GradientBucket& b : plan_.buckets[s]) {
      if (!plan_.gather_exposed(s, b, c_.overlap_param_gather)) continue;
      bucket_collective(s, b, CollectiveOp::AllGather, OpRole::ParamGather, kGatherChannel, kNone);
    }
  }
}

StepPrograms Builder::build() {
  if (o_.full) {
    for (std::uint32_t d = 0; d < p_.replicas(); ++d) dps_.push_back(d);
  } else {
    dps_.push_back(o_.replica);
  }
  for (std::uint32_t t = 0; t < (collapsed() ? 1 : p_.tp); ++t) tps_.push_back(t);
  const auto n = static_cast<std::uint32_t>(tps_.size() * p_.pp * dps_.size());
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
      for (std::uint32_t t : tps_) {
        const std::uint32_t r = local_of(t, d, s);
        RankState& st = ranks_[r];
        st.t = t;
        st.d = d;
        st.s = s;
        st.global = global_of(t, d, s);
        st.rng = base.split(st.global);
        out_.global_rank[r] = st.global;
        stage_ranks_[s].push_back(r);
        if (collapsed()) {
          // The TP group's members are the consecutive global ranks global .. global + tp - 1.
          for (std::uint32_t m = 0; m < p_.tp; ++m) {
            st.member_rngs.push_back(base.split(st.global + m));
            st.member_noisy.push_back(Time::zero());
            st.member_pending.push_back(Time::zero());
          }
        }
      }
    }
    std::sort(stage_ranks_[s].begin(), stage_ranks_[s].end());
    // One slot per bucket the rank completes: its stage's, and under DualPipe its second copy's.
    std::size_t held = plan_.buckets[s].size();
    if (dualpipe()) held += plan_.buckets[p_.pp - 1 - s].size();
    for (std::uint32_t r : stage_ranks_[s]) out_.bucket_ready[r].assign(held, kNone);
  }
  for (std::uint32_t s = 0; s < p_.pp; ++s) {
    if (dualpipe()) {
      dualpipe_stage(s);
      continue;
    }
    for (const PipelineUnit& u :
         pipeline_order(p_.pp, p_.interleave, plan_.micro_batches, s, p_.microbatch_group)) {
      if (u.forward) {
        forward(s, u.chunk, u.micro);
      } else {
        backward(s, u.chunk, u.micro);
      }
    }
    stage_reduce(s);
  }
  if (dualpipe()) dualpipe_buckets(false);
  grad_norm();
  for (std::uint32_t s = 0; s < p_.pp; ++s) stage_update(s);
  if (dualpipe()) dualpipe_buckets(true);
  out_.represented.resize(n);
  out_.represented_extra.resize(n);
  for (std::uint32_t r = 0; r < n; ++r) {
    const RankState& st = ranks_[r];
    if (collapsed()) {
      for (std::uint32_t m = 0; m < p_.tp; ++m) {
        out_.represented[r].push_back(st.global + m);
        out_.represented_extra[r].push_back(extra_of(st.member_noisy[m], out_.ideal_compute[r]));
      }
    } else {
      out_.represented[r].push_back(st.global);
      out_.represented_extra[r].push_back(extra_of(out_.noisy_compute[r], out_.ideal_compute[r]));
    }
  }
  return std::move(out_);
}

}  // namespace step_detail

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
    case OpRole::CpComm:
      return "cp";
    case OpRole::ParamGather:
      return "param_gather";
    case OpRole::Optimizer:
      return "optimizer";
    case OpRole::GradNorm:
      return "grad_norm";
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

StepPrograms build_step_programs(const TrainConfig& config, const StepPlan& plan,
                                 const StepBuildOptions& options) {
  return step_detail::Builder(config, plan, options).build();
}

}  // namespace lockstep
