// NCCL's PXN on the engines (docs/routing.md "PXN", docs/flow-engine.md "PXN"): an all-to-all
// between nodes sends cross-rail data over NVLink to the rail's GPU and out of its NIC, so no
// byte crosses the spine and the NICs bound the time, as the NCCL model assumes. Without PXN the
// cross-rail traffic meets on the spine's links.
#include "lockstep/routing/pxn.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "lockstep/collective/collective.hpp"
#include "lockstep/engine/registry/registry.hpp"
#include "lockstep/nccl/sweep.hpp"
#include "lockstep/routing/router.hpp"
#include "lockstep/topology/builder.hpp"
#include "lockstep/topology/graph.hpp"
#include "lockstep/topology/presets.hpp"

namespace lockstep {
namespace {

constexpr double kNvlink = 400e9;  // GPU <-> NVSwitch, bytes/s per direction
constexpr double kPcie = 100e9;    // GPU <-> its NIC
constexpr double kWire = 50e9;     // NIC <-> leaf and leaf <-> spine
constexpr std::uint32_t kGpus = 8;
constexpr std::uint64_t kPerPeer = 1'000'000;  // B: bytes every rank sends each peer

struct RailFabric {
  Topology topo;
  DeviceId gpu[2][kGpus], nic[2][kGpus], nvswitch[2], leaf[kGpus], spine;
};

// Two nodes of 8 GPUs on one NVSwitch each, a NIC per GPU; leaf l joins the two NICs of rail l,
// and one spine joins the 8 leaves, one cable each. No latencies: times are bytes over rates.
RailFabric rail_fabric() {
  RailFabric f;
  TopologyBuilder b("two_rail_nodes");
  auto link = [&](DeviceId x, DeviceId y, double rate, LinkMedium medium) {
    b.add_link(Link{x, y, Bandwidth::bytes_per_second(rate), Time::zero(), medium});
  };
  f.spine = b.add_device(Device{DeviceKind::Switch, 1, kNone, 0, 0});
  for (std::uint32_t l = 0; l < kGpus; ++l) {
    f.leaf[l] = b.add_device(Device{DeviceKind::Switch, 0, kNone, 0, l});
    link(f.leaf[l], f.spine, kWire, LinkMedium::Optical);
  }
  for (std::uint32_t n = 0; n < 2; ++n) {
    f.nvswitch[n] = b.add_device(Device{DeviceKind::ScaleUpSwitch, 0, n, 0, 0});
    for (std::uint32_t l = 0; l < kGpus; ++l) {
      f.gpu[n][l] = b.add_device(Device{DeviceKind::Gpu, 0, n, 0, l});
      f.nic[n][l] = b.add_device(Device{DeviceKind::Nic, 0, n, 0, l});
      link(f.gpu[n][l], f.nvswitch[n], kNvlink, LinkMedium::NvLink);
      link(f.gpu[n][l], f.nic[n][l], kPcie, LinkMedium::Pcie);
      link(f.nic[n][l], f.leaf[l], kWire, LinkMedium::Optical);
    }
  }
  f.topo = std::move(b).build();
  return f;
}

DirLinkId directed(const Topology& t, DeviceId from, DeviceId to) {
  for (const Port& p : t.ports(from))
    if (p.peer == to) return p.out;
  ADD_FAILURE() << "no link " << from << " -> " << to;
  return 0;
}

RunResult run_alltoall(const RailFabric& f, const char* engine, bool pxn) {
  CollectiveSpec spec;
  spec.op = CollectiveOp::AllToAll;
  spec.algorithm = Algorithm::Direct;
  spec.ranks = 2 * kGpus;
  spec.ranks_per_node = kGpus;
  spec.bytes = Bytes(kPerPeer * 2 * kGpus);  // uint8: block j of S is B bytes
  const auto programs = make_collective(spec);
  const auto router = pxn ? make_pxn_router(f.topo, RouterOptions{}) : make_router(f.topo, {});
  EngineInput in;
  in.topology = &f.topo;
  in.programs = programs.get();
  in.placement = f.topo.gpus();
  in.router = router.get();
  return make_engine(engine)->run(in);
}

// Every rank (n, l) sends B to each of its 15 peers: 7 in its node over NVLink, 8 on the other
// node. With PXN the one to (n', k) leaves through NIC (n, k), reached over NVLink from GPU
// (n, l) when k != l. Counted by hand, per direction:
//   NIC (n, k) -> leaf k: one B from each of the 8 GPUs of node n, 8 B; the same into NIC (n', k)
//   and over both PCIe links of rail k (GPU (n, k) -> NIC, NIC -> GPU (n', k)).
//   GPU (n, l) -> NVSwitch: 7 B to its own node's GPUs + 7 B handed to the 7 other rails' GPUs,
//   14 B; NVSwitch -> GPU (n, l) the same (7 B received, 7 B to relay).
//   leaf <-> spine: nothing.
// The NIC links bound: 8 flows of B share 50 GB/s, 8 B / 50 GB/s = 8e6 / 5e10 s = 160 us (the
// NVLinks need 14e6 / 4e11 = 35 us, PCIe 8e6 / 1e11 = 80 us). That is the NCCL model's bound for
// a node's NICs, (n - g) / n S = 8 B per GPU at its NIC's rate, and both engines give it.
TEST(Pxn, AllToAllOnTwoRailNodesLoadsOnlyTheRailsLeavesAndMeetsTheNicBound) {
  const RailFabric f = rail_fabric();
  const double b = kPerPeer;
  for (const char* engine : {"flow", "analytical"}) {
    const RunResult r = run_alltoall(f, engine, true);
    EXPECT_NEAR(r.makespan.microseconds(), 8 * b / kWire * 1e6, 1e-3) << engine;
    if (std::string(engine) != "flow") continue;
    const auto bytes = [&](DeviceId x, DeviceId y) {
      return r.link_bytes.at(directed(f.topo, x, y));
    };
    for (std::uint32_t n = 0; n < 2; ++n) {
      for (std::uint32_t l = 0; l < kGpus; ++l) {
        EXPECT_DOUBLE_EQ(bytes(f.nic[n][l], f.leaf[l]), 8 * b);
        EXPECT_DOUBLE_EQ(bytes(f.leaf[l], f.nic[n][l]), 8 * b);
        EXPECT_DOUBLE_EQ(bytes(f.gpu[n][l], f.nic[n][l]), 8 * b);
        EXPECT_DOUBLE_EQ(bytes(f.nic[n][l], f.gpu[n][l]), 8 * b);
        EXPECT_DOUBLE_EQ(bytes(f.gpu[n][l], f.nvswitch[n]), 14 * b);
        EXPECT_DOUBLE_EQ(bytes(f.nvswitch[n], f.gpu[n][l]), 14 * b);
      }
    }
    for (std::uint32_t l = 0; l < kGpus; ++l) {
      EXPECT_EQ(bytes(f.leaf[l], f.spine), 0.0);
      EXPECT_EQ(bytes(f.spine, f.leaf[l]), 0.0);
    }
  }
}

// Without PXN (NCCL_PXN_DISABLE=1) GPU (n, l) sends all 8 B through its own NIC, 7 B of it to
// other rails: leaf l's cable to the spine carries 7 B from each node's GPU l, 14 B, as does the
// spine's cable down to each leaf. 14 flows of B share 50 GB/s: 14e6 / 5e10 s = 280 us, 1.75 x
// the NIC bound. The NVLinks carry only the node's own 7 B.
TEST(Pxn, WithoutPxnCrossRailTrafficCrossesTheSpine) {
  const RailFabric f = rail_fabric();
  const double b = kPerPeer;
  for (const char* engine : {"flow", "analytical"}) {
    const RunResult r = run_alltoall(f, engine, false);
    EXPECT_NEAR(r.makespan.microseconds(), 14 * b / kWire * 1e6, 1e-3) << engine;
    if (std::string(engine) != "flow") continue;
    for (std::uint32_t l = 0; l < kGpus; ++l) {
      EXPECT_DOUBLE_EQ(r.link_bytes.at(directed(f.topo, f.leaf[l], f.spine)), 14 * b);
      EXPECT_DOUBLE_EQ(r.link_bytes.at(directed(f.topo, f.spine, f.leaf[l])), 14 * b);
      EXPECT_DOUBLE_EQ(r.link_bytes.at(directed(f.topo, f.gpu[0][l], f.nvswitch[0])), 7 * b);
      EXPECT_DOUBLE_EQ(r.link_bytes.at(directed(f.topo, f.nic[0][l], f.leaf[l])), 8 * b);
    }
  }
}

// OCI's MI355X nodes (8 GPUs on an xGMI mesh, 8 Pollara 400G NICs on rail leaves joined by
// spines), 2 nodes, alltoall of S = 1 GiB through the NCCL glue: every GPU sends 8/16 S =
// 536,870,912 B to the other node, through the node's 8 NICs at NCCL's 48 GB/s: 11,184.81 us,
// plus step latencies (under 100 us). With PXN no flow meets another on a spine, so the flow
// engine gives the NCCL model's time; the relayed xGMI load (S/16 + S/16 a link at 57.6 GB/s,
// 0.21 of the NIC's time) binds nothing. (Before PXN flow read 12.5% slower here, at 16 GiB
// 201,370.69 us against 179,001.07: docs/calibration.md "PXN on the engines".)
TEST(Pxn, Mi355xAllToAllOnFlowMeetsTheModelAcrossTwoNodes) {
  PresetRequest r;
  r.system = "mi355x";
  r.fabric = "pollara-400g";
  r.nodes = 2;
  const PresetCluster preset = resolve_preset(r);
  const BuildResult built = build_topology(rail_optimized_args(preset));
  CollectiveSweep s;
  s.op = CollectiveOp::AllToAll;
  s.min_bytes = s.max_bytes = Bytes::gib(1);
  const NcclCluster c = nccl_cluster(preset);
  s.engine = "analytical";
  const double model = run_collective_sweep(s, c, &*built.graph).at(0).time.microseconds();
  s.engine = "flow";
  const double flow = run_collective_sweep(s, c, &*built.graph).at(0).time.microseconds();
  EXPECT_GE(model, 11184.81);
  EXPECT_LT(model, 11184.81 + 100);
  EXPECT_NEAR(flow / model, 1.0, 1e-6);
}

}  // namespace
}  // namespace lockstep
