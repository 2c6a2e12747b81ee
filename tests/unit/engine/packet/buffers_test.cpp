// Switch buffers as built (buffers.cpp) and adaptive routing at each switch (adaptive.cpp),
// against counts derived by hand from the thresholds.
#include "../../../../src/engine/packet/buffers.hpp"

#include <gtest/gtest.h>

#include "fixtures.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/engine/packet/packet_engine.hpp"
#include "lockstep/topology/catalog.hpp"

namespace lockstep {
namespace {

using packet::Buffers;
using packet_test::Outcome;
using packet_test::simulate;

const Bandwidth k400G = Bandwidth::gbps(400);
constexpr std::uint32_t kWire = 4096 + 82;  // a RoCE packet: 4,178 B

PacketConfig as_built(FlowControl fc, Bytes buffer) {
  PacketConfig c = packet_config_for_fabric(fc == FlowControl::Pfc ? "roce" : "ethernet");
  c.buffers.as_built = true;
  c.switch_buffer = buffer;
  return c;
}

// Packets one egress queue of switch `dev` (device 2 of a 2-host star) takes, none leaving.
int fill(Buffers& b, std::size_t queue) {
  int n = 0;
  while (b.admit(2, queue, kWire)) {
    b.add_egress(2, queue, kWire);
    ++n;
  }
  return n;
}

// Choudhury-Hahne: a queue alone may hold alpha x (B - q), so it stops at alpha / (1 + alpha)
// x B. B = 1 MiB, alpha = 1: 524,288 B = 125 packets of 4,178 B (125 x 4,178 = 522,250; the
// 126th would make 526,428). alpha = 2: 699,050 B = 167 packets (697,726; 168th 701,904).
TEST(SwitchBuffers, DynamicThresholdStopsOneQueueAtAlphaOverOnePlusAlpha) {
  const Topology star = packet_test::star(2, k400G, Time::ns(100));
  for (const auto& [alpha, expected] : {std::pair{1.0, 125}, {2.0, 167}}) {
    PacketConfig cfg = as_built(FlowControl::None, Bytes::mib(1));
    cfg.dynamic_threshold = alpha;
    Buffers b;
    b.setup(cfg, star, 2, 1, kWire);
    EXPECT_EQ(b.pool(2).shared, 1 << 20);
    EXPECT_EQ(fill(b, 1), expected) << "alpha " << alpha;
  }
}

// In 254 B cells a 4,178 B packet takes 17 cells = 4,318 B: 524,288 / 4,318 = 121 packets.
TEST(SwitchBuffers, PacketsTakeWholeCells) {
  const Topology star = packet_test::star(2, k400G, Time::ns(100));
  PacketConfig cfg = as_built(FlowControl::None, Bytes::mib(1));
  cfg.buffers.cell = Bytes(254);
  Buffers b;
  b.setup(cfg, star, 2, 1, kWire);
  EXPECT_EQ(b.cells(2, kWire), 4318);
  EXPECT_EQ(fill(b, 1), 121);
}

// Two queues filling in turn each stop at alpha / (1 + 2 alpha) x B = 349,525 B: queue 1's
// 84th packet would need 84 w <= B - 167 w, i.e. 251 x 4,178 = 1,048,678 > 1,048,576.
TEST(SwitchBuffers, TwoQueuesShareThePoolEvenly) {
  const Topology star = packet_test::star(2, k400G, Time::ns(100));
  Buffers b;
  b.setup(as_built(FlowControl::None, Bytes::mib(1)), star, 2, 1, kWire);
  int n[2] = {0, 0};
  for (bool more = true; more;) {
    more = false;
    for (int k = 0; k < 2; ++k) {
      const std::size_t q = 2 * k + 1;  // lane 0's queue on links 0 and 1
      if (b.admit(2, q, kWire)) {
        b.add_egress(2, q, kWire);
        ++n[k];
        more = true;
      }
    }
  }
  EXPECT_EQ(n[0], 83);
  EXPECT_EQ(n[1], 83);
  // Releasing everything returns the pool whole.
  for (int k = 0; k < 2; ++k)
    for (int i = 0; i < n[k]; ++i) b.remove_egress(2, 2 * k + 1, kWire);
  EXPECT_EQ(b.pool(2).used, 0);
}

// PFC with a dynamic ingress threshold: 1 MiB less 2 ports' 100,000 B headroom leaves a pool of
// 848,576 B; a group alone passes alpha x (S - g) beyond g > S / 2 = 424,288 B, at its 102nd
// packet (101 x 4,178 = 421,978; 102 x 4,178 = 426,156).
TEST(SwitchBuffers, IngressThresholdSendsXoffAtTheDerivedPacket) {
  const Topology star = packet_test::star(2, k400G, Time::ns(100));
  PacketConfig cfg = as_built(FlowControl::Pfc, Bytes::mib(1));
  cfg.buffers.headroom = Bytes(100'000);
  Buffers b;
  b.setup(cfg, star, 2, 1, kWire);
  EXPECT_EQ(b.pool(2).shared, 848'576);
  const std::size_t pg = 0;  // link 0 (host 0 -> switch), lane 0
  int n = 1;
  while (!b.add_ingress(2, pg, kWire, false, 0)) ++n;
  EXPECT_EQ(n, 102);
}

// 802.1Qbb's headroom: 400 Gb/s x 2 x 1 us = 100,000 B in flight, plus two 4,178 B packets and
// the 84 B PAUSE frame.
TEST(SwitchBuffers, HeadroomFormula) {
  EXPECT_EQ(packet::pfc_headroom(k400G, Time::us(1), Time::zero(), kWire), 108'440);
}

// PFC frames on the wire. One 400 Gb/s sender into a 100 Gb/s sink through a switch (store and
// forward, no switch latency), cables of L = 960.44 ns (2 L = 23 T - 1 ns, T = 4,178 B / 50 B/ns
// = 83.56 ns), a static XOFF at 200 KB. The packet that crosses it (started at s0) is counted at
// s0 + T + L; the PAUSE, 84 B = 1.68 ns on the idle reverse link, stops the sender at s0 + T + 2 L
// + 1.68 ns, so packets k = 1, 2, ... with k T < T + 2 L + 1.68 ns = 24.008 T still come: 24
// (100,272 B), where a PAUSE acting on the sender one latency after the crossing (k T < 23.988 T)
// let 23 in. The headroom formula, 50 B/ns x 1,920.88 ns + 2 x 4,178 + 84 = 104,484 B, holds
// them. The reverse link carries the message's 86 B ACK and 84 B per PAUSE and RESUME.
TEST(SwitchBuffers, PauseFrameActsOneFrameTimeAndOneLatencyLater) {
  TopologyBuilder b("pause_frame");
  for (std::uint32_t i = 0; i < 2; ++i) b.add_device(packet_test::gpu(i));
  const DeviceId sw = b.add_device(packet_test::fabric_switch(0));
  const Time cable = Time::ps(960'440);
  b.add_link(packet_test::link(0, sw, k400G, cable));
  b.add_link(packet_test::link(1, sw, Bandwidth::gbps(100), cable));
  const Topology topo = std::move(b).build();
  EXPECT_EQ(packet::pfc_headroom(k400G, cable, Time::zero(), kWire), 104'484);
  PacketConfig cfg = as_built(FlowControl::Pfc, Bytes::mib(16));
  cfg.congestion = CongestionControl::None;
  cfg.ecn = false;
  cfg.cut_through = false;
  cfg.switch_latency = Time::zero();
  cfg.pfc_xoff = Bytes(200'000);
  const Outcome r = simulate(topo, packet_test::transfers(2, {{0, 1, 2 << 20}}), cfg);
  EXPECT_GT(r.stats.pfc_pauses, 0u);
  EXPECT_EQ(r.stats.peak_headroom, 24 * 4178);
  EXPECT_EQ(r.stats.headroom_overflows, 0u);
  EXPECT_EQ(r.stats.pfc_frames, r.stats.pfc_pauses + r.stats.pfc_resumes);
  EXPECT_EQ(r.result.link_bytes[1], 86.0 + 84.0 * static_cast<double>(r.stats.pfc_frames));
  EXPECT_EQ(r.stats.payload_bytes_delivered, 2u << 20);
}

TEST(SwitchBuffers, ReservesBeyondTheBufferAreAnError) {
  const Topology star = packet_test::star(2, k400G, Time::ns(100));
  PacketConfig cfg = as_built(FlowControl::Pfc, Bytes(200'000));
  cfg.buffers.headroom = Bytes(100'001);
  Buffers b;
  EXPECT_THROW(b.setup(cfg, star, 2, 1, kWire), InputError);
}

// Two senders into one receiver at 400 Gb/s over 1 us links, static XOFF at 200 KB. After the
// packet that crosses it (started at s0) arrives, the PAUSE needs its 84 B (1.68 ns) and 1 us to
// reach the sender, so every packet it started in (s0, s0 + 2,001.68 ns) still arrives:
// 2,001.68 ns / 83.56 ns per packet = 23 packets = 96,094 B, within the 108,440 B formula
// headroom. Meanwhile the output, alternating
// between the two inputs, takes 2,000 / (2 x 83.56) = 12 of them back out of the headroom: 11
// packets (45,958 B) stay, which a 20,000 B headroom cannot hold.
TEST(SwitchBuffers, HeadroomAbsorbsTheBytesInFlightExactly) {
  const Topology star = packet_test::star(3, k400G, Time::us(1));
  const auto programs = packet_test::transfers(3, {{0, 2, 4 << 20}, {1, 2, 4 << 20}});
  PacketConfig cfg = as_built(FlowControl::Pfc, Bytes::mib(16));
  cfg.congestion = CongestionControl::None;
  cfg.ecn = false;
  cfg.pfc_xoff = Bytes(200'000);
  const Outcome r = simulate(star, programs, cfg);
  EXPECT_GT(r.stats.pfc_pauses, 0u);
  EXPECT_EQ(r.stats.peak_headroom, 23 * 4178);
  EXPECT_EQ(r.stats.headroom_overflows, 0u);
  EXPECT_EQ(r.stats.payload_bytes_delivered, 8u << 20);
  cfg.buffers.headroom = Bytes(20'000);
  const Outcome small = simulate(star, programs, cfg);
  EXPECT_GT(small.stats.headroom_overflows, 0u);
  EXPECT_LE(small.stats.headroom_overflows, 23 * small.stats.pfc_pauses);
}

// A lossy incast through the engine never queues beyond the dynamic threshold: the output's
// queue stays within alpha / (1 + alpha) x B = 128 KiB of a 256 KiB buffer.
TEST(SwitchBuffers, LossyIncastQueueStaysWithinTheThreshold) {
  std::vector<packet_test::Transfer> list;
  for (Rank s = 0; s < 8; ++s) list.push_back({s, 8, 256 << 10});
  const Topology star = packet_test::star(9, k400G, Time::ns(100));
  PacketConfig cfg = as_built(FlowControl::None, Bytes(256 << 10));
  const Outcome r = simulate(star, packet_test::transfers(9, list), cfg);
  EXPECT_GT(r.stats.drops, 0u);
  EXPECT_EQ(r.stats.payload_bytes_delivered, 8u * (256 << 10));
  double peak = 0;
  for (double q : r.stats.links.peak_queue) peak = std::max(peak, q);
  EXPECT_GT(peak, 0.0);
  EXPECT_LE(peak, 128.0 * 1024);
}

// Catalog: switches carry their buffer's cell and ECN; as_built takes them unless the scenario
// sets ecn thresholds.
TEST(SwitchBuffers, CatalogCellsAndEcn) {
  const SwitchBufferSpec* th5 = switch_buffer_spec("tomahawk5");
  ASSERT_NE(th5, nullptr);
  EXPECT_EQ(th5->cell, Bytes(254));
  const SwitchBufferSpec* sn = switch_buffer_spec("sn5600");
  ASSERT_NE(sn, nullptr);
  EXPECT_EQ(sn->ecn_kmin, Bytes(150'000));
  EXPECT_EQ(switch_spec("tomahawk4").buffer, Bytes(113'000'000));
  EXPECT_EQ(switch_spec("sn3700").buffer, Bytes(42'000'000));
  EXPECT_EQ(switch_buffer_spec("nonexistent"), nullptr);
}

// Two flows from leaf 0 to leaf 1 whose ECMP hashes pick the same spine share one uplink and
// take twice as long as alone: 2 x 256 packets x 4,122 B / 50 GB/s = 42.2 us. With adaptive
// routing at the leaf the second flow's packets find that uplink busy and take the other: each
// flow alone on its path, 256 x 82.44 ns + 4 hops x 100 ns = 21.50464 us.
TEST(SwitchAdaptiveRouting, SpreadsAnEcmpCollisionOverTwoUplinks) {
  const Topology topo = packet_test::leaf_spine(2, 2, 2, k400G, Time::ns(100));
  packet_test::TinyRouter ecmp(topo, RoutingPolicy::Ecmp);
  std::vector<PathShare> a, b;
  std::uint16_t ch = 1;
  ecmp.route(FlowKey{0, 2, 0}, nullptr, a);
  for (;; ++ch) {
    ecmp.route(FlowKey{1, 3, ch}, nullptr, b);
    if (topo.target(b.front().hops[1]) == topo.target(a.front().hops[1])) break;
  }
  const auto programs = packet_test::transfers(4, {{0, 2, 1 << 20, 0}, {1, 3, 1 << 20, ch}});
  PacketConfig cfg = packet_config_for_fabric("infiniband");
  const Outcome collided = simulate(topo, programs, cfg);
  EXPECT_GE(collided.result.makespan, Time::ps(2 * 256 * 82'440));
  cfg.switch_adaptive = true;
  const Outcome ar = simulate(topo, programs, cfg, RoutingPolicy::Spray);
  EXPECT_EQ(ar.result.makespan, Time::ps(256 * 82'440 + 400'000));
  EXPECT_EQ(ar.stats.payload_bytes_delivered, 2u << 20);
}

// The scenario's keys: `buffers: {model: as_built, ...}` and `adaptive: switch`; a bad model
// names its key and place.
TEST(SwitchBuffers, ScenarioKeys) {
  ArgNode packet = ArgNode::map("packet", SourceLocation{"s.yaml", 1, 1});
  ArgNode buffers = ArgNode::map("packet.buffers", SourceLocation{"s.yaml", 2, 3});
  buffers.set("model", ArgNode::scalar("as_built", "packet.buffers.model", {"s.yaml", 3, 5}));
  buffers.set("cell", ArgNode::scalar("254B", "packet.buffers.cell", {"s.yaml", 4, 5}));
  buffers.set("ingress_alpha", ArgNode::scalar("0.5", "packet.buffers.ingress_alpha"));
  packet.set("buffers", buffers);
  packet.set("adaptive", ArgNode::scalar("switch", "packet.adaptive"));
  ArgNode cc = ArgNode::map("packet.ib_cc");
  cc.set("threshold", ArgNode::scalar("32KB", "packet.ib_cc.threshold"));
  cc.set("ccti_timer", ArgNode::scalar("5us", "packet.ib_cc.ccti_timer"));
  packet.set("ib_cc", cc);
  const PacketConfig c = packet_config_from_args(packet, packet_config_for_fabric("infiniband"));
  EXPECT_TRUE(c.buffers.as_built);
  EXPECT_EQ(c.buffers.cell, Bytes(254));
  EXPECT_EQ(c.buffers.ingress_alpha, 0.5);
  EXPECT_TRUE(c.switch_adaptive);
  EXPECT_FALSE(c.adaptive);
  EXPECT_TRUE(c.ib_cc);
  EXPECT_EQ(c.ib_cc_threshold, Bytes(32'000));
  EXPECT_EQ(c.ib_cc_timer, Time::us(5));
  buffers.set("model", ArgNode::scalar("deep", "packet.buffers.model", {"s.yaml", 3, 5}));
  packet.set("buffers", buffers);
  try {
    packet_config_from_args(packet, packet_config_for_fabric("infiniband"));
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("s.yaml:3:5"), std::string::npos) << e.what();
  }
}

// IB congestion control on a hot spot: hosts 0, 1 and 2 send to host 3 while host 0 also sends
// to host 4 (the victim). Credits are per input port and lane, so the hot flow's packets that
// wait for host 3's port hold host 0's credits and the victim, sharing host 0's link, waits
// with them at about the hot flow's third of the port (IBTA Annex A10's victim flow). With FECN /
// BECN the hot senders slow to their share before host 0's input fills, and the victim takes the
// rest of host 0's link.
TEST(IbCongestionControl, FreesAVictimFromAHotSpot) {
  const Topology star = packet_test::star(5, k400G, Time::ns(100));
  const std::uint64_t hot = 4 << 20, victim = 2 << 20;
  const auto programs = packet_test::transfers(
      5, {{0, 3, hot, 0}, {1, 3, hot, 0}, {2, 3, hot, 0}, {0, 4, victim, 1}});
  PacketConfig cfg = packet_config_for_fabric("infiniband");
  cfg.port_buffer = Bytes(64 << 10);
  auto victim_time = [&](const Outcome& o) {
    for (std::size_t i = 0; i < o.stats.flows.size(); ++i)
      if (o.stats.flows.dst(i) == 4) return o.stats.flows.end(i) - o.stats.flows.start(i);
    return Time::zero();
  };
  const Outcome off = simulate(star, programs, cfg);
  cfg.ib_cc = true;
  cfg.ib_cc_threshold = Bytes(16 << 10);
  const Outcome on = simulate(star, programs, cfg);
  const Time alone = transfer_time(Bytes(victim / 4096 * 4122), k400G);
  EXPECT_EQ(off.stats.cnps, 0u);
  EXPECT_GT(on.stats.ecn_marks, 0u);
  EXPECT_GT(on.stats.cnps, 0u);
  EXPECT_EQ(on.stats.payload_bytes_delivered, 3 * hot + victim);
  // Round robin at host 0 sends one victim packet per hot one, and the hot ones leave at a
  // third of the port: the victim gets about R / 3 (3x its time alone, 42.21 us). Paced to
  // their third, the hot flows leave host 0's link two thirds for the victim: at most 1.5x.
  EXPECT_GE(victim_time(off), alone.scaled(2.5));
  EXPECT_LE(victim_time(on), alone.scaled(1.5));
}

// Property over random runs: with adaptive routing at the switches and IB CC on two lanes,
// credits never go below zero and all come back once the buffers drain; every byte arrives.
TEST(SwitchAdaptiveRouting, CreditsStayNonNegativeAndConservedOverRandomRuns) {
  const Topology topo = packet_test::leaf_spine(2, 3, 4, k400G, Time::ns(100));
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    Rng rng(seed);
    std::vector<packet_test::Transfer> list;
    std::uint64_t total = 0;
    for (int i = 0; i < 16; ++i) {
      const auto src = static_cast<Rank>(rng.below(8));
      const auto dst = static_cast<Rank>((src + 1 + rng.below(7)) % 8);
      const std::uint64_t bytes = 4096 * (1 + rng.below(64));
      list.push_back({src, dst, bytes, static_cast<std::uint16_t>(rng.below(4))});
      total += bytes;
    }
    PacketConfig cfg = packet_config_for_fabric("infiniband");
    cfg.port_buffer = Bytes(32 << 10);
    cfg.virtual_lanes = 2;
    cfg.switch_adaptive = true;
    cfg.ib_cc = true;
    cfg.ib_cc_threshold = Bytes(8 << 10);
    const Outcome r =
        simulate(topo, packet_test::transfers(8, list), cfg, RoutingPolicy::Spray, seed);
    EXPECT_EQ(r.stats.negative_credits, 0u) << "seed " << seed;
    EXPECT_EQ(r.stats.credits_final, r.stats.credits_initial) << "seed " << seed;
    EXPECT_EQ(r.stats.payload_bytes_delivered, total) << "seed " << seed;
  }
}

// InfiniBand credits count 64-byte blocks (IBTA Vol. 1, 7.9.4). A port buffer of two packets'
// bytes (2 x 4,122 = 8,244 B) advertises 128 blocks (8,192 B), and a packet takes ceil(4,122 /
// 64) = 65 of them: one packet at a time, where credits in bytes let two go. Store and forward,
// no switch latency, 100 ns cables, T = 82.44 ns: a packet's credits come back once it has left
// the switch (T + L + T) and the return has crossed the cable (L), a cycle of C = 2 T + 2 L =
// 364.88 ns, and the 16th packet lands C after it starts: 16 C = 5,838.08 ns (byte credits:
// about half). The two credit-controlled links (each GPU's into the switch), one lane each,
// hold 2 x 128 blocks at the start and again at the end.
TEST(InfiniBandCredits, PacketsTakeWhole64ByteBlocks) {
  const Topology star = packet_test::star(2, k400G, Time::ns(100));
  PacketConfig cfg = packet_config_for_fabric("infiniband");
  cfg.port_buffer = Bytes(2 * 4122);
  cfg.virtual_lanes = 1;
  cfg.cut_through = false;
  cfg.switch_latency = Time::zero();
  const Outcome r = simulate(star, packet_test::transfers(2, {{0, 1, 16 * 4096}}), cfg);
  EXPECT_EQ(r.result.makespan, Time::ps(16 * 364'880));
  EXPECT_EQ(r.stats.credits_initial, 256);
  EXPECT_EQ(r.stats.credits_final, 256);
  EXPECT_EQ(r.stats.negative_credits, 0u);
  EXPECT_GT(r.stats.credit_stalls, 0u);
}

// Every fabric runs to completion with buffers as built and delivers each byte once: RoCE with
// DCQCN and dynamic PFC, Ultra Ethernet trimming into the control queue, TCP dropping. Every
// egress queue's booked bytes return to zero: an ACK under Ultra Ethernet's control_priority is
// booked on the control queue and must be released from it, not from its lane's data queue.
TEST(SwitchBuffers, EveryFabricDeliversEverythingAsBuilt) {
  std::vector<packet_test::Transfer> list;
  for (Rank s = 0; s < 6; ++s) list.push_back({s, 6, 256 << 10});
  const Topology star = packet_test::star(7, k400G, Time::ns(100));
  const auto programs = packet_test::transfers(7, list);
  for (const char* fabric : {"roce", "ultra_ethernet", "tcp"}) {
    PacketConfig cfg = packet_config_for_fabric(fabric);
    cfg.buffers.as_built = true;
    cfg.switch_buffer = Bytes(1 << 20);
    cfg.trimming = cfg.model == FabricModel::UltraEthernet;
    const Outcome r =
        simulate(star, programs, cfg, cfg.spray ? RoutingPolicy::Spray : RoutingPolicy::Ecmp);
    EXPECT_EQ(r.stats.payload_bytes_delivered, 6u * (256 << 10)) << fabric;
    EXPECT_EQ(r.stats.headroom_overflows, 0u) << fabric;
    EXPECT_EQ(r.stats.egress_booked_final, 0) << fabric;
    if (cfg.flow_control == FlowControl::Pfc) {
      EXPECT_EQ(r.stats.drops, 0u);
    }
  }
}

// A 2-to-1 incast into a 1 Gb/s port, 86 packets of 4,178 B from each 400 Gb/s sender: while
// the groups fill (86 x 83.56 ns = 7.2 us) only the first packet is on the output (33.4 us), so
// the pool S = 1 MiB = 250.97 packets empties by arrivals alone. With alpha = 1 a group passes
// its threshold when its n w > S - U, U the two groups' bytes: at its 84th packet (3 x 84 - 1 >
// 250.97 for the first, 3 x 84 > 250.97 for the second, not at 83), and the PAUSE, 100 ns away,
// lets packets 85 and 86 (started 83.56 and 167.12 ns after the 84th) still arrive: 2 pauses.
// With alpha = 2 the threshold is at the 101st packet (5 k - 2 > 2 x 250.97): no pause at all.
TEST(SwitchBuffers, IncastPausesForGivenBufferAndAlpha) {
  TopologyBuilder b("slow_sink");
  for (std::uint32_t i = 0; i < 3; ++i) b.add_device(packet_test::gpu(i));
  const DeviceId sw = b.add_device(packet_test::fabric_switch(0));
  b.add_link(packet_test::link(0, sw, k400G, Time::ns(100)));
  b.add_link(packet_test::link(1, sw, k400G, Time::ns(100)));
  b.add_link(packet_test::link(2, sw, Bandwidth::gbps(1), Time::ns(100)));
  const Topology topo = std::move(b).build();
  const std::uint64_t bytes = 86 * 4096;
  const auto programs = packet_test::transfers(3, {{0, 2, bytes}, {1, 2, bytes}});
  for (const auto& [alpha, pauses] : {std::pair{1.0, 2u}, {2.0, 0u}}) {
    PacketConfig cfg = as_built(FlowControl::Pfc, Bytes((1 << 20) + 3 * 10'000));
    cfg.buffers.headroom = Bytes(10'000);  // 3 ports: the pool is 1 MiB
    cfg.buffers.ingress_alpha = alpha;
    cfg.congestion = CongestionControl::None;
    cfg.ecn = false;
    const Outcome r = simulate(topo, programs, cfg);
    EXPECT_EQ(r.stats.pfc_pauses, pauses) << "alpha " << alpha;
    EXPECT_EQ(r.stats.pfc_resumes, pauses) << "alpha " << alpha;
    EXPECT_EQ(r.stats.peak_headroom, pauses ? 2 * 4178 : 0) << "alpha " << alpha;
    EXPECT_EQ(r.stats.payload_bytes_delivered, 2 * bytes);
  }
}

}  // namespace
}  // namespace lockstep
