// The ring's local steps across nodes cost at least the host's network post overhead, as NCCL's
// tuning.cc has it ("Inter-node rings still have to launch nsteps * net overhead": the proxy of
// the GPU that feeds the network posts one send per step, in step order, on the host CPU). Kept
// in the priced time, not only in the ranking: the forced ring on 2 x DGX A100 (AMD hosts)
// measures 93.1 us at 8 B, which the overhead explains (88.0 us) and the NVLink steps' own
// 0.6 us do not (48.8 us); docs/calibration.md "The ring's network overhead across racks".
// Constants: tuning.cc baseLat, hwLat and getNetOverhead (nccl/constants.cpp).
#include <gtest/gtest.h>

#include "lockstep/nccl/sweep.hpp"
#include "lockstep/nccl/tuner.hpp"
#include "lockstep/topology/builder.hpp"
#include "lockstep/topology/presets.hpp"

namespace lockstep {
namespace {

NcclCluster cluster(const char* system, std::uint32_t nodes, const char* fabric = "") {
  PresetRequest r;
  r.system = system;
  r.fabric = fabric;
  r.nodes = nodes;
  return nccl_cluster(resolve_preset(r));
}

Prediction ring(const NcclCluster& c, std::uint64_t bytes, nccl::Proto p) {
  TunerRequest r;
  r.bytes = Bytes(bytes);
  r.algo = Algorithm::Ring;
  r.proto = p;
  return predict(c, r);
}

TEST(RingNetOverhead, AmdHostsLiftEveryLocalStepToTwoMicroseconds) {
  // 2 x DGX A100 (AMD EPYC hosts), 16 ranks, 8 B, LL: 2 (n - 1) = 30 steps, 2 of them between
  // the nodes. 6.6 + 28 x max(NVLink 0.6, AMD 2.0) + 2 x network 2.7 = 68.0 us, + 20 us per call.
  const NcclCluster c = cluster("dgx-a100", 2);
  ASSERT_TRUE(c.amd_host);
  const Prediction p = ring(c, 8, nccl::Proto::LL);
  EXPECT_NEAR(p.latency.microseconds(), 68.0, 1e-9);
  EXPECT_NEAR(p.time.microseconds(), 88.0, 1e-3);  // 8 B move in under a nanosecond
  // Simple: the overhead x 3 (6.0 us) against NVLink's 3.4: 8.4 + 28 x 6.0 + 2 x 14.0 = 204.4
  // (8 B is under 64 B per channel and rank: no x 1.4).
  EXPECT_NEAR(ring(c, 8, nccl::Proto::Simple).latency.microseconds(), 204.4, 1e-9);
}

TEST(RingNetOverhead, GraceHostsTakeNcclsDefaultAcrossRacks) {
  // 32 GB200 trays = two NVL72 racks, two NCCL nodes of 64 GPUs: 254 steps, 2 between the
  // racks. Grace is not x86: getNetOverhead's default 1 us. 6.6 + 252 x max(0.6, 1.0) + 2 x 2.7
  // = 264.0 us, 284.0 with the call (OCI measures 183.8: the classed row of docs/calibration.md).
  const NcclCluster c = cluster("gb200-nvl72", 32, "roce-400g");
  ASSERT_EQ(c.nodes, 2u);
  ASSERT_EQ(c.ranks(), 128u);
  ASSERT_FALSE(c.amd_host);
  const Prediction p = ring(c, 8, nccl::Proto::LL);
  EXPECT_NEAR(p.latency.microseconds(), 264.0, 1e-9);
  EXPECT_NEAR(p.time.microseconds(), 284.0, 1e-3);
  // LL128's NVLink step (1.9 us) is above the overhead: 14.0 + 252 x 1.9 + 2 x 4.0 = 500.8.
  EXPECT_NEAR(ring(c, 8, nccl::Proto::LL128).latency.microseconds(), 500.8, 1e-9);
}

TEST(RingNetOverhead, TheFlowEnginePaysItToo) {
  // The flow engine's ring across nodes spreads the model's latency over its messages
  // (engine_run.cpp price_ring_across_nodes): the same 88.0 us on 2 x DGX A100 at 8 B, where
  // NVLink's own steps would give 48.8.
  PresetRequest req;
  req.system = "dgx-a100";
  req.nodes = 2;
  const PresetCluster preset = resolve_preset(req);
  const BuildResult built = build_topology(rail_optimized_args(preset));
  ASSERT_TRUE(built.graph.has_value());
  CollectiveSweep s;
  s.op = CollectiveOp::AllReduce;
  s.algo = Algorithm::Ring;
  s.proto = nccl::Proto::LL;
  s.min_bytes = s.max_bytes = Bytes(8);
  s.engine = "flow";
  const auto rows = run_collective_sweep(s, nccl_cluster(preset), &*built.graph);
  EXPECT_NEAR(rows.at(0).time.microseconds(), 88.0, 0.05);
}

TEST(RingNetOverhead, OneNodeHasNoNetworkToFeed) {
  // 16 trays in one rack: one NCCL node, no proxy on the ring: 6.6 + 126 x 0.6 = 82.2 us.
  const NcclCluster c = cluster("gb200-nvl72", 16);
  ASSERT_EQ(c.nodes, 1u);
  EXPECT_NEAR(ring(c, 8, nccl::Proto::LL).latency.microseconds(), 82.2, 1e-9);
}

}  // namespace
}  // namespace lockstep
