// The shape of the programs behind NCCL's tree (chain in a node, double binary tree across
// nodes, NCCL's chunking), and the node-aware shapes of two-shot direct and halving-doubling
// all-reduce: sizes and peers read straight from the generated programs.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>

#include "lockstep/collective/collective.hpp"

namespace lockstep {
namespace {

CollectiveSpec all_reduce(Algorithm a, Rank ranks, std::uint32_t per_node, Bytes bytes,
                          std::uint16_t channels = 1) {
  CollectiveSpec s;
  s.op = CollectiveOp::AllReduce;
  s.algorithm = a;
  s.ranks = ranks;
  s.ranks_per_node = per_node;
  s.bytes = bytes;
  s.type = DataType::Float32;
  s.channels = channels;
  return s;
}

std::set<std::uint64_t> send_sizes(const ProgramSet& p, Rank r) {
  std::set<std::uint64_t> out;
  for (OpIndex i = 0; i < p.num_ops(r); ++i)
    if (p.op(r, i).kind == OpKind::Send) out.insert(p.op(r, i).bytes());
  return out;
}

// sigma (local_symmetry): rotating every node's g GPUs by one maps each rank's program onto the
// next rank's, peers and channel numbers rotated alike, sizes and dependencies the same.
void expect_rotation_maps_onto_itself(const ProgramSet& tree, Rank ranks, Rank g) {
  const auto sigma = [g](std::uint32_t x) { return x - x % g + (x + 1) % g; };
  for (Rank r = 0; r < ranks; ++r) {
    const Rank q = sigma(r);
    ASSERT_EQ(tree.num_ops(q), tree.num_ops(r));
    for (OpIndex i = 0; i < tree.num_ops(r); ++i) {
      const Op a = tree.op(r, i), b = tree.op(q, i);
      ASSERT_TRUE(a.kind == b.kind && a.bytes() == b.bytes() && a.num_deps == b.num_deps)
          << r << " " << i;
      for (std::uint32_t k = 0; k < a.num_deps; ++k) ASSERT_EQ(a.deps[k], b.deps[k]);
      if (a.kind != OpKind::Send && a.kind != OpKind::Recv) continue;
      ASSERT_EQ(sigma(a.peer), b.peer) << r << " " << i;
      ASSERT_EQ(sigma(a.channel), b.channel) << r << " " << i;
    }
  }
}

// NCCL's chunk rule (enqueue.cc, tree + Simple), on NCCL's bytes per channel S / channels.
// 4 nodes x 8 GPUs: depth = 8 - 1 + log2(4) = 9. 64 MiB over 16 channels: 4 MiB per channel;
// 512 KiB gives 8 chunks, fewer than 8 x 9 = 72, so halve down to the 128 KiB floor (32 chunks);
// still fewer than 4 x 9 = 36, so halve to 64 KiB (64 chunks, not fewer than 9): every send
// moves 64 KiB. 1 GiB: 64 MiB per channel, 512 KiB already gives 128 >= 72 chunks: 512 KiB.
TEST(Tree, ChunksFollowNcclsRule) {
  const auto mid = make_collective(all_reduce(Algorithm::Tree, 32, 8, Bytes::mib(64), 16));
  EXPECT_EQ(send_sizes(*mid, 3), std::set<std::uint64_t>{64 * 1024});
  const auto big = make_collective(all_reduce(Algorithm::Tree, 32, 8, Bytes::gib(1), 16));
  EXPECT_EQ(send_sizes(*big, 3), std::set<std::uint64_t>{512 * 1024});
}

// Only a node's head for a channel (local GPU = channel mod 8) talks to other nodes, and only
// to other heads on the same rail; everyone else talks to its chain neighbours in the node.
TEST(Tree, OnlyHeadsCrossNodesOnTheirRail) {
  const std::uint16_t channels = 4;
  const auto p = make_collective(all_reduce(Algorithm::Tree, 32, 8, Bytes::mib(8), channels));
  std::uint64_t crossing = 0;
  for (Rank r = 0; r < 32; ++r) {
    for (OpIndex i = 0; i < p->num_ops(r); ++i) {
      const Op op = p->op(r, i);
      if (op.kind != OpKind::Send && op.kind != OpKind::Recv) continue;
      if (op.peer / 8 == r / 8) {
        const Rank dist = op.peer > r ? op.peer - r : r - op.peer;
        EXPECT_TRUE(dist == 1 || dist == 7) << "rank " << r << " op " << i;  // chain neighbour
        continue;
      }
      ++crossing;
      // Four channels split between the trees as NCCL's: channels 0, 1 run tree 0 on the
      // chains of graph channels 0, 1 (heads 0, 1); channels 2, 3 run tree 1 on the same chains.
      const Rank head = (op.channel % 2) % 8;
      EXPECT_EQ(r % 8, head) << "rank " << r << " op " << i;
      EXPECT_EQ(op.peer % 8, head) << "rank " << r << " op " << i;
    }
  }
  EXPECT_GT(crossing, 0u);
}

// Double binary tree over 4 nodes, one chunk: every tree has 3 edges between nodes, and each
// edge carries S/2 up and S/2 down: 2 trees x 3 edges x 2 x S/2 = 6 S sent between nodes.
// Rotating every node's GPUs by one (sigma) maps the tree onto itself with channels rotated in
// blocks of the node size: channel c's chain starts at GPU c mod g, c + 1's one GPU further on.
// 4 nodes x 4 GPUs, 8 channels (4 per tree), every lane the same size.
TEST(Tree, RotationInsideNodesMapsProgramsOntoThemselves) {
  constexpr Rank g = 4;
  const auto tree = make_collective(all_reduce(Algorithm::Tree, 16, g, Bytes(16 * 8 * 64), 8));
  ASSERT_EQ(tree->local_symmetry(), g);
  expect_rotation_maps_onto_itself(*tree, 16, g);
  // Lanes of different sizes, channels not in blocks of the node size per tree, one node, or
  // one GPU per node promise nothing.
  EXPECT_EQ(make_collective(all_reduce(Algorithm::Tree, 16, g, Bytes(16 * 8 * 4 + 4), 8))
                ->local_symmetry(),
            0u);
  EXPECT_EQ(
      make_collective(all_reduce(Algorithm::Tree, 16, g, Bytes(16 * 8 * 64), 4))->local_symmetry(),
      0u);
  EXPECT_EQ(
      make_collective(all_reduce(Algorithm::Tree, 4, g, Bytes(4 * 8 * 64), 8))->local_symmetry(),
      0u);
  EXPECT_EQ(
      make_collective(all_reduce(Algorithm::Tree, 16, 1, Bytes(16 * 8 * 64), 8))->local_symmetry(),
      0u);
}

// GPUs sharing NICs (AWS p4d: 4 EFA NICs for 8 GPUs, GPU l on NIC l / 2): NCCL's search gives
// its channels NICs in turn, so the 8 channels' chains (4 graph channels, one per tree half)
// head at GPUs 0, 2, 4, 6 -- one on each NIC -- not 0-3, which would load NICs 0 and 1 only.
// 2 nodes x 8 GPUs, one chunk of S / 8 per lane: each tree edge between the nodes carries a
// lane's S / 8 up and S / 8 down, so each NIC sends 2 lanes x S / 8 = S / 4 out of a node.
TEST(Tree, ChannelsSpreadOverSharedNics) {
  const std::uint64_t S = 16 * 8 * 64;
  CollectiveSpec s = all_reduce(Algorithm::Tree, 16, 8, Bytes(S), 8);
  s.nics_per_node = 4;
  s.chunk = Bytes(S);
  const auto p = make_collective(s);
  std::uint64_t out_of_nic[2][4] = {};
  for (Rank r = 0; r < 16; ++r)
    for (OpIndex i = 0; i < p->num_ops(r); ++i) {
      const Op op = p->op(r, i);
      if (op.kind == OpKind::Send && op.peer / 8 != r / 8) {
        EXPECT_EQ(r % 2, 0u) << "rank " << r;  // heads 0, 2, 4, 6
        out_of_nic[r / 8][(r % 8) / 2] += op.bytes();
      }
    }
  for (const auto& node : out_of_nic)
    for (const std::uint64_t bytes : node) EXPECT_EQ(bytes, S / 4);
  // Three NICs for 8 GPUs (l on NIC 3l / 8: 0 0 0 1 1 1 2 2): heads 0, 3, 6, 1, 4, 7, 2, 5, so
  // 6 channels (3 graph channels) use each NIC once.
  s.nics_per_node = 3;
  s.channels = 6;
  const auto three = make_collective(s);
  std::set<Rank> heads;
  for (Rank r = 0; r < 8; ++r)
    for (OpIndex i = 0; i < three->num_ops(r); ++i)
      if (three->op(r, i).kind == OpKind::Send && three->op(r, i).peer / 8 != 0) heads.insert(r);
  EXPECT_EQ(heads, (std::set<Rank>{0, 3, 6}));
}

// Rotation is still a symmetry with shared NICs: the lane headed at GPU h maps onto the one
// headed at h + 1, and channels are numbered by their heads. 4 nodes x 4 GPUs on 2 NICs.
TEST(Tree, RotationHoldsWithSharedNics) {
  constexpr Rank g = 4;
  CollectiveSpec s = all_reduce(Algorithm::Tree, 16, g, Bytes(16 * 8 * 64), 8);
  s.nics_per_node = 2;
  const auto tree = make_collective(s);
  ASSERT_EQ(tree->local_symmetry(), g);
  expect_rotation_maps_onto_itself(*tree, 16, g);
}

TEST(Tree, BytesBetweenNodes) {
  const std::uint64_t S = 4096;
  CollectiveSpec s = all_reduce(Algorithm::Tree, 8, 2, Bytes(S));
  s.chunk = Bytes(S);
  const auto p = make_collective(s);
  std::uint64_t between = 0;
  for (Rank r = 0; r < 8; ++r)
    for (OpIndex i = 0; i < p->num_ops(r); ++i)
      if (p->op(r, i).kind == OpKind::Send && p->op(r, i).peer / 2 != r / 2)
        between += p->op(r, i).bytes();
  EXPECT_EQ(between, 6 * S);
}

// Two-shot direct all-reduce: (n-1) blocks of S/n out in each round, 2(n-1)/n S per rank; the
// first round waits for nothing, so it cannot deadlock on engines where a send waits for its
// receive.
TEST(Direct, TwoShotAllReduce) {
  const auto p = make_collective(all_reduce(Algorithm::Direct, 8, 0, Bytes(8000)));
  for (Rank r = 0; r < 8; ++r) {
    std::uint64_t sent = 0;
    for (OpIndex i = 0; i < p->num_ops(r); ++i) {
      const Op op = p->op(r, i);
      if (op.kind == OpKind::Send) sent += op.bytes();
      if (i < 7) {
        EXPECT_EQ(op.num_deps, 0u);  // round 1 sends
      }
    }
    EXPECT_EQ(sent, 2 * 7 * 1000u);
  }
}

// Halving-doubling all-reduce over 2 nodes of 8 pairs nearest ranks first: distances 1, 2, 4
// stay in the node (S/2 + S/4 + S/8 each way), only distance 8 crosses, with S/16 in the
// halving and S/16 in the doubling, to the same local GPU of the other node.
TEST(HalvingDoubling, OnlyTheSmallestExchangesCrossNodes) {
  const std::uint64_t S = 16 * 1024;
  const auto p = make_collective(all_reduce(Algorithm::HalvingDoubling, 16, 8, Bytes(S)));
  for (Rank r = 0; r < 16; ++r) {
    std::uint64_t across = 0, inside = 0;
    for (OpIndex i = 0; i < p->num_ops(r); ++i) {
      const Op op = p->op(r, i);
      if (op.kind != OpKind::Send) continue;
      if (op.peer / 8 != r / 8) {
        EXPECT_EQ(op.peer % 8, r % 8);
        across += op.bytes();
      } else {
        inside += op.bytes();
      }
    }
    EXPECT_EQ(across, 2 * S / 16);
    EXPECT_EQ(inside, 2 * (S / 2 + S / 4 + S / 8));
  }
}

}  // namespace
}  // namespace lockstep
