// A data-parallel group across nodes in full expansion runs over every rail, as NCCL's channels
// do (nccl/groups.cpp NcclGroups::plan): one ring channel crosses each node boundary through one
// GPU's NIC, so a single channel ran the group's all-reduce on one NIC of eight.
#include <gtest/gtest.h>

#include "lockstep/workload/training.hpp"
#include "test_cluster.hpp"

namespace lockstep {
namespace {

Time iteration(Expansion e) {
  TrainConfig c = testing::tiny_config(1, 1, 16, 16);
  c.bucket = Bytes::gib(1);
  c.overlap_dp = false;
  c.par.zero = ZeroStage::Optimizer;  // reduce-scatter and all-gather: NCCL runs them as rings
  c.engine = "flow";
  c.expansion = e;
  return simulate_training(testing::ndr_h100_nodes(2, 8), c).iteration;
}

// 2 x 8 H100 on NDR, dp 16, ZeRO-1 (the distributed optimizer), one bucket after the backward
// pass: the ring reduce-scatter of S = 2 x (12 Mi + 14 Mi) x 2 B = 109,051,904 B and the
// all-gather of the parameters move 2 x 15/16 x S through each node's 8 NICs at NCCL's 48 GB/s:
// 2 x 15/16 x S / 384 GB/s = 0.5325 ms. Full and reduced expansion both expose them; on one rail
// full expansion took 8 times that, 3.7 ms more.
TEST(GroupChannels, AGroupAcrossNodesUsesEveryRailInFullExpansion) {
  const double hand = 2.0 * 15 / 16 * 109'051'904 / 384e9;
  const double full = iteration(Expansion::Full).seconds();
  const double reduced = iteration(Expansion::Reduced).seconds();
  EXPECT_NEAR(full, reduced, 0.25 * hand);
}

}  // namespace
}  // namespace lockstep
