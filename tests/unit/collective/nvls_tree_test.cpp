// The NVLS_TREE program's shape (src/collective/nvls_tree.cpp) and CollNet Direct's
// (net_reduce.cpp): bytes per GPU on NVLink and on the NIC, peers, chunking and laziness, each
// derived by hand. Correctness on real data is in tests/unit/engine/functional.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

#include "lockstep/collective/collective.hpp"
#include "lockstep/core/error.hpp"

namespace lockstep {
namespace {

CollectiveSpec spec(Algorithm a, Rank nodes, std::uint32_t g, std::uint64_t bytes) {
  CollectiveSpec s;
  s.algorithm = a;
  s.ranks = nodes * g;
  s.ranks_per_node = g;
  s.bytes = Bytes(bytes);
  s.type = DataType::Float32;
  return s;
}

struct Volumes {
  std::uint64_t net_up = 0, net_down = 0;  // NetReduce src / dst bytes
  std::uint64_t sent = 0, received = 0;    // point-to-point
  std::set<Rank> peers;
  std::uint64_t ops = 0;
};

Volumes volumes(const ProgramSet& p, Rank r) {
  Volumes v;
  for (OpIndex i = 0; i < p.num_ops(r); ++i) {
    const Op op = p.op(r, i);
    ++v.ops;
    if (op.kind == OpKind::NetReduce) v.net_up += op.src.bytes, v.net_down += op.dst.bytes;
    if (op.kind == OpKind::Send) v.sent += op.src.bytes, v.peers.insert(op.peer);
    if (op.kind == OpKind::Recv) v.received += op.dst.bytes, v.peers.insert(op.peer);
  }
  return v;
}

// 4 nodes x 4 GPUs, S = 4 MiB in one chunk: the NVLS reduce-scatter sends S up and gets S/4
// down, the multicast sends S/4 up and gets S down: S (1 + 1/g) = 5 MiB each way per GPU.
// Trees over m = 4 nodes (positions 1..4, root 4): tree 0 is 4 -> 2 -> {1, 3} with node u at
// u + 1; tree 1 mirrors it (node u at 4 - u), so its root is node 0 and node 2 is its inner
// node. Each tree carries half of a GPU's S/4 block, H = S/8 = 512 KiB, and a node sends and
// receives per tree: leaf 1 H, root with one child 1 H, inner node with two children 3 H. So
// node 0 (leaf, root) and node 3 (root, leaf) move 2H = 1 MiB each way, nodes 1 and 2 (inner,
// leaf) 4H = 2 MiB: the busiest NIC carries 2 S/g, the "/ 2" of NCCL's model.
TEST(NvlsTreeProgram, BytesPerGpuOnNvlinkAndNic) {
  CollectiveSpec s = spec(Algorithm::NvlsTree, 4, 4, 4 << 20);
  s.chunk = s.bytes;
  const auto p = make_collective(s);
  const std::uint64_t S = 4 << 20, H = S / 8;
  const std::uint64_t expected[] = {2 * H, 4 * H, 4 * H, 2 * H};
  for (Rank r = 0; r < s.ranks; ++r) {
    const Volumes v = volumes(*p, r);
    EXPECT_EQ(v.net_up, S + S / 4) << r;
    EXPECT_EQ(v.net_down, S + S / 4) << r;
    EXPECT_EQ(v.sent, expected[r / 4]) << r;
    EXPECT_EQ(v.received, expected[r / 4]) << r;
    // The tree stays on the GPU's rail: only the same local index on other nodes.
    for (Rank q : v.peers) {
      EXPECT_EQ(q % 4, r % 4);
      EXPECT_NE(q / 4, r / 4);
    }
  }
  // Node 1 (inner in tree 0, children nodes 0 and 2, parent node 3; leaf in tree 1 under node
  // 2) talks to every other node.
  EXPECT_EQ(volumes(*p, 5).peers, (std::set<Rank>{1, 9, 13}));
  EXPECT_EQ(p->num_groups(), 4u);  // one NVLS group per node
  EXPECT_EQ(std::vector<Rank>(p->group(2).begin(), p->group(2).end()),
            (std::vector<Rank>{8, 9, 10, 11}));
}

// NCCL's NVLS chunking with 16 channels x 8 heads = 128 concurrent blocks: 1 GiB keeps 128 KiB
// blocks (1 MiB chunks, 64 per channel); 16 MiB is under 4 x 128 x 128 KiB = 64 MiB, so 64 KiB
// blocks (512 KiB chunks, 2 per channel). Every rank's block of ops is padded to 14 (the
// longest: reduce-scatter, 6 tree ops per tree, all-gather), so all ranks have equal programs.
TEST(NvlsTreeProgram, NcclChunkingAndEqualProgramLengths) {
  CollectiveSpec big = spec(Algorithm::NvlsTree, 8, 8, std::uint64_t{1} << 30);
  big.channels = 16;
  const auto p = make_collective(big);
  EXPECT_EQ(p->lookahead(), Lookahead::Program);  // chunks come back 2 x depth steps later
  EXPECT_EQ(p->longest_program(), 64u * 16 * 14);
  for (Rank r = 0; r < big.ranks; r += 9) EXPECT_EQ(p->num_ops(r), 64u * 16 * 14) << r;
  CollectiveSpec mid = big;
  mid.bytes = Bytes::mib(16);
  EXPECT_EQ(make_collective(mid)->num_ops(0), 2u * 16 * 14);
}

// 131,072 ranks (16,384 nodes of 8): the program is lazy, any op of any rank is computed from a
// 14-op template, and the last op of a rank is the multicast of its last block.
TEST(NvlsTreeProgram, LazyAtScale) {
  CollectiveSpec s = spec(Algorithm::NvlsTree, 16384, 8, std::uint64_t{1} << 30);
  s.channels = 16;
  const auto p = make_collective(s);
  const Rank r = 131071;
  const OpIndex n = p->num_ops(r);
  ASSERT_EQ(n % 14, 0u);
  Op last;
  for (OpIndex i = n - 14; i < n; ++i)
    if (p->op(r, i).kind == OpKind::NetReduce) last = p->op(r, i);
  EXPECT_EQ(last.peer, 16383u);           // the node's group
  EXPECT_EQ(last.dst.bytes, 1u << 20);    // a 1 MiB chunk
  EXPECT_EQ(last.src.bytes, 128u << 10);  // this GPU's 128 KiB block of it
}

// 1 TiB in 64-byte chunks is 2^34 chunks: more ops than a program can index, an input error.
TEST(NvlsTreeProgram, TooManyOpsIsAnInputError) {
  CollectiveSpec s = spec(Algorithm::NvlsTree, 2, 4, std::uint64_t{1} << 40);
  s.chunk = Bytes(64);
  EXPECT_THROW(make_collective(s), InputError);
}

// CollNet Direct, 2 nodes x 4 GPUs, S = 4 MiB in one chunk: the NVLink reduce-scatter and
// all-gather each move (g-1)/g S = 3 MiB per GPU each way between the node's GPUs; SHARP gets
// the GPU's S/4 block up and down through its rail's switches.
TEST(CollNetProgram, NvlinkReduceScatterSharpPerRailAllGather) {
  CollectiveSpec s = spec(Algorithm::CollNet, 2, 4, 4 << 20);
  s.chunk = s.bytes;
  const auto p = make_collective(s);
  const std::uint64_t S = 4 << 20;
  for (Rank r = 0; r < s.ranks; ++r) {
    const Volumes v = volumes(*p, r);
    EXPECT_EQ(v.sent, 2 * 3 * S / 4) << r;
    EXPECT_EQ(v.received, 2 * 3 * S / 4) << r;
    EXPECT_EQ(v.net_up, S / 4) << r;
    EXPECT_EQ(v.net_down, S / 4) << r;
    for (Rank q : v.peers) EXPECT_EQ(q / 4, r / 4);  // point-to-point stays in the node
  }
  EXPECT_EQ(std::vector<Rank>(p->group(1).begin(), p->group(1).end()),
            (std::vector<Rank>{1, 5}));  // rail 1
}

// NVLS across nodes (NetReduce, 2 nodes x 2 GPUs, one channel, 12 chunks): each chunk is three
// net_reduces, scatter (3k), network (3k + 1), multicast (3k + 2). A chunk's scatter waits for
// the previous chunk's scatter and, from chunk 8 on, for the network reduction of chunk k - 8,
// whose buffer slot it reuses (NCCL_STEPS = 8): chunk 8's scatter (op 24) depends on ops 21 and
// 1, chunk 11's (op 33) on 30 and 10; chunks 0-7 on the previous scatter only.
TEST(NetReduceProgram, ScatterWaitsForTheNetworkEightChunksBack) {
  CollectiveSpec s = spec(Algorithm::NetReduce, 2, 2, 12 * 64 * 1024);
  s.chunk = Bytes(64 * 1024);
  const auto p = make_collective(s);
  ASSERT_EQ(p->num_ops(0), 36u);
  const auto deps = [&](OpIndex i) {
    const Op op = p->op(0, i);
    EXPECT_EQ(op.kind, OpKind::NetReduce);
    return std::set<OpIndex>(op.deps.begin(), op.deps.begin() + op.num_deps);
  };
  EXPECT_EQ(deps(0), std::set<OpIndex>{});
  EXPECT_EQ(deps(21), std::set<OpIndex>{18});
  EXPECT_EQ(deps(24), (std::set<OpIndex>{21, 1}));
  EXPECT_EQ(deps(33), (std::set<OpIndex>{30, 10}));
  EXPECT_EQ(deps(25), std::set<OpIndex>{24});
  EXPECT_EQ(deps(26), std::set<OpIndex>{25});
}

// NVLS tree and CollNet have their own programs (what --engine flow runs for the NCCL model's
// algorithms of the same names, nccl/tuner.hpp).
TEST(ProgramAlgorithm, NvlsTreeAndCollNetHaveTheirOwnPrograms) {
  EXPECT_EQ(parse_algorithm("nvls_tree"), Algorithm::NvlsTree);
  EXPECT_EQ(parse_algorithm("collnet"), Algorithm::CollNet);
}

// GPU l of a node talks only to GPU l of other nodes and reduces in its node's group, so
// rotating every node's GPUs by one (sigma) maps the programs onto themselves with the same op
// indices, channels and groups, peers rotated. 4 nodes x 4 GPUs, 2 channels, 64 KiB per block.
TEST(NvlsTreeProgram, RotationInsideNodesMapsProgramsOntoThemselves) {
  constexpr Rank g = 4;
  const auto sigma = [](std::uint32_t x) { return x - x % g + (x + 1) % g; };
  CollectiveSpec s = spec(Algorithm::NvlsTree, 4, g, 2 * g * 64 * 1024);
  s.channels = 2;
  const auto p = make_collective(s);
  ASSERT_EQ(p->local_symmetry(), g);
  EXPECT_FALSE(p->local_symmetry_moves_channels());
  std::uint64_t net_reduces = 0;
  for (Rank r = 0; r < 16; ++r) {
    const Rank q = sigma(r);
    ASSERT_EQ(p->num_ops(q), p->num_ops(r));
    for (OpIndex i = 0; i < p->num_ops(r); ++i) {
      const Op a = p->op(r, i), b = p->op(q, i);
      ASSERT_TRUE(a.kind == b.kind && a.bytes() == b.bytes() && a.num_deps == b.num_deps &&
                  a.channel == b.channel)
          << r << " " << i;
      for (std::uint32_t k = 0; k < a.num_deps; ++k) ASSERT_EQ(a.deps[k], b.deps[k]);
      if (a.kind == OpKind::NetReduce) {
        ++net_reduces;
        ASSERT_EQ(a.peer, b.peer) << r << " " << i;
        ASSERT_EQ(p->group(a.peer).size(), g);
        ASSERT_EQ(p->group(a.peer).front(), r - r % g);
      }
      if (a.kind == OpKind::Send || a.kind == OpKind::Recv) {
        ASSERT_EQ(sigma(a.peer), b.peer) << r << " " << i;
      }
    }
  }
  EXPECT_GT(net_reduces, 0u);
  // Blocks of different sizes, one node, or one GPU per node promise nothing.
  CollectiveSpec uneven = s;
  uneven.bytes = Bytes(2 * g * 64 * 1024 + 4);
  EXPECT_EQ(make_collective(uneven)->local_symmetry(), 0u);
  EXPECT_EQ(make_collective(spec(Algorithm::NvlsTree, 1, g, 1 << 20))->local_symmetry(), 0u);
  EXPECT_EQ(make_collective(spec(Algorithm::NvlsTree, 4, 1, 1 << 20))->local_symmetry(), 0u);
}

// Split channels: rank c x n + r's op k x L + j is GPU r's op (k x C + c) x L + j (L = 14 ops
// per block, C channels), with sends and recvs to channel c's copy of the peer (peer + c n),
// channel c's copy of the node's NVLS group (group + c x nodes, members + c n) and dependencies
// renumbered the same way. Moving n ranks on (the next channel) moves every channel by 2, and
// every split rank's program is 1/C of its GPU's. 4 nodes x 4 GPUs, 2 channels, 2 chunks.
TEST(NvlsTreeProgram, SplitChannelsAreTheWholeProgramsChannels) {
  constexpr Rank g = 4, n = 16;
  constexpr std::uint32_t C = 2;
  CollectiveSpec s = spec(Algorithm::NvlsTree, 4, g, 2 * C * g * 64 * 1024);
  s.channels = C;
  s.chunk = Bytes(g * 64 * 1024);
  const auto whole = make_collective(s);
  s.split_channels = true;
  const auto split = make_collective(s);
  // The whole program offers this split to engines (ProgramSet::split_channels); the split one
  // offers nothing more.
  const auto offered = whole->split_channels();
  ASSERT_NE(offered, nullptr);
  ASSERT_EQ(offered->num_ranks(), C * n);
  for (Rank v = 0; v < C * n; ++v) ASSERT_EQ(offered->num_ops(v), split->num_ops(v));
  EXPECT_EQ(split->split_channels(), nullptr);
  ASSERT_EQ(split->num_ranks(), C * n);
  EXPECT_EQ(split->symmetry_period(), n);
  EXPECT_EQ(split->symmetry_channel_shift(), 2u);
  EXPECT_EQ(split->symmetry_channel_modulus(), 2 * C);
  EXPECT_EQ(split->local_symmetry(), g);
  ASSERT_EQ(split->num_groups(), C * 4);
  constexpr OpIndex L = 14;
  ASSERT_EQ(whole->num_ops(0), 2 * C * L);  // 2 chunks x 2 channels
  std::uint64_t sends = 0;
  for (Rank v = 0; v < C * n; ++v) {
    const Rank c = v / n, r = v % n;
    ASSERT_EQ(split->num_ops(v), whole->num_ops(r) / C);
    for (OpIndex i = 0; i < split->num_ops(v); ++i) {
      const Op a = split->op(v, i);
      const Op b = whole->op(r, (i / L * C + c) * L + i % L);
      ASSERT_TRUE(a.kind == b.kind && a.bytes() == b.bytes() && a.num_deps == b.num_deps &&
                  a.src.offset == b.src.offset && a.dst.offset == b.dst.offset)
          << v << " " << i;
      for (std::uint32_t k = 0; k < a.num_deps; ++k)
        ASSERT_EQ((a.deps[k] / L * C + c) * L + a.deps[k] % L, b.deps[k]) << v << " " << i;
      if (a.kind == OpKind::Send || a.kind == OpKind::Recv) {
        ++sends;
        ASSERT_EQ(a.peer, b.peer + c * n);
        ASSERT_EQ(a.channel, b.channel);
        ASSERT_EQ(a.channel / 2, c);
      }
      if (a.kind == OpKind::NetReduce) {
        ASSERT_EQ(a.peer, b.peer + c * 4);
        ASSERT_EQ(split->group(a.peer).front(), r - r % g + c * n);
        ASSERT_EQ(split->group(a.peer).size(), g);
        ASSERT_EQ(a.channel, 2 * c);
      }
    }
  }
  EXPECT_GT(sends, 0u);
  // Unequal blocks: no translation (the rotation is off too).
  s.bytes = Bytes(2 * C * g * 64 * 1024 + 4);
  EXPECT_EQ(make_collective(s)->symmetry_period(), 0u);
}

// ProgramSet::symmetry_period of the in-network reductions across nodes (net_reduce.cpp): rank
// r + g runs rank r's program on the next node, op for op, with its peers moved by g and each
// NetReduce in the group whose members are the original group's moved by g (a rail's CollNet or
// SHARP group is its own translate; a node's NVLS group is the next node's). 3 nodes of 4 GPUs,
// 2 channels. On one node nothing is promised.
TEST(NetReducePrograms, TranslationByOneNodeMapsProgramsAndGroupsOntoThemselves) {
  for (const Algorithm a : {Algorithm::CollNet, Algorithm::NetReduce}) {
    CollectiveSpec s = spec(a, 3, 4, 3 * 4 * 2 * 1024);
    s.op = CollectiveOp::AllReduce;
    s.channels = 2;
    const auto p = make_collective(s);
    const Rank g = 4, n = 12;
    ASSERT_EQ(p->symmetry_period(), g) << to_string(a);
    const auto moved = [&](std::uint32_t group) {
      std::vector<Rank> m;
      for (const Rank x : p->group(group)) m.push_back((x + g) % n);
      std::sort(m.begin(), m.end());
      return m;
    };
    std::uint64_t net_reduces = 0;
    for (Rank r = 0; r < n; ++r) {
      const Rank q = (r + g) % n;
      ASSERT_EQ(p->num_ops(q), p->num_ops(r));
      for (OpIndex i = 0; i < p->num_ops(r); ++i) {
        const Op x = p->op(r, i), y = p->op(q, i);
        ASSERT_TRUE(x.kind == y.kind && x.channel == y.channel && x.bytes() == y.bytes() &&
                    x.num_deps == y.num_deps)
            << r << " " << i;
        for (std::uint32_t k = 0; k < x.num_deps; ++k) ASSERT_EQ(x.deps[k], y.deps[k]);
        if (x.kind == OpKind::Send || x.kind == OpKind::Recv) {
          ASSERT_EQ((x.peer + g) % n, y.peer);
        }
        if (x.kind != OpKind::NetReduce) continue;
        ++net_reduces;
        const auto members = p->group(y.peer);
        ASSERT_EQ(std::vector<Rank>(members.begin(), members.end()), moved(x.peer))
            << r << " " << i;
      }
    }
    EXPECT_GT(net_reduces, 0u);
    EXPECT_EQ(make_collective(spec(a, 1, 4, 4 * 1024))->symmetry_period(), 0u);
  }
}

}  // namespace
}  // namespace lockstep
