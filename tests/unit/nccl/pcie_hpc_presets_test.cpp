// How NCCL sees the PCIe and HPC-centre presets (l40s, a100-pcie, perlmutter): the intra-node
// ring's bus bandwidth cap, the NIC rate each GPU gets, and one large ring all-reduce priced
// from first principles (docs/presets.md), in the preset's view and the built graph's alike.
#include <gtest/gtest.h>

#include "lockstep/nccl/cluster.hpp"
#include "lockstep/nccl/tuner.hpp"
#include "lockstep/topology/presets.hpp"
#include "preset_views.hpp"

namespace lockstep {
namespace {

using test::from_graph;
using test::from_preset;
using test::kGiB;
using test::ring_simple_all_reduce;
// PCIe Gen4 x16 as NCCL rates it (topo.cc): width x kvDictPciGen / 80 = 16 x 120 / 80.
constexpr double kGen4Nccl = 16 * 120.0 / 80;  // 24 GB/s

TEST(PcieHpcPresetsNccl, L40sRingCrossesPcie) {
  for (const NcclCluster& c : {from_preset("l40s", 2), from_graph("l40s", 2)}) {
    EXPECT_EQ(c.generation, nccl::Generation::Ampere);  // sm_89: tuning.cc's Ampere row
    EXPECT_EQ(c.intra_path, nccl::Path::Pcie);
    EXPECT_DOUBLE_EQ(c.intra_GBps, kGen4Nccl);
    EXPECT_EQ(c.nics_per_node, 4u);
    EXPECT_DOUBLE_EQ(c.nic_GBps, 50.0);  // 400 Gb/s
    EXPECT_FALSE(c.ll128_default);       // not on compute capability 8.9, nor over PCIe
    EXPECT_FALSE(c.nvls);
  }
  // The NIC rate per GPU: 4 x 400 Gb/s over 8 GPUs = 200 Gb/s (the RA's "200").
  const PresetCluster p = resolve_preset({.system = "l40s", .nodes = 2});
  EXPECT_DOUBLE_EQ(p.nic_speed.gigabits_per_second() * p.nics_per_node / p.gpus_per_node, 200.0);
}

TEST(PcieHpcPresetsNccl, L40sOneNodeAllReduceFromFirstPrinciples) {
  // One node of 8, ring Simple, 1 GiB: every GPU pushes 2 x 7/8 x 2^30 B through its PCIe link
  // at 24 GB/s = 78,293.67 us; latency = base 8.4 + 14 steps x PCIe's 5.7 us = 88.2 us.
  const Prediction p = ring_simple_all_reduce(from_preset("l40s", 1), kGiB);
  EXPECT_DOUBLE_EQ(p.bus_GBps, kGen4Nccl);
  EXPECT_NEAR(p.transfer.microseconds(), 2.0 * 7 / 8 * kGiB / (kGen4Nccl * 1e3), 1e-6);
  EXPECT_NEAR(p.latency.microseconds(), 8.4 + 14 * 5.7, 1e-9);
  EXPECT_GE(p.time.microseconds(), 20 + 88.2 + 78'293.67 - 0.01);
  // The busbw nccl-tests would print is below the 24 GB/s cap, and not by much at 1 GiB.
  EXPECT_LT(p.busbw_GBps, kGen4Nccl);
  EXPECT_GT(p.busbw_GBps, 0.99 * kGen4Nccl);
}

TEST(PcieHpcPresetsNccl, TunerLeavesLl128WhereNcclDisablesIt) {
  // 1 MiB on one node of 8 over PCIe Gen4: LL128's ring would be the fastest (0.92 x 24 GB/s
  // for 2 x 7/8 MiB, about 155 us against Simple's 188 and LL's 197), but NCCL's tuner chooses
  // among LL and Simple only.
  TunerRequest r;
  r.bytes = Bytes(1024 * 1024);
  EXPECT_NE(predict(from_preset("l40s", 1), r).proto, nccl::Proto::LL128);
  EXPECT_NE(predict(from_preset("a100-pcie", 1), r).proto, nccl::Proto::LL128);
  // Asked for (NCCL_PROTO=LL128) it still runs.
  r.proto = nccl::Proto::LL128;
  EXPECT_EQ(predict(from_preset("l40s", 1), r).proto, nccl::Proto::LL128);
  // One bridged A100 pair meets over NVLink: LL128 is NCCL's to pick there.
  EXPECT_TRUE(from_preset("a100-pcie", 1, 2).ll128_default);
}

TEST(PcieHpcPresetsNccl, A100PciePairsAndPcieBetween) {
  for (const NcclCluster& c : {from_preset("a100-pcie", 2), from_graph("a100-pcie", 2)}) {
    EXPECT_EQ(c.generation, nccl::Generation::Ampere);
    EXPECT_EQ(c.intra_path, nccl::Path::Pcie);
    EXPECT_DOUBLE_EQ(c.intra_GBps, kGen4Nccl);
    EXPECT_EQ(c.nics_per_node, 4u);
    EXPECT_DOUBLE_EQ(c.nic_GBps, 25.0);  // HDR 200 Gb/s
  }
  // One bridged pair: 12 NVLink 3 links x SM80's 20.0 GB/s = 240 GB/s.
  const NcclCluster pair = from_preset("a100-pcie", 1, 2);
  EXPECT_EQ(pair.intra_path, nccl::Path::NvLink);
  EXPECT_DOUBLE_EQ(pair.intra_GBps, 240.0);
  // Its 1 GiB all-reduce: 2 x 1/2 x 2^30 B at 240 GB/s = 4,473.92 us; base 8.4 + 2 x 3.4 us.
  const Prediction p = ring_simple_all_reduce(pair, kGiB);
  EXPECT_NEAR(p.transfer.microseconds(), 1.0 * kGiB / 240e3, 1e-6);
  EXPECT_NEAR(p.latency.microseconds(), 8.4 + 2 * 3.4, 1e-9);
}

TEST(PcieHpcPresetsNccl, PerlmutterMeshAndSlingshot) {
  for (const NcclCluster& c : {from_preset("perlmutter", 2), from_graph("perlmutter", 2)}) {
    EXPECT_EQ(c.generation, nccl::Generation::Ampere);
    EXPECT_EQ(c.intra_path, nccl::Path::NvLink);
    // 12 NVLink 3 links x 20.0: the 6 directed Hamiltonian rings of 4 GPUs use every pair's 4
    // links in each direction twice at NCCL's 40 GB/s ring speed (docs/presets.md).
    EXPECT_DOUBLE_EQ(c.intra_GBps, 240.0);
    EXPECT_EQ(c.nics_per_node, 4u);
    EXPECT_DOUBLE_EQ(c.nic_GBps, 25.0);  // Slingshot-11, 200 Gb/s
    EXPECT_DOUBLE_EQ(c.gpu_nic_GBps, kGen4Nccl);
    EXPECT_TRUE(c.amd_host);  // AMD EPYC 7763
  }
  // Two GPUs of a node meet over their pair's 4 links only: 4 x 20.0 = 80 GB/s.
  EXPECT_DOUBLE_EQ(from_preset("perlmutter", 1, 2).intra_GBps, 80.0);
  // Each GPU's channel through its NIC: min(25 GB/s line, 24 GB/s PCIe) = 24, which is in
  // Ampere's search speeds; 4 NICs x 24 = 96 GB/s per node.
  const NcclCluster two = from_preset("perlmutter", 2);
  EXPECT_DOUBLE_EQ(two.net_channel_GBps(), 24.0);
  EXPECT_DOUBLE_EQ(two.node_net_GBps(), 96.0);
  // 2 nodes, ring Simple, 1 GiB: bus = min(240 x 4/3, 96) = 96 GB/s, 2 x 7/8 x 2^30 B / 96 GB/s
  // = 19,573.42 us; latency = 1.4 x (8.4 + 12 x max(NVLink 3.4, AMD host 2 x 3) + 2 x (14 +
  // Slingshot's 1)) = 1.4 x 110.4 = 154.56 us.
  const Prediction p = ring_simple_all_reduce(two, kGiB);
  EXPECT_DOUBLE_EQ(p.bus_GBps, 96.0);
  EXPECT_NEAR(p.transfer.microseconds(), 2.0 * 7 / 8 * kGiB / 96e3, 1e-6);
  EXPECT_NEAR(p.latency.microseconds(), 1.4 * (8.4 + 12 * 6.0 + 2 * 15.0), 1e-9);
}

}  // namespace
}  // namespace lockstep
