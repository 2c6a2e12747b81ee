// RCCL on AMD Instinct nodes against hand-derived numbers: the xGMI bandwidth RCCL's model sees
// (datasheet links x per-link rate x the 3/4 lane payload fraction of NCCL's topology code,
// constants.cpp) and the ring all-reduce the tuner builds on it (docs/nccl-model.md "RCCL on AMD
// Instinct").
#include <gtest/gtest.h>

#include "lockstep/nccl/tuner.hpp"
#include "lockstep/topology/presets.hpp"

namespace lockstep {
namespace {

NcclCluster amd_node(const char* system, std::uint32_t nodes = 1) {
  PresetRequest r;
  r.system = system;
  r.nodes = nodes;
  return nccl_cluster(resolve_preset(r));
}

Prediction all_reduce(const NcclCluster& c, Bytes bytes) {
  TunerRequest r;
  r.bytes = bytes;
  return predict(c, r);
}

TEST(Rccl, XgmiBandwidthIsLinksTimesRateTimesThreeQuarters) {
  // MI300X and MI325X: 7 links x 64 GB/s x 0.75 = 336; MI355X: 7 x 76.8 x 0.75 = 403.2.
  EXPECT_DOUBLE_EQ(amd_node("mi300x").intra_GBps, 336.0);
  EXPECT_DOUBLE_EQ(amd_node("mi325x").intra_GBps, 336.0);
  EXPECT_NEAR(amd_node("mi355x").intra_GBps, 403.2, 1e-9);
  // AMD EPYC hosts: RCCL's network post overhead is the AMD one.
  EXPECT_TRUE(amd_node("mi355x").amd_host);
}

TEST(Rccl, FewerGpusOfTheUbbHaveFewerLinks) {
  // One xGMI link per GPU pair: 2 GPUs of an MI300X node share one link, 1 x 64 x 0.75 = 48
  // GB/s; 4 MI355X have 3 links each, 3 x 76.8 x 0.75 = 172.8 GB/s.
  PresetRequest r;
  r.system = "mi300x";
  r.gpus_per_node = 2;
  const NcclCluster two = nccl_cluster(resolve_preset(r));
  EXPECT_DOUBLE_EQ(two.intra_GBps, 48.0);
  r.system = "mi355x";
  r.gpus_per_node = 4;
  EXPECT_NEAR(nccl_cluster(resolve_preset(r)).intra_GBps, 172.8, 1e-9);
  // 2 x MI300X, ring / Simple, 1 GiB: 20 + (8.4 + 2 x 3.4) + 2(n-1)/n S / 48 GB/s =
  // 35.2 + 22,369.62 = 22,404.82 us, busbw 47.92 GB/s (was 336 GB/s: all seven links).
  const Prediction p = all_reduce(two, Bytes::gib(1));
  EXPECT_NEAR(p.time.microseconds(), 22404.821, 1e-3);
  EXPECT_NEAR(p.busbw_GBps, 47.925, 1e-3);
}

TEST(Rccl, Mi300xOneNodeAllReduceOneGiB) {
  // 8 x MI300X, ring / Simple (LL128 is capped at 0.92 x 336, LL at 141 GB/s), S = 1 GiB:
  //   latency  = 8.4 + 14 x 3.4 = 56.0 us (baseLat + 2(n-1) steps of hwLat[NVLink][Ring][Simple])
  //   transfer = 1.75 x 1,073,741,824 B / 336e9 B/s = 5,592.41 us
  //   time     = 20 (launch) + 56.0 + 5,592.41 = 5,668.41 us
  //   busbw    = 1.75 S / time = 331.50 GB/s (rccl-tests on MI300X: ~300-360 at large sizes)
  const Prediction p = all_reduce(amd_node("mi300x"), Bytes::gib(1));
  EXPECT_EQ(p.algo, Algorithm::Ring);
  EXPECT_EQ(p.proto, nccl::Proto::Simple);
  EXPECT_NEAR(p.latency.microseconds(), 56.0, 1e-6);
  EXPECT_NEAR(p.time.microseconds(), 5668.405, 1e-3);
  EXPECT_NEAR(p.busbw_GBps, 331.495, 1e-3);
}

TEST(Rccl, Mi355xOneNodeAllReduceOneGiB) {
  // 8 x MI355X: transfer = 1.75 S / 403.2e9 = 4,660.34 us, time = 20 + 56.0 + 4,660.34 =
  // 4,736.34 us, busbw = 396.73 GB/s: the faster links give 403.2 / 336 = 1.2x the MI300X's
  // bandwidth term, not its latency.
  const Prediction p = all_reduce(amd_node("mi355x"), Bytes::gib(1));
  EXPECT_EQ(p.algo, Algorithm::Ring);
  EXPECT_EQ(p.proto, nccl::Proto::Simple);
  EXPECT_NEAR(p.time.microseconds(), 4736.338, 1e-3);
  EXPECT_NEAR(p.busbw_GBps, 396.730, 1e-3);
}

TEST(Rccl, EightByteAllReduceIsTheLatencyFloor) {
  // 8 B: ring / LL, baseLat 6.6 + 14 x hwLat[NVLink][Ring][LL] 0.6 = 15.0 us, plus 20 us launch;
  // the 8 bytes themselves take 1.75 x 8 B / 141 GB/s (LL's cap) = 0.0001 us. The same on both
  // GPUs: faster links do not shorten a step's latency.
  for (const char* system : {"mi300x", "mi355x"}) {
    const Prediction p = all_reduce(amd_node(system), Bytes(8));
    EXPECT_EQ(p.algo, Algorithm::Ring) << system;
    EXPECT_EQ(p.proto, nccl::Proto::LL) << system;
    EXPECT_NEAR(p.latency.microseconds(), 15.0, 1e-9) << system;
    EXPECT_NEAR(p.time.microseconds(), 35.0, 1e-3) << system;
  }
}

TEST(Rccl, TwoMi355xNodesAreBoundByTheirNics) {
  // Across nodes a ring's bus is min(xGMI x g/(g-1), NICs x search speed) = min(403.2 x 8/7 =
  // 460.8, 8 x 48 = 384): the eight 400G NICs, not the faster xGMI, set the pace.
  const Prediction p = all_reduce(amd_node("mi355x", 2), Bytes::gib(16));
  EXPECT_EQ(p.algo, Algorithm::Ring);
  EXPECT_NEAR(p.bus_GBps, 384.0, 1e-9);
}

}  // namespace
}  // namespace lockstep
