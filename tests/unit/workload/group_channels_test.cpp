// A data-parallel group across nodes in full expansion runs over every rail, as NCCL's channels
// do (nccl/groups.cpp NcclGroups::plan): one ring channel crosses each node boundary through one
// GPU's NIC, so a single channel ran the group's all-reduce on one NIC of eight.
#include <gtest/gtest.h>

#include "lockstep/nccl/groups.hpp"
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

// A step plans the same collective for every TP or DP group: groups NCCL sees alike share one
// plan (the same programs, the same lead as planned afresh); a group of another shape does not.
TEST(GroupChannels, GroupsNcclSeesAlikeShareOnePlan) {
  const Topology topo = testing::ndr_h100_nodes(4, 8);
  const NcclGroups nccl(topo);
  const auto plan = [&](const GpuGroup& g) {
    return nccl.plan(CollectiveOp::AllReduce, Bytes::mib(64), DataType::Bf16, g);
  };
  const PlannedCollective a = plan({0, 8, 16, 24});
  const PlannedCollective b = plan({1, 9, 17, 25});      // one GPU on each of 4 nodes, as a
  const PlannedCollective in_node = plan({0, 1, 2, 3});  // 4 GPUs of one node
  EXPECT_EQ(a.programs.get(), b.programs.get());
  EXPECT_NE(a.programs.get(), in_node.programs.get());
  const PlannedCollective fresh = NcclGroups(topo).plan(CollectiveOp::AllReduce, Bytes::mib(64),
                                                        DataType::Bf16, {1, 9, 17, 25});
  EXPECT_EQ(b.lead, fresh.lead);
  ASSERT_EQ(b.programs->num_ops(0), fresh.programs->num_ops(0));
  for (OpIndex i = 0; i < fresh.programs->num_ops(0); ++i) {
    EXPECT_EQ(b.programs->op(0, i).bytes(), fresh.programs->op(0, i).bytes());
    EXPECT_EQ(b.programs->op(0, i).peer, fresh.programs->op(0, i).peer);
  }
  EXPECT_LT(in_node.lead, a.lead);  // NVLink's latency term, not the network's
}

}  // namespace
}  // namespace lockstep
