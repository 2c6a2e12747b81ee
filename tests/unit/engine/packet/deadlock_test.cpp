// A cyclic buffer dependency under PFC: four switches in a ring, each host sending to the host two
// switches clockwise, always routed clockwise. Ring link S(i)->S(i+1) carries two flows (2x
// oversubscribed) and the packets that came in over S(i-1)->S(i) wait for it, so the ring links
// wait on each other in a cycle. With small buffers every ring link ends up paused: the watchdog
// must report that cycle (and the flows in it) instead of hanging.
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

PacketConfig lossless_without_cc() {
  PacketConfig cfg = packet_config_for_fabric("roce");
  cfg.congestion = CongestionControl::None;
  cfg.ecn = false;
  cfg.switch_buffer = Bytes(64 << 10);
  cfg.switch_latency = Time::zero();
  cfg.watchdog = Time::us(50);
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
