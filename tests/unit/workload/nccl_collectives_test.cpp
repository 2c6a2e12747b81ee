// Training collectives take what `lockstep collective` reports for the same group, size and
// system: NCCL's algorithm, protocol, channels and overheads, not raw link speed.
#include <gtest/gtest.h>

#include "lockstep/nccl/sweep.hpp"
#include "lockstep/topology/builder.hpp"
#include "lockstep/topology/presets.hpp"
#include "lockstep/workload/training.hpp"
#include "test_cluster.hpp"

namespace lockstep {
namespace {

// Two HGX-H100 servers on NDR using one GPU each: dp = 2 across the network.
Topology two_single_gpu_nodes() {
  return testing::ndr_h100_nodes(2, 1);
}

// tiny_config with dp = 2, one micro-batch, all gradients in one bucket reduced after the
// backward pass: the exposed data-parallel time is exactly one all-reduce of the whole stage's
// gradients, 2 x (12 Mi + 14 Mi) parameters x 2 B = 109,051,904 B.
TrainConfig one_exposed_all_reduce(const std::string& engine, Expansion expansion) {
  TrainConfig c = testing::tiny_config(1, 1, 2, 2);
  c.bucket = Bytes::gib(1);
  c.overlap_dp = false;
  c.engine = engine;
  c.expansion = expansion;
  return c;
}
constexpr std::uint64_t kGradientBytes = 109'051'904;

Time collective_command_time(const Topology& topo, const std::string& engine) {
  CollectiveSweep sweep;
  sweep.op = CollectiveOp::AllReduce;
  sweep.min_bytes = sweep.max_bytes = Bytes(kGradientBytes);
  sweep.type = DataType::Bf16;
  sweep.engine = engine;
  const auto rows = run_collective_sweep(sweep, nccl_cluster(topo), &topo);
  EXPECT_EQ(rows.size(), 1u);
  return rows.at(0).time;
}

TEST(NcclCollectives, ExposedGradientAllReduceIsWhatTheCollectiveCommandPredicts) {
  const Topology topo = two_single_gpu_nodes();
  for (const std::string engine : {"analytical", "flow"}) {
    const Time expected = collective_command_time(topo, engine);
    const TrainResult r =
        simulate_training(topo, one_exposed_all_reduce(engine, Expansion::Reduced));
    EXPECT_EQ(r.breakdown.dp, expected) << engine;
    EXPECT_EQ(r.iteration, Time::ms(9) + expected) << engine;
  }
  // Hand check: one NDR NIC per node gives NCCL 48 GB/s; a 2-rank ring all-reduce moves
  // 2 (2 - 1) / 2 x S = S per GPU: 109,051,904 B / 48 GB/s = 2.2719 ms, plus the 20 us launch
  // overhead = 2.2919 ms; NCCL's latency term for a Simple ring across nodes (network steps,
  // x 1.4) adds some tens of microseconds: within 3%.
  const double seconds = collective_command_time(topo, "analytical").seconds();
  const double hand = kGradientBytes / 48e9 + 20e-6;
  EXPECT_GT(seconds, hand);
  EXPECT_NEAR(seconds, hand, 0.03 * hand);
}

TEST(NcclCollectives, FullExpansionStaysCloseToTheCommandsTime) {
  // Full expansion runs the collective inside the step's programs: NCCL's algorithm and
  // channels, bytes stretched by the protocol efficiency and a lead delay for the fixed costs.
  const Topology topo = two_single_gpu_nodes();
  const Time expected = collective_command_time(topo, "flow");
  const TrainResult r = simulate_training(topo, one_exposed_all_reduce("flow", Expansion::Full));
  EXPECT_EQ(r.expansion, "full");
  EXPECT_NEAR(r.breakdown.dp.seconds(), expected.seconds(), 0.02 * expected.seconds());
}

TEST(NcclCollectives, WithoutTheNcclModelTheAllReduceRunsAtRawLinkSpeed) {
  // Without the NCCL model the same all-reduce runs at the NIC's raw 50 GB/s with no launch
  // overhead, so it is faster than NCCL's 48 GB/s + 20 us.
  const Topology topo = two_single_gpu_nodes();
  SimulateOptions raw;
  raw.nccl = false;
  const TrainConfig c = one_exposed_all_reduce("flow", Expansion::Reduced);
  const Time nccl = simulate_training(topo, c).breakdown.dp;
  const Time plain = simulate_training(topo, c, raw).breakdown.dp;
  EXPECT_GT(plain.seconds(), kGradientBytes / 50e9);
  EXPECT_LT(plain, nccl);
}

}  // namespace
}  // namespace lockstep
