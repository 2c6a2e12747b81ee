// DeepSeek-V3's DualPipe as programs (arXiv:2412.19437, section 3.2.1, Figures 4 and 5; the
// order of DeepSeek's dualpipe.py, dualpipe_order): rank s runs stage s of direction 0 and
// stage pp - 1 - s of direction 1; a forward of one direction and a backward of the other run
// as a pair, block by block, so that each block's all-to-all and pipeline transfers run beside
// the other pass's kernels (docs/training.md, "DualPipe").
#include <algorithm>

#include "step_builder_detail.hpp"

namespace lockstep::step_detail {

Time Builder::weight_grad(std::uint32_t layer) const {
  const LayerSplit& split = plan_.split[layer];
  return plan_.forward[layer].scaled(1.0 - split.attention_fwd * split.core_fwd);
}

Builder::DualStep Builder::dual_pass(std::uint32_t s, const DualPipeUnit& u) {
  DualStep steps;
  const std::uint32_t pp = p_.pp, d = u.direction;
  const std::uint32_t stage = d == 0 ? s : pp - 1 - s;
  // Neighbours in the direction's flow: direction 0 runs from rank 0 up, direction 1 down.
  const std::uint32_t before = d == 0 ? s - 1 : s + 1, after = d == 0 ? s + 1 : s - 1;
  const bool first = stage == 0, last = stage + 1 == pp;
  const auto half = static_cast<std::uint32_t>(plan_.micro_batches / 2);
  const std::uint32_t mb = d * half + u.micro;  // micro-batches 0 .. m / 2 - 1 enter at rank 0
  const auto activations = static_cast<std::uint16_t>(kPpChannel + 2 * d);
  const auto gradients = static_cast<std::uint16_t>(activations + 1);
  const std::uint32_t lo = plan_.first_layer(stage, 0), hi = plan_.end_layer(stage, 0);
  // Each direction's last micro-batch completes its copy's gradient buckets (stage s's for
  // direction 0, stage pp - 1 - s's for direction 1), reduced over both copies' ranks
  // (Builder::dualpipe_buckets, docs/training.md).
  const bool buckets = u.micro + 1 == half;
  switch (u.pass) {
    case DualPass::Forward:
      if (!first) steps.recv = [=, this] { pp_recv(s, before, activations, mb); };
      for (std::uint32_t l = lo; l < hi; ++l) {
        steps.body.push_back([=, this] { layer_pass(s, l, mb, true, Half::Attention); });
        steps.body.push_back([=, this] { layer_pass(s, l, mb, true, Half::Mlp); });
      }
      if (last) {
        steps.body.push_back([=, this] {
          compute(stage_ranks_[s], plan_.head_forward, OpRole::Forward, kNone, mb);
        });
      } else {
        steps.send = [=, this] { pp_send(s, after, activations, mb); };
      }
      break;
    case DualPass::Backward:
    case DualPass::BackwardInput: {
      const bool input = u.pass == DualPass::BackwardInput;
      if (!last) {
        steps.recv = [=, this] { pp_recv(s, after, gradients, mb); };
      } else {
        // The output layer's weight gradient has its forward's FLOPs.
        steps.body.push_back([=, this] {
          compute(stage_ranks_[s],
                  input ? plan_.head_backward - plan_.head_forward : plan_.head_backward,
                  OpRole::Backward, kNone, mb);
        });
      }
      for (std::uint32_t l = hi; l-- > lo;) {
        for (Half h : {Half::Mlp, Half::Attention}) {
          steps.body.push_back([=, this] {
            input_only_ = input;
            layer_pass(s, l, mb, false, h);
            input_only_ = false;
            if (h == Half::Attention && buckets && !input) after_backward_of(s, l, stage);
          });
        }
      }
      if (!first) steps.send = [=, this] { pp_send(s, before, gradients, mb); };
      break;
    }
    case DualPass::Weight:
      steps.body.push_back([=, this] {
        Time w = last ? plan_.head_forward : Time::zero();
        for (std::uint32_t l = lo; l < hi; ++l) w += weight_grad(l);
        compute(stage_ranks_[s], w, OpRole::Backward, kNone, mb);
        if (buckets)
          for (std::uint32_t l = hi; l-- > lo;) after_backward_of(s, l, stage);
      });
      break;
  }
  return steps;
}

void Builder::dual_pair(std::uint32_t s, const DualPipeUnit& fwd, const DualPipeUnit& bwd) {
  const std::vector<std::uint32_t>& rs = stage_ranks_[s];
  const DualStep f = dual_pass(s, fwd), b = dual_pass(s, bwd);
  auto swap_chains = [&] {
    for (std::uint32_t r : rs) std::swap(ranks_[r].chain, ranks_[r].paired);
  };
  // Both chains join: the pair's end, or its start once both receives are in.
  auto join = [&] {
    for (std::uint32_t r : rs) {
      ranks_[r].paired = add_chain(r, make_compute(Time::zero()), ranks_[r].paired,
                                   {OpRole::Join, true, kNone, kNone});
    }
  };
  // dualpipe.py's _forward_backward_chunk: both receives, then the pair's compute, then both
  // sends. The backward runs on chain `paired`, from a zero-time op after the rank's chain (a
  // trace starts drawing it there). Their blocks alternate (Figure 4: the forward's attention,
  // the backward's MLP, the forward's MLP, the backward's attention), each kernel after the
  // rank's last one; a block's collectives wait for its own chain only, so they run beside the
  // other pass's kernels.
  for (std::uint32_t r : rs) ranks_[r].paired = kNone;
  swap_chains();
  lane_ = kPairChannelOffset;
  for (std::uint32_t r : rs) {
    add_chain(r, make_compute(Time::zero()), ranks_[r].paired, {OpRole::Join, true, kNone, kNone});
  }
  if (b.recv) b.recv();
  lane_ = 0;
  swap_chains();
  if (f.recv) f.recv();
  join();
  pairing_ = true;
  for (std::size_t i = 0; i < std::max(f.body.size(), b.body.size()); ++i) {
    if (i < f.body.size()) f.body[i]();
    swap_chains();
    lane_ = kPairChannelOffset;
    if (i < b.body.size()) b.body[i]();
    lane_ = 0;
    swap_chains();
  }
  pairing_ = false;
  join();
  if (f.send) f.send();
  if (b.send) b.send();
  for (std::uint32_t r : rs) ranks_[r].paired = kNone;
}

void Builder::dualpipe_stage(std::uint32_t s) {
  for (const DualPipeStep& step : dualpipe_order(p_.pp, plan_.micro_batches, s)) {
    if (step.paired) {
      dual_pair(s, step.first, step.second);
      continue;
    }
    const DualStep one = dual_pass(s, step.first);
    if (one.recv) one.recv();
    for (const auto& run : one.body) run();
    if (one.send) one.send();
  }
}

}  // namespace lockstep::step_detail
