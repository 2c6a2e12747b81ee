// MoE dispatch / combine programs against hand-counted expected bytes (docs/moe-dispatch.md).
#include "lockstep/collective/moe.hpp"

#include <gtest/gtest.h>

#include <map>
#include <utility>

#include "lockstep/core/error.hpp"
#include "moe_fixture.hpp"

namespace lockstep {
namespace {

using testing::small_moe;

// Bytes sent per (source, destination) pair.
std::map<std::pair<Rank, Rank>, std::uint64_t> sent(const ProgramSet& p) {
  std::map<std::pair<Rank, Rank>, std::uint64_t> out;
  for (Rank r = 0; r < p.num_ranks(); ++r)
    for (OpIndex i = 0; i < p.num_ops(r); ++i) {
      const Op op = p.op(r, i);
      if (op.kind == OpKind::Send) out[{r, op.peer}] += op.src.bytes;
    }
  return out;
}

TEST(Moe, Probabilities) {
  const MoeSpec s = small_moe();
  EXPECT_DOUBLE_EQ(moe_node_probability(s), 22.0 / 28);
  EXPECT_DOUBLE_EQ(moe_rank_probability(s), 13.0 / 28);
  EXPECT_EQ(moe_token_bytes(s, MoePhase::Dispatch), 132u);
  EXPECT_EQ(moe_token_bytes(s, MoePhase::Combine), 256u);
  MoeSpec bf16 = s;
  bf16.fp8_dispatch = false;
  EXPECT_EQ(moe_token_bytes(bf16, MoePhase::Dispatch), 256u);
  // DeepSeek-V3: 7168 + 4 x 56 = 7392 B.
  EXPECT_EQ(moe_token_bytes(MoeSpec{}, MoePhase::Dispatch), 7392u);
}

TEST(Moe, NodeLimitedRouting) {
  // 4 nodes of 2 GPUs, 16 experts (4 per node, 2 per GPU), top-2, at most M = 2 nodes:
  // a token picks 2 nodes (P = 1/2 for a given one), then 2 of their 8 experts.
  //   P(node) = 1/2 x (1 - C(4, 2) / C(8, 2)) = 1/2 x 22/28 = 11/28
  //   P(rank) = 1/2 x (1 - C(6, 2) / C(8, 2)) = 1/2 x 13/28 = 13/56
  MoeSpec s = small_moe();
  s.ranks = 8;
  s.experts = 16;
  s.max_nodes = 2;
  EXPECT_DOUBLE_EQ(moe_node_probability(s), 11.0 / 28);
  EXPECT_DOUBLE_EQ(moe_rank_probability(s), 13.0 / 56);
  // Unrestricted: 1 - C(12, 2) / C(16, 2) = 1 - 66/120.
  s.max_nodes = 0;
  EXPECT_DOUBLE_EQ(moe_node_probability(s), 1 - 66.0 / 120);
}

TEST(Moe, NormalDispatchBytesByHop) {
  const MoeSpec s = small_moe();
  const MoeTraffic t = moe_traffic(s, MoePhase::Dispatch);
  EXPECT_EQ(t.network_message, 22u * 132);
  EXPECT_EQ(t.nvlink_message, 13u * 132);
  const auto p = make_moe_programs(s, MoePhase::Dispatch);
  const auto bytes = sent(*p);
  // Rank 0 (node 0, GPU 0): to rank 2 (node 1's GPU 0) once over the network; to rank 1 its own
  // 13 tokens plus the 13 of rank 2's that it forwards: 26 x 132.
  EXPECT_EQ(bytes.at({0, 2}), 22u * 132);
  EXPECT_EQ(bytes.at({0, 1}), 26u * 132);
  EXPECT_EQ(bytes.count({0, 3}), 0u);  // never straight to another node's other GPU
  EXPECT_EQ(p->symmetry_period(), 2u);
  EXPECT_EQ(p->label(), "moe_dispatch/normal");
}

TEST(Moe, NormalCombineIsTheReverse) {
  const MoeSpec s = small_moe();
  const auto p = make_moe_programs(s, MoePhase::Combine);
  const auto bytes = sent(*p);
  // BF16 back along the same hops: 22 tokens x 256 B across, 26 x 256 B to the node peer.
  EXPECT_EQ(bytes.at({2, 0}), 22u * 256);
  EXPECT_EQ(bytes.at({1, 0}), 26u * 256);
  EXPECT_EQ(bytes.count({3, 0}), 0u);
  // A forwarded chunk waits for the node peer's part: its send has a dependency.
  bool waits = false;
  for (OpIndex i = 0; i < p->num_ops(0); ++i) {
    const Op op = p->op(0, i);
    if (op.kind == OpKind::Send && op.peer == 2) waits = waits || op.num_deps == 1;
  }
  EXPECT_TRUE(waits);
}

TEST(Moe, LowLatencyGoesToEveryExpertGpu) {
  MoeSpec s = small_moe();
  s.kernel = MoeKernel::LowLatency;
  const auto bytes = sent(*make_moe_programs(s, MoePhase::Dispatch));
  for (Rank to : {1u, 2u, 3u}) EXPECT_EQ(bytes.at({0, to}), 14u * 132) << to;
  // Network bytes per rank: normal 22 x 132 (one node), low latency 2 x 14 x 132: the factor
  // 28/22 is E[experts on the node | the node is hit] = (K G / R) / P(node) = 1 / (22/28).
  const MoeTraffic ll = moe_traffic(s, MoePhase::Dispatch);
  s.kernel = MoeKernel::Normal;
  const MoeTraffic normal = moe_traffic(s, MoePhase::Dispatch);
  EXPECT_EQ(ll.network_bytes(), 28u * 132);
  EXPECT_EQ(normal.network_bytes(), 22u * 132);
  // NVLink: normal 2 (sources) x 13 tokens, low latency 14.
  EXPECT_EQ(normal.nvlink_bytes(), 26u * 132);
  EXPECT_EQ(ll.nvlink_bytes(), 14u * 132);
}

TEST(Moe, AHotRankTakesItsShare) {
  // Imbalance 2 over 4 ranks: rank 0 takes 2x the mean, the others (4 - 2) / 3 = 2/3; node 0
  // (ranks 0, 1) 4/3 on average, node 1 2/3. The totals stay the uniform ones.
  MoeSpec s = small_moe();
  s.imbalance = 2;
  auto bytes = sent(*make_moe_programs(s, MoePhase::Dispatch));
  EXPECT_EQ(bytes.at({2, 0}), 2904u * 4 / 3);  // 22 x 132 to node 0
  EXPECT_EQ(bytes.at({0, 2}), 2904u * 2 / 3);  // to node 1
  EXPECT_EQ(bytes.at({1, 0}), 2 * 1716u * 2);  // 13 x 132, own and forwarded, to the hot rank
  EXPECT_EQ(bytes.at({0, 1}), 2 * 1716u * 2 / 3);
  EXPECT_EQ(make_moe_programs(s, MoePhase::Dispatch)->symmetry_period(), 0u);
  // Low latency: 14 x 132 = 1848 B per peer on average; 3696 into rank 0, 1232 into the others.
  s.kernel = MoeKernel::LowLatency;
  bytes = sent(*make_moe_programs(s, MoePhase::Dispatch));
  for (Rank from : {1u, 2u, 3u}) EXPECT_EQ(bytes.at({from, 0}), 3696u) << from;
  EXPECT_EQ(bytes.at({0, 3}), 1232u);
  // Combine: the hot rank sends its share back.
  bytes = sent(*make_moe_programs(s, MoePhase::Combine));
  EXPECT_EQ(bytes.at({0, 3}), 14u * 256 * 2);
  s.imbalance = 5;
  EXPECT_THROW(validate(s), InputError);
}

// Node 1's GPUs route no tokens (an idle DP-attention group): rank_tokens {28, 28, 0, 0}.
// Normal dispatch: rank 0 sends rank 2 its 22 x 132 = 2,904 B, rank 2 sends rank 0 an empty
// message (the count DeepEP signals); rank 0 passes rank 1 only its own 13 x 132 = 1,716 B (rank
// 2 forwards it nothing), rank 2 passes rank 3 only rank 0's 1,716 B it forwards.
// Combine (BF16, 256 B a token) sends each owner's outputs back: rank 2 returns rank 0's
// 22 x 256 = 5,632 B, rank 1 gives rank 0 its part of rank 0's 13 x 256 = 3,328 B, rank 3
// gives rank 2 the same for rank 0's tokens, which rank 2 carries over.
TEST(Moe, IdleRanksSendEmptyMessages) {
  MoeSpec s = small_moe();
  s.rank_tokens = {28, 28, 0, 0};
  const auto dispatch = make_moe_programs(s, MoePhase::Dispatch);
  auto bytes = sent(*dispatch);
  EXPECT_EQ(bytes.at({0, 2}), 2904u);
  EXPECT_EQ(bytes.at({2, 0}), 0u);  // sent, empty
  EXPECT_EQ(bytes.at({0, 1}), 1716u);
  EXPECT_EQ(bytes.at({2, 3}), 1716u);
  EXPECT_EQ(dispatch->symmetry_period(), 0u);
  // The same ops as when every rank routes 28 tokens: only their sizes change.
  const MoeSpec busy = small_moe();
  const auto uniform = make_moe_programs(busy, MoePhase::Dispatch);
  for (Rank r = 0; r < 4; ++r) EXPECT_EQ(dispatch->num_ops(r), uniform->num_ops(r)) << r;
  bytes = sent(*make_moe_programs(s, MoePhase::Combine));
  EXPECT_EQ(bytes.at({2, 0}), 5632u);
  EXPECT_EQ(bytes.at({0, 2}), 0u);
  EXPECT_EQ(bytes.at({1, 0}), 3328u);
  EXPECT_EQ(bytes.at({3, 2}), 3328u);
  // Low latency, only rank 0 busy: 14 x 132 B to each peer, empty messages back; combine returns
  // 14 x 256 = 3,584 B from each peer to rank 0 and nothing elsewhere.
  s.kernel = MoeKernel::LowLatency;
  s.rank_tokens = {28, 0, 0, 0};
  bytes = sent(*make_moe_programs(s, MoePhase::Dispatch));
  for (Rank to : {1u, 2u, 3u}) EXPECT_EQ(bytes.at({0, to}), 1848u) << to;
  EXPECT_EQ(bytes.at({1, 2}), 0u);
  bytes = sent(*make_moe_programs(s, MoePhase::Combine));
  for (Rank from : {1u, 2u, 3u}) EXPECT_EQ(bytes.at({from, 0}), 3584u) << from;
  EXPECT_EQ(bytes.at({2, 1}), 0u);
  // One count a rank, none above tokens.
  s.rank_tokens = {28, 0, 0};
  EXPECT_THROW(validate(s), InputError);
  s.rank_tokens = {29, 0, 0, 0};
  EXPECT_THROW(validate(s), InputError);
}

TEST(Moe, BadSpecsNameTheirField) {
  MoeSpec s = small_moe();
  s.experts = 6;
  EXPECT_THROW(
      {
        try {
          validate(s);
        } catch (const InputError& e) {
          EXPECT_EQ(e.field(), "experts");
          throw;
        }
      },
      InputError);
  s = small_moe();
  s.topk = 9;
  EXPECT_THROW(validate(s), InputError);
  s = small_moe();
  s.ranks_per_node = 3;
  EXPECT_THROW(validate(s), InputError);
  EXPECT_THROW(parse_moe_kernel("fast"), InputError);
}

}  // namespace
}  // namespace lockstep
