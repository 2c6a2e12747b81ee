// 5 GPUs of a DGX-1 V100 (GPUs 0-4 of the hybrid cube mesh): GPU 4's only NVLink peer among
// them is GPU 0, so no ring of NVLink alone spans them. NCCL's search then raises the ring's path
// type to PATH_NVB (paths.cc: a path may cross one GPU over NVLink; p2p.cc moves such a hop
// "P2P/indirect" through that GPU's memory), before any PCIe type: the hops 1 -> 4, 2 -> 4 and
// 3 -> 4 (and back) pass through GPU 0, over its two links to GPU 4. The model, the analytical
// and the flow engines price that ring alike (docs/presets.md, docs/nccl-model.md "Path types");
// H100 PCIe bridge pairs, the other partial NVLink mesh among the presets, run over PCIe.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "lockstep/core/error.hpp"
#include "lockstep/nccl/cluster.hpp"
#include "lockstep/nccl/sweep.hpp"
#include "lockstep/topology/builder.hpp"
#include "lockstep/topology/catalog.hpp"
#include "lockstep/topology/presets.hpp"
#include "preset_views.hpp"

namespace lockstep {
namespace {

using test::from_preset;
using test::kGiB;
using test::preset_graph;
using test::ring_simple_all_reduce;
using test::ring_simple_gib;

NcclCluster five_from_graph() {
  return nccl_cluster(preset_graph("dgx1-v100", 1, 5));
}

TEST(Dgx1Relay, FiveGpusRingThroughGpuZero) {
  // Links among GPUs 0-4 (catalog mesh_wiring): 0-3, 0-4, 1-2, 2-3 two each; 0-1, 0-2, 1-3 one.
  // Every ring enters GPU 4 over 0 -> 4 (the hop 0 -> 4, or x -> 4 relayed by GPU 0) and leaves
  // over 4 -> 0, whose 2 links per direction carry 2 rings at one link each; 2 fit, e.g.
  // 0-1-2-3-4 and its reverse. 2 x SM70's 20 GB/s = 40 GB/s.
  const auto rings = nccl_mesh_rings("v100", 5);
  ASSERT_EQ(rings.size(), 2u);
  for (const auto& r : rings) {
    EXPECT_EQ(std::set<std::uint32_t>(r.begin(), r.end()).size(), 5u);  // Hamiltonian
    ASSERT_EQ(r.size(), 5u);
  }
  EXPECT_TRUE(nccl_mesh_rings_relayed("v100", 5));
  // 2-4 and 6-8 GPUs have rings of NVLink alone: nothing relays there.
  for (const std::uint32_t g : {2u, 3u, 4u, 6u, 7u, 8u}) {
    EXPECT_FALSE(nccl_mesh_rings_relayed("v100", g)) << g;
    EXPECT_FALSE(from_preset("dgx1-v100", 1, g).ring_relayed) << g;
  }
  for (const NcclCluster& c : {from_preset("dgx1-v100", 1, 5), five_from_graph()}) {
    EXPECT_EQ(c.gpus_per_node, 5u);
    EXPECT_DOUBLE_EQ(c.intra_GBps, 40.0);
    EXPECT_TRUE(c.ring_relayed);
    EXPECT_TRUE(c.ll128_default);  // tuning.cc: LL128 while the ring's type is at most NVB
  }
}

TEST(Dgx1Relay, FiveGpusAllReduceFromFirstPrinciples) {
  // Ring Simple, 1 GiB, one node of 5: 2 x 4/5 x 2^30 B at 40 GB/s = 42,949.67 us; latency =
  // base 8.4 + 2 x 4 steps x PCIe's 5.7 us (tuning.cc prices a PATH_NVB ring with its PCI row)
  // = 54.0 us.
  const Prediction p = ring_simple_all_reduce(from_preset("dgx1-v100", 1, 5), kGiB);
  EXPECT_DOUBLE_EQ(p.bus_GBps, 40.0);
  EXPECT_NEAR(p.transfer.microseconds(), 2.0 * 4 / 5 * kGiB / 40e3, 1e-6);
  EXPECT_NEAR(p.latency.microseconds(), 8.4 + 8 * 5.7, 1e-9);
}

// The engines on the built graph. The DGX-1's PCIe tree (GPU -> PCIe switch -> CPU, QPI between
// the CPUs) puts a PCIe path between unlinked GPUs at 4 or 5 hops, the relay through GPU 0 at
// 2: the router takes the relay, as NCCL's shortest path does. The bottleneck: GPU 0 <-> GPU 4
// (2 links, 50 GB/s per direction) carries both rings, each of half the channels, so 2 x 2 x 4/5
// x S/2 = 1.6 S each way, the most of any link; a singly linked hop (0 -> 1, 25 GB/s) carries
// one ring, 0.8 S. Both run
// at NCCL's 20 GB/s per link (the flow's NVLink efficiency 40 / 50), so every ring moves 20 GB/s
// and the bus bandwidth is the model's 40: 20 us launch + 54.0 + 42,949.67 = 43,023.67 us.
TEST(Dgx1Relay, EnginesAgreeAndNoPcieLinkCarriesData) {
  const PresetCluster preset =
      resolve_preset({.system = "dgx1-v100", .nodes = 1, .gpus_per_node = 5});
  const Topology topo = preset_graph("dgx1-v100", 1, 5);
  const double want_us = 20 + 8.4 + 8 * 5.7 + 2.0 * 4 / 5 * kGiB / 40e3;
  for (const char* engine : {"analytical", "flow"}) {
    const std::vector<CollectiveRow> rows = ring_simple_gib(engine, nccl_cluster(preset), topo);
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_NEAR(rows[0].time.microseconds() / want_us, 1.0, 1e-3) << engine;
    EXPECT_NEAR(rows[0].busbw_GBps, 2.0 * 4 / 5 * kGiB / (want_us * 1e3), 0.05) << engine;
    if (std::string(engine) != "flow") continue;
    ASSERT_FALSE(rows[0].links.empty());
    double zero_to_four = 0;
    for (const LinkReport& l : rows[0].links) {
      const Link& link = topo.link(Topology::link_of(l.link));
      SCOPED_TRACE(l.name);
      EXPECT_EQ(link.medium, LinkMedium::NvLink);  // no PCIe link among the busiest
      const DeviceId from = (l.link & 1) == 0 ? link.a : link.b;
      const DeviceId to = from == link.a ? link.b : link.a;
      if (topo.device(from).local_index == 0 && topo.device(to).local_index == 4)
        zero_to_four = l.bytes;
    }
    // GPU 0 -> GPU 4 carries the most: it is the bottleneck (with the single links' hops).
    EXPECT_NEAR(zero_to_four / rows[0].links.front().bytes, 1.0, 1e-9);
  }
}

// NCCL_NVB_DISABLE=1 (`nvb: false`): no hop through GPU 0, so GPU 4 (CPU 1's only GPU in use)
// reaches GPUs 1-3 over the host's PCIe tree (PATH_SYS: GPU 4 -> its PCIe switch -> CPU 1 -> QPI
// -> CPU 0 -> a switch -> the GPU). NCCL rates the Broadwell CPUs' QPI at topo.h's QPI_BW, 6 GB/s
// per direction, below the PCIe links' 12: no ring fits at 40 .. 7, and at 6 a ring that enters
// GPU 4 from 0 over NVLink and leaves it over the host crosses QPI once (CPU 1 -> 0), its reverse
// once the other way: 2 rings, 12 GB/s (at 3, 4 rings, 12 again: not more). 6 < 25: no
// duplication, 4 channels. The ring's type is PATH_SYS: PCIe's step latency and no LL128 unasked.
// Ring Simple, 1 GiB: 20 us launch + 8.4 + 8 x 5.7 + 2 x 4/5 x 2^30 B / 12 GB/s = 143,239.58 us
// (model).
TEST(Dgx1Relay, NvbDisabledCrossesQpi) {
  const MeshSearch s = nccl_mesh_search("v100", 5, /*nvb=*/false);
  EXPECT_EQ(s.level, MeshSearch::kHost);
  EXPECT_EQ(s.found, 2u);
  EXPECT_DOUBLE_EQ(s.speed, 6.0);
  NcclCluster c = from_preset("dgx1-v100", 1, 5);
  disable_nvb(c);
  EXPECT_EQ(c.intra_path, nccl::Path::Pcie);
  EXPECT_FALSE(c.ring_relayed);
  EXPECT_FALSE(c.ll128_default);
  EXPECT_DOUBLE_EQ(c.intra_GBps, 12.0);
  EXPECT_EQ(c.max_channels(), 4u);
  const Prediction p = ring_simple_all_reduce(c, kGiB);
  EXPECT_NEAR(p.time.microseconds(), 20 + 8.4 + 8 * 5.7 + 2.0 * 4 / 5 * kGiB / 12e3, 1e-6);
  // 8 GPUs have NVLink rings: nothing relays, so nvb changes nothing there.
  NcclCluster eight = from_preset("dgx1-v100", 1);
  disable_nvb(eight);
  EXPECT_DOUBLE_EQ(eight.intra_GBps, 120.0);
  EXPECT_EQ(eight.max_channels(), 12u);
}

// The same 5 GPUs with Skylake-class CPUs (a DGX-1 whose sockets were joined by UPI, catalog
// upi_skylake: 3 links x 10.4 GT/s x 2 B = 62.4 GB/s per direction): NCCL rates the CPUs' link by
// their generation alone, SKL_QPI_BW 10 GB/s (topo.cc ncclTopoConnectCpus), the GPUs' Gen3 links
// still 12. At 40 .. 12 UPI carries floor(10 / s) = 0 rings a direction: none. At 10 one ring a
// direction of UPI and of GPU 4's PCIe link: 2 rings, 20 GB/s. At 9, 7, 6 still one a direction
// (2 rings, less); at 5 (0.5 of 10, above the search's 0.49) two a direction: 4 x 5 = 20, not
// more; 4 is below 0.49 x 10: the search stops. 10 < 25: no duplication, 4 channels. Ring
// Simple, 1 GiB: 20 + 8.4 + 8 x 5.7 + 2 x 4/5 x 2^30 B / 20 GB/s = 85,973.35 us.
TEST(Dgx1Relay, SkylakeUpiRatedAtNcclsTen) {
  MeshSearchInput in = nccl_mesh_input("v100", 5, /*nvb=*/false);
  EXPECT_DOUBLE_EQ(in.cpu_link_GBps, 6.0);  // the DGX-1's own Broadwell QPI: QPI_BW
  in.cpu_link_GBps = cpu_link_spec("upi_skylake").nccl.gigabytes_per_second();
  EXPECT_DOUBLE_EQ(cpu_link_spec("upi_skylake").bandwidth.gigabytes_per_second(), 3 * 10.4 * 2);
  const MeshSearch s = nccl_ring_search(in, nccl_generation("v100"));
  EXPECT_EQ(s.level, MeshSearch::kHost);
  EXPECT_EQ(s.found, 2u);
  EXPECT_DOUBLE_EQ(s.speed, 10.0);
  EXPECT_EQ(s.channels(), 4u);
  // The node as search_node_rings sets it from such a search.
  NcclCluster c = from_preset("dgx1-v100", 1, 5);
  disable_nvb(c);
  c.intra_GBps = s.GBps();
  c.intra_channels = s.channels();
  const Prediction p = ring_simple_all_reduce(c, kGiB);
  EXPECT_NEAR(p.time.microseconds(), 20 + 8.4 + 8 * 5.7 + 2.0 * 4 / 5 * kGiB / 20e3, 1e-6);
  EXPECT_NEAR(p.time.microseconds(), 85'973.35, 0.01);
}

// The sweep key on the engines. Their router lets no GPU forward (make_router_without_gpu_
// transit), so GPU 4's host hop takes the PCIe tree: GPU -> switch -> CPU -> QPI -> CPU ->
// switch -> GPU, 4 PCIe links of 250 ns and QPI's 100 ns, 1.1 us, where an NVLink hop is 0.5 us
// and the engines' per-hop overhead is PCIe's 5.7 us step less that NVLink's 0.5. The longest
// chain of the all-reduce, 2 x 4 dependent hops around the 5-GPU ring, crosses the host hop at
// most twice: at most 2 x (1.1 - 0.5) = 1.2 us above the model. The data: each ring's narrowest
// link is a GPU's PCIe link (Gen3 x16, 15.75 GB/s; NVLink 25, QPI 38.4), one ring per direction,
// which the flow engine scales to NCCL's 6 GB/s per ring: 2 rings, the model's 12 GB/s.
TEST(Dgx1Relay, NvbKeyInASweep) {
  const NcclCluster c = from_preset("dgx1-v100", 1, 5);
  const Topology topo = preset_graph("dgx1-v100", 1, 5);
  CollectiveSweep s;
  s.algo = Algorithm::Ring;
  s.proto = nccl::Proto::Simple;
  s.min_bytes = s.max_bytes = Bytes::gib(1);
  s.nvb = false;
  const double model_us = 20 + 8.4 + 8 * 5.7 + 2.0 * 4 / 5 * kGiB / 12e3;
  for (const char* engine : {"analytical", "flow"}) {
    s.engine = engine;
    const auto rows = run_collective_sweep(s, c, &topo);
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].channels, 4u) << engine;
    EXPECT_GE(rows[0].time.microseconds(), model_us - 0.01) << engine;
    EXPECT_LE(rows[0].time.microseconds(), model_us + 2 * (1.1 - 0.5) + 0.01) << engine;
    if (std::string(engine) != "flow") continue;
    // The host carries the data: a PCIe link is among the busiest links.
    ASSERT_FALSE(rows[0].links.empty());
    bool host = false;
    for (const LinkReport& l : rows[0].links)
      host = host || topo.link(Topology::link_of(l.link)).medium == LinkMedium::Pcie;
    EXPECT_TRUE(host);
  }
  // 8 GPUs have NVLink rings: nvb: false changes nothing on the flow engine either.
  const NcclCluster eight = from_preset("dgx1-v100", 1);
  const Topology whole = preset_graph("dgx1-v100", 1);
  s.engine = "flow";
  const double off = run_collective_sweep(s, eight, &whole).at(0).time.microseconds();
  s.nvb = true;
  EXPECT_DOUBLE_EQ(run_collective_sweep(s, eight, &whole).at(0).time.microseconds(), off);
}

// h100-pcie: NVLink bridges join GPUs 0-1, 2-3, ...; no GPU is linked to two pairs, so 8 GPUs
// have neither an NVLink ring nor a relay (PATH_NVB) between pairs: NCCL's ring crosses PCIe
// (PATH_PHB), at its rating of the Gen5 x16 link, 16 x 240 / 80 = 48 GB/s, with PCIe's step
// latency. Ring Simple, 1 GiB: 20 us launch + 8.4 + 14 x 5.7 + 2 x 7/8 x 2^30 B / 48 GB/s =
// 39,255.03 us, in the model and both engines; the GPUs' PCIe links to the host carry it.
TEST(BridgePairs, RingCrossesPcieInEveryView) {
  const PresetCluster preset = resolve_preset({.system = "h100-pcie", .nodes = 1});
  const NcclCluster c = nccl_cluster(preset);
  EXPECT_EQ(c.intra_path, nccl::Path::Pcie);
  EXPECT_DOUBLE_EQ(c.intra_GBps, 48.0);
  EXPECT_FALSE(c.ring_relayed);
  EXPECT_TRUE(nccl_mesh_rings("h100_pcie", 8).empty());  // no wiring table: pairs alike
  const Topology topo = preset_graph("h100-pcie", 1);
  const double want_us = 20 + 8.4 + 14 * 5.7 + 2.0 * 7 / 8 * kGiB / 48e3;
  for (const char* engine : {"analytical", "flow"}) {
    const std::vector<CollectiveRow> rows = ring_simple_gib(engine, c, topo);
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_NEAR(rows[0].time.microseconds() / want_us, 1.0, 1e-3) << engine;
    if (std::string(engine) != "flow") continue;
    ASSERT_FALSE(rows[0].links.empty());
    // The hops between pairs cross the GPUs' PCIe links, as busy as the bridges.
    const bool pcie = std::any_of(rows[0].links.begin(), rows[0].links.end(), [&](const auto& l) {
      return topo.link(Topology::link_of(l.link)).medium == LinkMedium::Pcie;
    });
    EXPECT_TRUE(pcie);
  }
}

}  // namespace
}  // namespace lockstep
