#pragma once
// The step builder's internals, shared by its translation units: step_builder.cpp (the pipeline
// schedule and the passes of each layer) and step_collectives.cpp (collectives over groups of
// ranks, as real sends/receives or as measured delays).
#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <vector>

#include "lockstep/core/rng.hpp"
#include "lockstep/topology/graph.hpp"
#include "lockstep/workload/dualpipe.hpp"
#include "lockstep/workload/step_builder.hpp"

namespace lockstep::step_detail {

// Channels keep each kind of traffic in its own FIFO matching queue. Pipeline traffic uses
// kPpChannel + 2 x (receiving chunk) for activations and + 1 for gradients, so that the
// interleaved schedule's wrap-around (last stage -> stage 0) never mixes with gradients.
constexpr std::uint16_t kTpChannel = 0;
constexpr std::uint16_t kPpChannel = 1000;
constexpr std::uint16_t kDpChannel = 2000;
constexpr std::uint16_t kEpChannel = 3000;
constexpr std::uint16_t kGatherChannel = 4000;
constexpr std::uint16_t kCpChannel = 5000;
constexpr std::uint16_t kNormChannel = 6000;
// The EP channels, kEpChannel up to kGatherChannel: the expert exchange's alone (DualPipe's pair
// lane included), so that the step's router can tell DeepEP's sends by their channel
// (make_step_router, training_deepep.cpp).
constexpr bool is_ep_channel(std::uint64_t channel) {
  return channel >= kEpChannel && channel < kGatherChannel;
}
// Expert-data-parallel collectives, clear of the NCCL channels of the dense ones.
constexpr std::uint16_t kExpertChannelOffset = 500;
// The backward pass of a DualPipe pair: its TP, EP and CP collectives run beside the forward's
// and keep their own queues, clear of both (step_dualpipe.cpp).
constexpr std::uint16_t kPairChannelOffset = 250;

/// Adds a dependency only when it exists.
inline void depend(Op& op, OpIndex dep) {
  if (dep != kNone) op.add_dep(dep);
}

/// Ranks of a group that share the first member's node, when the group is made of equal
/// consecutive node blocks (what make_collective's ring order wants); 0 otherwise.
std::uint32_t ranks_per_node_of(const std::vector<std::uint32_t>& globals,
                                std::uint32_t gpus_per_node);

using Groups = std::vector<std::vector<std::uint32_t>>;

class Builder {
 public:
  Builder(const TrainConfig& c, const StepPlan& plan, const StepBuildOptions& o)
      : c_(c), p_(c.par), plan_(plan), o_(o) {}

  StepPrograms build();

 private:
  struct RankState {
    std::uint32_t global = 0;
    std::uint32_t t = 0, d = 0, s = 0;
    OpIndex chain = kNone;    // last op of the compute chain
    OpIndex comm = kNone;     // last op of the DP gradient chain
    OpIndex gather = kNone;   // last op of the ZeRO-3 parameter-gather chain
    OpIndex ring = kNone;     // the context-parallel KV ring of the current attention pass
    OpIndex tp_side = kNone;  // an overlapped TP collective (tp_comm_overlap) beside a GEMM
    OpIndex kernel = kNone;   // the last kernel: a DualPipe pair's two chains share the SMs
    OpIndex paired = kNone;   // the other chain of a DualPipe pair
    Rng rng{0};
    // Collapsed TP group: every member's noise stream and accumulated noisy kernel time.
    std::vector<Rng> member_rngs;
    std::vector<Time> member_noisy;
    // Kernel time of each member since the group last met (at a TP collective or a pipeline
    // receive), and the part of its maximum already on the chain.
    std::vector<Time> member_pending;
    Time pending_emitted;
  };
  // The members of a collapsed TP group meet: their pending kernel times start over.
  void meet(RankState& st) {
    std::fill(st.member_pending.begin(), st.member_pending.end(), Time::zero());
    st.pending_emitted = Time::zero();
  }

  // d counts the dp x cp ranks of a (tp rank, stage), CP fastest: d = c + cp x (dp index).
  std::uint32_t global_of(std::uint32_t t, std::uint32_t d, std::uint32_t s) const {
    return t + p_.tp * (d + p_.replicas() * s);
  }
  std::uint32_t local_of(std::uint32_t t, std::uint32_t d, std::uint32_t s) const {
    if (o_.full) return global_of(t, d, s);
    return collapsed() ? s : t + p_.tp * s;
  }
  bool collapsed() const { return !o_.full && o_.collapse_tp; }
  // One kernel's noise factor for global rank `global`, drawn from its stream.
  double noise_factor(std::uint32_t global, Rng& rng) const;
  OpIndex add(std::uint32_t r, const Op& op, OpTag tag) {
    tag.paired = lane_ != 0;
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
  void collective(const Groups& groups, CollectiveOp op, Bytes bytes, Time delay, OpRole role,
                  std::uint16_t channel, std::uint32_t layer, std::uint32_t micro,
                  OpIndex RankState::*which, const std::vector<OpIndex>* extra_after = nullptr);
  // Appends `programs` (its rank i run by members[i], starting after after[i]) on `channel`;
  // each member's chain selected by `which` continues from the end of its part.
  void splice(const std::vector<std::uint32_t>& members, const std::vector<OpIndex>& after,
              const ProgramSet& programs, OpRole role, std::uint16_t channel, std::uint32_t layer,
              std::uint32_t micro, OpIndex RankState::*which);
  void tp_collective(std::uint32_t s, CollectiveOp op, std::uint32_t layer, std::uint32_t micro,
                     OpIndex RankState::*which = &RankState::chain);
  // Megatron-Core's all-gather of the dispatched tokens (or the reduce-scatter of the experts'
  // outputs) over each expert TP group, when 1 < etp < tp (StepPlan::expert_tp_bytes).
  void expert_tp_collective(std::uint32_t s, CollectiveOp op, std::uint32_t layer,
                            std::uint32_t micro);
  // A collective over TP groups or parts of them: a delay on the collapsed group's program rank,
  // else as collective() does.
  void within_tp_groups(std::uint32_t s, const Groups& groups, CollectiveOp op, Bytes bytes,
                        Time delay, std::uint32_t layer, std::uint32_t micro,
                        OpIndex RankState::*which);
  // `gemm` on the chain with TP collective `op` beside it (tp_comm_overlap): the pair ends when
  // both have.
  void tp_overlapped(std::uint32_t s, CollectiveOp op, Time gemm, OpRole role, std::uint32_t layer,
                     std::uint32_t micro, const std::vector<OpIndex>* side);
  void ep_all_to_all(std::uint32_t s, std::uint32_t layer, std::uint32_t micro, bool combine);
  // ZeRO-3's gather of `layer`'s parameters before a pass on stage s's ranks; returns each
  // rank's (stage_ranks_[s] order) gathered op. Under DualPipe (full) the gather runs over the
  // 2 x dp holders of the layer's two copies: the pair's lower stage issues it for all of them
  // in its own order of use, and the upper stage's ranks take theirs in turn (zero3_held_).
  std::vector<OpIndex> zero3_gather(std::uint32_t s, std::uint32_t layer);
  // Starts the KV ring of `layer`'s attention beside the chain (RankState::ring).
  void cp_ring(std::uint32_t s, std::uint32_t layer, std::uint32_t micro, bool fwd);
  // Gradient (and ZeRO-1/2 parameter) collectives of bucket `b` of stage `s` on the DP stream.
  // Under DualPipe the groups are holder_groups(s) and each member starts after its own
  // entry of `after` (in group order) instead of its chain.
  void bucket_collective(std::uint32_t s, const GradientBucket& b, CollectiveOp op, OpRole role,
                         std::uint16_t channel, std::uint32_t layer,
                         const std::vector<OpIndex>* after = nullptr);
  void forward(std::uint32_t s, std::uint32_t chunk, std::uint32_t mb);
  void backward(std::uint32_t s, std::uint32_t chunk, std::uint32_t mb);
  void pp_recv(std::uint32_t s, std::uint32_t from_stage, std::uint16_t channel, std::uint32_t mb);
  void pp_send(std::uint32_t s, std::uint32_t to_stage, std::uint16_t channel, std::uint32_t mb);
  // Half::Attention or Half::Mlp runs one block of the layer (a DualPipe pair interleaves them).
  enum class Half : std::uint8_t { Both, Attention, Mlp };
  void layer_pass(std::uint32_t s, std::uint32_t layer, std::uint32_t mb, bool fwd,
                  Half half = Half::Both);
  // DualPipe (step_dualpipe.cpp): the rank's schedule; one pass as its receive, its blocks
  // (each layer's two, the output layer's) and its send; a forward and a backward pass
  // interleaved block by block on two chains whose kernels run one at a time.
  struct DualStep {
    std::function<void()> recv, send;
    std::vector<std::function<void()>> body;
  };
  void dualpipe_stage(std::uint32_t s);
  DualStep dual_pass(std::uint32_t s, const DualPipeUnit& u);
  void dual_pair(std::uint32_t s, const DualPipeUnit& fwd, const DualPipeUnit& bwd);
  // A layer's weight-gradient GEMMs (W): as many FLOPs as their forward, the layer's forward
  // less the attention core.
  Time weight_grad(std::uint32_t layer) const;
  // The last micro-batch's backward of `layer` of model stage `stage` on rank stage s (s's own,
  // or under DualPipe its second copy pp - 1 - s) completes the buckets that end with it.
  void after_backward_of(std::uint32_t s, std::uint32_t layer, std::uint32_t stage);
  // A rank's slot for bucket k of model stage `stage`: its own stage's buckets first, then
  // (DualPipe) its second copy's.
  std::size_t bucket_slot(std::uint32_t s, std::uint32_t stage, std::size_t k) const {
    return stage == s ? k : plan_.buckets[s].size() + k;
  }
  bool dualpipe() const { return c_.pipeline == PipelineSchedule::DualPipe; }
  // DualPipe's data-parallel buckets (full expansion, after every stage is built): each of the
  // pp / 2 rank pairs (s, pp - 1 - s) reduces both its stages' buckets over its 2 x dp ranks,
  // the lower stage's first; with `gather`, ZeRO-1/2's parameter gather after the optimizer.
  void dualpipe_buckets(bool gather);
  // The ranks that reduce stage s's gradients together: its data-parallel groups, under
  // DualPipe joined with those of stage pp - 1 - s (the other copy), in global rank order.
  Groups holder_groups(std::uint32_t s, bool expert) const;
  // The step's end: stage s's gradient reduction, the gradient-norm all-reduce over every
  // rank, then stage s's optimizer step and parameter gather.
  void stage_reduce(std::uint32_t s);
  void grad_norm();
  void stage_update(std::uint32_t s);

  Groups tp_groups(std::uint32_t s) const;
  Groups expert_tp_groups(std::uint32_t s) const;
  Groups dp_groups(std::uint32_t s) const;
  // Ranks holding the same routed experts: dp / ep of them, one per EP block.
  Groups expert_dp_groups(std::uint32_t s) const;
  Groups ep_groups(std::uint32_t s) const;
  // The cp ranks splitting the same sequences: consecutive d = cp x k .. cp x k + cp - 1.
  Groups cp_groups(std::uint32_t s) const;

  const TrainConfig& c_;
  const ParallelConfig& p_;
  const StepPlan& plan_;
  const StepBuildOptions& o_;
  StepPrograms out_;
  std::vector<RankState> ranks_;
  Groups stage_ranks_;
  std::vector<std::uint32_t> dps_;  // dp indices present
  std::vector<std::uint32_t> tps_;  // tp indices present (0 alone when collapsed)
  // DualPipe, full, ZeRO-3: per rank of a pair's upper stage and per layer, the gathers its lower
  // stage issued over both copies' holders, oldest first.
  std::vector<std::map<std::uint32_t, std::deque<OpIndex>>> zero3_held_;
  bool pairing_ = false;     // kernels follow the rank's last kernel (a DualPipe pair)
  bool input_only_ = false;  // backward passes leave their weight gradients for later
  std::uint16_t lane_ = 0;   // added to TP, EP and CP channels (kPairChannelOffset)
};

}  // namespace lockstep::step_detail
