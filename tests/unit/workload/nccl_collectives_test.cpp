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

// dp 4 on 2 nodes of 2 H100 (NDR, a NIC per GPU), the same exposed gradient reduction. NCCL
// runs it on both GPUs' NICs of each node: 2 x 48 GB/s = 96 GB/s per node (48 = NDR's 50 GB/s at
// NCCL's network speed). Plain DP all-reduces S = 109,051,904 B with NVLS_TREE: NVLink SHARP in
// the node, then a tree between the 2 nodes in which each node's NICs carry S each way:
// S / 96 GB/s = 1,135.957 us. ZeRO-1 reduce-scatters the (BF16) gradients and all-gathers the
// parameters with rings, each NIC carrying (n - 1) / n of its channel's S / 2: 3/4 S / 96 GB/s
// = 851.968 us each. Each collective adds the 20 us launch and NCCL's latency terms (with
// NVLS_TREE's pipeline fill, about 120 us; the rings' a few tens). The full expansion runs those
// programs inside the step with one efficiency for all links: NVLink's (0.82 of its line rate
// on H100) made the NICs move 50 x 0.82 = 41 GB/s, not 48, and the reduction 17% slower than
// the reduced expansion's (36.2 against 31.1 ms on a two-layer Llama 3 8B); the network's, which
// binds, leaves only the messages' path latencies between them (a few us).
TEST(NcclCollectives, ExpansionsAgreeOnAReductionOverTwoGpusPerNode) {
  const Topology topo = testing::ndr_h100_nodes(2, 2);
  for (ZeroStage zero : {ZeroStage::None, ZeroStage::Optimizer}) {
    TrainConfig c = testing::tiny_config(1, 1, 4, 4);
    c.bucket = Bytes::gib(1);
    c.overlap_dp = false;
    c.engine = "analytical";
    c.par.zero = zero;
    c.expansion = Expansion::Reduced;
    const Time reduced = simulate_training(topo, c).breakdown.dp;
    c.expansion = Expansion::Full;
    const Time full = simulate_training(topo, c).breakdown.dp;
    EXPECT_NEAR(full.seconds(), reduced.seconds(), 3e-3 * reduced.seconds()) << to_string(zero);
    const double collectives = zero == ZeroStage::None ? 1 : 2;
    const double transfer =
        zero == ZeroStage::None ? kGradientBytes / 96e9 : 2 * 0.75 * kGradientBytes / 96e9;
    EXPECT_GT(reduced.seconds(), transfer + collectives * 20e-6) << to_string(zero);
    EXPECT_LT(reduced.seconds(), transfer + collectives * 150e-6) << to_string(zero);
  }
}

}  // namespace
}  // namespace lockstep
