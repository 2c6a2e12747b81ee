#pragma once
// The MoE case the dispatch tests share (collective/moe_test.cpp, workload/moe_comm_test.cpp).
#include "lockstep/collective/moe.hpp"

namespace lockstep::testing {

/// 8 experts, top-2, 2 nodes of 2 GPUs (R = 4: 2 experts per GPU, 4 per node), T = 28, H = 128.
///   P(node) = 1 - C(4, 2) / C(8, 2) = 1 - 6/28 = 22/28: 22 of 28 tokens cross to the other node;
///   P(rank) = 1 - C(6, 2) / C(8, 2) = 1 - 15/28 = 13/28: 13 tokens reach a given GPU;
///   low latency: T K / R = 28 x 2 / 4 = 14 messages per peer.
/// FP8 token: 128 + 4 x 1 = 132 B; BF16: 256 B.
inline MoeSpec small_moe() {
  MoeSpec s;
  s.tokens = 28;
  s.hidden = 128;
  s.topk = 2;
  s.experts = 8;
  s.ranks = 4;
  s.ranks_per_node = 2;
  s.chunks = 2;
  return s;
}

}  // namespace lockstep::testing
