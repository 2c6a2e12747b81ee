// Mesh rings (CollectiveSpec::mesh_rings): on a fully connected node each channel walks its own
// Hamiltonian cycle, so the channels together use every directed GPU pair.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <utility>

#include "lockstep/collective/collective.hpp"

namespace lockstep {
namespace {

CollectiveSpec mesh_spec(Rank ranks, std::uint32_t per_node, std::uint16_t channels,
                         Algorithm algo = Algorithm::Ring) {
  CollectiveSpec s;
  s.op = CollectiveOp::AllReduce;
  s.algorithm = algo;
  s.ranks = ranks;
  s.ranks_per_node = per_node;
  s.channels = channels;
  s.bytes = Bytes(ranks * channels * 64);
  s.mesh_rings = true;
  return s;
}

// Directed (src, dst) pairs of every Send, with the send counts per pair.
std::set<std::pair<Rank, Rank>> send_pairs(const ProgramSet& p) {
  std::set<std::pair<Rank, Rank>> pairs;
  for (Rank r = 0; r < p.num_ranks(); ++r)
    for (OpIndex i = 0; i < p.num_ops(r); ++i) {
      const Op op = p.op(r, i);
      if (op.kind == OpKind::Send) pairs.insert({r, op.peer});
    }
  return pairs;
}

// 1 x 8: K8 has 8 x 7 = 56 directed pairs and splits into 7 edge-disjoint Hamiltonian cycles
// (Tillson 1980), so 7 channels cover all 56; the rotated order uses only r -> r + 1 (8 pairs).
TEST(RingMesh, SevenChannelsOnEightGpusUseAllFiftySixPairs) {
  EXPECT_EQ(send_pairs(*make_collective(mesh_spec(8, 8, 7))).size(), 56u);
  CollectiveSpec plain = mesh_spec(8, 8, 7);
  plain.mesh_rings = false;
  EXPECT_EQ(send_pairs(*make_collective(plain)).size(), 8u);
}

// Each channel is a ring: every rank sends to exactly one successor and receives from one
// predecessor per channel, so with 1 channel the mesh ring uses exactly 8 pairs.
TEST(RingMesh, OneChannelIsOneHamiltonianCycle) {
  const auto pairs = send_pairs(*make_collective(mesh_spec(8, 8, 1)));
  ASSERT_EQ(pairs.size(), 8u);
  std::set<Rank> sources, targets;
  for (const auto& [a, b] : pairs) {
    sources.insert(a);
    targets.insert(b);
    EXPECT_NE(a, b);
  }
  EXPECT_EQ(sources.size(), 8u);
  EXPECT_EQ(targets.size(), 8u);
}

// 2 x 8: cross-node sends keep the rail structure (same local index on both sides), and the
// mesh rings declare no symmetry they cannot prove.
TEST(RingMesh, TwoNodesCrossOnRailsAndClaimNoSymmetry) {
  const auto programs = make_collective(mesh_spec(16, 8, 7));
  for (const auto& [a, b] : send_pairs(*programs))
    if (a / 8 != b / 8) {
      EXPECT_EQ(a % 8, b % 8) << a << " -> " << b;
    }
  EXPECT_EQ(programs->symmetry_period(), 0u);
}

// 2 x 8 with 56 channels (7 cycles x 8 GPUs, what the sweep asks for across nodes): channel c
// walks cycle c mod 7 from GPU c mod 8, every (cycle, start) pair once, so every GPU sends out of
// its node on exactly 56 / 8 = 7 channels and every NIC carries the same load each way. (With 21
// channels one GPU left on 6 and another on none, and flow ran at half the model's busbw.)
TEST(RingMesh, AcrossNodesEveryGpuLeavesItsNodeOnAsManyChannels) {
  const auto programs = make_collective(mesh_spec(16, 8, 56));
  std::map<Rank, std::set<std::uint16_t>> leaving;  // rank -> channels it sends off-node on
  for (Rank r = 0; r < 16; ++r)
    for (OpIndex i = 0; i < programs->num_ops(r); ++i) {
      const Op op = programs->op(r, i);
      if (op.kind == OpKind::Send && op.peer / 8 != r / 8) leaving[r].insert(op.channel);
    }
  ASSERT_EQ(leaving.size(), 16u);
  for (const auto& [rank, channels] : leaving) EXPECT_EQ(channels.size(), 7u) << "rank " << rank;
}

// The hierarchical all-reduce's node rings walk the same cycles: on 2 x 8 with 7 channels every
// node's 56 directed pairs carry a channel (with rings in local order, 8 per node), and the
// rail rings between nodes keep the local index. The two GPUs of a rail hold the same position
// in every channel's cycle (the cycles are the same in each node), so they reduce the same block
// (correctness: tests/unit/engine/functional/ring_mesh_test.cpp).
TEST(RingMesh, HierarchicalNodeRingsUseEveryPairAndRailsStay) {
  const auto programs = make_collective(mesh_spec(16, 8, 7, Algorithm::Hierarchical));
  const auto pairs = send_pairs(*programs);
  std::size_t in_node = 0;
  for (const auto& [a, b] : pairs) {
    if (a / 8 == b / 8)
      ++in_node;
    else
      EXPECT_EQ(a % 8, b % 8) << a << " -> " << b;
  }
  EXPECT_EQ(in_node, 2 * 56u);
  CollectiveSpec plain = mesh_spec(16, 8, 7, Algorithm::Hierarchical);
  plain.mesh_rings = false;
  in_node = 0;
  for (const auto& [a, b] : send_pairs(*make_collective(plain))) in_node += a / 8 == b / 8;
  EXPECT_EQ(in_node, 2 * 8u);
}

}  // namespace
}  // namespace lockstep
