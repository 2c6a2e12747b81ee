// The NCCL cost model against hand-derived numbers. Constants are written out with their source
// (HARDWARE.md, "NCCL cost model") so that a changed catalog value shows up here.
#include "lockstep/nccl/tuner.hpp"

#include <gtest/gtest.h>

#include "lockstep/core/error.hpp"
#include "lockstep/topology/builder.hpp"
#include "lockstep/topology/presets.hpp"

namespace lockstep {
namespace {

NcclCluster preset_cluster(const char* system, std::uint32_t nodes, std::uint32_t gpus = 0,
                           const char* fabric = "", bool sharp = false) {
  PresetRequest r;
  r.system = system;
  r.fabric = fabric;
  r.nodes = nodes;
  r.gpus_per_node = gpus;
  r.sharp = sharp;
  return nccl_cluster(resolve_preset(r));
}

TEST(Tuner, RingAllReduceSimpleFromTheFormula) {
  // 8 x H100 in one NVSwitch node, ring / Simple, S = 1 GiB.
  //   latency  = baseLat[Ring][Simple] + 2(n-1) x hwLat[NVLink][Ring][Simple]
  //            = 8.4 + 14 x 3.4 = 56.0 us
  //   bus bw   = 18 NVLinks x 20.6 GB/s = 370.8 GB/s
  //   transfer = 2(n-1)/n x S / bw = 1.75 x 1073741824 B / 370.8e9 B/s = 5067.37 us
  //   time     = 20 us launch overhead + 56.0 + 5067.37
  const NcclCluster c = preset_cluster("hgx-h100", 1);
  TunerRequest r;
  r.bytes = Bytes::gib(1);
  r.algo = Algorithm::Ring;
  r.proto = nccl::Proto::Simple;
  const Prediction p = predict(c, r);
  const double transfer_us = 1.75 * 1073741824.0 / 370.8e9 * 1e6;
  EXPECT_NEAR(p.latency.microseconds(), 56.0, 1e-6);
  EXPECT_NEAR(p.transfer.microseconds(), transfer_us, 1e-5);
  EXPECT_NEAR(p.time.microseconds(), 20.0 + 56.0 + transfer_us, 1e-5);
  EXPECT_NEAR(p.bus_GBps, 370.8, 1e-9);
}

TEST(Tuner, RingLLLatencyAndCap) {
  // 8 B ring / LL on 8 x H100: 6.6 + 14 x 0.6 = 15.0 us of latency; the LL bandwidth is
  // min(llMax Hopper 1 node = 141, 0.5 x 370.8 = 185.4) = 141 GB/s.
  const NcclCluster c = preset_cluster("hgx-h100", 1);
  TunerRequest r;
  r.bytes = Bytes(8);
  r.algo = Algorithm::Ring;
  r.proto = nccl::Proto::LL;
  const Prediction p = predict(c, r);
  EXPECT_NEAR(p.latency.microseconds(), 15.0, 1e-6);
  EXPECT_NEAR(p.bus_GBps, 141.0, 1e-9);
}

TEST(Tuner, PicksLLForTinyAndSimpleForLargeOn8xH100) {
  const NcclCluster c = preset_cluster("hgx-h100", 1);
  TunerRequest r;
  r.bytes = Bytes(8);
  EXPECT_EQ(predict(c, r).proto, nccl::Proto::LL);
  r.bytes = Bytes::gib(4);
  EXPECT_EQ(predict(c, r).proto, nccl::Proto::Simple);
  r.algo = Algorithm::Ring;  // also with the ring forced, as nccl-tests runs with NCCL_ALGO=Ring
  EXPECT_EQ(predict(c, r).proto, nccl::Proto::Simple);
  r.bytes = Bytes(8);
  EXPECT_EQ(predict(c, r).proto, nccl::Proto::LL);
}

TEST(Tuner, BusBandwidthFactorsAsNcclTests) {
  const NcclCluster c = preset_cluster("hgx-h100", 1);
  TunerRequest r;
  r.bytes = Bytes::mib(64);
  r.algo = Algorithm::Ring;
  // busbw = algbw x 2(n-1)/n = algbw x 1.75 for all-reduce, x 7/8 for all-gather (n = 8),
  // algbw = S / time.
  Prediction p = predict(c, r);
  EXPECT_NEAR(p.algbw_GBps, r.bytes.as_double() / p.time.seconds() / 1e9, 1e-9);
  EXPECT_NEAR(p.busbw_GBps, p.algbw_GBps * 1.75, 1e-9);
  r.op = CollectiveOp::AllGather;
  p = predict(c, r);
  EXPECT_NEAR(p.busbw_GBps, p.algbw_GBps * 7.0 / 8.0, 1e-9);
  r.op = CollectiveOp::Broadcast;
  p = predict(c, r);
  EXPECT_NEAR(p.busbw_GBps, p.algbw_GBps, 1e-12);
}

TEST(Tuner, TwoNodeTreeOneGpuPerNode) {
  // 2 nodes x 1 H100 on RoCE 400G, tree / Simple (one NIC per GPU):
  //   latency = 8.4 + 2 x (0 x intra + log2(2) x hwLat[Net][Tree][Simple] = 14) = 36.4 us
  //   NIC bw as NCCL's search sees it: 48 GB/s (sm90 speed array, largest <= 50)
  //   bw = min(0.92 x 48, 2 channels x 41.4) = 44.16 GB/s; with two nodes the tree is one
  //   link used both ways, so algbw = bw (S per direction).
  const NcclCluster c = preset_cluster("hgx-h100", 2, 1, "roce-400g");
  TunerRequest r;
  r.bytes = Bytes::mib(32);
  r.algo = Algorithm::Tree;
  r.proto = nccl::Proto::Simple;
  const Prediction p = predict(c, r);
  EXPECT_NEAR(p.latency.microseconds(), 36.4, 1e-6);
  EXPECT_NEAR(p.bus_GBps, 44.16, 1e-9);
  EXPECT_NEAR(p.transfer.microseconds(), 33554432.0 / 44.16e3, 1e-5);
}

TEST(Tuner, MultiNodeRingIsLimitedByTheNodesNics) {
  // DGX A100 (8 x HDR 200G = 25 GB/s each; NCCL's search: 24 GB/s) on 4 nodes: the ring's bus
  // bandwidth is min(NVLink 12 x 20 = 240, 8 x 24 = 192) = 192 GB/s (nccl #1576 quotes ~192).
  const NcclCluster c = preset_cluster("dgx-a100", 4);
  EXPECT_DOUBLE_EQ(c.node_net_GBps(), 192.0);
  TunerRequest r;
  r.bytes = Bytes::gib(8);
  r.algo = Algorithm::Ring;
  r.proto = nccl::Proto::Simple;
  EXPECT_NEAR(predict(c, r).bus_GBps, 192.0, 1e-9);
}

TEST(Tuner, NicSpeedIsCappedByThePcieLinkToIt) {
  // HGX B200 with 8 x XDR 800G (100 GB/s each) behind PCIe Gen5 x16, which NCCL rates
  // 16 lanes x 240 / 80 = 48 GB/s (topo.cc): the search takes the GPU-to-NIC path's narrowest
  // link, 48, and Blackwell's speed array gives 48 (96 needs 96): 8 x 48 = 384 GB/s per node.
  const NcclCluster xdr = preset_cluster("hgx-b200", 4, 0, "ib-xdr");
  EXPECT_DOUBLE_EQ(xdr.gpu_nic_GBps, 48.0);
  EXPECT_DOUBLE_EQ(xdr.nic_path_GBps(), xdr.gpu_nic_GBps);
  EXPECT_DOUBLE_EQ(xdr.node_net_GBps(), 8 * 48.0);
  // A 400G NIC (50 GB/s) is above it too: 8 x 48.
  const NcclCluster ndr = preset_cluster("hgx-b200", 4, 0, "ib-ndr");
  EXPECT_DOUBLE_EQ(ndr.nic_path_GBps(), 48.0);
  EXPECT_DOUBLE_EQ(ndr.node_net_GBps(), 8 * 48.0);
}

TEST(Tuner, HalvingDoublingAddsItsNvlinkAndNetworkPhases) {
  // DGX A100 x 4 nodes (NVLink 240 GB/s per GPU, node NICs 192 GB/s), S = 1 GiB, Simple. The
  // all-reduce pairs nearest ranks first: log2(8) steps per half in the node move
  // 2(g-1)/g S = 1.75 S per GPU at 240 GB/s, then log2(4) steps per half across nodes move
  // 2(N-1)/N x S/g per GPU, 1.5 S per node at 192 GB/s; the steps do not overlap:
  //   transfer = 1.75 x 1073741824 / 240e9 + 1.5 x 1073741824 / 192e9 = 7829.37 + 8388.61 us.
  const NcclCluster c = preset_cluster("dgx-a100", 4);
  TunerRequest r;
  r.bytes = Bytes::gib(1);
  r.algo = Algorithm::HalvingDoubling;
  r.proto = nccl::Proto::Simple;
  const double S = 1073741824.0;
  EXPECT_NEAR(predict(c, r).transfer.microseconds(), (1.75 * S / 240e9 + 1.5 * S / 192e9) * 1e6,
              1e-3);
}

TEST(Tuner, ChannelsShrinkForSmallMessages) {
  // Ring LL over 8 ranks: 512 threads x (8 x 8) bytes per thread per channel; an 8-byte message
  // keeps one channel, 1 GiB keeps NCCL's 32 channels on an H100 node.
  const NcclCluster c = preset_cluster("hgx-h100", 1);
  TunerRequest r;
  r.algo = Algorithm::Ring;
  r.bytes = Bytes(8);
  EXPECT_EQ(predict(c, r).channels, 1u);
  r.bytes = Bytes::gib(1);
  EXPECT_EQ(predict(c, r).channels, 32u);
}

TEST(Tuner, TreeCorrectionFactorByLogSize) {
  using nccl::Proto;
  // logSize = log2(bytes / 64): 63 B is below the table, 64 B its first entry, 256 MiB (2^22)
  // its last, 512 MiB past it.
  EXPECT_EQ(nccl::tree_correction_factor(Proto::Simple, 63), 1.0);
  EXPECT_EQ(nccl::tree_correction_factor(Proto::Simple, 64), 0.9);
  EXPECT_EQ(nccl::tree_correction_factor(Proto::LL, 256 << 10), 0.4);      // 2^12
  EXPECT_EQ(nccl::tree_correction_factor(Proto::LL, 1 << 20), 0.5);        // 2^14
  EXPECT_EQ(nccl::tree_correction_factor(Proto::LL128, 2 << 20), 0.6);     // 2^15
  EXPECT_EQ(nccl::tree_correction_factor(Proto::Simple, 16 << 20), 0.7);   // 2^18
  EXPECT_EQ(nccl::tree_correction_factor(Proto::LL128, 32 << 20), 0.9);    // 2^19
  EXPECT_EQ(nccl::tree_correction_factor(Proto::Simple, 256 << 20), 0.9);  // 2^22
  EXPECT_EQ(nccl::tree_correction_factor(Proto::Simple, 512 << 20), 1.0);
}

// NCCL ranks the tree with its own bandwidth x the correction factor (and no fill): 16 x 4 H100
// on Slingshot at 32 MiB, the tree with LL128 is faster than NVLS tree by the model's time
// less its fill, but slower by NCCL's formula, so NVLS tree runs. The formula's tree bandwidth
// comes from NCCL's tree graph (docs/nccl-model.md "How NCCL ranks the tree"): 4 NICs of 200G
// searched at sm90's 24 GB/s, 4 rings (8 channels after duplication), so the tree graph has 4
// channels; beyond two nodes tuning.cc takes bwInter: busBw = 4 x 24 = 96, min(96 x 0.92 =
// 88.32, 4 x perChMaxTreeBw 36) = 88.32, LL128 min(88.32 x 120/128 = 82.8, 4 x 29) = 82.8,
// algBw 82.8 x 0.5 = 41.4 GB/s; at 32 MiB (log2(2^25 >> 6) = 19) LL128's factor is 0.9:
// formula = launch + latency + 33,554,432 / 41.4e3 / 0.9 = ... + 900.553 us.
TEST(Tuner, TreeRankedWithNcclsCorrectionFactor) {
  const NcclCluster c = preset_cluster("hgx-h100", 16, 4, "slingshot");
  TunerRequest r;
  r.bytes = Bytes::mib(32);
  r.algo = Algorithm::Tree;
  r.proto = nccl::Proto::LL128;
  const Prediction tree = predict(c, r);
  r.algo = Algorithm::NvlsTree;
  r.proto = {};
  const Prediction nvls_tree = predict(c, r);
  const auto without_fill = [](const Prediction& p) { return (p.time - p.fill).microseconds(); };
  EXPECT_LT(without_fill(tree), without_fill(nvls_tree));
  const double launch_and_latency = without_fill(tree) - tree.transfer.microseconds();
  EXPECT_NEAR(tree.formula.microseconds(), launch_and_latency + 33554432 / 41.4e3 / 0.9, 1e-5);
  EXPECT_NEAR(nvls_tree.formula.microseconds(), without_fill(nvls_tree), 1e-6);
  EXPECT_GT(tree.formula, nvls_tree.formula);
  r.algo = {};
  EXPECT_EQ(predict(c, r).algo, Algorithm::NvlsTree);
}

TEST(Tuner, TimeGrowsWithSize) {
  const NcclCluster c = preset_cluster("hgx-h100", 16);
  TunerRequest r;
  Time last;
  for (std::uint64_t s = 8; s <= (std::uint64_t{1} << 33); s *= 4) {
    r.bytes = Bytes(s);
    const Time t = predict(c, r).time;
    EXPECT_GT(t, last) << s;
    last = t;
  }
}

TEST(Tuner, RejectsAlgorithmsTheClusterCannotRun) {
  TunerRequest r;
  r.bytes = Bytes::mib(1);
  r.algo = Algorithm::NetReduce;  // A100 NVSwitch has no NVLink SHARP
  EXPECT_THROW(predict(preset_cluster("dgx-a100", 1), r), InputError);
  r.algo = Algorithm::CollNet;  // SHARP not enabled
  EXPECT_THROW(predict(preset_cluster("hgx-h100", 4), r), InputError);
  EXPECT_NO_THROW(predict(preset_cluster("hgx-h100", 4, 0, "ib-ndr", true), r));
  r.algo = Algorithm::Tree;
  r.op = CollectiveOp::AllGather;
  try {
    predict(preset_cluster("hgx-h100", 4), r);
    FAIL() << "tree all_gather accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "algo");
  }
}

TEST(Tuner, ParsesNames) {
  EXPECT_EQ(nccl::parse_algorithm("nvls_tree"), Algorithm::NvlsTree);
  EXPECT_EQ(nccl::parse_protocol("ll128"), nccl::Proto::LL128);
  EXPECT_EQ(nccl::parse_algorithm("auto"), std::nullopt);
  EXPECT_EQ(nccl::parse_protocol("auto"), std::nullopt);
  EXPECT_THROW(nccl::parse_algorithm("rings"), InputError);
  EXPECT_THROW(nccl::parse_protocol("fast"), InputError);
  // The model's algorithms are the programs' (one enum): NVLS is the in-network reduction, which
  // NCCL spells nvls and the collective layer netreduce; every other name is the same.
  EXPECT_EQ(nccl::parse_algorithm("nvls"), Algorithm::NetReduce);
  EXPECT_STREQ(nccl::algorithm_name(Algorithm::NetReduce), "nvls");
  EXPECT_STREQ(nccl::algorithm_name(std::nullopt), "auto");
  for (const char* name : {"ring", "tree", "nvls_tree", "collnet", "pat", "halving_doubling",
                           "direct", "hierarchical", "torus_ring"}) {
    EXPECT_STREQ(to_string(*nccl::parse_algorithm(name)), name);
    EXPECT_STREQ(nccl::algorithm_name(nccl::parse_algorithm(name)), name);
  }
  try {
    nccl::parse_algorithm("spiral", "--algo");
    FAIL() << "unknown algorithm accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--algo: unknown algorithm 'spiral' (expected one of auto, ring, tree, nvls, "
              "nvls_tree, collnet, pat, halving_doubling, direct, hierarchical, torus_ring)");
  }
}

TEST(Tuner, Nvl72RackIsOneNcclNode) {
  // 36 GB200 trays = 2 racks: NCCL sees 2 nodes of 72 GPUs with 18 x 4 NICs each.
  const NcclCluster c = preset_cluster("gb200-nvl72", 36);
  EXPECT_EQ(c.nodes, 2u);
  EXPECT_EQ(c.gpus_per_node, 72u);
  EXPECT_EQ(c.nics_per_node, 72u);
  EXPECT_TRUE(c.nvls);
}

TEST(Tuner, ClusterFromAGraphMatchesThePreset) {
  // The same cluster seen from its built graph: an NVL72 rack is one node either way.
  for (const auto& [system, nodes] : {std::pair{"hgx-h100", 2u}, std::pair{"gb200-nvl72", 36u}}) {
    PresetRequest r;
    r.system = system;
    r.nodes = nodes;
    const PresetCluster p = resolve_preset(r);
    const BuildResult built = build_topology(rail_optimized_args(p));
    ASSERT_TRUE(built.graph.has_value());
    const NcclCluster from_graph = nccl_cluster(*built.graph);
    const NcclCluster from_preset = nccl_cluster(p);
    EXPECT_EQ(from_graph.nodes, from_preset.nodes) << system;
    EXPECT_EQ(from_graph.gpus_per_node, from_preset.gpus_per_node) << system;
    EXPECT_EQ(from_graph.nics_per_node, from_preset.nics_per_node) << system;
    EXPECT_DOUBLE_EQ(from_graph.nic_GBps, from_preset.nic_GBps) << system;
    EXPECT_DOUBLE_EQ(from_graph.intra_GBps, from_preset.intra_GBps) << system;
    EXPECT_EQ(from_graph.nvls, from_preset.nvls) << system;
  }
}

TEST(Tuner, NeverPicksATimePastTheRangeAsFastest) {
  // Two H100 nodes whose NICs run at the slowest rate lockstep accepts (238,418.6 B/s), every
  // size from 1 B to 2^62 B: whatever the model's times, none is negative (they wrapped to
  // negative and won the race), the candidates come in NCCL's order (fastest by its formula,
  // which has no fill: a pick may be slower than another candidate), and the pick is finite
  // whenever any candidate is; the largest sizes leave the range.
  NcclCluster c = preset_cluster("hgx-h100", 2);
  c.nic_GBps = 1e12 / 0x1p22 / 1e9;
  bool saw_infinite = false, saw_mixed = false;
  for (int k = 0; k <= 62; ++k) {
    TunerRequest r;
    r.bytes = Bytes(std::uint64_t{1} << k);
    const std::vector<Prediction> all = candidates(c, r);
    ASSERT_FALSE(all.empty());
    bool any_finite = false, any_infinite = false;
    for (std::size_t i = 0; i < all.size(); ++i) {
      EXPECT_GE(all[i].time, Time::zero()) << "2^" << k << " B";
      if (i > 0) {
        EXPECT_LE(all[i - 1].formula, all[i].formula) << "2^" << k << " B";
      }
      any_finite = any_finite || all[i].time.is_finite();
      any_infinite = any_infinite || !all[i].time.is_finite();
    }
    saw_infinite = saw_infinite || any_infinite;
    saw_mixed = saw_mixed || (any_finite && any_infinite);
    const Prediction p = predict(c, r);
    EXPECT_EQ(p.time.is_finite(), any_finite) << "2^" << k << " B";
  }
  EXPECT_TRUE(saw_infinite);
  EXPECT_TRUE(saw_mixed);  // a size where the pick had to pass over an infinite candidate
}

}  // namespace
}  // namespace lockstep
