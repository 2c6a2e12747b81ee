// The NVIDIA presets real clusters use (H20, H800, H100 PCIe, GH200 quad, B300, GB300, DGX
// Spark) against their datasheets, and NVL72 racks of any tray count. Every figure is written out
// from the datasheet named in src/topology/catalog_gpus.cpp and presets.cpp.
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "lockstep/core/error.hpp"
#include "lockstep/topology/builder.hpp"
#include "lockstep/topology/catalog.hpp"
#include "lockstep/topology/presets.hpp"
#include "topology_test_util.hpp"

namespace lockstep {
namespace {

PresetCluster preset(const char* system, std::uint32_t nodes = 1, std::uint32_t gpus = 0) {
  return resolve_preset({.system = system, .nodes = nodes, .gpus_per_node = gpus});
}

BuildResult preset_build(const char* system, std::uint32_t nodes, std::uint32_t gpus = 0,
                         std::uint32_t domain_nodes = 0) {
  ArgNode m = ArgNode::map("cluster");
  auto put = [&](const char* key, const std::string& value) {
    m.set(key, ArgNode::scalar(value, std::string("cluster.") + key));
  };
  put("builder", "preset");
  put("system", system);
  put("nodes", std::to_string(nodes));
  if (gpus > 0) put("gpus_per_node", std::to_string(gpus));
  if (domain_nodes > 0) put("domain_nodes", std::to_string(domain_nodes));
  return build_topology(m);
}

Topology preset_graph(const char* system, std::uint32_t nodes, std::uint32_t gpus = 0) {
  return std::move(*preset_build(system, nodes, gpus).graph);
}

std::uint64_t test_tier_ports(const Inventory& inv, const char* tier) {
  for (const TierFigures& t : inv.tiers) {
    if (t.tier == tier) return t.ports_used;
  }
  return 0;
}

double gBps(Bandwidth b) {
  return b.gigabytes_per_second();
}

// A GPU's datasheet figures: NVLink per direction (GB/s) over `links` links, dense BF16 FLOP/s
// and HBM.
void expect_gpu(const GpuSpec& g, double nvlink_gBps, std::uint32_t links, double bf16_flops,
                Bytes hbm) {
  EXPECT_DOUBLE_EQ(gBps(g.scale_up_bandwidth), nvlink_gBps);
  EXPECT_EQ(g.scale_up_links, links);
  EXPECT_DOUBLE_EQ(g.bf16_dense_flops, bf16_flops);
  EXPECT_EQ(g.hbm, hbm);
}

// GPUs attached to each scale-up switch, in device order.
std::vector<std::uint32_t> domain_gpus(const Topology& t) {
  std::vector<std::uint32_t> out;
  for (DeviceId d = 0; d < t.devices().size(); ++d) {
    if (t.device(d).kind != DeviceKind::ScaleUpSwitch) continue;
    std::uint32_t n = 0;
    for (const Port& p : t.ports(d)) n += t.device(p.peer).kind == DeviceKind::Gpu;
    out.push_back(n);
  }
  return out;
}

std::uint32_t count(const Topology& t, DeviceKind kind) {
  std::uint32_t n = 0;
  for (const Device& d : t.devices()) n += d.kind == kind;
  return n;
}

TEST(NvidiaPresets, H20AndH800AreHopperWithOtherComputeOrNvlink) {
  // H20: NVLink 900 GB/s bidirectional = 450 per direction over 18 links, 96 GB HBM3,
  // 148 TFLOPS BF16 dense (a seventh of H100's 989).
  const PresetCluster h20 = preset("hgx-h20", 2);
  expect_gpu(gpu_spec(h20.system.gpu), 450.0, 18, 148e12, Bytes::gib(96));
  EXPECT_EQ(h20.ranks(), 16u);
  EXPECT_EQ(h20.nics_per_node, 8u);
  EXPECT_DOUBLE_EQ(h20.nic_speed.gigabits_per_second(), 400.0);
  EXPECT_TRUE(h20.nvls);
  // H800: 400 GB/s bidirectional = 8 NVLink 4 links of 25 GB/s per direction = 200; H100's
  // compute (989 TFLOPS) and 80 GB.
  const PresetCluster h800 = preset("hgx-h800");
  expect_gpu(gpu_spec(h800.system.gpu), 200.0, 8, 989e12, Bytes::gib(80));
  EXPECT_EQ(h800.fabric.name, "ib-ndr");
}

TEST(NvidiaPresets, A800IsAnA100WithEightNvlinks) {
  // A800 SXM4: NVLink 400 GB/s bidirectional = 8 NVLink 3 links of 25 GB/s per direction = 200
  // (the A100's 12 give 300); A100's 312 TFLOPS and 80 GB; HDR 200G NICs, PCIe Gen4 to them.
  const PresetCluster a800 = preset("hgx-a800", 2);
  expect_gpu(gpu_spec(a800.system.gpu), 200.0, 8, 312e12, Bytes::gib(80));
  EXPECT_EQ(a800.fabric.name, "ib-hdr");
  EXPECT_EQ(a800.nics_per_node, 8u);
  EXPECT_FALSE(a800.nvls);
  EXPECT_EQ(default_gpu_nic_pcie("a800").name, "gen4_x16");
}

TEST(NvidiaPresets, H100PcieIsBridgedPairsOverPcie) {
  // 600 GB/s bidirectional per bridged pair = 300 per direction over 12 links; 756 TFLOPS dense
  // (1,513 with sparsity), 350 W; 8 GPUs and one NIC per pair = 4.
  const PresetCluster c = preset("h100-pcie");
  expect_gpu(gpu_spec(c.system.gpu), 300.0, 12, 756e12, Bytes::gib(80));
  EXPECT_EQ(c.gpus_per_node, 8u);
  EXPECT_EQ(c.nics_per_node, 4u);
  EXPECT_FALSE(c.nvls);
  // The graph: NVLink within pairs (0-1, 2-3, ...) at 300 GB/s, every GPU on the host's PCIe
  // Gen5 x16 (16 lanes x 32 GT/s / 8 x 128/130 = 63.02 GB/s); GPUs 0 and 1 share NIC 0.
  const Topology t = preset_graph("h100-pcie", 1);
  std::uint32_t nvlinks = 0, host_links = 0;
  for (const Link& l : t.links()) {
    const Device& a = t.device(l.a);
    const Device& b = t.device(l.b);
    if (l.medium == LinkMedium::NvLink) {
      ++nvlinks;
      EXPECT_EQ(a.local_index / 2, b.local_index / 2);
      EXPECT_DOUBLE_EQ(gBps(l.bandwidth), 300.0);
    }
    if (a.kind == DeviceKind::Host || b.kind == DeviceKind::Host) {
      ++host_links;
      EXPECT_NEAR(gBps(l.bandwidth), 16 * 32.0 / 8 * 128 / 130, 1e-9);
    }
  }
  EXPECT_EQ(nvlinks, 4u);
  EXPECT_EQ(host_links, 8u);
  EXPECT_EQ(count(t, DeviceKind::Nic), 4u);
  EXPECT_EQ(t.traits().scale_up, "pcie");
  // A pair alone is whole; three GPUs are not whole pairs.
  EXPECT_EQ(preset_graph("h100-pcie", 1, 2).gpus().size(), 2u);
  EXPECT_THROW(preset_graph("h100-pcie", 1, 3), InputError);
}

TEST(NvidiaPresets, Gh200QuadIsAnNvlinkMeshOfFour) {
  // HPE Cray EX254n: 4 GH200, 6 NVLink 4 links per pair = 150 GB/s per direction (= 450 / 3),
  // one 200G NIC per GH200 (HPE Slingshot-11's Cassini, the default fabric), 96 GB HBM3.
  const PresetCluster c = preset("gh200-quad", 2);
  EXPECT_EQ(c.fabric.name, "slingshot");
  EXPECT_EQ(c.gpus_per_node, 4u);
  EXPECT_EQ(c.nics_per_node, 4u);
  EXPECT_DOUBLE_EQ(c.nic_speed.gigabits_per_second(), 200.0);
  EXPECT_EQ(gpu_spec(c.system.gpu).hbm, Bytes::gib(96));
  const Topology t = preset_graph("gh200-quad", 1);
  std::uint32_t nvlinks = 0;
  for (const Link& l : t.links()) {
    if (l.medium != LinkMedium::NvLink) continue;
    ++nvlinks;
    EXPECT_DOUBLE_EQ(gBps(l.bandwidth), 6 * 25.0);
  }
  EXPECT_EQ(nvlinks, 6u);  // 4 x 3 / 2 pairs
  EXPECT_EQ(count(t, DeviceKind::Host), 0u);
  EXPECT_EQ(t.traits().scale_up, "mesh");
}

TEST(NvidiaPresets, BlackwellUltraAndSpark) {
  // B300: NVLink 5 at 1.8 TB/s = 900 per direction, 288 GB HBM3e, BF16 36 PF sparse per 8 GPUs
  // = 2.25 PF dense each, 8 x ConnectX-8 800G on PCIe Gen6 x16 (64 GT/s x 16 / 8 x 236/256 =
  // 118 GB/s, above the NIC's 100 GB/s).
  const PresetCluster b = preset("hgx-b300", 2);
  const GpuSpec& g = gpu_spec(b.system.gpu);
  EXPECT_DOUBLE_EQ(gBps(g.scale_up_bandwidth), 900.0);
  EXPECT_EQ(g.hbm, Bytes(288'000'000'000));
  EXPECT_DOUBLE_EQ(g.bf16_dense_flops, 36e15 / 8 / 2);
  EXPECT_EQ(b.nics_per_node, 8u);
  EXPECT_DOUBLE_EQ(b.nic_speed.gigabits_per_second(), 800.0);
  EXPECT_NEAR(gBps(default_gpu_nic_pcie("b300").bandwidth), 64.0 * 16 / 8 * 236 / 256, 1e-9);
  EXPECT_TRUE(b.nvls);
  // GB300 NVL72: 360 PF BF16 sparse per 72 GPUs = 2.5 PF dense each, 4 x 800G per tray, 18
  // trays per NVLink domain.
  const PresetCluster r = preset("gb300-nvl72", 18);
  EXPECT_DOUBLE_EQ(gpu_spec(r.system.gpu).bf16_dense_flops, 360e15 / 72 / 2);
  EXPECT_EQ(r.nics_per_node, 4u);
  EXPECT_DOUBLE_EQ(r.nic_speed.gigabits_per_second(), 800.0);
  EXPECT_EQ(r.domain_gpus(), 72u);
  // DGX Spark: one GB10 (128 GB unified memory), no NVLink peer, one ConnectX-7 at 200G.
  const PresetCluster s = preset("dgx-spark", 2);
  EXPECT_EQ(s.ranks(), 2u);
  EXPECT_EQ(s.nics_per_node, 1u);
  EXPECT_DOUBLE_EQ(s.nic_speed.gigabits_per_second(), 200.0);
  EXPECT_FALSE(s.nvls);
  EXPECT_EQ(gpu_spec(s.system.gpu).hbm, Bytes::gib(128));
  const Topology t = preset_graph("dgx-spark", 2);
  EXPECT_EQ(t.gpus().size(), 2u);
  EXPECT_EQ(count(t, DeviceKind::ScaleUpSwitch), 0u);
}

TEST(NvidiaPresets, ErrorsNameTheField) {
  std::string field;
  auto error_of = [&](const PresetRequest& r) {
    try {
      resolve_preset(r);
    } catch (const InputError& e) {
      field = e.field();
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string unknown = error_of({.system = "hgx-h900"});
  EXPECT_EQ(field, "system");
  for (const char* name :
       {"hgx-h20", "hgx-h800", "h100-pcie", "gh200-quad", "hgx-b300", "gb300-nvl72", "dgx-spark"})
    EXPECT_NE(unknown.find(name), std::string::npos) << unknown;
  EXPECT_NE(error_of({.system = "dgx-spark", .gpus_per_node = 2}).find("ships 1"),
            std::string::npos);
  EXPECT_EQ(field, "gpus_per_node");
  EXPECT_NE(error_of({.system = "gb300-nvl72", .gpus_per_node = 8}).find("ships 4"),
            std::string::npos);
  EXPECT_NE(error_of({.system = "gb300-nvl72", .fabric = "roce-800g", .sharp = true}).find("SHARP"),
            std::string::npos);
  EXPECT_EQ(field, "sharp");
  // Any tray count is possible: a partial rack, 37 trays over 3 racks.
  EXPECT_EQ(error_of({.system = "gb200-nvl72", .nodes = 37}), "");
}

TEST(Nvl72Fill, RacksFillEvenly) {
  // ceil(n / 18) racks, sizes differing by at most one, larger first.
  const DomainFill f32 = fill_domains(32, 18);  // 16 + 16
  EXPECT_EQ(f32.domains, 2u);
  EXPECT_EQ(f32.small, 16u);
  EXPECT_TRUE(f32.equal());
  const DomainFill f48 = fill_domains(48, 18);  // 16 + 16 + 16
  EXPECT_EQ(f48.domains, 3u);
  EXPECT_EQ(f48.small, 16u);
  EXPECT_TRUE(f48.equal());
  const DomainFill f37 = fill_domains(37, 18);  // 13 + 12 + 12
  EXPECT_EQ(f37.domains, 3u);
  EXPECT_EQ(f37.small, 12u);
  EXPECT_EQ(f37.large, 1u);
  EXPECT_EQ(f37.largest(), 13u);
  EXPECT_EQ(f37.domain_of(12), 0u);
  EXPECT_EQ(f37.domain_of(13), 1u);
  EXPECT_EQ(f37.domain_of(25), 2u);
  EXPECT_EQ(f37.domain_of(36), 2u);
  EXPECT_EQ(f37.first_node(1), 13u);
  EXPECT_EQ(f37.first_node(2), 25u);
  const DomainFill f14 = fill_domains(14, 18);  // a partial rack
  EXPECT_EQ(f14.domains, 1u);
  EXPECT_EQ(f14.small, 14u);
  const DomainFill one = fill_domains(5, 1);  // HGX: a domain per node
  EXPECT_EQ(one.domains, 5u);
  EXPECT_EQ(one.domain_of(4), 4u);
}

TEST(Nvl72Fill, ThirtyTwoTraysAreTwoRacksOfSixteen) {
  // 32 GB200 trays: 2 NVLink domains of 16 trays x 4 GPUs = 64 GPUs, each with its own NVLink
  // switch; 4 NICs per tray = 128 NICs, 64 per domain.
  const PresetCluster c = preset("gb200-nvl72", 32);
  EXPECT_EQ(c.domains(), 2u);
  EXPECT_EQ(c.domain_gpus(), 64u);
  const Topology t = preset_graph("gb200-nvl72", 32);
  EXPECT_EQ(domain_gpus(t), (std::vector<std::uint32_t>{64, 64}));
  EXPECT_EQ(count(t, DeviceKind::Nic), 128u);
  EXPECT_EQ(t.gpus().size(), 128u);
  // 37 trays: 13 + 12 + 12 trays.
  EXPECT_EQ(domain_gpus(preset_graph("gb200-nvl72", 37)), (std::vector<std::uint32_t>{52, 48, 48}));
}

// Scalable units of whole racks (derived from the rule, docs/presets.md): 36 trays are 2 racks
// of 18; a QM9700 leaf's 32 down ports hold one rack, so 2 SUs of 18 trays, each rail leaf 18
// down + 18 up: 8 leaves x 36 = 288 leaf ports (SUs of 32 trays gave 4 x 64 + 4 x (4 + 32) =
// 400). 32 trays fill 2 racks of 16, both in one SU (2 x 16 <= 32). GB300 on Q3400 (144
// ports, 72 down): 4 racks of 18 per SU, 288 trays = 4 SUs.
TEST(Nvl72Fill, ScalableUnitsAreWholeRacks) {
  const BuildResult two = preset_build("gb200-nvl72", 36);
  EXPECT_NE(two.inventory.design.find("2 SUs x 18 nodes"), std::string::npos)
      << two.inventory.design;
  EXPECT_EQ(test_tier_ports(two.inventory, "leaf"), 288u);
  const BuildResult pair = preset_build("gb200-nvl72", 32);
  EXPECT_NE(pair.inventory.design.find("1 SUs x 32 nodes"), std::string::npos)
      << pair.inventory.design;
  const BuildResult gb300 = preset_build("gb300-nvl72", 288);
  EXPECT_NE(gb300.inventory.design.find("4 SUs x 72 nodes"), std::string::npos)
      << gb300.inventory.design;
}

// OCI's GB300 trays (calibration rows: 4 ConnectX-8 = 8 x 400G per tray of 4 GPUs) on a 400G
// SN5600: NCCL fuses each GPU's two 400G ports (nccl/cluster.cpp fuse_nics), so the preset wires
// one 800G host port per GPU that stands for two 400G switch ports (nic_ports_fused 2), where a
// lone 800G port on a 400G switch is refused (Clos.RejectsBadArgumentsNamingTheKey).
TEST(Nvl72Fill, FusedNicPortsMayReachTwiceTheSwitchPort) {
  const BuildResult r = test::build({{"builder", "preset"},
                                     {"system", "gb300-nvl72"},
                                     {"nodes", "2"},
                                     {"fabric", "roce-400g"},
                                     {"nics_per_node", "8"},
                                     {"nic_speed", "400Gbps"}});
  ASSERT_TRUE(r.graph.has_value());
  EXPECT_EQ(r.graph->gpus().size(), 8u);
  EXPECT_EQ(count(*r.graph, DeviceKind::Nic), 8u);  // one fused NIC per GPU
}

TEST(Nvl72Fill, PartialRackIsOneNvlsDomain) {
  // 14 trays of one rack: one NVLink switch with all 56 GPUs, NVLS on.
  const PresetCluster c = preset("gb200-nvl72", 14);
  EXPECT_EQ(c.domains(), 1u);
  EXPECT_EQ(c.domain_gpus(), 56u);
  EXPECT_TRUE(c.nvls);
  const Topology t = preset_graph("gb200-nvl72", 14);
  EXPECT_EQ(domain_gpus(t), (std::vector<std::uint32_t>{56}));
  EXPECT_TRUE(t.traits().nvls);
}

TEST(Nvl72Fill, NvlinkPartitionsSplitARack) {
  // 6 trays in NVLink partitions of 2 trays: 3 domains of 8 GPUs, each its own NVLink switch in
  // the graph.
  const PresetCluster c = resolve_preset({.system = "gb200-nvl72", .nodes = 6, .domain_nodes = 2});
  EXPECT_EQ(c.domains(), 3u);
  EXPECT_EQ(c.domain_gpus(), 8u);
  const BuildResult r = preset_build("gb200-nvl72", 6, 0, 2);
  EXPECT_EQ(domain_gpus(*r.graph), (std::vector<std::uint32_t>{8, 8, 8}));
  // One tray per partition (NVL4): 3 trays, 3 domains of 4.
  EXPECT_EQ(domain_gpus(*preset_build("gb200-nvl72", 3, 0, 1).graph),
            (std::vector<std::uint32_t>{4, 4, 4}));
  // A partition holds at most the rack; an HGX node is its own domain.
  for (const PresetRequest& bad : {PresetRequest{.system = "gb200-nvl72", .domain_nodes = 19},
                                   PresetRequest{.system = "hgx-h100", .domain_nodes = 2}}) {
    try {
      resolve_preset(bad);
      ADD_FAILURE() << bad.system << " accepted " << bad.domain_nodes;
    } catch (const InputError& e) {
      EXPECT_EQ(e.field(), "domain_nodes");
    }
  }
}

}  // namespace
}  // namespace lockstep
