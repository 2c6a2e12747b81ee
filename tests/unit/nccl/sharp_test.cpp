// In-network reduction against hand-derived numbers: SHARP's aggregation tree as the fabric
// deepens, NVLS + SHARP bounded by the node's NICs, and NVLS across NVL72 racks. Constants are
// written out with their source (catalog, HARDWARE.md "NCCL cost model").
#include <gtest/gtest.h>

#include "lockstep/nccl/tuner.hpp"
#include "lockstep/topology/builder.hpp"
#include "lockstep/topology/presets.hpp"
#include "preset_request.hpp"

namespace lockstep {
namespace {

PresetCluster preset(const char* system, std::uint32_t nodes, const char* fabric = "",
                     bool sharp = false, std::uint32_t nics = 0) {
  return test::preset_of(system, fabric, nodes, 0, nics, 0, sharp);
}

Prediction predict_algo(const NcclCluster& c, Algorithm a, Bytes bytes) {
  TunerRequest r;
  r.bytes = bytes;
  r.algo = a;
  return predict(c, r);
}

TEST(Sharp, AggregationTreeDepthOnTwoAndThreeTierFabrics) {
  // HGX H100, 8 x NDR, Quantum-2 QM9700: radix 64, 130 ns port to port, 0.5 us of aggregation
  // per level (catalog). The preset's rail-optimised fabric puts an SU of min(32, 64/2) = 32
  // servers under each rail's leaf:
  //   32 nodes: one SU, the leaf is the tree's root: 1 level, nothing added;
  //   64 nodes: 2 SUs, 2 x 8 = 16 leaves <= 64 under one spine tier: 2 levels;
  //   512 nodes: 16 SUs, 128 leaves > 64: pods under a core tier: 3 levels.
  // Each level above the leaf adds 2 x 0.13 (up and down) + 0.5 = 0.76 us. CollNet Direct's
  // latency (tuning.cc): 2 (min(1, g-1) x 3.7 + (g-1) x 0.4) + 31 = 2 (3.7 + 2.8) + 31 = 44 us.
  const std::pair<std::uint32_t, double> cases[] = {{32, 44.0}, {64, 44.76}, {512, 45.52}};
  for (const auto& [nodes, latency_us] : cases) {
    const NcclCluster c = nccl_cluster(preset("hgx-h100", nodes, "ib-ndr", true));
    EXPECT_NEAR(predict_algo(c, Algorithm::CollNet, Bytes::mib(1)).latency.microseconds(),
                latency_us, 1e-9)
        << nodes << " nodes";
  }
  // The built fabric has the tiers the depth was derived from: its graph (read switch by switch:
  // the first rail's leaves, a switch above reaching them all) gives the same tree.
  for (const auto& [nodes, levels] :
       {std::pair{32u, 1u}, std::pair{64u, 2u}, std::pair{512u, 3u}}) {
    const PresetCluster p = preset("hgx-h100", nodes, "ib-ndr", true);
    const BuildResult built = build_topology(rail_optimized_args(p));
    ASSERT_TRUE(built.graph.has_value());
    EXPECT_EQ(nccl_cluster(*built.graph).sharp_levels, levels) << nodes << " nodes";
    EXPECT_EQ(nccl_cluster(p).sharp_levels, levels) << nodes << " nodes";
  }
  // HDR's Quantum QM8700 has 40 ports: SUs of 20 servers, 3 tiers past 5 SUs x 8 rails = 40
  // leaves, so 120 nodes (6 SUs, 48 leaves) already need a 3-level tree.
  EXPECT_EQ(nccl_cluster(preset("hgx-h100", 120, "ib-hdr", true)).sharp_levels, 3u);
  EXPECT_EQ(nccl_cluster(preset("hgx-h100", 100, "ib-hdr", true)).sharp_levels, 2u);
  // Ethernet switches have no SHARP: no tree, nothing to add.
  EXPECT_DOUBLE_EQ(nccl_cluster(preset("hgx-h100", 512, "roce-400g")).sharp_level_us, 0.0);
}

TEST(Sharp, NvlsWithSharpIsBoundByTheNodesNics) {
  // 2 x HGX H100 with SHARP, NVLS across nodes, S = 1 GiB. Per GPU NVLink carries S (1 + 1/8)
  // at 18 x 20.6 x 0.85 = 315.18 GB/s; the node's NICs carry S each way (the switches reduce) at
  // NICs x 48 GB/s (NCCL's search speed for 400G) x 0.85.
  //   8 x 400G: NICs 326.4 GB/s, NVLink 315.18 / 1.125 = 280.16 GB/s of S: NVLink binds.
  //   4 x 400G: NICs 163.2 GB/s < 280.16: the NICs bind (S, not S (1 + 1/8), goes through them).
  const double S = 1073741824.0;
  const NcclCluster eight = nccl_cluster(preset("hgx-h100", 2, "ib-ndr", true));
  const Prediction p8 = predict_algo(eight, Algorithm::NetReduce, Bytes::gib(1));
  EXPECT_NEAR(p8.transfer.microseconds(), S * 1.125 / 315.18e3, 1e-6);
  const NcclCluster four = nccl_cluster(preset("hgx-h100", 2, "ib-ndr", true, 4));
  ASSERT_EQ(four.nics_per_node, 4u);
  const Prediction p4 = predict_algo(four, Algorithm::NetReduce, Bytes::gib(1));
  EXPECT_NEAR(p4.transfer.microseconds(), S / 163.2e3, 1e-6);
  // Latency: NVLS's NVLink step 25 us + its network step 18 us, and a one-level SHARP tree.
  EXPECT_NEAR(p4.latency.microseconds(), 43.0, 1e-9);
}

TEST(Sharp, Nvl72TwoRacksNvlsTreeBoundAndWhatNcclRuns) {
  // 36 GB200 trays = 2 NVL72 racks = 2 NCCL nodes of 72 GPUs, 72 x 400G NICs each. NVLS tree on
  // request: NVLS inside the rack S (1 + 1/72) per GPU at 18 x 40.1 x 0.74 = 534.132 GB/s, i.e.
  // 526.81 GB/s of S; across the two racks min(72 x 48, 32 channels x 96 (perChMaxNVLSTreeBw,
  // Blackwell, 2 nodes)) = 3,072 GB/s (two nodes: S per node each way). NVLink binds.
  const NcclCluster c = nccl_cluster(preset("gb200-nvl72", 36));
  ASSERT_EQ(c.servers_per_node, 18u);
  const double S = 1073741824.0;
  const double nvls_GBps = 18 * 40.1 * 0.74 / (1 + 1.0 / 72);
  const Prediction tree = predict_algo(c, Algorithm::NvlsTree, Bytes::gib(1));
  EXPECT_NEAR(tree.transfer.microseconds(), S / (nvls_GBps * 1e3), 1e-6);
  // NCCL runs the ring across NVL72 racks (every public multi-rack log has the ring's latency
  // and NVLink bound): the tuner offers neither NVLS, NVLS tree nor tree there, at any size, but
  // NVLS in one rack, and the tree between HGX nodes.
  TunerRequest r;
  for (const Bytes bytes : {Bytes(8), Bytes::mib(16), Bytes::gib(1)}) {
    r.bytes = bytes;
    for (const Prediction& p : candidates(c, r)) EXPECT_EQ(p.algo, Algorithm::Ring);
  }
  EXPECT_EQ(predict(nccl_cluster(preset("gb200-nvl72", 18)), r).algo, Algorithm::NetReduce);
  r.bytes = Bytes(8);
  EXPECT_EQ(predict(nccl_cluster(preset("hgx-h100", 2)), r).algo, Algorithm::Tree);
  // The ring across racks: NVLink x g/(g-1) = 721.8 x 72/71 = 731.97 GB/s of bus bandwidth
  // (the NICs' 3,456 GB/s do not bind), well below one rack's NVLS.
  r.algo = Algorithm::Ring;
  r.proto = nccl::Proto::Simple;
  EXPECT_NEAR(predict(c, r).bus_GBps, 721.8 * 72 / 71, 1e-9);
}

}  // namespace
}  // namespace lockstep
