// The layout of the tree's pipelined programs (src/collective/tree.cpp): NCCL's split of the
// channels between the two trees, one block per (chunk, lane) of what the rank does there, rank
// 0's program padded to the longest, and the periodic region the flow engine may fast-forward.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>

#include "lockstep/collective/collective.hpp"

namespace lockstep {
namespace {

CollectiveSpec tree(Rank ranks, std::uint32_t per_node, Bytes bytes, std::uint16_t channels) {
  CollectiveSpec s;
  s.op = CollectiveOp::AllReduce;
  s.algorithm = Algorithm::Tree;
  s.ranks = ranks;
  s.ranks_per_node = per_node;
  s.bytes = bytes;
  s.type = DataType::Float32;
  s.channels = channels;
  return s;
}

// 4 nodes x 8 GPUs, 4 channels, 8 MiB: depth 7 + log2(4) = 9, 2 MiB per channel. NCCL's rule:
// 512 KiB gives 4 chunks < 72, halve to the 128 KiB floor (16 chunks); 16 < 36, halve to 64 KiB
// (32 chunks, the 64 KiB floor); 32 >= 9. Lanes: channels 0, 1 run tree 0 with heads 0, 1;
// channels 2, 3 tree 1 on the same heads; 32 chunks each. Ops per block: a chain middle
// recv, send up, recv down, send down = 4; the tail send up, recv down = 2; a head adds its
// child nodes and parent: with c children in all (chain + nodes), c recvs, a join if c > 1, a
// send up and a recv down if it has a parent node, c sends.
// Nodes (tree 0: node u + 1, 4 -> 2 -> {1, 3}; tree 1 mirrored: node 4 - u, so u = 0 -> 2 ->
// {3, 1}): node 1 is inner in tree 0 (3 children, a parent: 9 ops) and a leaf in tree 1 (1
// child, a parent: 4); node 0 is a leaf in tree 0 (4) and tree 1's root with one child node
// (2 children, no parent: 2 + 1 + 2 = 5).
//   rank 9 (node 1, GPU 1): middle (4) + head tree 0 (9) + middle (4) + head tree 1 (4) = 21
//   rank 2 (GPU 2): a middle in every lane, 16;  rank 7 (GPU 7): 2 + 4 + 2 + 4 = 12
//   rank 0 (node 0, GPU 0): head (4) + tail (2) + head (5) + tail (2) = 13, padded to the
//   longest rank's 21 (GPU 1 of node 1 or 2), so that an issue window of rank 0's length holds
//   any rank's whole program. Times 32 chunks.
TEST(TreePipeline, RankZerosProgramIsTheLongest) {
  const auto p = make_collective(tree(32, 8, Bytes::mib(8), 4));
  EXPECT_EQ(p->lookahead(), Lookahead::Program);
  EXPECT_EQ(p->longest_program(), 21u * 32);
  EXPECT_EQ(p->num_ops(0), 21u * 32);
  EXPECT_EQ(p->num_ops(9), 21u * 32);
  EXPECT_EQ(p->num_ops(2), 16u * 32);
  EXPECT_EQ(p->num_ops(7), 12u * 32);
  std::set<std::uint64_t> sends;
  std::uint64_t padding = 0;
  for (Rank r = 0; r < 32; ++r) {
    EXPECT_LE(p->num_ops(r), p->num_ops(0)) << "rank " << r;
    for (OpIndex i = 0; i < p->num_ops(r); ++i) {
      const Op op = p->op(r, i);
      if (op.kind == OpKind::Send) sends.insert(op.bytes());
      if (r == 0 && i >= 13u * 32) padding += op.kind == OpKind::Compute && op.num_deps == 0;
    }
  }
  EXPECT_EQ(sends, std::set<std::uint64_t>{64 * 1024});
  EXPECT_EQ(padding, 8u * 32);
}

// 8 flat ranks (one GPU per node), 2 channels, 1 MiB: depth 3, 512 KiB per channel: 512 -> 256
// -> 128 KiB (4 < 24 chunks, floor), -> 64 KiB (8 < 12, floor), 8 >= 3: 8 chunks per lane. Every
// rank is a leaf in one tree (nodes r + 1 and 8 - r have opposite parity) and inner in the
// other, where it has 2 children and a parent (7 ops: 2 recvs, join, up, down, 2 sends) except
// tree 0's root (node 8, rank 7: 1 child, 2 ops); a leaf has 2 ops (up, down): 9 per chunk, 72.
// Rank 0 is a leaf of tree 0 (2) and tree 1's root (2): 32 ops, padded to 72. One node of 8 GPUs,
// one channel (both trees on it, head GPU 0): chain middles 4 ops per lane, the head and the
// tail 2: 8 x 2 x 4 = 64 for a middle and rank 0 (padded), 32 for the tail.
TEST(TreePipeline, BlocksHoldWhatEachRankDoes) {
  const auto flat = make_collective(tree(8, 0, Bytes::mib(1), 2));
  EXPECT_EQ(flat->num_ops(0), 72u);
  EXPECT_EQ(flat->num_ops(3), 72u);
  EXPECT_EQ(flat->num_ops(7), 8u * (2 + 2));  // tree 0's root (one child), tree 1's leaf
  const auto chain = make_collective(tree(8, 8, Bytes::mib(1), 1));
  EXPECT_EQ(chain->num_ops(0), 64u);
  EXPECT_EQ(chain->num_ops(3), 64u);
  EXPECT_EQ(chain->num_ops(7), 32u);
}

// 8 ranks, flat, 2 channels: channel 0 runs tree 0 (rank r at node r + 1), channel 1 tree 1
// (mirrored, rank r at node 8 - r), S/2 each. Rank 0 is node 1 of tree 0, a leaf under node 2
// (rank 1), and node 8 of tree 1, its root, whose only child is node 4 (rank 4). So rank 0
// talks to rank 1 on channel 0 and to rank 4 on channel 1 only, sending S/2 on each.
TEST(TreePipeline, ChannelsSplitBetweenTheTreesAsNccl) {
  const std::uint64_t S = 1 << 20;
  const auto p = make_collective(tree(8, 0, Bytes(S), 2));
  std::uint64_t sent[2] = {0, 0};
  for (OpIndex i = 0; i < p->num_ops(0); ++i) {
    const Op op = p->op(0, i);
    if (op.kind != OpKind::Send && op.kind != OpKind::Recv) continue;
    ASSERT_LT(op.channel, 2u);
    EXPECT_EQ(op.peer, op.channel == 0 ? 1u : 4u) << "op " << i;
    if (op.kind == OpKind::Send) sent[op.channel] += op.bytes();
  }
  EXPECT_EQ(sent[0], S / 2);
  EXPECT_EQ(sent[1], S / 2);
}

// periodic_region's promise (program.hpp), checked op by op: inside the region, op j + period
// has the kind, peer, channel, byte count and duration of op j, with dependencies moved on by
// the period. 12 ranks in 3 nodes of 4 (odd node count: tree 1 is shifted, not mirrored), one
// channel (both trees on it), 3 MiB + 4 bytes so that the first chunks of a lane are one element
// longer than the rest and lie outside the region.
TEST(TreePipeline, PeriodicRegionRepeatsChunkByChunk) {
  const auto p = make_collective(tree(12, 4, Bytes(3 * 1024 * 1024 + 4), 1));
  for (Rank r = 0; r < 12; ++r) {
    // Rank 0's padding (after its last chunk) lies outside the region.
    OpIndex last = p->num_ops(r) - 1;
    while (r == 0 && last > 0 && p->periodic_region(r, last).period_ops == 0) --last;
    const PeriodicRegion region = p->periodic_region(r, last);
    ASSERT_GT(region.period_ops, 0u) << "rank " << r;
    EXPECT_EQ(region.end(), r == 0 ? last + 1 : p->num_ops(r));
    EXPECT_GT(region.first_op, 0u);  // the longer first chunks are outside
    EXPECT_EQ(p->periodic_region(r, region.first_op - 1).period_ops, 0u);
    for (OpIndex j = region.first_op; j + region.period_ops < region.end(); ++j) {
      const Op a = p->op(r, j), b = p->op(r, j + region.period_ops);
      ASSERT_EQ(a.kind, b.kind) << "rank " << r << " op " << j;
      EXPECT_EQ(a.peer, b.peer);
      EXPECT_EQ(a.channel, b.channel);
      EXPECT_EQ(a.bytes(), b.bytes());
      EXPECT_EQ(a.duration, b.duration);
      ASSERT_EQ(a.num_deps, b.num_deps);
      for (std::uint32_t d = 0; d < a.num_deps; ++d)
        EXPECT_EQ(a.deps[d] + region.period_ops, b.deps[d]);
    }
  }
}

}  // namespace
}  // namespace lockstep
