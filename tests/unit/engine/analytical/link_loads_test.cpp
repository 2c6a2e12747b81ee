// Link loads of routed transfers and the critical path of latencies, against hand-derived
// values on small graphs.
#include "lockstep/engine/analytical/link_loads.hpp"

#include <gtest/gtest.h>

#include "fixtures.hpp"
#include "lockstep/collective/collective.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/engine/analytical/analytical_engine.hpp"

namespace lockstep {
namespace {

// GPUs 0..n-1, each on its own NIC (PCIe 100 GB/s, 0.5 us) into one switch (50 GB/s, 1 us).
Topology nic_star(std::uint32_t n) {
  TopologyBuilder b("nic-star");
  const DeviceId sw = b.add_device(Device{DeviceKind::Switch, 0, kNone, 0, 0});
  for (std::uint32_t i = 0; i < n; ++i) {
    const DeviceId g = b.add_device(Device{DeviceKind::Gpu, 0, i, 0, 0});
    const DeviceId nic = b.add_device(Device{DeviceKind::Nic, 0, i, 0, 0});
    b.add_link(Link{g, nic, Bandwidth::gBps(100), Time::us(0.5), LinkMedium::Pcie});
    b.add_link(Link{nic, sw, Bandwidth::gBps(50), Time::us(1), LinkMedium::Optical});
  }
  return std::move(b).build();
}

// n GPUs on one NVSwitch, 450 GB/s and 0.25 us each.
Topology nvswitch(std::uint32_t n) {
  return analytical_test::star(n, Bandwidth::gBps(450), Time::us(0.25));
}

TEST(LinkLoads, OneTransferLoadsItsPathAndTheBusiestNetworkLinkSetsThePhase) {
  const Topology topo = nic_star(2);
  const auto router = make_router(topo, RouterOptions{});
  LinkLoads loads(topo, *router);
  const auto gpus = topo.gpus();
  const RoutedPath p = loads.add_transfer(0, gpus[0], gpus[1], 0, 1e6);
  // GPU-NIC-switch-NIC-GPU: 0.5 + 1 + 1 + 0.5 us; every link is a network link (the GPU's PCIe
  // link to its NIC counts: NCCL's network speed is the whole GPU-to-wire path's).
  EXPECT_EQ(p.latency, Time::us(3));
  EXPECT_TRUE(p.network);
  const PhaseLoad phase = loads.phase(0);
  // 1 MB over the 50 GB/s NIC links: 20 us; the 100 GB/s PCIe links need 10 us.
  EXPECT_DOUBLE_EQ(phase.network_seconds, 1e6 / 50e9);
  EXPECT_EQ(phase.scale_up_seconds, 0.0);
  EXPECT_EQ(topo.link(Topology::link_of(phase.network_link)).bandwidth, Bandwidth::gBps(50));
  // The reverse direction carries nothing.
  EXPECT_EQ(loads.bytes(0, phase.network_link ^ 1u), 0.0);
}

TEST(LinkLoads, PhasesAreKeptApartAndTransfersOnOneLinkAdd) {
  const Topology topo = nic_star(3);
  const auto router = make_router(topo, RouterOptions{});
  LinkLoads loads(topo, *router);
  const auto gpus = topo.gpus();
  // Two senders to GPU 2 in phase 0: its NIC's downlink carries both (2 MB), 40 us.
  loads.add_transfer(0, gpus[0], gpus[2], 0, 1e6);
  loads.add_transfer(0, gpus[1], gpus[2], 1, 1e6);
  // Phase 1: one of them alone.
  loads.add_transfer(1, gpus[0], gpus[2], 0, 1e6);
  EXPECT_EQ(loads.num_phases(), 2u);
  EXPECT_DOUBLE_EQ(loads.phase(0).network_seconds, 2e6 / 50e9);
  EXPECT_DOUBLE_EQ(loads.phase(1).network_seconds, 1e6 / 50e9);
}

TEST(LinkLoads, NetReduceLoadsEveryTreeLinkOnceEachWay) {
  // Four GPUs reducing 1 MB in the NVSwitch: each GPU's link carries 1 MB up and 1 MB down,
  // however many members' paths meet on the root's link.
  const Topology topo = nvswitch(4);
  const auto router = make_router(topo, RouterOptions{});
  LinkLoads loads(topo, *router);
  const auto gpus = topo.gpus();
  const std::vector<DeviceId> members(gpus.begin(), gpus.end());
  const RoutedPath longest = loads.add_net_reduce(0, members, 0, 1e6);
  EXPECT_EQ(longest.latency, Time::us(0.5));  // GPU - switch - GPU
  EXPECT_FALSE(longest.network);
  for (DirLinkId d = 0; d < topo.num_directed_links(); ++d)
    EXPECT_DOUBLE_EQ(loads.bytes(0, d), 1e6);
  EXPECT_DOUBLE_EQ(loads.phase(0).scale_up_seconds, 1e6 / 450e9);
  EXPECT_EQ(loads.phase(0).network_seconds, 0.0);
}

TEST(LinkLoads, NoPathIsAnInputError) {
  TopologyBuilder b("apart");
  b.add_device(Device{DeviceKind::Gpu, 0, 0, 0, 0});
  b.add_device(Device{DeviceKind::Gpu, 0, 1, 0, 0});
  const Topology topo = std::move(b).build();
  const auto router = make_router(topo, RouterOptions{});
  LinkLoads loads(topo, *router);
  EXPECT_THROW(loads.add_transfer(0, 0, 1, 0, 1.0), InputError);
}

CollectiveSpec ring_spec(Rank n, CollectiveOp op) {
  CollectiveSpec s;
  s.op = op;
  s.algorithm = Algorithm::Ring;
  s.ranks = n;
  s.bytes = Bytes(std::uint64_t{n} * 64);
  return s;
}

TEST(CriticalPath, RingStepsEachCostOneHop) {
  // One chunk, one channel: every step forwards what the step before received, so the chain is
  // 2 (n - 1) hops for an all-reduce and n - 1 for an all-gather.
  const ChainCosts unit{[](Rank, Rank, std::uint16_t) { return Time::us(1); }, {}};
  EXPECT_EQ(critical_path(*make_collective(ring_spec(8, CollectiveOp::AllReduce)), unit),
            Time::us(14));
  EXPECT_EQ(critical_path(*make_collective(ring_spec(8, CollectiveOp::AllGather)), unit),
            Time::us(7));
}

TEST(CriticalPath, OneSlowHopIsCrossedOncePerLapOfTheChain) {
  // Hop 3 -> 4 costs 100 us, the others nothing: an all-reduce chain of 14 consecutive hops of
  // the 8-rank ring contains that hop twice (hops 3 and 11 of some window).
  const ChainCosts slow{[](Rank src, Rank dst, std::uint16_t) {
                          return src == 3 && dst == 4 ? Time::us(100) : Time::zero();
                        },
                        {}};
  EXPECT_EQ(critical_path(*make_collective(ring_spec(8, CollectiveOp::AllReduce)), slow),
            Time::us(200));
}

TEST(CriticalPath, EachOpEndsAtItsDepthWithUnitCosts) {
  // A ring all-gather over 4 ranks in one chunk: rank r's k-th send forwards the block it
  // received in step k - 1, so with 1 ps per transfer it ends at k (1, 2, 3), as does the
  // matching receive; the walk's longest end is the critical path.
  const ChainCosts unit{[](Rank, Rank, std::uint16_t) { return Time::ps(1); }, {}};
  const auto programs = make_collective(ring_spec(4, CollectiveOp::AllGather));
  const auto ops = critical_path_ops(*programs, unit);
  ASSERT_EQ(ops.size(), 4u);
  for (Rank r = 0; r < 4; ++r) {
    std::int64_t sends = 0;
    for (OpIndex i = 0; i < programs->num_ops(r); ++i) {
      if (programs->op(r, i).kind != OpKind::Send) continue;
      EXPECT_EQ(ops[r][i].end, Time::ps(++sends)) << "rank " << r << " op " << i;
    }
    EXPECT_EQ(sends, 3);
  }
}

}  // namespace
}  // namespace lockstep
