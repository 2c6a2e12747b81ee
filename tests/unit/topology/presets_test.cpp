// System and fabric presets: validation, overrides, and the NCCL constants they lead to.
#include "lockstep/topology/presets.hpp"

#include <gtest/gtest.h>

#include <array>
#include <map>
#include <string>
#include <utility>

#include "lockstep/core/error.hpp"
#include "lockstep/topology/builder.hpp"
#include "lockstep/topology/catalog.hpp"

namespace lockstep {
namespace {

std::string error_of(const PresetRequest& r, std::string* field = nullptr) {
  try {
    resolve_preset(r);
  } catch (const InputError& e) {
    if (field != nullptr) *field = e.field();
    return e.what();
  }
  return "";
}

TEST(Presets, UnknownNamesListTheKnownOnes) {
  PresetRequest r;
  r.system = "dgx-z100";
  const std::string m = error_of(r);
  for (const char* name : {"dgx-a100", "hgx-h100", "hgx-h200", "hgx-b200", "gb200-nvl72", "mi300x"})
    EXPECT_NE(m.find(name), std::string::npos) << m;
  r.system = "hgx-h100";
  r.fabric = "ib-qdr";
  const std::string f = error_of(r);
  for (const char* name : {"ib-hdr", "ib-ndr", "ib-xdr", "roce-200g", "roce-400g", "roce-800g",
                           "pollara-400g", "efa", "tcp", "tcpx", "tcpxo", "slingshot"})
    EXPECT_NE(f.find(name), std::string::npos) << f;
}

TEST(Presets, ShippedFigures) {
  const PresetCluster h = resolve_preset({.system = "hgx-h100", .nodes = 16});
  EXPECT_EQ(h.fabric.name, "ib-ndr");
  EXPECT_EQ(h.gpus_per_node, 8u);
  EXPECT_EQ(h.nics_per_node, 8u);
  EXPECT_DOUBLE_EQ(h.nic_speed.gigabits_per_second(), 400.0);
  EXPECT_EQ(h.ranks(), 128u);
  EXPECT_TRUE(h.nvls);
  const PresetCluster a = resolve_preset({.system = "dgx-a100"});
  EXPECT_EQ(a.fabric.name, "ib-hdr");
  EXPECT_FALSE(a.nvls);
  const PresetCluster g = resolve_preset({.system = "gb200-nvl72", .nodes = 18});
  EXPECT_EQ(g.gpus_per_node, 4u);
  EXPECT_EQ(g.domain_gpus(), 72u);
  EXPECT_EQ(g.domains(), 1u);
}

TEST(Presets, GpusPerNodeAboveShippedIsAnError) {
  PresetRequest r;
  r.gpus_per_node = 16;
  std::string field;
  const std::string m = error_of(r, &field);
  EXPECT_EQ(field, "gpus_per_node");
  EXPECT_NE(m.find("ships 8"), std::string::npos) << m;
}

TEST(Presets, FewerGpusUseTheirOwnRailNics) {
  // One GPU of an 8-GPU, 8-NIC node drives only its rail NIC; overrides replace both figures.
  PresetRequest r;
  r.gpus_per_node = 1;
  r.nodes = 2;
  EXPECT_EQ(resolve_preset(r).nics_per_node, 1u);
  r.nics_per_node = 2;
  r.nic_speed = Bandwidth::gbps(800);
  const PresetCluster c = resolve_preset(r);
  EXPECT_EQ(c.nics_per_node, 2u);
  EXPECT_DOUBLE_EQ(c.nic_speed.gigabits_per_second(), 800.0);
}

TEST(Presets, SharpNeedsSharpSwitches) {
  PresetRequest r;
  r.fabric = "roce-400g";
  r.sharp = true;
  std::string field;
  error_of(r, &field);
  EXPECT_EQ(field, "sharp");
  r.fabric = "ib-ndr";
  EXPECT_TRUE(resolve_preset(r).sharp);
}

TEST(Presets, Nvl72TakesAnyTrayCount) {
  // 20 trays fill 2 racks evenly (10 + 10), 36 trays 2 full racks.
  PresetRequest r;
  r.system = "gb200-nvl72";
  r.nodes = 20;
  EXPECT_EQ(resolve_preset(r).domains(), 2u);
  EXPECT_EQ(resolve_preset(r).domain_gpus(), 40u);
  r.nodes = 36;
  EXPECT_EQ(resolve_preset(r).domains(), 2u);
  EXPECT_EQ(resolve_preset(r).domain_gpus(), 72u);
}

TEST(Presets, RequestFromArgsNamesTheKey) {
  ArgNode m = ArgNode::map("cluster", SourceLocation{"s.yaml", 3, 1});
  m.set("system", ArgNode::scalar("hgx-h100", "cluster.system", {"s.yaml", 3, 9}));
  m.set("gpus_per_node", ArgNode::scalar("9", "cluster.gpus_per_node", {"s.yaml", 4, 16}));
  try {
    preset_request(m);
    FAIL() << "9 GPUs per node accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().line, 4);
    EXPECT_NE(std::string(e.what()).find("ships 8"), std::string::npos) << e.what();
  }
}

TEST(Presets, BuildsThroughTheRailOptimizedBuilder) {
  ArgNode m = ArgNode::map("cluster");
  m.set("builder", ArgNode::scalar("preset", "cluster.builder"));
  m.set("system", ArgNode::scalar("hgx-h100", "cluster.system"));
  m.set("nodes", ArgNode::scalar("2", "cluster.nodes"));
  const BuildResult r = build_topology(m);
  ASSERT_TRUE(r.graph.has_value());
  EXPECT_EQ(r.graph->gpus().size(), 16u);
  EXPECT_EQ(r.graph->traits().gpu, "h100");
  EXPECT_EQ(r.graph->traits().nics_per_node, 8u);
}

// AMD Instinct platforms (datasheets): 8 GPUs on one xGMI mesh, 8 x 400G NICs, AMD hosts.
// MI325X has the MI300X's 7 x 64 GB/s links; MI355X's run at 76.8 GB/s, so a built node's 28
// GPU pairs each get 537.6 / 7 = 76.8 GB/s per direction.
TEST(Presets, AmdInstinctPlatforms) {
  for (const char* system : {"mi325x", "mi355x"}) {
    const PresetCluster p = resolve_preset({.system = system, .nodes = 2});
    EXPECT_EQ(p.system.gpu, system);
    EXPECT_EQ(p.gpus_per_node, 8u);
    EXPECT_EQ(p.nics_per_node, 8u);
    EXPECT_DOUBLE_EQ(p.nic_speed.gigabits_per_second(), 400.0);
    EXPECT_TRUE(p.system.amd_host);
    // MI355X ships with AMD Pensando Pollara 400 NICs; MI325X servers with 400G RoCE NICs.
    EXPECT_EQ(p.fabric.name, std::string(system) == "mi355x" ? "pollara-400g" : "roce-400g");
  }
  EXPECT_EQ(gpu_spec("mi325x").hbm, Bytes(256'000'000'000));
  EXPECT_EQ(gpu_spec("mi355x").hbm, Bytes(288'000'000'000));
  const BuildResult r =
      build_topology(rail_optimized_args(resolve_preset({.system = "mi355x", .nodes = 1})));
  ASSERT_TRUE(r.graph.has_value());
  EXPECT_EQ(r.graph->traits().scale_up, "mesh");
  std::uint32_t pairs = 0;
  for (const Link& l : r.graph->links()) {
    const DeviceKind a = r.graph->device(l.a).kind, b = r.graph->device(l.b).kind;
    if (a != DeviceKind::Gpu || b != DeviceKind::Gpu) continue;
    ++pairs;
    EXPECT_NEAR(l.bandwidth.gigabytes_per_second(), 76.8, 1e-9);
  }
  EXPECT_EQ(pairs, 28u);
}

// The UBB wires one xGMI link per GPU pair: a node of 4 MI300X in use keeps one 64 GB/s link
// per pair (3 per GPU, 192 GB/s), not the 448 GB/s of all seven spread over three peers.
TEST(Presets, FewerAmdGpusLeaveXgmiLinksIdle) {
  const BuildResult r = build_topology(
      rail_optimized_args(resolve_preset({.system = "mi300x", .nodes = 1, .gpus_per_node = 4})));
  ASSERT_TRUE(r.graph.has_value());
  std::uint32_t pairs = 0;
  for (const Link& l : r.graph->links()) {
    if (r.graph->device(l.a).kind != DeviceKind::Gpu) continue;
    if (r.graph->device(l.b).kind != DeviceKind::Gpu) continue;
    ++pairs;
    EXPECT_DOUBLE_EQ(l.bandwidth.gigabytes_per_second(), 64.0);
  }
  EXPECT_EQ(pairs, 6u);
}

// A preset smaller than one 32-node scalable unit is sized for its own nodes: each of the 8 rail
// leaves has one uplink per node, and the spines hold leaves x uplinks ports (64-port QM9700)
// with equal links from every leaf to every spine.
// 1 node: 8 leaves x 1 uplink = 8 ports -> 1 spine. 20 nodes: 160 ports need 3 spines; 20
// uplinks do not split over 3, and a leaf of 20 down + 20 up has free ports, so it takes 21, 7
// to each spine (3 spines, 168 links). 13 nodes: 104 ports need 2 spines, 13 is prime: 14
// uplinks, 7 to each (not 13 spines). 32 nodes: the full SU, 256 ports -> 4 spines (the DGX
// SuperPOD H100 SU).
TEST(Presets, ClustersSmallerThanAnSuGetSpinesForTheirNodes) {
  auto count = [](std::uint32_t nodes) {
    ArgNode m = ArgNode::map("cluster");
    m.set("builder", ArgNode::scalar("preset", "cluster.builder"));
    m.set("system", ArgNode::scalar("hgx-h100", "cluster.system"));
    m.set("nodes", ArgNode::scalar(std::to_string(nodes), "cluster.nodes"));
    const BuildResult r = build_topology(m);
    std::array<std::uint32_t, 3> leaves_spines_links{};
    for (const Device& d : r.graph->devices())
      if (d.kind == DeviceKind::Switch && d.tier < 2) ++leaves_spines_links[d.tier];
    for (const Link& l : r.graph->links()) {
      leaves_spines_links[2] += r.graph->device(l.a).kind == DeviceKind::Switch &&
                                r.graph->device(l.b).kind == DeviceKind::Switch;
    }
    return leaves_spines_links;
  };
  EXPECT_EQ(count(1), (std::array<std::uint32_t, 3>{8, 1, 8}));
  EXPECT_EQ(count(13), (std::array<std::uint32_t, 3>{8, 2, 8 * 14}));
  EXPECT_EQ(count(20), (std::array<std::uint32_t, 3>{8, 3, 8 * 21}));
  EXPECT_EQ(count(32), (std::array<std::uint32_t, 3>{8, 4, 8 * 32}));
}

// A fabric's NIC count is its instance's (p5: 32 EFA devices for 8 GPUs, 4 x 100G a GPU), so
// another system gets as many per GPU: a 4-GPU GB200 tray on efa has 32 x 4 / 8 = 16 devices,
// fused to one 400G NIC a GPU on the stand-in Tomahawk 5's 400G ports (before: 32 devices, 8
// fused a GPU, 800G fabric ports on 400G switches, 1.6T modules in the leaves' up cages and the
// spine's, the leaves 0.5 down:up). One rack of 18 trays: 72 NICs on 4
// rail leaves of 18 down / 18 up under one 128-port spine (72 of its ports). Modules: 72 NIC-side
// 400G SR4 and twin-port 2 x 400G 800G 2xSR4 in the Tomahawk 5 cages: leaves 4 x (9 down + 9
// up), spine 72 / 2 = 36: 108; 180 in all, none of 1.6T.
TEST(Presets, EfaOnAnotherSystemKeepsThePerGpuCountOfItsInstance) {
  EXPECT_EQ(resolve_preset({.system = "hgx-h100", .fabric = "efa", .nodes = 2}).nics_per_node, 32u);
  EXPECT_EQ(resolve_preset({.system = "gb200-nvl72", .fabric = "efa", .nodes = 18}).nics_per_node,
            16u);
  ArgNode m = ArgNode::map("cluster");
  for (const auto& [key, value] : {std::pair{"builder", "preset"},
                                   {"system", "gb200-nvl72"},
                                   {"fabric", "efa"},
                                   {"nodes", "18"}}) {
    m.set(key, ArgNode::scalar(value, std::string("cluster.") + key));
  }
  const Inventory inv = build_topology(m).inventory;
  EXPECT_DOUBLE_EQ(inv.injection_per_gpu.gigabits_per_second(), 400.0);
  std::map<std::string, std::uint64_t> optics;
  for (const InventoryLine& l : inv.lines) {
    if (l.category == "transceiver") optics[l.item] = l.count;
  }
  EXPECT_EQ(optics, (std::map<std::string, std::uint64_t>{
                        {"OSFP 400G SR4 transceiver, flat top (NIC side)", 72},
                        {"OSFP 800G 2xSR4 transceiver", 108}}));
  EXPECT_EQ(inv.transceivers, 180u);
}

}  // namespace
}  // namespace lockstep
