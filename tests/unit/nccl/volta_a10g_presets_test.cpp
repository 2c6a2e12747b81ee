// How NCCL sees dgx1-v100 (compute capability 7.0 on DGX-1's hybrid cube mesh) and a10g (AWS
// g5.48xlarge: 8.6 over PCIe): the rings its search finds on unequal NVLink pairs, the Volta row
// of its tables, and one large ring all-reduce priced from first principles (docs/presets.md),
// in the preset's view and the built graph's alike.
#include <gtest/gtest.h>

#include <algorithm>

#include "lockstep/nccl/cluster.hpp"
#include "lockstep/nccl/constants.hpp"
#include "lockstep/nccl/sweep.hpp"
#include "lockstep/nccl/tuner.hpp"
#include "lockstep/topology/builder.hpp"
#include "lockstep/topology/presets.hpp"
#include "preset_views.hpp"

namespace lockstep {
namespace {

using test::from_graph;
using test::from_preset;
using test::kGiB;
using test::ring_simple_all_reduce;

TEST(VoltaA10gNccl, VoltaRowOfNcclsTables) {
  // tuning.cc's Volta row: llMaxBws {39.0, 39.0, 20.4}, perChMaxTreeBws {26.5, 18.5, 10.0},
  // perChMaxRingLL128Bws and perChMaxTreeLL128Bws 20.0; topo.h SM70_NVLINK_BW 20.0.
  const auto v = nccl::Generation::Volta;
  EXPECT_DOUBLE_EQ(nccl::ll_max_bw(v, 1), 39.0);
  EXPECT_DOUBLE_EQ(nccl::ll_max_bw(v, 4), 20.4);
  EXPECT_DOUBLE_EQ(nccl::tree_simple_per_channel_bw(v, 2), 18.5);
  EXPECT_DOUBLE_EQ(nccl::tree_simple_per_channel_bw(v, 8), 10.0);
  EXPECT_DOUBLE_EQ(nccl::ring_ll128_per_channel_bw(v), 20.0);
  EXPECT_DOUBLE_EQ(nccl::tree_ll128_per_channel_bw(v, 1), 20.0);
  EXPECT_DOUBLE_EQ(nccl::nvlink_bw_per_link(v), 20.0);
  EXPECT_STREQ(nccl::to_string(v), "volta");
  // The rows after it did not move: Ampere's are still Ampere's.
  EXPECT_DOUBLE_EQ(nccl::ll_max_bw(nccl::Generation::Ampere, 1), 87.7);
  EXPECT_DOUBLE_EQ(nccl::tree_simple_per_channel_bw(nccl::Generation::Hopper, 1), 38.7);
}

TEST(VoltaA10gNccl, Dgx1RingsUseEveryLinkOnce) {
  for (const NcclCluster& c : {from_preset("dgx1-v100", 2), from_graph("dgx1-v100", 2)}) {
    EXPECT_EQ(c.generation, nccl::Generation::Volta);
    EXPECT_EQ(c.intra_path, nccl::Path::NvLink);
    // Each ring takes one of a GPU's 6 links out, so at most 6 rings at 20 GB/s; 6 fit: the
    // doubly linked cycle 0-3-2-1-5-6-7-4 twice each way and the singly linked 0-1-3-7-5-4-6-2
    // once each way. 6 x 20 = 120 GB/s.
    EXPECT_DOUBLE_EQ(c.intra_GBps, 120.0);
    EXPECT_TRUE(c.ll128_default);  // 7.0 over NVLink
    EXPECT_FALSE(c.amd_host);
    EXPECT_EQ(c.nics_per_node, 4u);
    EXPECT_DOUBLE_EQ(c.nic_GBps, 12.5);      // EDR 100 Gb/s
    EXPECT_DOUBLE_EQ(c.gpu_nic_GBps, 12.0);  // PCIe Gen3 x16: 16 x 60 / 80
  }
  // GPUs 0-3: every GPU has 4 or 5 links among them; 0-1-2-3 and 0-2-1-3, each way, are 4 rings
  // that fit (0-3 and 1-2 carry two), and GPU 0's 4 links allow no more: 80 GB/s.
  EXPECT_DOUBLE_EQ(from_preset("dgx1-v100", 1, 4).intra_GBps, 80.0);
  // GPUs 0-1: one link, one ring each way: 20 GB/s.
  EXPECT_DOUBLE_EQ(from_preset("dgx1-v100", 1, 2).intra_GBps, 20.0);
  // GPUs 0-5: 4 and 5 reach the rest only by 4-0 (2 links) and 5-1 (2), and each other by one
  // link, so every ring crosses 4-5: one per direction, 40 GB/s.
  EXPECT_DOUBLE_EQ(from_preset("dgx1-v100", 1, 6).intra_GBps, 40.0);
  // GPUs 0-4: GPU 4 has one linked peer (0), no NVLink ring; its hops relay through GPU 0
  // (PATH_NVB), whose 2 links to GPU 4 carry 2 rings: 40 GB/s (nvlink_paths_test.cpp).
  EXPECT_DOUBLE_EQ(from_preset("dgx1-v100", 1, 5).intra_GBps, 40.0);
}

TEST(VoltaA10gNccl, Dgx1AllReduceFromFirstPrinciples) {
  // One node, ring Simple, 1 GiB: 2 x 7/8 x 2^30 B at 120 GB/s = 15,658.73 us; latency = base
  // 8.4 + 14 NVLink steps x 3.4 us = 56.0 us.
  const Prediction one = ring_simple_all_reduce(from_preset("dgx1-v100", 1), kGiB);
  EXPECT_DOUBLE_EQ(one.bus_GBps, 120.0);
  EXPECT_NEAR(one.transfer.microseconds(), 2.0 * 7 / 8 * kGiB / 120e3, 1e-6);
  EXPECT_NEAR(one.latency.microseconds(), 8.4 + 14 * 3.4, 1e-9);
  // Two nodes: each NIC's channel at min(EDR 12.5, PCIe Gen3 12) = 12 GB/s, in the search's
  // speeds; 4 NICs carry every channel: 48 GB/s per node, below the NVLink side's 120 x 8/7.
  const NcclCluster two = from_preset("dgx1-v100", 2);
  EXPECT_DOUBLE_EQ(two.node_net_GBps(), 48.0);
  const Prediction p = ring_simple_all_reduce(two, kGiB);
  EXPECT_DOUBLE_EQ(p.bus_GBps, 48.0);
  EXPECT_NEAR(p.transfer.microseconds(), 2.0 * 15 / 16 * kGiB / 48e3, 1e-6);
  // 1.4 x (8.4 + 28 x max(NVLink 3.4, Intel host 3 x 1) + 2 x IB's 14) = 1.4 x 131.6 us.
  EXPECT_NEAR(p.latency.microseconds(), 1.4 * (8.4 + 28 * 3.4 + 2 * 14.0), 1e-9);
}

// The engines on the built graph: in rank order the ring would cross 3 -> 4 and 7 -> 0, which
// have no NVLink, and its single-link hops would bound it at one link (20 GB/s busbw); walking
// NCCL's 6 rings, every link carries its share. One node: the model's 15,734.73 us (the
// CLI test collective.dgx1_v100_ring by hand). Two nodes: 48 channels (6 rings x 8 entry GPUs)
// give every EDR NIC as many channels out as in, so the 4 NICs' 48 GB/s holds.
TEST(VoltaA10gNccl, EnginesWalkNcclsRingsOverTheMesh) {
  for (const std::uint32_t nodes : {1u, 2u}) {
    const PresetCluster preset = resolve_preset({.system = "dgx1-v100", .nodes = nodes});
    const BuildResult built = build_topology(rail_optimized_args(preset));
    CollectiveSweep s;
    s.op = CollectiveOp::AllReduce;
    s.algo = Algorithm::Ring;
    s.proto = nccl::Proto::Simple;
    s.min_bytes = s.max_bytes = Bytes::gib(1);
    const Prediction model = ring_simple_all_reduce(nccl_cluster(preset), kGiB);
    for (const char* engine : {"analytical", "flow"}) {
      s.engine = engine;
      const double us =
          run_collective_sweep(s, nccl_cluster(preset), &*built.graph).at(0).time.microseconds();
      EXPECT_NEAR(us / model.time.microseconds(), 1.0, 0.001) << engine << " on " << nodes;
    }
  }
}

TEST(VoltaA10gNccl, A10gRingCrossesPcie) {
  constexpr double kGen4Nccl = 16 * 120.0 / 80;  // 24 GB/s
  for (const NcclCluster& c : {from_preset("a10g", 2), from_graph("a10g", 2)}) {
    EXPECT_EQ(c.generation, nccl::Generation::Ampere);  // 8.6: tuning.cc's Ampere row
    EXPECT_EQ(c.intra_path, nccl::Path::Pcie);
    EXPECT_DOUBLE_EQ(c.intra_GBps, kGen4Nccl);
    EXPECT_FALSE(c.ll128_default);  // not on 8.6, nor over PCIe
    EXPECT_TRUE(c.amd_host);        // 2nd generation AMD EPYC
    EXPECT_EQ(c.nics_per_node, 1u);
    EXPECT_DOUBLE_EQ(c.nic_GBps, 12.5);  // 100 Gb/s EFA
  }
  // One node: 2 x 7/8 x 2^30 B at 24 GB/s = 78,293.67 us; latency = 8.4 + 14 x PCIe's 5.7 us.
  const Prediction one = ring_simple_all_reduce(from_preset("a10g", 1), kGiB);
  EXPECT_DOUBLE_EQ(one.bus_GBps, kGen4Nccl);
  EXPECT_NEAR(one.transfer.microseconds(), 2.0 * 7 / 8 * kGiB / (kGen4Nccl * 1e3), 1e-6);
  EXPECT_NEAR(one.latency.microseconds(), 8.4 + 14 * 5.7, 1e-9);
  // Two nodes: the one NIC's 12.5 GB/s searched at Ampere's 12 carries every channel: 12 GB/s.
  const Prediction two = ring_simple_all_reduce(from_preset("a10g", 2), kGiB);
  EXPECT_DOUBLE_EQ(two.bus_GBps, 12.0);
}

}  // namespace
}  // namespace lockstep
