// The public API: names, the support table, validation, busbw factors, ring order, laziness.
#include "lockstep/collective/collective.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <set>

#include "lockstep/core/error.hpp"

namespace lockstep {
namespace {

TEST(Collective, NamesRoundTrip) {
  for (int i = 0; i < kNumCollectiveOps; ++i) {
    const auto op = static_cast<CollectiveOp>(i);
    EXPECT_EQ(parse_collective_op(to_string(op)), op);
  }
  for (int i = 0; i < kNumAlgorithms; ++i) {
    const auto a = static_cast<Algorithm>(i);
    EXPECT_EQ(parse_algorithm(to_string(a)), a);
  }
  EXPECT_THROW(parse_collective_op("allreduce"), InputError);
  EXPECT_THROW(parse_algorithm("rings"), InputError);
}

TEST(Collective, SupportTable) {
  EXPECT_TRUE(is_supported(CollectiveOp::AllReduce, Algorithm::Ring));
  EXPECT_FALSE(is_supported(CollectiveOp::AllToAll, Algorithm::Ring));
  EXPECT_EQ(algorithms_for(CollectiveOp::AllToAll).front(), Algorithm::Direct);
  CollectiveSpec s;
  s.op = CollectiveOp::AllToAll;
  s.algorithm = Algorithm::Ring;
  s.ranks = 4;
  try {
    make_collective(s);
    FAIL() << "ring alltoall accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "algorithm");
    EXPECT_NE(std::string(e.what()).find("direct"), std::string::npos) << e.what();
  }
}

TEST(Collective, ValidationNamesTheField) {
  const auto field_of = [](CollectiveSpec s) {
    try {
      make_collective(s);
    } catch (const InputError& e) {
      return e.field();
    }
    return std::string("accepted");
  };
  CollectiveSpec s;
  s.ranks = 8;
  s.bytes = Bytes(64);
  EXPECT_EQ(field_of(s), "accepted");
  CollectiveSpec bad = s;
  bad.ranks = 0;
  EXPECT_EQ(field_of(bad), "ranks");
  bad = s;
  bad.type = DataType::Float32;
  bad.bytes = Bytes(6);
  EXPECT_EQ(field_of(bad), "bytes");
  bad = s;
  bad.root = 8;
  EXPECT_EQ(field_of(bad), "root");
  bad = s;
  bad.ranks_per_node = 3;
  EXPECT_EQ(field_of(bad), "ranks_per_node");
  bad = s;
  bad.channels = 0;
  EXPECT_EQ(field_of(bad), "channels");
  bad = s;
  bad.op = CollectiveOp::AllToAllV;
  bad.algorithm = Algorithm::Direct;
  EXPECT_EQ(field_of(bad), "alltoallv");
}

// nccl-tests PERFORMANCE.md: all_reduce 2(n-1)/n, all_gather/reduce_scatter/alltoall (n-1)/n.
TEST(Collective, BusBandwidthFactors) {
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveOp::AllReduce, 8), 14.0 / 8);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveOp::AllGather, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveOp::AllToAll, 4), 3.0 / 4);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveOp::Broadcast, 8), 1.0);
}

// Snake order with g = 4, n = 8: channel 0 visits 0 1 2 3 | 7 6 5 4; channel 1 starts node 0 at
// local GPU 1: 1 2 3 0 | 4 7 6 5. Both cross between nodes on one rail (0->4 is rail 0 in
// channel 1, 3->7 rail 3 in channel 0) and close the ring on a rail (4->0, 5->1).
TEST(Collective, RingOrderVisitsNodeThenCrossesOnARail) {
  const std::vector<Rank> c0 = {0, 1, 2, 3, 7, 6, 5, 4};
  const std::vector<Rank> c1 = {1, 2, 3, 0, 4, 7, 6, 5};
  for (Rank p = 0; p < 8; ++p) {
    EXPECT_EQ(ring_rank_at(8, 4, 0, p), c0[p]);
    EXPECT_EQ(ring_rank_at(8, 4, 1, p), c1[p]);
  }
  // Every cross-node hop stays on one rail, for every channel, when the node count is even.
  for (std::uint32_t c = 0; c < 8; ++c) {
    for (Rank p = 0; p < 32; ++p) {
      const Rank a = ring_rank_at(32, 8, c, p), b = ring_rank_at(32, 8, c, (p + 1) % 32);
      EXPECT_EQ(ring_position_of(32, 8, c, a), p);
      if (a / 8 != b / 8) {
        EXPECT_EQ(a % 8, b % 8) << "channel " << c << " position " << p;
      }
    }
  }
}

// The ring program set is arithmetic: a 131,072-rank all-reduce builds instantly and rank 5's
// first op is a send of block 5 (S/n = 4 B) to rank 6.
// Direct programs with equal blocks translate by one rank (ProgramSet::symmetry_period): rank
// r + 1's op i is rank r's with its peer moved by one and the same bytes, channel and
// dependencies, 6 ranks, 2 channels, 6 x 4 KiB. Rooted ops, alltoallv and unequal blocks
// (6 x 4 KiB + 4 B) promise nothing.
TEST(Collective, DirectProgramsTranslateByOneRank) {
  constexpr Rank n = 6;
  for (const CollectiveOp op :
       {CollectiveOp::AllToAll, CollectiveOp::AllGather, CollectiveOp::ReduceScatter,
        CollectiveOp::AllReduce, CollectiveOp::SendRecv}) {
    CollectiveSpec s;
    s.op = op;
    s.algorithm = Algorithm::Direct;
    s.ranks = n;
    s.channels = 2;
    s.bytes = Bytes(n * 4096);
    const auto p = make_collective(s);
    ASSERT_EQ(p->symmetry_period(), 1u) << to_string(op);
    for (Rank r = 0; r < n; ++r) {
      const Rank q = (r + 1) % n;
      ASSERT_EQ(p->num_ops(q), p->num_ops(r));
      for (OpIndex i = 0; i < p->num_ops(r); ++i) {
        const Op a = p->op(r, i), b = p->op(q, i);
        ASSERT_TRUE(a.kind == b.kind && a.bytes() == b.bytes() && a.channel == b.channel &&
                    a.num_deps == b.num_deps)
            << to_string(op) << " " << r << " " << i;
        for (std::uint32_t k = 0; k < a.num_deps; ++k) ASSERT_EQ(a.deps[k], b.deps[k]);
        if (a.kind == OpKind::Send || a.kind == OpKind::Recv) {
          ASSERT_EQ((a.peer + 1) % n, b.peer) << to_string(op) << " " << r << " " << i;
        }
      }
    }
    s.bytes = Bytes(n * 4096 + 4);
    if (op != CollectiveOp::SendRecv) {
      EXPECT_EQ(make_collective(s)->symmetry_period(), 0u) << to_string(op);
    }
  }
  CollectiveSpec rooted;
  rooted.op = CollectiveOp::Broadcast;
  rooted.algorithm = Algorithm::Direct;
  rooted.ranks = n;
  rooted.bytes = Bytes(n * 4096);
  EXPECT_EQ(make_collective(rooted)->symmetry_period(), 0u);
}

// With nodes (ranks_per_node g), direct programs visit peers node by node as NCCL's p2p
// schedule does: rank (N, i) at step dn g + dj sends to (N + dn, i + dj) and receives from
// (N - dn, i - dj). 3 nodes x 4 GPUs, 2 channels: rank 5 (node 1, GPU 1) sends to 6 7 4, then
// node 2's 9 10 11 8, then node 0's 1 2 3 0, and receives from 4 7 6, 1 0 3 2, 9 8 11 10. So
// translating by a node (period 4) and rotating every node's GPUs by one (sigma, channels kept)
// map the programs onto themselves.
TEST(Collective, DirectProgramsVisitPeersNodeByNode) {
  constexpr Rank n = 12, g = 4;
  const auto sigma = [](Rank x) { return x - x % g + (x + 1) % g; };
  const auto shift = [](Rank x) { return (x + g) % n; };
  for (const CollectiveOp op : {CollectiveOp::AllToAll, CollectiveOp::AllGather,
                                CollectiveOp::ReduceScatter, CollectiveOp::AllReduce}) {
    CollectiveSpec s;
    s.op = op;
    s.algorithm = Algorithm::Direct;
    s.ranks = n;
    s.ranks_per_node = g;
    s.channels = 2;
    s.bytes = Bytes(n * 4096);
    const auto p = make_collective(s);
    ASSERT_EQ(p->symmetry_period(), g) << to_string(op);
    ASSERT_EQ(p->local_symmetry(), g) << to_string(op);
    EXPECT_FALSE(p->local_symmetry_moves_channels());
    for (const auto& map : {std::function<Rank(Rank)>(sigma), std::function<Rank(Rank)>(shift)}) {
      for (Rank r = 0; r < n; ++r) {
        const Rank q = map(r);
        ASSERT_EQ(p->num_ops(q), p->num_ops(r));
        for (OpIndex i = 0; i < p->num_ops(r); ++i) {
          const Op a = p->op(r, i), b = p->op(q, i);
          ASSERT_TRUE(a.kind == b.kind && a.bytes() == b.bytes() && a.channel == b.channel &&
                      a.num_deps == b.num_deps)
              << to_string(op) << " " << r << " " << i;
          for (std::uint32_t k = 0; k < a.num_deps; ++k) ASSERT_EQ(a.deps[k], b.deps[k]);
          if (a.kind == OpKind::Send || a.kind == OpKind::Recv) {
            ASSERT_EQ(map(a.peer), b.peer) << to_string(op) << " " << r << " " << i;
          }
        }
      }
    }
    if (op != CollectiveOp::AllToAll) continue;
    std::vector<Rank> sends, recvs;
    for (OpIndex i = 0; i < p->num_ops(5); ++i) {
      const Op a = p->op(5, i);
      if (a.channel != 0) continue;
      if (a.kind == OpKind::Send) sends.push_back(a.peer);
      if (a.kind == OpKind::Recv) recvs.push_back(a.peer);
    }
    EXPECT_EQ(sends, (std::vector<Rank>{6, 7, 4, 9, 10, 11, 8, 1, 2, 3, 0}));
    EXPECT_EQ(recvs, (std::vector<Rank>{4, 7, 6, 1, 0, 3, 2, 9, 8, 11, 10}));
  }
  // One node: the order by distance, r + s.
  CollectiveSpec s;
  s.op = CollectiveOp::AllToAll;
  s.algorithm = Algorithm::Direct;
  s.ranks = n;
  s.ranks_per_node = n;
  s.bytes = Bytes(n * 4096);
  EXPECT_EQ(make_collective(s)->symmetry_period(), 1u);
  EXPECT_EQ(make_collective(s)->local_symmetry(), 0u);
}

// Nodes made of servers (ranks_per_server w: an NVL72 rack's trays) walk their local deltas as
// (server delta, GPU delta). 2 nodes of 2 servers of 2 GPUs: rank 5 (node 1, server 0, GPU 1)
// sends to 4, then server 1's 7 6, then node 0's 1 0 3 2; translating by a node (period 4) and
// rotating every server's GPUs (local symmetry 2) map the programs onto themselves. A server
// size that does not divide the node is an input error naming ranks_per_server.
TEST(Collective, DirectProgramsWalkServersInsideNodes) {
  constexpr Rank n = 8, g = 4, w = 2;
  const auto sigma = [](Rank x) { return x - x % w + (x + 1) % w; };
  const auto shift = [](Rank x) { return (x + g) % n; };
  CollectiveSpec s;
  s.op = CollectiveOp::AllToAll;
  s.algorithm = Algorithm::Direct;
  s.ranks = n;
  s.ranks_per_node = g;
  s.ranks_per_server = w;
  s.channels = 2;
  s.bytes = Bytes(n * 4096);
  const auto p = make_collective(s);
  ASSERT_EQ(p->symmetry_period(), g);
  ASSERT_EQ(p->local_symmetry(), w);
  for (const auto& map : {std::function<Rank(Rank)>(sigma), std::function<Rank(Rank)>(shift)}) {
    for (Rank r = 0; r < n; ++r) {
      ASSERT_EQ(p->num_ops(map(r)), p->num_ops(r));
      for (OpIndex i = 0; i < p->num_ops(r); ++i) {
        const Op a = p->op(r, i), b = p->op(map(r), i);
        ASSERT_TRUE(a.kind == b.kind && a.bytes() == b.bytes() && a.channel == b.channel) << r;
        if (a.kind == OpKind::Send || a.kind == OpKind::Recv) {
          ASSERT_EQ(map(a.peer), b.peer) << r;
        }
      }
    }
  }
  std::vector<Rank> sends;
  for (OpIndex i = 0; i < p->num_ops(5); ++i)
    if (p->op(5, i).kind == OpKind::Send && p->op(5, i).channel == 0)
      sends.push_back(p->op(5, i).peer);
  EXPECT_EQ(sends, (std::vector<Rank>{4, 7, 6, 1, 0, 3, 2}));
  s.ranks_per_server = 3;
  try {
    make_collective(s);
    ADD_FAILURE() << "3 GPUs per server in nodes of 4 accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "ranks_per_server");
  }
}

// channels_per_peer (NCCL's p2p channels per peer): 16 ranks, 8 channels, 2 per peer. The peer of
// step s gets channels 2s and 2s + 1 mod 8, half the block each; over its 15 peers a rank uses
// every channel, and every byte of the all-to-all is still sent: 15 blocks of S / 16.
TEST(Collective, DirectTransfersUseTheirPeersChannels) {
  CollectiveSpec s;
  s.op = CollectiveOp::AllToAll;
  s.algorithm = Algorithm::Direct;
  s.ranks = 16;
  s.ranks_per_node = 8;
  s.channels = 8;
  s.channels_per_peer = 2;
  s.type = DataType::Float32;
  s.bytes = Bytes(16 * 16 * 4 * 2);
  const auto p = make_collective(s);
  for (Rank r = 0; r < 16; ++r) {
    std::map<Rank, std::set<std::uint16_t>> channels_of;
    std::set<std::uint16_t> all;
    std::uint64_t sent = 0;
    for (OpIndex i = 0; i < p->num_ops(r); ++i) {
      const Op op = p->op(r, i);
      if (op.kind != OpKind::Send) continue;
      channels_of[op.peer].insert(op.channel);
      all.insert(op.channel);
      sent += op.bytes();
    }
    EXPECT_EQ(channels_of.size(), 15u);
    for (const auto& [peer, chans] : channels_of) {
      ASSERT_EQ(chans.size(), 2u) << r << " -> " << peer;
      EXPECT_EQ((*chans.rbegin() - *chans.begin()), 1) << r << " -> " << peer;
    }
    EXPECT_EQ(all.size(), 8u);
    EXPECT_EQ(sent, 15u * s.bytes.count() / 16);
  }
  // Every receive matches a send on the same channel.
  for (Rank r = 0; r < 16; ++r)
    for (OpIndex i = 0; i < p->num_ops(r); ++i) {
      const Op op = p->op(r, i);
      if (op.kind != OpKind::Recv) continue;
      bool matched = false;
      for (OpIndex j = 0; j < p->num_ops(op.peer) && !matched; ++j) {
        const Op o = p->op(op.peer, j);
        matched = o.kind == OpKind::Send && o.peer == r && o.channel == op.channel &&
                  o.bytes() == op.bytes();
      }
      EXPECT_TRUE(matched) << r << " op " << i;
    }
}

TEST(Collective, LazyRingAtScale) {
  CollectiveSpec s;
  s.ranks = 131072;
  s.bytes = Bytes(4 * 131072);
  const auto p = make_collective(s);
  EXPECT_EQ(p->num_ops(5), 4u * (131072 - 1));
  const Op first = p->op(5, 0);
  EXPECT_EQ(first.kind, OpKind::Send);
  EXPECT_EQ(first.peer, 6u);
  EXPECT_EQ(first.src.offset, 20u);
  EXPECT_EQ(first.src.bytes, 4u);
}

}  // namespace
}  // namespace lockstep
