// The tree as NCCL's tuner ranks it across nodes of several GPUs: the tree graph NCCL's search
// builds (search.cc ncclTopoCompute: as many channels as the ring graph, at the NIC's speed,
// bwIntra raised on two nodes) and tuning.cc's bus bandwidth from it (docs/nccl-model.md "How
// NCCL ranks the tree"). Each figure is derived by hand below; Prediction::formula carries it:
// formula = launch + latency + S / (1e3 x algBw) / treeCorrectionFactor, and at 8 GiB
// (log2(2^33 >> 6) = 27, past the table's 23 entries) the factor is 1.
#include <gtest/gtest.h>

#include <optional>

#include "lockstep/nccl/cluster.hpp"
#include "lockstep/nccl/tuner.hpp"
#include "preset_request.hpp"

namespace lockstep {
namespace {

using nccl::Proto;

constexpr double kEightGiB = 8589934592.0;

NcclCluster cluster_of(const char* system, std::uint32_t nodes, const char* fabric = "") {
  return nccl_cluster(test::preset_of(system, fabric, nodes));
}

Prediction forced(const NcclCluster& c, Algorithm a, Proto p) {
  TunerRequest r;
  r.bytes = Bytes::gib(8);
  r.algo = a;
  r.proto = p;
  r.include_launch_overhead = false;
  return predict(c, r);
}

// The algorithm bandwidth (GB/s) NCCL's formula ranked the forced 8 GiB tree with.
double ranked_tree_algbw(const NcclCluster& c, Proto p) {
  const Prediction t = forced(c, Algorithm::Tree, p);
  return kEightGiB / ((t.formula - t.latency).microseconds() * 1e3);
}

TEST(TreeGraph, DgxA100OnTwoNodesRaisesTheChainsSpeedTo30) {
  // 8 A100 with 8 HDR NICs behind Gen4 x16 (24 GB/s as NCCL rates it): the ring graph has 8
  // channels at sm80's 24 GB/s (GraphSearch.DgxA100WithEightHdrNics); init.cc searches the tree
  // graph with min = max = 8 channels. Two nodes: search.cc's pass 2 raises bwIntra along
  // speedArrayInter (..., 24, 28, 30, 48) while bwIntra < 2 x 24 = 48 and the chains fit: a
  // GPU's NVSwitch link (12 x 20 = 240 GB/s) carries 8 x 7/8 = 7 channels, 7 x 28 = 196 and
  // 7 x 30 = 210 fit, 7 x 48 = 336 does not: bwIntra 30. tuning.cc (nNodes <= 2 takes bwIntra):
  //   busBw = 8 x 30 = 240; all-reduce min(240 x 0.92 = 220.8, 8 x perChMaxTreeBw 23.6 = 188.8)
  //   Simple: 188.8 x 0.5 = 94.4 GB/s of algorithm bandwidth
  //   LL128:  min(188.8 x 120/128 = 177.0, 8 x perChMaxTreeLL128Bw 20 = 160) x 0.5 = 80
  //   LL:     min(188.8 / 3.8 = 49.7, llMaxBw 22.5) x 0.5 = 11.25
  const NcclCluster c = cluster_of("dgx-a100", 2);
  EXPECT_NEAR(ranked_tree_algbw(c, Proto::Simple), 94.4, 1e-6);
  EXPECT_NEAR(ranked_tree_algbw(c, Proto::LL128), 80.0, 1e-6);
  EXPECT_NEAR(ranked_tree_algbw(c, Proto::LL), 11.25, 1e-6);
  // The ring: 8 x 24 = 192 GB/s of bus bandwidth, 192 x 16 / 30 = 102.4 algorithm bandwidth,
  // above the tree's 94.4 and 80: NCCL runs the ring Simple at 512 MiB and up, where its latency
  // (tens of us) is under 1% of the transfer (5.2 ms and up).
  const Prediction ring = forced(c, Algorithm::Ring, Proto::Simple);
  EXPECT_NEAR(kEightGiB / ((ring.formula - ring.latency).microseconds() * 1e3), 102.4, 1e-6);
  for (const std::uint64_t mib : {512u, 1024u, 4096u, 8192u}) {
    TunerRequest r;
    r.bytes = Bytes::mib(mib);
    const Prediction chosen = predict(c, r);
    EXPECT_EQ(chosen.algo, Algorithm::Ring) << mib;
    EXPECT_EQ(chosen.proto, Proto::Simple) << mib;
  }
  // The predicted time stays the model's own: the tree's physical bound (NVLink's 2 S per GPU
  // at 240 x 0.92 / 2 = 110.4) is faster than what NCCL ranks it with.
  const Prediction tree = forced(c, Algorithm::Tree, Proto::Simple);
  EXPECT_LT(tree.time - tree.fill, tree.formula);
}

TEST(TreeGraph, DgxA100BeyondTwoNodesTakesTheNicsSpeed) {
  // Four nodes: tuning.cc takes bwInter, 24: busBw 8 x 24 = 192; min(192 x 0.92 = 176.64,
  // 8 x perChMaxTreeBw(>= 4 nodes) 17.8 = 142.4) = 142.4, x 0.5 = 71.2.
  EXPECT_NEAR(ranked_tree_algbw(cluster_of("dgx-a100", 4), Proto::Simple), 71.2, 1e-6);
}

TEST(TreeGraph, HgxH100KeepsTheNicsSpeedAtTheTopOfTheArray) {
  // 8 H100 with 8 NDR NICs: 8 channels at sm90's 48 GB/s, the first entry of
  // sm90SpeedArrayInter, so pass 2 has no faster speed to try (speedIndex 0): bwIntra 48.
  //   2 nodes: busBw 8 x 48 = 384; min(353.28, 8 x 41.4 = 331.2) = 331.2
  //     Simple 165.6; LL128 min(331.2 x 120/128 = 310.5, 8 x 36.7 = 293.6) x 0.5 = 146.8
  //   4 nodes: min(353.28, 8 x 36 = 288) = 288: Simple 144; LL128 min(270, 8 x 29 = 232) / 2 = 116
  const NcclCluster two = cluster_of("hgx-h100", 2);
  EXPECT_NEAR(ranked_tree_algbw(two, Proto::Simple), 165.6, 1e-6);
  EXPECT_NEAR(ranked_tree_algbw(two, Proto::LL128), 146.8, 1e-6);
  const NcclCluster four = cluster_of("hgx-h100", 4);
  EXPECT_NEAR(ranked_tree_algbw(four, Proto::Simple), 144.0, 1e-6);
  EXPECT_NEAR(ranked_tree_algbw(four, Proto::LL128), 116.0, 1e-6);
}

TEST(TreeGraph, FourHgxH100RunNvlsTreeAt16MiBAsNcclRanksIt) {
  // 16 MiB on four HGX H100 (log2(2^24 >> 6) = 18: LL128's correction factor 0.9). The tree
  // with LL128, ranked at 116 GB/s (above): launch 20 + latency 14 + 2 (7 x 1.25 + log2(4) x
  // 8.5) = 65.5, + 16,777,216 / 116e3 / 0.9 = 160.70: 246.20 us. NVLS tree (the model's own
  // bandwidth: min(NVLink 370.8 x 0.85 / (1 + 1/8) = 280.16, the NICs' min(384, 16 x 45.5) / 2 =
  // 192)): 20 + 25 + 2 log2(4) x 20.9 = 108.6, + 16,777,216 / 192e3 = 87.38: 215.98 us. NVLS
  // tree runs; ranked with the model's own tree bandwidth (its LL128 173.81 GB/s: 16,777,216 /
  // 173.81e3 / 0.9 = 107.25, 192.75 us) the tree ran, a choice NCCL's formula does not make.
  const NcclCluster c = cluster_of("hgx-h100", 4);
  const auto at_16_mib = [&](std::optional<Algorithm> a, std::optional<Proto> p) {
    TunerRequest r;
    r.bytes = Bytes::mib(16);
    r.algo = a;
    r.proto = p;
    return predict(c, r);
  };
  const Prediction tree = at_16_mib(Algorithm::Tree, Proto::LL128);
  EXPECT_NEAR(tree.latency.microseconds(), 65.5, 1e-6);
  EXPECT_NEAR(tree.formula.microseconds(), 20 + 65.5 + 16777216 / 116e3 / 0.9, 1e-4);
  const Prediction nvls_tree = at_16_mib(Algorithm::NvlsTree, Proto::Simple);
  EXPECT_NEAR(nvls_tree.latency.microseconds(), 108.6, 1e-6);
  EXPECT_NEAR(nvls_tree.formula.microseconds(), 20 + 108.6 + 16777216 / 192e3, 1e-4);
  const Prediction chosen = at_16_mib({}, {});
  EXPECT_EQ(chosen.algo, Algorithm::NvlsTree);
  EXPECT_NEAR(chosen.formula.microseconds(), 215.98, 0.005);
}

TEST(TreeGraph, ForcedChannelsKeepTheModelsRanking) {
  // With NCCL_MIN/MAX_NCHANNELS forced (a request's channels) the formula is the model's own:
  // no tree graph term, transfer / correction factor (1 at 8 GiB).
  const NcclCluster c = cluster_of("dgx-a100", 2);
  TunerRequest r;
  r.bytes = Bytes::gib(8);
  r.algo = Algorithm::Tree;
  r.proto = Proto::Simple;
  r.channels = 16;
  r.include_launch_overhead = false;
  const Prediction t = predict(c, r);
  EXPECT_NEAR(t.formula.microseconds(), (t.latency + t.transfer).microseconds(), 1e-5);
}

}  // namespace
}  // namespace lockstep
