// How NCCL sees the NVIDIA presets: generation, NVLink bandwidth from the links the GPU has,
// PCIe between H100 PCIe bridge pairs, and NVL72 racks of any tray count as NCCL nodes, the
// preset's view and the built graph's alike.
#include <gtest/gtest.h>

#include "lockstep/nccl/cluster.hpp"
#include "lockstep/topology/builder.hpp"
#include "lockstep/topology/presets.hpp"

namespace lockstep {
namespace {

NcclCluster from_preset(const char* system, std::uint32_t nodes, std::uint32_t gpus = 0) {
  return nccl_cluster(resolve_preset({.system = system, .nodes = nodes, .gpus_per_node = gpus}));
}

NcclCluster from_graph(const char* system, std::uint32_t nodes) {
  ArgNode m = ArgNode::map("cluster");
  m.set("builder", ArgNode::scalar("preset", "cluster.builder"));
  m.set("system", ArgNode::scalar(system, "cluster.system"));
  m.set("nodes", ArgNode::scalar(std::to_string(nodes), "cluster.nodes"));
  return nccl_cluster(*build_topology(m).graph);
}

TEST(NvidiaPresetsNccl, NvlinkBandwidthFollowsTheLinksTheGpuHas) {
  // NCCL: links x per-link figure (topo.h: SM90 20.6 GB/s, SM100 40.1 GB/s).
  EXPECT_DOUBLE_EQ(from_preset("hgx-h20", 1).intra_GBps, 18 * 20.6);
  EXPECT_DOUBLE_EQ(from_preset("hgx-h800", 1).intra_GBps, 8 * 20.6);  // 164.8
  // A800: 8 NVLink 3 links at SM80's 20.0 (an A100 has 12: 240 GB/s).
  const NcclCluster a800 = from_preset("hgx-a800", 1);
  EXPECT_EQ(a800.generation, nccl::Generation::Ampere);
  EXPECT_DOUBLE_EQ(a800.intra_GBps, 8 * 20.0);  // 160
  EXPECT_DOUBLE_EQ(from_preset("dgx-a100", 1).intra_GBps, 12 * 20.0);
  EXPECT_DOUBLE_EQ(from_preset("hgx-h100", 1).intra_GBps, 18 * 20.6);
  const NcclCluster b300 = from_preset("hgx-b300", 1);
  EXPECT_EQ(b300.generation, nccl::Generation::Blackwell);
  EXPECT_DOUBLE_EQ(b300.intra_GBps, 18 * 40.1);
  EXPECT_EQ(from_preset("gb300-nvl72", 18).generation, nccl::Generation::Blackwell);
  EXPECT_EQ(from_preset("dgx-spark", 2).generation, nccl::Generation::Blackwell);
  EXPECT_EQ(from_preset("gh200-quad", 1).generation, nccl::Generation::Hopper);
}

TEST(NvidiaPresetsNccl, H100PciePairsTalkOverPcie) {
  // 8 GPUs: the ring crosses PCIe Gen5 x16 between pairs, NCCL's 16 x 240 / 80 = 48 GB/s.
  const NcclCluster eight = from_preset("h100-pcie", 2);
  EXPECT_EQ(eight.intra_path, nccl::Path::Pcie);
  EXPECT_DOUBLE_EQ(eight.intra_GBps, 48.0);
  EXPECT_EQ(eight.nics_per_node, 4u);
  const NcclCluster graph = from_graph("h100-pcie", 2);
  EXPECT_EQ(graph.intra_path, nccl::Path::Pcie);
  EXPECT_DOUBLE_EQ(graph.intra_GBps, 48.0);
  // One bridged pair: NVLink, 12 links x 20.6 = 247.2 GB/s, of which NCCL's search takes 4 rings
  // at 60 (duplicated to 8 at 30): 240 (mesh_channels_test.cpp).
  const NcclCluster pair = from_preset("h100-pcie", 2, 2);
  EXPECT_EQ(pair.intra_path, nccl::Path::NvLink);
  EXPECT_DOUBLE_EQ(pair.intra_GBps, 4 * 60.0);
}

TEST(NvidiaPresetsNccl, Nvl72RacksAreNcclNodes) {
  // 32 trays = 2 racks of 16: 2 NCCL nodes of 64 GPUs and 16 x 4 = 64 NICs.
  for (const NcclCluster& c : {from_preset("gb200-nvl72", 32), from_graph("gb200-nvl72", 32)}) {
    EXPECT_EQ(c.nodes, 2u);
    EXPECT_EQ(c.gpus_per_node, 64u);
    EXPECT_EQ(c.nics_per_node, 64u);
  }
  // A partial rack (14 trays): one node of 56 GPUs with NVLS.
  const NcclCluster partial = from_preset("gb200-nvl72", 14);
  EXPECT_EQ(partial.nodes, 1u);
  EXPECT_EQ(partial.gpus_per_node, 56u);
  EXPECT_TRUE(partial.nvls);
  // 37 trays fill racks unevenly (13 + 12 + 12): one NCCL node per tray, in both views.
  for (const NcclCluster& c : {from_preset("gb200-nvl72", 37), from_graph("gb200-nvl72", 37)}) {
    EXPECT_EQ(c.nodes, 37u);
    EXPECT_EQ(c.gpus_per_node, 4u);
    EXPECT_EQ(c.nics_per_node, 4u);
  }
}

TEST(NvidiaPresetsNccl, NvlinkPartitionsAreNcclNodes) {
  // 6 GB200 trays in NVLink partitions of 2 trays: 3 NCCL nodes of 8 GPUs and 8 NICs.
  const NcclCluster c =
      nccl_cluster(resolve_preset({.system = "gb200-nvl72", .nodes = 6, .domain_nodes = 2}));
  EXPECT_EQ(c.nodes, 3u);
  EXPECT_EQ(c.gpus_per_node, 8u);
  EXPECT_EQ(c.nics_per_node, 8u);
}

}  // namespace
}  // namespace lockstep
