// Per-link counters of the packet engine (telemetry/link_counters.hpp): bytes are conserved at
// every switch, and a small incast gives the PAUSE and drop counts derived by hand.
#include <gtest/gtest.h>

#include <map>

#include "fixtures.hpp"
#include "lockstep/engine/packet/packet_engine.hpp"
#include "lockstep/telemetry/link_counters.hpp"

namespace lockstep {
namespace {

using packet_test::Outcome;
using packet_test::simulate;

const Bandwidth k400G = Bandwidth::gbps(400);
constexpr std::uint64_t kWire = 4096 + 26;  // one full packet on the wire

// N senders to host N through one switch (device N + 1), 400G links of 100 ns.
struct Incast {
  Topology topo;
  MaterializedProgramSet programs;
};

Incast incast(Rank senders, std::uint64_t bytes) {
  std::vector<packet_test::Transfer> list;
  for (Rank s = 0; s < senders; ++s) list.push_back({s, senders, bytes});
  return {packet_test::star(senders + 1, k400G, Time::ns(100)),
          packet_test::transfers(senders + 1, list)};
}

// At every switch, the wire bytes that came in left again or were lost there (dropped, or
// trimmed off): sum over in-links + the switch's own PFC frames (`generated`, 84 B each) = sum
// over out-links + dropped bytes of the out-links. Without a loss the payload is conserved too.
void expect_conserved(const Topology& topo, const LinkCounters& c, double generated = 0) {
  for (DeviceId d = 0; d < topo.num_devices(); ++d) {
    if (topo.device(d).kind != DeviceKind::Switch) continue;
    double in = 0, out = 0, lost = 0, payload_in = 0, payload_out = 0;
    for (const Port& p : topo.ports(d)) {
      out += c.wire_bytes[p.out];
      lost += c.dropped_bytes[p.out];
      in += c.wire_bytes[p.out ^ 1u];  // the same cable, towards d
      payload_out += c.bytes[p.out];
      payload_in += c.bytes[p.out ^ 1u];
    }
    EXPECT_DOUBLE_EQ(in + generated, out + lost) << "switch " << d;
    if (lost == 0) {
      EXPECT_DOUBLE_EQ(payload_in, payload_out) << "switch " << d;
    }
  }
}

LinkCounters counters_of(const Outcome& r) {
  EXPECT_EQ(r.stats.links.wire_bytes, r.result.link_bytes);
  return r.stats.links;
}

TEST(PacketTelemetry, BytesAreConservedAtSwitchesLosslessLossyAndTrimmed) {
  const Incast in = incast(8, 512 << 10);
  PacketConfig roce = packet_config_for_fabric("roce");
  roce.switch_buffer = Bytes(256 << 10);
  PacketConfig lossy = packet_config_for_fabric("ethernet");
  lossy.switch_buffer = Bytes(256 << 10);
  PacketConfig trim = packet_config_for_fabric("ultra_ethernet");
  trim.switch_buffer = Bytes(256 << 10);
  trim.trimming = true;
  const Outcome a = simulate(in.topo, in.programs, roce);
  const Outcome b = simulate(in.topo, in.programs, lossy);
  const Outcome t = simulate(in.topo, in.programs, trim, RoutingPolicy::Spray);
  // The star's one switch sends every PAUSE and RESUME frame of the lossless run.
  EXPECT_GT(a.stats.pfc_frames, 0u);
  expect_conserved(in.topo, counters_of(a), 84.0 * static_cast<double>(a.stats.pfc_frames));
  expect_conserved(in.topo, counters_of(b));
  expect_conserved(in.topo, counters_of(t));
  const LinkReport la = link_totals(counters_of(a)), lb = link_totals(counters_of(b)),
                   lt = link_totals(counters_of(t));
  EXPECT_EQ(la.dropped_bytes, 0.0);  // lossless
  // Lossless, every payload byte crosses the sender's link and the switch's link to the
  // receiver once: 2 x 8 x 512 KiB, and the wire more (82 B of RoCEv2 header a packet,
  // the ACKs, the PAUSE frames).
  EXPECT_DOUBLE_EQ(la.bytes, 2.0 * 8 * (512 << 10));
  EXPECT_GT(la.wire_bytes, la.bytes);
  EXPECT_GT(lb.drops, 0u);
  EXPECT_EQ(lb.retransmissions, b.stats.retransmissions);  // per link sums to the run's total
  EXPECT_GT(lt.trims, 0u);
  // A trimmed packet loses all but its header.
  EXPECT_DOUBLE_EQ(lt.dropped_bytes, static_cast<double>(lt.trims) * (4096 + 26 - 26));
  EXPECT_EQ(lt.trims, t.stats.trims);
}

// Lossless (RoCE, PFC, no ECN): 4 senders of 16 packets each. The egress to the receiver sends
// one packet per 82.4 ns and the four ingresses take turns, so after k packets of each arrived an
// ingress still holds 3k/4 of them: Xoff = 8 packets is crossed at k = 11, once per ingress. The
// PAUSE reaches the sender 100 ns (1.2 packets) later, with at most 16 - 12 = 4 packets left to
// send; with Xon = empty they cannot reach Xoff again: exactly one PAUSE per sender, 4 in all.
PacketConfig lossless_incast() {
  PacketConfig cfg = packet_config_for_fabric("roce");
  cfg.payload = Bytes(4096);
  cfg.header = Bytes(26);
  cfg.ecn = false;
  cfg.congestion = CongestionControl::None;
  cfg.switch_latency = Time::zero();
  cfg.switch_buffer = Bytes(1 << 20);
  cfg.pfc_xoff = Bytes(8 * kWire);
  cfg.pfc_xon = Bytes(1);
  return cfg;
}

TEST(PacketTelemetry, LosslessIncastPausesOncePerSender) {
  const Incast in = incast(4, 16 * 4096);
  const Outcome r = simulate(in.topo, in.programs, lossless_incast());
  EXPECT_EQ(r.stats.pfc_pauses, 4u);
  EXPECT_EQ(r.stats.drops, 0u);
  for (Rank s = 0; s < 4; ++s) {
    const DirLinkId up = in.topo.ports(s).front().out;  // sender -> switch
    EXPECT_EQ(r.stats.links.pauses[up], 1u) << "sender " << s;
    EXPECT_GT(r.stats.links.paused[up], Time::zero());
  }
  const DirLinkId down = in.topo.ports(4).front().out ^ 1u;  // switch -> receiver
  EXPECT_EQ(r.stats.links.pauses[down], 0u);
  // The egress queue peaks below all 64 packets: the pauses held some at the senders.
  EXPECT_LT(r.stats.links.peak_queue[down], 64.0 * kWire);
}

// Lossy: 4 senders each send their whole 10-packet initial window at once into a switch of 12
// packets' buffer (the dynamic threshold lifted). Per 82.4 ns slot 4 packets arrive and, after
// them (their events were queued earlier), the egress frees one. Used: slot 0 -> 4, slot 1 ->
// 8 - 1 = 7, slot 2 -> 11 - 1 = 10, slot 3 admits 2 (drops 2), slots 4..9 admit 1 and drop 3
// each: 2 + 6 x 3 = 20 drops, all on the switch -> receiver link, 20 retransmissions. Every
// packet is acknowledged: with TCP's ACK every second packet, a sender whose last packet to
// arrive was an odd one in order has its ACK held for the 40 ms delayed-ACK timer, past the
// 1 ms RTO, which then resends that packet too (3 more retransmissions, all duplicates).
PacketConfig lossy_incast() {
  PacketConfig cfg = packet_config_for_fabric("ethernet");
  cfg.payload = Bytes(4096);
  cfg.header = Bytes(26);
  cfg.ecn = false;
  cfg.switch_latency = Time::zero();
  cfg.host_per_message = Time::zero();
  cfg.host_per_byte_ps = Time::zero();
  cfg.initial_window = 10;
  cfg.dynamic_threshold = 1e6;
  cfg.switch_buffer = Bytes(12 * kWire);
  cfg.ack_every = 1;
  return cfg;
}

TEST(PacketTelemetry, LossyIncastDropsWhatTheBufferCannotHold) {
  const Incast in = incast(4, 10 * 4096);
  const Outcome r = simulate(in.topo, in.programs, lossy_incast());
  const DirLinkId down = in.topo.ports(4).front().out ^ 1u;  // switch -> receiver
  EXPECT_EQ(r.stats.links.drops[down], 20u);
  EXPECT_EQ(r.stats.drops, 20u);
  EXPECT_DOUBLE_EQ(r.stats.links.dropped_bytes[down], 20.0 * kWire);
  EXPECT_EQ(r.stats.retransmissions, 20u);
  EXPECT_EQ(r.stats.payload_bytes_delivered, 4u * 10 * 4096);
  expect_conserved(in.topo, counters_of(r));
}

// The same incasts sampled every 100 ns (the links' series). Packet j (from 0) of every sender
// reaches the switch at 100 + 82.44 j ns (cut-through); the egress frees one packet per 82.44 ns
// from 182.44 ns, after the arrivals of the same instant, taking the ingresses in turn from 0.
// When the k-th packets arrive (100 + 82.44 (k - 1) ns), k - 2 have left: at k = 11 ingress 0 has
// released 3 and holds 8 (not over Xoff), ingresses 1-3 released 2 and hold 9: 3 PAUSEs at
// 924.4 ns (period 9); at k = 12 ingress 0 holds 12 - 3 = 9: its PAUSE at 1006.84 ns (period 10).
// Each sender is paused 100 ns + 1.68 ns later (the 84 B PAUSE frame at 400 Gb/s on the idle
// reverse link; no packet starts in those 1.68 ns), so period 10 holds 1100 - 1026.08 = 73.92 ns
// of pause on senders 1-3 and period 11 1200 - 1108.52 = 91.48 ns on sender 0.
TEST(PacketTelemetry, LosslessIncastPausesInTheirPeriods) {
  const Incast in = incast(4, 16 * 4096);
  PacketConfig cfg = lossless_incast();
  cfg.sample_period = Time::ns(100);
  const Outcome r = simulate(in.topo, in.programs, cfg);
  std::uint64_t total = 0;
  for (Rank s = 0; s < 4; ++s) {
    const DirLinkId up = in.topo.ports(s).front().out;
    const std::span<const PeriodEvents> events = r.stats.link_series.events(up);
    std::uint32_t pauses = 0, period = 0;
    double paused_us = 0;
    for (const PeriodEvents& e : events) {
      if (e.count[PeriodEvents::Pause] > 0) period = e.period;
      pauses += e.count[PeriodEvents::Pause];
      paused_us += e.paused_us;
      EXPECT_EQ(e.count[PeriodEvents::Drop], 0u);
    }
    EXPECT_EQ(pauses, 1u) << "sender " << s;
    EXPECT_EQ(period, s == 0 ? 10u : 9u) << "sender " << s;
    const double first = s == 0 ? 0.09148 : 0.07392;
    ASSERT_GE(events.size(), 2u);
    EXPECT_NEAR(events[1].paused_us, first, 1e-6) << "sender " << s;
    // The per-period paused time adds up to the link's total.
    EXPECT_NEAR(paused_us, r.stats.links.paused[up].microseconds(), 1e-4) << "sender " << s;
    total += pauses;
  }
  EXPECT_EQ(total, r.stats.pfc_pauses);
}

// Lossy: the drops of the slots above at 100 + 82.44 j ns: 2 at j = 3 (347.32 ns), 3 at each
// of j = 4..9 (429.76, 512.2, 594.64, 677.08, 759.52, 841.96 ns): per 100 ns period 3..8,
// 2, 3, 6, 3, 3, 3 = 20 drops.
TEST(PacketTelemetry, LossyIncastDropsInTheirPeriods) {
  const Incast in = incast(4, 10 * 4096);
  PacketConfig cfg = lossy_incast();
  cfg.sample_period = Time::ns(100);
  const Outcome r = simulate(in.topo, in.programs, cfg);
  const DirLinkId down = in.topo.ports(4).front().out ^ 1u;
  std::map<std::uint32_t, std::uint32_t> drops;
  for (const PeriodEvents& e : r.stats.link_series.events(down))
    if (e.count[PeriodEvents::Drop] > 0) drops[e.period] = e.count[PeriodEvents::Drop];
  const std::map<std::uint32_t, std::uint32_t> expected = {{3, 2}, {4, 3}, {5, 6},
                                                           {6, 3}, {7, 3}, {8, 3}};
  EXPECT_EQ(drops, expected);
  // Every retransmission shows on a sender's first link, in a period after its drop.
  std::uint32_t retransmissions = 0;
  for (Rank s = 0; s < 4; ++s)
    for (const PeriodEvents& e : r.stats.link_series.events(in.topo.ports(s).front().out)) {
      retransmissions += e.count[PeriodEvents::Retransmission];
      if (e.count[PeriodEvents::Retransmission] > 0) {
        EXPECT_GT(e.period, 3u);
      }
    }
  EXPECT_EQ(retransmissions, 20u);
}

// The utilisation series integrates to the link's bytes: sum of u x period = bytes / bandwidth.
TEST(PacketTelemetry, UtilisationSeriesIntegratesToTheLinksBytes) {
  const Incast in = incast(4, 16 * 4096);
  EngineOptions options;
  options.record_link_series = true;
  options.link_sample_period = Time::ns(100);
  const Outcome r = simulate(in.topo, in.programs, lossless_incast(), options);
  ASSERT_FALSE(r.result.link_series.empty());
  for (const LinkSeries& s : r.result.link_series) {
    double integral_s = 0;
    for (float u : s.utilisation) integral_s += u * 100e-9;
    const double bps = in.topo.link(Topology::link_of(s.link)).bandwidth.bytes_per_second();
    EXPECT_NEAR(integral_s, r.result.link_bytes[s.link] / bps, 1e-6 * integral_s) << s.link;
  }
  // 64 packets crossed the switch -> receiver link: 64 x 82.44 ns.
  const DirLinkId down = in.topo.ports(4).front().out ^ 1u;
  EXPECT_DOUBLE_EQ(r.result.link_bytes[down], 64.0 * kWire);
}

}  // namespace
}  // namespace lockstep
