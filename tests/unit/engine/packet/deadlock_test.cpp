// A cyclic buffer dependency under PFC: four switches in a ring, each host sending to the host two
// switches clockwise, always routed clockwise. Ring link S(i)->S(i+1) carries two flows (2x
// oversubscribed) and the packets that came in over S(i-1)->S(i) wait for it, so the ring links
// wait on each other in a cycle. With small buffers and one lane level (no lane change at turns)
// every ring link ends up paused: the watchdog must report that cycle (and the flows in it)
// instead of hanging.
#include <gtest/gtest.h>

#include <algorithm>

#include "fixtures.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/engine/packet/packet_engine.hpp"

namespace lockstep {
namespace {

constexpr std::uint32_t kRing = 4;

DirLinkId port_to(const Topology& t, DeviceId from, DeviceId to) {
  for (const Port& p : t.ports(from))
    if (p.peer == to) return p.out;
  return kNone;
}

// Hosts are devices 0..3, switches 4..7; host i hangs off switch 4+i.
class ClockwiseRouter : public Router {
 public:
  explicit ClockwiseRouter(const Topology& t) : t_(t) {}
  RoutingPolicy policy() const override { return RoutingPolicy::Ecmp; }
  void route(const FlowKey& key, const LinkLoadView*, std::vector<PathShare>& out) const override {
    out.assign(1, {});
    auto& hops = out[0].hops;
    DeviceId sw = kRing + key.src;
    hops.push_back(port_to(t_, key.src, sw));
    while (sw != kRing + key.dst) {
      const DeviceId next = kRing + (sw - kRing + 1) % kRing;
      hops.push_back(port_to(t_, sw, next));
      sw = next;
    }
    hops.push_back(port_to(t_, sw, key.dst));
  }

 private:
  const Topology& t_;
};

Topology ring() {
  TopologyBuilder b("ring");
  for (std::uint32_t i = 0; i < kRing; ++i) b.add_device(packet_test::gpu(i));
  for (std::uint32_t i = 0; i < kRing; ++i) b.add_device(packet_test::fabric_switch(0));
  const Bandwidth bw = Bandwidth::gbps(400);
  for (std::uint32_t i = 0; i < kRing; ++i)
    b.add_link(packet_test::link(i, kRing + i, bw, Time::ns(100)));
  for (std::uint32_t i = 0; i < kRing; ++i)
    b.add_link(packet_test::link(kRing + i, kRing + (i + 1) % kRing, bw, Time::ns(100)));
  return std::move(b).build();
}

// Without the lane change at turns (one lane level), as lossless fabrics were before it.
PacketConfig lossless_without_cc() {
  PacketConfig cfg = packet_config_for_fabric("roce");
  cfg.congestion = CongestionControl::None;
  cfg.ecn = false;
  cfg.switch_buffer = Bytes(64 << 10);
  cfg.switch_latency = Time::zero();
  cfg.watchdog = Time::us(50);
  cfg.lane_levels = 1;
  return cfg;
}

struct RingCase {
  Topology topo = ring();
  ClockwiseRouter router{topo};
  MaterializedProgramSet programs = [] {
    std::vector<packet_test::Transfer> list;
    for (Rank i = 0; i < kRing; ++i) list.push_back({i, (i + 2) % kRing, 4 << 20});
    return packet_test::transfers(kRing, list);
  }();
  EngineInput input() const {
    EngineInput in;
    in.topology = &topo;
    in.programs = &programs;
    in.router = &router;
    return in;
  }
};

TEST(PacketDeadlock, PfcCycleIsDetectedAndReported) {
  RingCase s;
  PacketConfig cfg = lossless_without_cc();
  cfg.throw_on_deadlock = false;
  PacketEngine engine(cfg);
  engine.run(s.input());
  const DeadlockReport& d = engine.stats().deadlock;
  ASSERT_TRUE(d.detected);
  // The cycle is exactly the four clockwise ring links.
  ASSERT_EQ(d.links.size(), kRing);
  for (DirLinkId l : d.links) {
    EXPECT_GE(s.topo.source(l), kRing);
    EXPECT_EQ(s.topo.target(l), kRing + (s.topo.source(l) - kRing + 1) % kRing);
  }
  EXPECT_FALSE(d.flows.empty());
  EXPECT_GT(engine.stats().pfc_pauses, 0u);
  EXPECT_EQ(engine.stats().drops, 0u);
  EXPECT_NE(d.describe(s.topo).find("deadlock"), std::string::npos);
}

TEST(PacketDeadlock, DeadlockThrowsByDefault) {
  RingCase s;
  PacketEngine engine(lossless_without_cc());
  EXPECT_THROW(engine.run(s.input()), InputError);
}

// The lane change at turns (docs/packet-engine.md): the switches are ordered 4 < 5 < 6 < 7, so the
// routes 4-5-6 and 5-6-7 climb, 6-7-4 climbs then descends, and 7-4-5 descends to 4 and climbs
// again: the ring's one down-up turn. Each ring switch has two neighbours of its tier, so the
// engine uses two lane levels by default, and host 3's packets cross 4->5 on level 1, where they
// wait only for the link into host 1. The cycle 4->5, 5->6, 6->7, 7->4 on level 0 is broken.
// Every ring link then carries two flows, 2 x 1024 packets of 4096 + h bytes at 50 GB/s: the run
// lasts at least 2 x 1024 (4096 + h) / 50 GB/s (168.84 us on InfiniBand, 171.13 on RoCE). It
// is longer, as lossless FIFOs are not fair (the parking-lot effect): host 3's flow, alone on
// its lane at 4->5, finishes first (150.87 us), hosts 0 and 1 last (225.12 us; RoCE's pauses:
// 309.47 us). Below twice the bound: the ring links are busy more than half of the run.
void expect_the_turn_breaks_the_cycle(PacketConfig cfg, double header) {
  RingCase s;
  cfg.lane_levels = 0;  // auto
  PacketEngine engine(cfg);
  const Time makespan = engine.run(s.input()).makespan;
  const PacketStats& st = engine.stats();
  EXPECT_FALSE(st.deadlock.detected);
  EXPECT_EQ(st.payload_bytes_delivered, kRing * (4u << 20));
  // Host 3's packets, once each, at switch 4; and the one ACK of the flow whose reverse route,
  // 5-4-7, descends then climbs (the other reverses 6-5-4, 7-6-5, 4-7-6 do not turn up).
  EXPECT_EQ(st.lane_changes, 1025u);
  const double busy_us = 2 * 1024 * (4096 + header) / 50e3;
  EXPECT_GE(makespan.microseconds(), busy_us);
  EXPECT_LE(makespan.microseconds(), busy_us * 2);
}

TEST(PacketDeadlock, LaneChangeAtTheTurnBreaksThePfcCycle) {
  EXPECT_THROW(PacketEngine(lossless_without_cc()).run(RingCase{}.input()), InputError);
  expect_the_turn_breaks_the_cycle(lossless_without_cc(), 82);
}

TEST(PacketDeadlock, LaneChangeAtTheTurnBreaksTheCreditCycle) {
  PacketConfig cfg = packet_config_for_fabric("infiniband");
  cfg.switch_buffer = Bytes(64 << 10);
  cfg.watchdog = Time::us(50);
  cfg.lane_levels = 1;
  EXPECT_THROW(PacketEngine(cfg).run(RingCase{}.input()), InputError);
  expect_the_turn_breaks_the_cycle(cfg, 26);
}

// A lone transfer across the turn (host 3 -> host 1: 7-4-5) pays nothing for it: 4 links of
// 100 ns plus 1024 x 4122 B at 50 GB/s, with one lane level or two.
TEST(PacketDeadlock, LaneChangeCostsALoneTransferNothing) {
  const Topology topo = ring();
  const ClockwiseRouter router{topo};
  const MaterializedProgramSet programs = packet_test::transfers(kRing, {{3, 1, 4 << 20}});
  EngineInput in;
  in.topology = &topo;
  in.programs = &programs;
  in.router = &router;
  for (const std::uint32_t levels : {1u, 2u}) {
    PacketConfig cfg = packet_config_for_fabric("infiniband");
    cfg.lane_levels = levels;
    PacketEngine engine(cfg);
    EXPECT_EQ(engine.run(in).makespan, Time::ns(400) + Time::from_ps(1024 * 4122 * 20.0));
    EXPECT_EQ(engine.stats().lane_changes, levels == 2 ? 1024u : 0u);
  }
}

// The same traffic on a lossy fabric cannot deadlock: it drops and retransmits instead.
TEST(PacketDeadlock, LossyFabricHasNoDeadlock) {
  RingCase s;
  PacketConfig cfg = packet_config_for_fabric("ethernet");
  cfg.switch_buffer = Bytes(64 << 10);
  PacketEngine engine(cfg);
  engine.run(s.input());
  EXPECT_FALSE(engine.stats().deadlock.detected);
  EXPECT_EQ(engine.stats().payload_bytes_delivered, kRing * (4u << 20));
}

}  // namespace
}  // namespace lockstep
