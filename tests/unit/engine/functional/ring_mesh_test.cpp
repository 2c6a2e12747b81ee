// Ring programs with mesh_rings (a different Hamiltonian cycle of the node per channel) compute
// the right all-reduce, all-gather and reduce-scatter on 1 x 8 and 2 x 8 ranks, with channel
// counts that do (7) and do not (2, 3) match the 7 cycles of an 8-GPU mesh; so does the
// hierarchical all-reduce, whose rail rings reduce the block of the GPU's place in the cycle.
#include <gtest/gtest.h>

#include <vector>

#include "lockstep/collective/collective.hpp"
#include "lockstep/engine/functional/verify.hpp"

namespace lockstep {
namespace {

void expect_correct(CollectiveOp op, Rank ranks, std::uint16_t channels,
                    Algorithm algo = Algorithm::Ring,
                    const std::vector<std::vector<std::uint32_t>>& cycles = {}) {
  CollectiveSpec s;
  s.op = op;
  s.algorithm = algo;
  s.ranks = ranks;
  s.ranks_per_node = 8;
  s.channels = channels;
  s.type = DataType::Int32;
  s.bytes = Bytes(ranks * channels * 4 * 12 + (op == CollectiveOp::AllReduce ? 8 : 0));
  s.mesh_rings = true;
  s.node_cycles = cycles;
  const auto programs = make_collective(s);
  const VerifyReport v = verify_collective(s, *programs);
  EXPECT_TRUE(v.ok) << to_string(op) << " " << to_string(algo) << " " << ranks
                    << " ranks: " << v.message;
}

TEST(MeshRings, CorrectOnOneAndTwoNodes) {
  for (const CollectiveOp op :
       {CollectiveOp::AllReduce, CollectiveOp::AllGather, CollectiveOp::ReduceScatter}) {
    expect_correct(op, 8, 7);
    expect_correct(op, 8, 3);
    expect_correct(op, 16, 7);
    expect_correct(op, 16, 2);
  }
  for (const Rank ranks : {8u, 16u, 24u})
    for (const std::uint16_t channels : {1, 3, 7})
      expect_correct(CollectiveOp::AllReduce, ranks, channels, Algorithm::Hierarchical);
}

// A node wired pair by pair walks given cycles (DGX-1's: the 6 rings NCCL's search finds over
// its hybrid cube mesh, not edge-disjoint, a count not coprime with 8), channel c starting at
// GPU (c / 6) mod 8: right with 6, 12 and 48 channels (every cycle and entry once) and fewer.
TEST(MeshRings, CorrectOnGivenNodeCycles) {
  const std::vector<std::vector<std::uint32_t>> dgx1 = {
      {0, 1, 2, 3, 7, 5, 6, 4}, {0, 2, 6, 7, 4, 5, 1, 3}, {0, 3, 1, 5, 4, 7, 6, 2},
      {0, 3, 2, 1, 5, 6, 7, 4}, {0, 4, 6, 5, 7, 3, 2, 1}, {0, 4, 7, 6, 5, 1, 2, 3}};
  for (const CollectiveOp op :
       {CollectiveOp::AllReduce, CollectiveOp::AllGather, CollectiveOp::ReduceScatter}) {
    for (const std::uint16_t channels : {4, 6, 12, 48}) {
      expect_correct(op, 8, channels, Algorithm::Ring, dgx1);
      expect_correct(op, 16, channels, Algorithm::Ring, dgx1);
    }
  }
  for (const std::uint16_t channels : {3, 6})
    expect_correct(CollectiveOp::AllReduce, 16, channels, Algorithm::Hierarchical, dgx1);
}

}  // namespace
}  // namespace lockstep
