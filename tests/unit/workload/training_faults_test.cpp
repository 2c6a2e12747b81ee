// Link faults in a training step on the analytical engine, against the bytes over the
// bottleneck link by hand and against the flow engine (docs/training.md, "Faults").
#include <gtest/gtest.h>

#include "lockstep/workload/training.hpp"
#include "test_cluster.hpp"

namespace lockstep {
namespace {

// Two HGX-H100 servers on NDR using two GPUs each, one NIC per GPU (rails 0 and 1).
Topology two_by_two() {
  return testing::ndr_h100_nodes(2, 2);
}

// tp 2, dp 2: the DP groups are {0, 2} on rail 0 and {1, 3} on rail 1, each a two-rank ring
// across the nodes that moves S out and S in on each of its NICs. One bucket reduced after the
// backward pass, so the iteration exposes the whole all-reduce. S per rank: the tiny model's
// 2 x (12 Mi + 14 Mi) parameters x 2 B / tp 2 = 54,525,952 B.
constexpr double kS = 54'525'952;
constexpr double kNcclNic = 48e9;  // NCCL's NDR NIC (48 of the link's 50 GB/s)

// The iteration's growth under the fault: the faulted trial minus the healthy baseline.
double fault_delay(const std::string& engine, const std::string& fault) {
  TrainConfig c = testing::tiny_config(2, 1, 2, 2);
  c.bucket = Bytes::gib(1);
  c.overlap_dp = false;
  c.engine = engine;
  c.expansion = Expansion::Full;
  c.faults.push_back(parse_fault(fault, "fault"));
  const TrainResult r = simulate_training(two_by_two(), c);
  EXPECT_EQ(r.trial_times.size(), 1u);
  return (r.trial_times.at(0) - r.iteration).seconds();
}

TEST(TrainingFaults, AFailedNicLinkMakesTheRelayNicCarryBothRings) {
  // GPU 0's traffic fails over through NVLink to GPU 1's NIC, which now carries both rings: 2 S
  // each way where it carried S, so the all-reduce takes S / 48 GB/s longer (1.136 ms).
  const double hand = kS / kNcclNic;
  const double analytical = fault_delay("analytical", "failed-link:link=nic0-leaf0");
  const double flow = fault_delay("flow", "failed-link:link=nic0-leaf0");
  EXPECT_NEAR(analytical, hand, 0.05 * hand);
  EXPECT_NEAR(analytical, flow, 0.10 * flow);
}

TEST(TrainingFaults, ADegradedNicLinkSetsItsRingsPace) {
  // NIC 0's link keeps a quarter of its rate: rail 0's ring moves S over 12 GB/s instead of
  // 48 GB/s, 3 S / 48 GB/s longer (3.408 ms); rail 1's ring is untouched.
  const double hand = 3 * kS / kNcclNic;
  const double analytical = fault_delay("analytical", "degraded-link:link=nic0-leaf0,x=0.25");
  const double flow = fault_delay("flow", "degraded-link:link=nic0-leaf0,x=0.25");
  EXPECT_NEAR(analytical, hand, 0.05 * hand);
  EXPECT_NEAR(analytical, flow, 0.10 * flow);
}

}  // namespace
}  // namespace lockstep
