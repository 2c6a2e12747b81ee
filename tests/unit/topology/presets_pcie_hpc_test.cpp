// The PCIe and HPC-centre presets (L40S, A100 PCIe, NERSC Perlmutter) against their datasheets
// and the centre's node description, figure by figure (sources in src/topology/catalog_gpus.cpp and
// presets.cpp), and the graphs they build.
#include <gtest/gtest.h>

#include <string>

#include "lockstep/topology/catalog.hpp"
#include "lockstep/topology/presets.hpp"
#include "topology_test_util.hpp"

namespace lockstep {
namespace {

using test::preset_graph;

struct LinkCount {
  std::uint32_t nvlink = 0, host = 0;
};
// NVLink links and links to the server's host (PCIe root complex) of a graph, each NVLink
// checked at `nvlink_GBps` and each host link at `host_GBps`.
LinkCount count_links(const Topology& t, double nvlink_GBps, double host_GBps) {
  LinkCount n;
  for (const Link& l : t.links()) {
    const bool host =
        t.device(l.a).kind == DeviceKind::Host || t.device(l.b).kind == DeviceKind::Host;
    if (l.medium == LinkMedium::NvLink) {
      ++n.nvlink;
      EXPECT_DOUBLE_EQ(l.bandwidth.gigabytes_per_second(), nvlink_GBps);
    }
    if (host) {
      ++n.host;
      EXPECT_NEAR(l.bandwidth.gigabytes_per_second(), host_GBps, 1e-9);
    }
  }
  return n;
}

// PCIe Gen4 x16: 16 lanes x 16 GT/s / 8 x 128/130 = 31.51 GB/s per direction.
constexpr double kGen4 = 16 * 16.0 / 8 * 128 / 130;

TEST(PcieHpcPresets, L40sHasNoNvlink) {
  // L40S datasheet: 48 GB GDDR6 at 864 GB/s, BF16 362.05 TFLOPS dense, FP8 733 dense, 350 W,
  // no NVLink; 8 per server with 4 x 400G NICs (200 Gb/s per GPU).
  const PresetCluster c = resolve_preset({.system = "l40s", .nodes = 2});
  const GpuSpec& g = gpu_spec(c.system.gpu);
  EXPECT_EQ(g.hbm, Bytes::gib(48));
  EXPECT_DOUBLE_EQ(g.kernels.hbm_bandwidth.gigabytes_per_second(), 864.0);
  EXPECT_DOUBLE_EQ(g.bf16_dense_flops, 362.05e12);
  EXPECT_DOUBLE_EQ(g.fp8_dense_flops, 733e12);
  EXPECT_EQ(g.scale_up_links, 0u);
  EXPECT_EQ(c.gpus_per_node, 8u);
  EXPECT_EQ(c.nics_per_node, 4u);
  EXPECT_EQ(c.fabric.name, "roce-400g");
  EXPECT_FALSE(c.nvls);
  // The graph: no NVLink; every GPU on the host at Gen4 x16, GPUs 0 and 1 sharing NIC 0.
  const Topology t = preset_graph("l40s", 1);
  const LinkCount n = count_links(t, 0, kGen4);
  EXPECT_EQ(n.nvlink, 0u);
  EXPECT_EQ(n.host, 8u);
  EXPECT_EQ(t.traits().scale_up, "pcie");
  // One GPU alone: no host device needed.
  EXPECT_EQ(count_links(preset_graph("l40s", 1, 1), 0, kGen4).host, 0u);
}

TEST(PcieHpcPresets, A100PcieBridgedPairs) {
  // A100 PCIe datasheet: NVLink bridge 600 GB/s bidirectional = 300 per direction over 12
  // links, BF16 312 TFLOPS dense, 80 GB HBM2e at 1,935 GB/s, 300 W, PCIe Gen4 x16.
  const GpuSpec& g = gpu_spec("a100_pcie");
  EXPECT_DOUBLE_EQ(g.scale_up_bandwidth.gigabytes_per_second(), 300.0);
  EXPECT_EQ(g.scale_up_links, 12u);
  EXPECT_DOUBLE_EQ(g.bf16_dense_flops, 312e12);
  EXPECT_DOUBLE_EQ(g.kernels.hbm_bandwidth.gigabytes_per_second(), 1935.0);
  const Topology t = preset_graph("a100-pcie", 1);
  const LinkCount n = count_links(t, 300.0, kGen4);
  EXPECT_EQ(n.nvlink, 4u);  // pairs 0-1, 2-3, 4-5, 6-7
  EXPECT_EQ(n.host, 8u);
  EXPECT_EQ(t.traits().scale_up, "pcie");
}

TEST(PcieHpcPresets, PerlmutterIsAnNvlink3MeshOfFour) {
  // NERSC Perlmutter GPU node: 4 x A100 SXM4 40GB (HBM2 1,555 GB/s), 4 NVLink 3 links of 25 GB/s
  // per pair = 100 GB/s per direction (= 300 / 3), 4 x Slingshot-11 200G, AMD EPYC host.
  const PresetCluster c = resolve_preset({.system = "perlmutter", .nodes = 2});
  const GpuSpec& g = gpu_spec(c.system.gpu);
  EXPECT_EQ(g.hbm, Bytes::gib(40));
  EXPECT_DOUBLE_EQ(g.kernels.hbm_bandwidth.gigabytes_per_second(), 1555.0);
  EXPECT_EQ(c.fabric.name, "slingshot");
  EXPECT_EQ(c.nics_per_node, 4u);
  EXPECT_DOUBLE_EQ(c.nic_speed.gigabits_per_second(), 200.0);
  EXPECT_TRUE(c.system.amd_host);
  EXPECT_FALSE(c.nvls);
  const Topology t = preset_graph("perlmutter", 1);
  const LinkCount n = count_links(t, 4 * 25.0, 0);
  EXPECT_EQ(n.nvlink, 6u);  // 4 x 3 / 2 pairs
  EXPECT_EQ(n.host, 0u);
  EXPECT_EQ(t.traits().scale_up, "mesh");
  // Two GPUs of the node still meet over their pair's 4 links, not all 12.
  const LinkCount two = count_links(preset_graph("perlmutter", 1, 2), 4 * 25.0, 0);
  EXPECT_EQ(two.nvlink, 1u);
}

}  // namespace
}  // namespace lockstep
