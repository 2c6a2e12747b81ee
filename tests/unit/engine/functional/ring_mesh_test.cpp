// Ring programs with mesh_rings (a different Hamiltonian cycle of the node per channel) compute
// the right all-reduce, all-gather and reduce-scatter on 1 x 8 and 2 x 8 ranks, with channel
// counts that do (7) and do not (2, 3) match the 7 cycles of an 8-GPU mesh; so does the
// hierarchical all-reduce, whose rail rings reduce the block of the GPU's place in the cycle.
#include <gtest/gtest.h>

#include "lockstep/collective/collective.hpp"
#include "lockstep/engine/functional/verify.hpp"

namespace lockstep {
namespace {

void expect_correct(CollectiveOp op, Rank ranks, std::uint16_t channels,
                    Algorithm algo = Algorithm::Ring) {
  CollectiveSpec s;
  s.op = op;
  s.algorithm = algo;
  s.ranks = ranks;
  s.ranks_per_node = 8;
  s.channels = channels;
  s.type = DataType::Int32;
  s.bytes = Bytes(ranks * channels * 4 * 12 + (op == CollectiveOp::AllReduce ? 8 : 0));
  s.mesh_rings = true;
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

}  // namespace
}  // namespace lockstep
