// dgx1-v100 (DGX-1's NVLink 2 hybrid cube mesh, wired pair by pair) and a10g (AWS g5.48xlarge,
// PCIe only) against the DGX-1 V100 whitepaper and AWS's instance page, figure by figure
// (sources in src/topology/catalog_gpus.cpp and presets.cpp), and the graphs they build.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

#include "lockstep/topology/catalog.hpp"
#include "lockstep/topology/inventory_count.hpp"
#include "lockstep/topology/presets.hpp"
#include "topology_test_util.hpp"

namespace lockstep {
namespace {

using test::preset_graph;

// NVLink links of a graph by their rate (GB/s per direction), and the links to the host.
struct Links {
  std::map<long, std::uint32_t> nvlink;
  std::uint32_t host = 0;
};
Links links_of(const Topology& t) {
  Links n;
  for (const Link& l : t.links()) {
    if (l.medium == LinkMedium::NvLink) ++n.nvlink[std::lround(l.bandwidth.gigabytes_per_second())];
    if (t.device(l.a).kind == DeviceKind::Host || t.device(l.b).kind == DeviceKind::Host) ++n.host;
  }
  return n;
}

TEST(VoltaA10gPresets, Dgx1WiringIsTheHybridCubeMesh) {
  // Whitepaper: 6 NVLinks per GPU; per GPU 2 peers on 2 links, 2 on 1, 3 with none; the table
  // is symmetric with an empty diagonal.
  const auto& w = mesh_wiring("dgx1_cube_mesh");
  ASSERT_EQ(w.size(), 8u);
  for (std::uint32_t i = 0; i < 8; ++i) {
    std::map<std::uint32_t, int> peers;
    std::uint32_t links = 0;
    for (std::uint32_t j = 0; j < 8; ++j) {
      EXPECT_EQ(w[i][j], w[j][i]);
      if (j != i) ++peers[w[i][j]];
      links += w[i][j];
    }
    EXPECT_EQ(w[i][i], 0u);
    EXPECT_EQ(links, 6u) << "GPU " << i;
    EXPECT_EQ(peers[2], 2) << "GPU " << i;
    EXPECT_EQ(peers[1], 2) << "GPU " << i;
    EXPECT_EQ(peers[0], 3) << "GPU " << i;
  }
  EXPECT_EQ(gpu_spec("v100").scale_up_links, 6u);
  EXPECT_DOUBLE_EQ(gpu_spec("v100").scale_up_bandwidth.gigabytes_per_second(), 6 * 25.0);
  EXPECT_TRUE(mesh_wiring("gh200_quad").empty());  // uniform meshes have no table
}

TEST(VoltaA10gPresets, Dgx1GraphWiresPairsUnequally) {
  const PresetCluster c = resolve_preset({.system = "dgx1-v100", .nodes = 2});
  EXPECT_EQ(c.fabric.name, "ib-edr");
  EXPECT_EQ(c.nics_per_node, 4u);
  EXPECT_DOUBLE_EQ(c.nic_speed.gigabits_per_second(), 100.0);
  EXPECT_FALSE(c.system.amd_host);  // Intel Xeon E5-2698 v4
  // One node: 8 x 4 / 2 = 16 linked pairs, 8 doubly (50 GB/s) and 8 singly (25 GB/s); the PCIe
  // tree where the 12 unlinked pairs could meet (catalog host_pcie_tree): each GPU's Gen3 link to
  // its PCIe switch (8), the 4 switches' links to their CPUs and QPI between the CPUs: 13.
  // The bill of materials by hand: PCIe links are those 8 + 4 and each GPU's link to its NIC
  // (8): 20; QPI is a link of its own kind, the CPUs' socket link (catalog qpi_broadwell, 2 QPI
  // links x 9.6 GT/s x 2 B = 38.4 GB/s per direction), not a PCIe one; none of them buys a part.
  const Topology t = preset_graph("dgx1-v100", 1);
  const Links n = links_of(t);
  EXPECT_EQ(n.nvlink.at(50), 8u);
  EXPECT_EQ(n.nvlink.at(25), 8u);
  EXPECT_EQ(n.nvlink.size(), 2u);
  EXPECT_EQ(n.host, 8u + 4u + 1u);
  const BomTally bom = tally_topology(t);
  EXPECT_EQ(bom.links(LinkMedium::Pcie), 8u + 4u + 8u);
  EXPECT_EQ(bom.links(LinkMedium::CpuLink), 1u);
  std::uint32_t qpi = 0;
  for (const Link& l : t.links()) {
    if (l.medium != LinkMedium::CpuLink) continue;
    ++qpi;
    EXPECT_DOUBLE_EQ(l.bandwidth.gigabytes_per_second(), 2 * 9.6 * 2);
    EXPECT_EQ(t.device(l.a).kind, DeviceKind::Host);
    EXPECT_EQ(t.device(l.b).kind, DeviceKind::Host);
  }
  EXPECT_EQ(qpi, 1u);
  EXPECT_EQ(t.traits().scale_up, "mesh");
  // GPUs 0-3 (a quad): pairs 0-3, 1-2, 2-3 doubly, 0-1, 0-2, 1-3 singly.
  const Links four = links_of(preset_graph("dgx1-v100", 1, 4));
  EXPECT_EQ(four.nvlink.at(50), 3u);
  EXPECT_EQ(four.nvlink.at(25), 3u);
}

TEST(VoltaA10gPresets, A10gIsPcieOnlyWithOneEfa) {
  // AWS g5.48xlarge: 8 x A10G (24 GB), no NVLink, 100 Gbps of EFA (one device), AMD EPYC.
  const PresetCluster c = resolve_preset({.system = "a10g", .nodes = 2});
  EXPECT_EQ(gpu_spec(c.system.gpu).hbm, Bytes::gib(24));
  EXPECT_EQ(gpu_spec(c.system.gpu).scale_up_links, 0u);
  EXPECT_EQ(c.fabric.name, "efa");
  EXPECT_EQ(c.nics_per_node, 1u);  // the system's own, not the efa fabric's p5 count (32)
  EXPECT_DOUBLE_EQ(c.nic_speed.gigabits_per_second(), 100.0);
  EXPECT_TRUE(c.system.amd_host);
  // On another system the efa fabric still brings the p5's 32 devices.
  EXPECT_EQ(resolve_preset({.system = "hgx-h100", .fabric = "efa", .nodes = 2}).nics_per_node, 32u);
  const Links n = links_of(preset_graph("a10g", 1));
  EXPECT_TRUE(n.nvlink.empty());
  EXPECT_EQ(n.host, 8u);  // PCIe Gen4 to the host
}

}  // namespace
}  // namespace lockstep
