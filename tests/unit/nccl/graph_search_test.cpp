// NCCL's graph search as NcclCluster reproduces it: the speed a channel gets through a NIC, the
// rings the NICs and PCIe links hold, the channels after duplication, NVLS's own channel count,
// the PCIe cap and NIC fusion. Each number is derived by hand from NCCL's source (search.cc
// speed arrays, topo.cc PCIe ratings, init.cc MAXCHANNELS / 2 rings, connect.cc duplication,
// nvls.cc channels), docs/nccl-model.md "What NCCL sees of a cluster".
#include <gtest/gtest.h>

#include "lockstep/nccl/cluster.hpp"
#include "lockstep/nccl/tuner.hpp"
#include "lockstep/topology/builder.hpp"
#include "lockstep/topology/presets.hpp"
#include "preset_request.hpp"

namespace lockstep {
namespace {

NcclCluster cluster_of(const char* system, std::uint32_t nodes, std::uint32_t gpus = 0,
                       std::uint32_t nics = 0, double nic_gbps = 0, const char* fabric = "") {
  return nccl_cluster(test::preset_of(system, fabric, nodes, gpus, nics, nic_gbps));
}

// The model's bus bandwidth for a 1 GiB Simple ring all-reduce (channels 0: NCCL's count).
double ring_simple_bus(const NcclCluster& c, std::uint32_t channels = 0) {
  TunerRequest r;
  r.bytes = Bytes::gib(1);
  r.algo = Algorithm::Ring;
  r.proto = nccl::Proto::Simple;
  r.channels = channels;
  return predict(c, r).bus_GBps;
}

TEST(GraphSearch, HgxH100WithEightNdrNics) {
  // One node: 32 channels over NVSwitch (NCCL logs "32 coll channels"), NVLS 16 (nvls.cc sm90).
  const NcclCluster one = cluster_of("hgx-h100", 1);
  EXPECT_EQ(one.max_channels(), 32u);
  EXPECT_EQ(one.nvls_channels(), 16u);
  // Two nodes: the GPU-NIC path is min(NDR 50, Gen5 x16 as NCCL rates it 16 x 240 / 80 = 48)
  // = 48; sm90's speed array gives 48. A NIC holds floor(50 / 48) = 1 ring, the GPU's PCIe
  // floor(48 / 48) = 1: 8 rings, duplicated to 16 channels, 8 x 48 = 384 GB/s per node.
  for (const std::uint32_t nodes : {2u, 4u}) {
    const NcclCluster c = cluster_of("hgx-h100", nodes);
    EXPECT_DOUBLE_EQ(c.gpu_nic_GBps, 48.0);
    EXPECT_DOUBLE_EQ(c.net_channel_GBps(), 48.0);
    EXPECT_EQ(c.rings_per_nic(), 1u);
    EXPECT_EQ(c.net_rings(), 8u);
    EXPECT_EQ(c.max_channels(), 16u);
    EXPECT_DOUBLE_EQ(c.node_net_GBps(), 384.0);
    EXPECT_EQ(c.nvls_channels(), 16u);
  }
}

TEST(GraphSearch, DgxA100WithEightHdrNics) {
  // One node: 24 channels (NCCL logs on DGX A100). Two nodes: min(HDR 25, Gen4 x16 16 x 120 /
  // 80 = 24) = 24, sm80's speed array gives 24; 1 ring per NIC (floor(25 / 24), floor(24 / 24)):
  // 8 rings, 16 channels, 192 GB/s per node (nccl issue #1576 quotes ~192).
  const NcclCluster one = cluster_of("dgx-a100", 1);
  EXPECT_EQ(one.max_channels(), 24u);
  const NcclCluster c = cluster_of("dgx-a100", 2);
  EXPECT_DOUBLE_EQ(c.gpu_nic_GBps, 24.0);
  EXPECT_DOUBLE_EQ(c.net_channel_GBps(), 24.0);
  EXPECT_EQ(c.net_rings(), 8u);
  EXPECT_EQ(c.max_channels(), 16u);
  EXPECT_DOUBLE_EQ(c.node_net_GBps(), 192.0);
}

TEST(GraphSearch, FewerNicsThanGpus) {
  // 2 x 1 H100, one NDR NIC each: 1 ring, 2 channels, 48 GB/s.
  const NcclCluster pair = cluster_of("hgx-h100", 2, 1);
  EXPECT_EQ(pair.net_rings(), 1u);
  EXPECT_EQ(pair.max_channels(), 2u);
  EXPECT_DOUBLE_EQ(pair.node_net_GBps(), 48.0);
  // 4 NDR NICs for 8 GPUs: two GPUs share a NIC. A NIC holds floor(50 / 48) = 1 ring at 48 (its
  // two GPUs' PCIe links could feed 2): 4 rings, 8 channels, 192 GB/s per node.
  const NcclCluster four = cluster_of("hgx-h100", 2, 0, 4);
  EXPECT_EQ(four.nics_per_node, 4u);
  EXPECT_EQ(four.rings_per_nic(), 1u);
  EXPECT_EQ(four.max_channels(), 8u);
  EXPECT_DOUBLE_EQ(four.node_net_GBps(), 192.0);
  // AWS p4de: 8 A100, 4 x 100G EFA. Path min(12.5, 24) = 12.5, sm80 speed 12; floor(12.5 / 12)
  // = 1 ring per NIC: 4 x 12 = 48 GB/s per node, 8 channels.
  const NcclCluster p4de = cluster_of("dgx-a100", 2, 0, 4, 100);
  EXPECT_DOUBLE_EQ(p4de.net_channel_GBps(), 12.0);
  EXPECT_EQ(p4de.max_channels(), 8u);
  EXPECT_DOUBLE_EQ(p4de.node_net_GBps(), 48.0);
}

TEST(GraphSearch, PcieCapsOneGpuWithFourNics) {
  // One H100 per node with 4 x 400G NICs (200 GB/s): NCCL sees one fused 200 GB/s NIC behind
  // the GPU's Gen5 x16 link, rated 48: the path is 48, one ring at 48, not 4 x 48. The ring
  // all-reduce's bus bandwidth between the two GPUs is the PCIe figure, 48 GB/s.
  const NcclCluster c = cluster_of("hgx-h100", 2, 1, 4);
  EXPECT_EQ(c.nics_per_node, 1u);
  EXPECT_EQ(c.fused_nics, 4u);
  EXPECT_DOUBLE_EQ(c.nic_GBps, 200.0);
  EXPECT_DOUBLE_EQ(c.nic_path_GBps(), 48.0);
  EXPECT_EQ(c.net_rings(), 1u);
  EXPECT_DOUBLE_EQ(c.node_net_GBps(), 48.0);
  EXPECT_DOUBLE_EQ(ring_simple_bus(c), 48.0);
}

TEST(GraphSearch, MoreNicsThanGpusAreFused) {
  // AWS p5: 8 H100, 32 x 100G EFA (4 per GPU, striped by aws-ofi-nccl). NCCL sees 8 NICs of
  // 4 x 12.5 = 50 GB/s: path min(50, 48) = 48, 8 rings, 16 channels, 384 GB/s per node.
  // Unfused, 32 NICs at sm90's 12 GB/s would be 16 rings (MAXCHANNELS / 2) x 12 = 192.
  const NcclCluster p5 = cluster_of("hgx-h100", 2, 0, 32, 100);
  EXPECT_EQ(p5.nics_per_node, 8u);
  EXPECT_EQ(p5.fused_nics, 4u);
  EXPECT_DOUBLE_EQ(p5.nic_GBps, 50.0);
  EXPECT_EQ(p5.net_rings(), 8u);
  EXPECT_EQ(p5.max_channels(), 16u);
  EXPECT_DOUBLE_EQ(p5.node_net_GBps(), 384.0);
  // The graph built for it has the same view: 8 NICs per node on 400G ports.
  PresetRequest r;
  r.system = "hgx-h100";
  r.fabric = "efa";
  r.nodes = 2;
  r.nics_per_node = 32;
  r.nic_speed = Bandwidth::gbps(100);
  const BuildResult built = build_topology(rail_optimized_args(resolve_preset(r)));
  ASSERT_TRUE(built.graph.has_value());
  const NcclCluster from_graph = nccl_cluster(*built.graph);
  EXPECT_EQ(from_graph.nics_per_node, 8u);
  EXPECT_DOUBLE_EQ(from_graph.nic_GBps, 50.0);
  EXPECT_DOUBLE_EQ(from_graph.node_net_GBps(), 384.0);
  // OCI A100 shapes: 16 x 100G HCAs for 8 GPUs: 8 fused NICs of 25 GB/s, path min(25, 24) = 24.
  const NcclCluster oci = cluster_of("dgx-a100", 2, 0, 16, 100);
  EXPECT_EQ(oci.nics_per_node, 8u);
  EXPECT_DOUBLE_EQ(oci.node_net_GBps(), 192.0);
}

TEST(GraphSearch, RingsAreAtMostHalfOfMaxChannels) {
  // Two GB200 NVL72 racks: one NCCL node of 72 GPUs with 72 NDR NICs. The search looks for at
  // most MAXCHANNELS / 2 = 16 rings, each at 48 GB/s (Blackwell's array under min(50, 48)):
  // 768 GB/s per rack, 32 channels; NVLS on a multi-node NVLink domain runs 24 channels.
  const NcclCluster c = cluster_of("gb200-nvl72", 36);
  EXPECT_EQ(c.nics_per_node, 72u);
  EXPECT_EQ(c.net_rings(), 16u);
  EXPECT_EQ(c.max_channels(), 32u);
  EXPECT_DOUBLE_EQ(c.node_net_GBps(), 768.0);
  EXPECT_EQ(c.nvls_channels(), 24u);
  // One HGX B200 board: NVLS 32 channels (nvls.cc sm100).
  EXPECT_EQ(cluster_of("hgx-b200", 2).nvls_channels(), 32u);
}

TEST(GraphSearch, AFastNicHoldsSeveralRings) {
  // H100 nodes with XDR 800G NICs (100 GB/s) behind Gen6 x16 (NCCL: 16 x 480 / 80 = 96): the
  // path is 96 but sm90's fastest speed is 48, so a NIC holds floor(100 / 48) = 2 rings and the
  // GPU's link floor(96 / 48) = 2: 16 rings at 48 = 768 GB/s, 32 channels.
  PresetRequest r;
  r.system = "hgx-h100";
  r.fabric = "ib-xdr";
  r.nodes = 2;
  ArgNode args = rail_optimized_args(resolve_preset(r));
  args.set("pcie", ArgNode::scalar("gen6_x16", "test.pcie"));
  const BuildResult built = build_topology(args);
  ASSERT_TRUE(built.graph.has_value());
  const NcclCluster c = nccl_cluster(*built.graph);
  EXPECT_DOUBLE_EQ(c.gpu_nic_GBps, 96.0);
  EXPECT_EQ(c.rings_per_nic(), 2u);
  EXPECT_EQ(c.net_rings(), 16u);
  EXPECT_EQ(c.max_channels(), 32u);
  EXPECT_DOUBLE_EQ(c.node_net_GBps(), 768.0);
}

TEST(GraphSearch, AChannelCarriesTheSearchSpeed) {
  // 2 x HGX H100: a ring channel crosses one NIC per node at 48 GB/s. 16 channels are capped by
  // the node's 8 x 48 = 384 GB/s; 4 channels (--channels 4) carry 4 x 48 = 192, 1 channel 48.
  const NcclCluster c = cluster_of("hgx-h100", 2);
  EXPECT_DOUBLE_EQ(ring_simple_bus(c), 384.0);
  EXPECT_DOUBLE_EQ(ring_simple_bus(c, 4), 192.0);
  EXPECT_DOUBLE_EQ(ring_simple_bus(c, 1), 48.0);
}

TEST(GraphSearch, NvlsAlgorithmsRunNvlsChannels) {
  // 2 x HGX B200: rings give 16 channels, NVLS tree runs nvls.cc's 32 at a large size.
  const NcclCluster c = cluster_of("hgx-b200", 2);
  TunerRequest r;
  r.bytes = Bytes::gib(1);
  r.algo = Algorithm::NvlsTree;
  EXPECT_EQ(predict(c, r).channels, 32u);
  r.algo = Algorithm::Ring;
  r.proto = nccl::Proto::Simple;
  EXPECT_EQ(predict(c, r).channels, 16u);
}

}  // namespace
}  // namespace lockstep
