// The load a double binary tree puts on a node's NICs (cost.cpp tree_cost): NCCL runs two trees
// (graph/trees.cc), each carrying S/2, and a node moves S/2 per direction for each of its edges
// in each tree. Two nodes: one edge in each tree, S. Three: the second tree is the first shifted
// by one, so one node is a root with two children in one tree (S) and a leaf in the other (S/2):
// 1.5 S. Four and more: an inner node (parent and two children, 1.5 S) is a leaf in the other
// tree (S/2): 2 S.
#include <gtest/gtest.h>

#include "lockstep/nccl/cluster.hpp"
#include "lockstep/nccl/tuner.hpp"
#include "preset_request.hpp"

namespace lockstep {
namespace {

// A tree Simple all-reduce of 1 GiB on HGX H100 nodes with one 100G InfiniBand NIC each: the
// NIC binds (its 12 GB/s, NCCL's speed for a 100G port, x the tree's 0.92 against NVLink's
// hundreds), so the transfer term is S x load / (0.92 x 12 GB/s).
double tree_transfer_us(std::uint32_t nodes) {
  const NcclCluster c = nccl_cluster(test::preset_of("hgx-h100", "ib-hdr", nodes, 0, 1, 100));
  TunerRequest r;
  r.bytes = Bytes::gib(1);
  r.algo = Algorithm::Tree;
  r.proto = nccl::Proto::Simple;
  return predict(c, r).transfer.microseconds();
}

TEST(TreeNicLoad, TwoThreeAndFourNodesCarryOneOneAndAHalfAndTwoTimesTheMessage) {
  const double S = 1073741824.0;
  // 2 nodes: 1,073,741,824 B / (0.92 x 12e3 B/us) = 97,259.2 us; 3 nodes x 1.5 = 145,888.9 us;
  // 4 nodes x 2 = 194,518.5 us.
  EXPECT_NEAR(tree_transfer_us(2), S / (0.92 * 12e3), 1.0);
  EXPECT_NEAR(tree_transfer_us(2), 97259.2, 1.0);
  EXPECT_NEAR(tree_transfer_us(3), 145888.9, 1.0);
  EXPECT_NEAR(tree_transfer_us(4), 194518.5, 1.0);
  EXPECT_NEAR(tree_transfer_us(16), 194518.5, 1.0);
}

}  // namespace
}  // namespace lockstep
