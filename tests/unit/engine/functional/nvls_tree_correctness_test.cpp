// NCCL's NVLS_TREE all-reduce (src/collective/nvls_tree.cpp) executed on real data, and the
// windowed NetReduce it relies on: NVLink SHARP's reduce-scatter (src = the chunk, dst = the
// member's block) and multicast all-gather (src = the block, dst = the chunk).
#include <gtest/gtest.h>

#include <cstring>

#include "lockstep/collective/collective.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/engine/functional/executor.hpp"
#include "lockstep/engine/functional/verify.hpp"

namespace lockstep {
namespace {

CollectiveSpec nvls_tree_spec(Rank nodes, std::uint32_t g, std::uint64_t bytes) {
  CollectiveSpec s;
  s.op = CollectiveOp::AllReduce;
  s.algorithm = Algorithm::NvlsTree;
  s.ranks = nodes * g;
  s.ranks_per_node = g;
  s.bytes = Bytes(bytes);
  return s;
}

void expect_correct(const CollectiveSpec& s) {
  const auto p = make_collective(s);
  const VerifyReport v = verify_collective(s, *p);
  EXPECT_TRUE(v.ok) << s.ranks / s.ranks_per_node << " x " << s.ranks_per_node << ", "
                    << s.bytes.count() << " B, " << s.channels << " channels: " << v.message;
  FunctionalOptions reverse;
  reverse.schedule = Schedule::Reverse;
  const VerifyReport r = verify_collective(s, *p, reverse, 7);
  EXPECT_TRUE(r.ok) << "reverse schedule: " << r.message;
}

// 2 and 4 nodes of 4 GPUs (the brief's cases), odd node counts (the second tree is shifted, not
// mirrored), uneven sizes (blocks of different lengths, empty blocks when S < g) and several
// channels and pipelining chunks. uint8 sums wrap modulo 256, so the check is exact.
TEST(NvlsTreeCorrectness, SumsOnTwoAndFourNodesOfFourGpus) {
  for (Rank nodes : {2u, 4u})
    for (std::uint64_t bytes : {1u, 7u, 1000u, 4096u})
      expect_correct(nvls_tree_spec(nodes, 4, bytes));
}

TEST(NvlsTreeCorrectness, OddNodeCountsChannelsAndChunks) {
  for (Rank nodes : {1u, 3u, 5u, 6u}) {
    CollectiveSpec s = nvls_tree_spec(nodes, 3, 1003);
    s.channels = 3;
    s.chunk = Bytes(48);
    expect_correct(s);
  }
  // One GPU per node: the NVLS phases are single-member reductions, the tree does everything.
  expect_correct(nvls_tree_spec(5, 1, 999));
}

TEST(NvlsTreeCorrectness, FloatsWithinTolerance) {
  CollectiveSpec s = nvls_tree_spec(4, 4, 4000);
  s.type = DataType::Float32;
  s.channels = 2;
  const auto p = make_collective(s);
  const VerifyReport v = verify_collective(s, *p);
  EXPECT_TRUE(v.ok) << v.message;
}

// Two ranks, one group; each holds 4 uint32 elements [a0 a1 a2 a3].
struct TwoRanks {
  MaterializedProgramSet p{2, DataType::Uint32};
  std::vector<RankBuffers> buffers;
  TwoRanks() {
    p.add_group({0, 1});
    for (Rank r = 0; r < 2; ++r) p.set_buffers(r, BufferSizes{16, 16, 0, true});
  }
  void fill() {
    buffers = allocate_buffers(p);
    for (Rank r = 0; r < 2; ++r)
      for (std::uint32_t e = 0; e < 4; ++e) {
        const std::uint32_t v = 10 * (r + 1) + e;  // rank 0: 10..13, rank 1: 20..23
        std::memcpy(buffers[r].input.data() + 4 * e, &v, 4);
      }
  }
  std::uint32_t at(Rank r, std::uint32_t e) const {
    std::uint32_t v;
    std::memcpy(&v, buffers[r].input.data() + 4 * e, 4);
    return v;
  }
};

// Reduce-scatter: both contribute all 4 elements; rank 0 takes elements 0-1 of the sum
// (30, 32), rank 1 elements 2-3 (34, 36). The positions a rank does not receive keep its input.
TEST(WindowedNetReduce, ReduceScatterTakesEachMembersWindowOfTheSum) {
  TwoRanks t;
  t.p.add(0, make_net_reduce(0, {Buffer::Input, 0, 16}, {Buffer::Input, 0, 8}));
  t.p.add(1, make_net_reduce(0, {Buffer::Input, 0, 16}, {Buffer::Input, 8, 8}));
  t.fill();
  execute(t.p, t.buffers);
  EXPECT_EQ(t.at(0, 0), 30u);
  EXPECT_EQ(t.at(0, 1), 32u);
  EXPECT_EQ(t.at(0, 2), 12u);
  EXPECT_EQ(t.at(1, 2), 34u);
  EXPECT_EQ(t.at(1, 3), 36u);
  EXPECT_EQ(t.at(1, 0), 20u);
}

// All-gather: rank 0 contributes elements 0-1 (10, 11), rank 1 elements 2-3 (22, 23); both
// receive the concatenation 10, 11, 22, 23.
TEST(WindowedNetReduce, MulticastGathersDisjointBlocks) {
  TwoRanks t;
  t.p.add(0, make_net_reduce(0, {Buffer::Input, 0, 8}, {Buffer::Input, 0, 16}));
  t.p.add(1, make_net_reduce(0, {Buffer::Input, 8, 8}, {Buffer::Input, 0, 16}));
  t.fill();
  execute(t.p, t.buffers);
  for (Rank r = 0; r < 2; ++r) {
    EXPECT_EQ(t.at(r, 0), 10u);
    EXPECT_EQ(t.at(r, 1), 11u);
    EXPECT_EQ(t.at(r, 2), 22u);
    EXPECT_EQ(t.at(r, 3), 23u);
  }
}

// A member that wants positions nobody contributed is a broken program, not a silent zero.
TEST(WindowedNetReduce, UncoveredPositionsAreAnError) {
  TwoRanks t;
  t.p.add(0, make_net_reduce(0, {Buffer::Input, 0, 4}, {Buffer::Input, 0, 16}));
  t.p.add(1, make_net_reduce(0, {Buffer::Input, 4, 4}, {Buffer::Input, 0, 16}));
  t.fill();
  EXPECT_THROW(execute(t.p, t.buffers), InputError);
}

}  // namespace
}  // namespace lockstep
