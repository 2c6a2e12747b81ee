// Ultra Ethernet 1.0 as the packet engine models it (docs/packet-engine.md section 4): trimming
// on by default, NSCC's four quadrants and quick adapt, RCCC's receiver credit, the ROD and RUD
// delivery modes, and link-level retry against end-to-end recovery of corrupted frames.
#include "../../../../src/engine/packet/uec.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "fixtures.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/engine/packet/packet_engine.hpp"

namespace lockstep {
namespace {

using packet::nscc_on_ack;
using packet::nscc_quick_adapt;
using packet::NsccParams;
using packet::NsccQuadrant;
using packet::NsccWindow;
using packet_test::Outcome;
using packet_test::simulate;

const Bandwidth k400G = Bandwidth::gbps(400);
constexpr double kWire = 4096 + 110;  // UEC payload + header per packet, bytes

TEST(Uec, PresetTrimsAndRunsNsccOnRud) {
  const PacketConfig uec = packet_config_for_fabric("uec");
  EXPECT_TRUE(uec.trimming);
  EXPECT_EQ(uec.congestion, CongestionControl::Nscc);
  EXPECT_EQ(uec.delivery, Delivery::Rud);
  EXPECT_TRUE(uec.spray);
  // SRD, Slingshot and Spectrum-X are not UEC: they keep the sprayed delay-window model.
  for (const char* other : {"efa", "slingshot", "spectrum_x"}) {
    const PacketConfig c = packet_config_for_fabric(other);
    EXPECT_FALSE(c.trimming) << other;
    EXPECT_EQ(c.congestion, CongestionControl::Delay) << other;
  }
}

// Each quadrant on a constructed ACK: base RTT 10 ns, target 4 ns, window 10 packets.
TEST(Uec, NsccQuadrantsReactAsSpecified) {
  const NsccParams p{4000, 10000};
  auto fresh = [] {
    NsccWindow w;
    w.cwnd = 10;
    w.max_cwnd = 100;
    return w;
  };
  NsccWindow w = fresh();
  // Delay 2 ns below the 4 ns target, no mark: + 4 x (4 - 2) / 4 / 10 = 0.2 packets.
  EXPECT_EQ(nscc_on_ack(w, p, 12000, false, 0), NsccQuadrant::ProportionalIncrease);
  EXPECT_DOUBLE_EQ(w.cwnd, 10.2);
  // Delay 6 ns above target, no mark: fair increase of 1 / cwnd.
  w = fresh();
  EXPECT_EQ(nscc_on_ack(w, p, 16000, false, 0), NsccQuadrant::FairIncrease);
  EXPECT_DOUBLE_EQ(w.cwnd, 10.1);
  // Delay 6 ns and a mark: cut by 0.8 x (6 - 4) / 6, to 10 x (1 - 0.26667) = 7.3333.
  w = fresh();
  EXPECT_EQ(nscc_on_ack(w, p, 16000, true, 0), NsccQuadrant::MultiplicativeDecrease);
  EXPECT_DOUBLE_EQ(w.cwnd, 10 * (1 - 0.8 * 2.0 / 6.0));
  // Once per round trip: a second marked ACK 1 ns later changes nothing.
  nscc_on_ack(w, p, 16000, true, 1000);
  EXPECT_DOUBLE_EQ(w.cwnd, 10 * (1 - 0.8 * 2.0 / 6.0));
  // Delay 100 ns: 0.8 x 96 / 100 = 0.768 would cut more than half; half it is.
  w = fresh();
  nscc_on_ack(w, p, 110000, true, 0);
  EXPECT_DOUBLE_EQ(w.cwnd, 5);
  // A mark with the delay below target: no change.
  w = fresh();
  EXPECT_EQ(nscc_on_ack(w, p, 12000, true, 0), NsccQuadrant::NoChange);
  EXPECT_DOUBLE_EQ(w.cwnd, 10);
  // Fast increase: the 10th ACK in a row under target / 8 of delay (a whole window) adds one.
  w = fresh();
  w.empty_acks = 9;
  nscc_on_ack(w, p, 10000, false, 0);
  EXPECT_DOUBLE_EQ(w.cwnd, 11);
  // Never past the cap.
  w = fresh();
  w.max_cwnd = 10.1;
  nscc_on_ack(w, p, 12000, false, 0);
  EXPECT_DOUBLE_EQ(w.cwnd, 10.1);
}

TEST(Uec, QuickAdaptTakesWhatTheLastRoundTripDelivered) {
  const NsccParams p{4000, 10000};
  NsccWindow w;
  w.cwnd = 20;
  w.max_cwnd = 100;
  // Three ACKs in the first 14 ns period, then one in the next: the last period delivered 3.
  for (std::int64_t t : {0, 1000, 2000, 14000}) nscc_on_ack(w, p, 10000, false, t);
  w.cwnd = 20;
  EXPECT_TRUE(nscc_quick_adapt(w, p, 15000));
  EXPECT_DOUBLE_EQ(w.cwnd, 3);
  w.cwnd = 20;
  EXPECT_FALSE(nscc_quick_adapt(w, p, 20000));  // within one period of the last
  EXPECT_DOUBLE_EQ(w.cwnd, 20);
}

// Two senders, 512 packets each, all sent at once (fixed window, no congestion control) into a
// switch that buffers 64 packets; every link 400 Gb/s, 50 us (NACKs come back after the burst).
// Two packets arrive per packet time T and one leaves, so once 64 are buffered every other
// arrival is trimmed; each trimmed header (110 of 4206 B) also takes the output before data
// (control first), so data leaves at 1 - 110 / 4206 per T. Over the burst, 1024 = 64 (buffered)
// + D (sent on) + trims with D = 512 - trims x 110 / 4206: trims = 448 / (1 - 110 / 4206) = 460
// (to a packet or two at the edges). The retransmissions come back at that rate into an emptied
// queue that drains at 1 per T: it grows by 2.7% of 460 = 12 < 64 packets, no second trim.
TEST(Uec, IncastTrimsWhatTheBufferCannotHoldAndNacksEachOnce) {
  std::vector<packet_test::Transfer> list = {{0, 2, 512 * 4096}, {1, 2, 512 * 4096}};
  const Topology topo = packet_test::star(3, k400G, Time::us(50));
  const auto programs = packet_test::transfers(3, list);
  PacketConfig cfg = packet_config_for_fabric("uec");
  cfg.congestion = CongestionControl::None;
  cfg.initial_window = 512;
  cfg.rto_min = Time::ms(10);
  cfg.switch_buffer = Bytes(64 * 4206);
  cfg.dynamic_threshold = 1000;  // the shared buffer alone limits the queue
  const Outcome r = simulate(topo, programs, cfg, RoutingPolicy::Spray);
  const double expected = 448 / (1 - 110.0 / 4206);
  EXPECT_NEAR(static_cast<double>(r.stats.trims), expected, 2.0);
  EXPECT_EQ(r.stats.nacks, r.stats.trims);
  EXPECT_EQ(r.stats.retransmissions, r.stats.trims);
  EXPECT_EQ(r.stats.drops, 0u);
  EXPECT_EQ(r.stats.timeouts, 0u);
  EXPECT_EQ(r.stats.payload_bytes_delivered, 2u * 512 * 4096);
}

// Four senders of 4 MiB to one receiver on a 400 Gb/s star (1 us links) whose switch buffers
// 2 MiB (a queue may take half of it at most: dynamic threshold 1). Without credits the senders'
// windows overrun it; with RCCC the receiver grants one packet per packet that arrives, round
// robin, keeping its line rate for a round trip at the target delay out, so each sender gets a
// quarter of it and all four finish together after 4 x 1024 x 4206 B at 50 GB/s = 344.6 us. Each
// flow starts with one bandwidth-delay product of credit (base RTT 2 x 2 us + 84.12 ns + the
// 110 B ACK's 2.2 ns at 50 GB/s: 204,316 B) and is granted the rest of its 1024 x 4206 =
// 4,306,944 B in packets: ceil(4,102,628 / 4206) = 976 grants each, 3,904 in all.
TEST(Uec, RcccSharesTheReceiverAmongItsSendersWithoutTrims) {
  std::vector<packet_test::Transfer> list;
  for (Rank s = 0; s < 4; ++s) list.push_back({s, 4, 4u << 20});
  const Topology topo = packet_test::star(5, k400G, Time::us(1));
  const auto programs = packet_test::transfers(5, list);
  PacketConfig cfg = packet_config_for_fabric("uec");
  cfg.switch_buffer = Bytes(2 << 20);
  cfg.congestion = CongestionControl::Rccc;
  const Outcome r = simulate(topo, programs, cfg, RoutingPolicy::Spray);
  EXPECT_EQ(r.stats.trims, 0u);
  EXPECT_EQ(r.stats.credit_grants, 3904u);
  // Grants are control packets on the wire beside the ACKs, one per data packet (4 x 1024):
  // 4,096 + 3,904 = 8,000 sent, all delivered.
  EXPECT_EQ(r.stats.control_sent, 8000u);
  EXPECT_EQ(r.stats.control_delivered, 8000u);
  // The receiver's link is never idle once the first packet is in (2 us + 84.12 ns).
  const double drain = 4 * 1024 * kWire / 50e9 + 2.08412e-6;
  EXPECT_NEAR(r.result.makespan.seconds(), drain, 0.002 * drain);
  ASSERT_EQ(r.stats.flows.size(), 4u);
  // A quarter each, but for a head start: the receiver grants the first flow it knows up to its
  // budget (line rate x (base RTT + 4 us target) = 404,316 B, the base RTT counting the 110 B
  // ACK's serialisation) before the others' first packets are in, D = 404,316 - 204,316 =
  // 200,000 B beyond its initial credit (one base RTT's bytes). That flow ends 3 D / R
  // = 12 us early, at 2.08 us + (4 x 4,306,944 - 3 D) / R = 334.64 us; the others with the
  // last, at 346.64 us. Payload rates: 4 MiB / 334.64 us and 4 MiB / 346.64 us.
  std::vector<double> rates;
  for (std::size_t i = 0; i < 4; ++i)
    rates.push_back(static_cast<double>(r.stats.flows.bytes(i)) /
                    (r.stats.flows.end(i) - r.stats.flows.start(i)).seconds());
  std::sort(rates.begin(), rates.end());
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(rates[i], 4194304 / 346.64e-6, 0.005 * rates[i]) << i;
  EXPECT_NEAR(rates[3], 4194304 / 334.64e-6, 0.005 * rates[3]);
  // The same incast with fixed windows of 128 packets and no credit overruns the 1 MiB: trims.
  cfg.congestion = CongestionControl::None;
  cfg.initial_window = 128;
  EXPECT_GT(simulate(topo, programs, cfg, RoutingPolicy::Spray).stats.trims, 0u);
}

// gpu0 -400G- switch -100G- gpu1, 1 us links, ECN marking from the target queue on (4 us at
// 12.5 GB/s = 50,000 B). NSCC fills the 100G link (16 MiB in 4096 x 4206 B / 12.5 GB/s =
// 1,378.2 us) and holds the window near the path's BDP plus the target queue: the queue marks
// above 50,000 B, delay and ECN agree there and the window is cut; it never reaches the cap of
// BDP + 2 x 50,000 B, so the queue stays within 100,000 B and nothing is trimmed.
TEST(Uec, NsccHoldsTheQueueAtItsTargetAndFillsTheBottleneck) {
  TopologyBuilder b("bottleneck");
  b.add_device(packet_test::gpu(0));
  b.add_device(packet_test::gpu(1));
  const DeviceId sw = b.add_device(packet_test::fabric_switch(0));
  b.add_link(packet_test::link(0, sw, k400G, Time::us(1)));
  b.add_link(packet_test::link(sw, 1, Bandwidth::gbps(100), Time::us(1)));
  const Topology topo = std::move(b).build();
  const auto programs = packet_test::transfers(2, {{0, 1, 16u << 20}});
  PacketConfig cfg = packet_config_for_fabric("uec");
  cfg.ecn_kmin = cfg.ecn_kmax = Bytes(50000);
  const Outcome r = simulate(topo, programs, cfg, RoutingPolicy::Spray);
  const double drain = 4096 * kWire / 12.5e9;
  EXPECT_NEAR(r.result.makespan.seconds(), drain, 0.03 * drain);
  EXPECT_EQ(r.stats.trims, 0u);
  EXPECT_GT(r.stats.nscc_quadrants[static_cast<int>(NsccQuadrant::MultiplicativeDecrease)], 0u);
  double peak = 0;
  for (double q : r.stats.links.peak_queue) peak = std::max(peak, q);
  EXPECT_GT(peak, 50000.0);
  EXPECT_LE(peak, 100000.0 + 2 * kWire);
}

// gpu0 - leaf - {spine0, spine1} - leaf - gpu1: 400 Gb/s host links and 200 Gb/s spine links of
// 100 ns, those of spine 1 `spine1` long.
Topology two_paths(Time spine1) {
  TopologyBuilder b("two_paths");
  b.add_device(packet_test::gpu(0));
  b.add_device(packet_test::gpu(1));
  const DeviceId l0 = b.add_device(packet_test::fabric_switch(0));
  const DeviceId l1 = b.add_device(packet_test::fabric_switch(0));
  const DeviceId s0 = b.add_device(packet_test::fabric_switch(1));
  const DeviceId s1 = b.add_device(packet_test::fabric_switch(1));
  b.add_link(packet_test::link(0, l0, k400G, Time::ns(100)));
  b.add_link(packet_test::link(1, l1, k400G, Time::ns(100)));
  for (DeviceId leaf : {l0, l1}) {
    b.add_link(packet_test::link(leaf, s0, Bandwidth::gbps(200), Time::ns(100)));
    b.add_link(packet_test::link(leaf, s1, Bandwidth::gbps(200), spine1));
  }
  return std::move(b).build();
}

// Two paths of 200 Gb/s between two hosts on 400 Gb/s links (gpu0 - leaf - {spine0, spine1} -
// leaf - gpu1, 100 ns links). RUD sprays over both: 8 MiB in 2048 x 4206 B at 50 GB/s =
// 172.3 us; ROD keeps the flow on one path, the bottleneck at 25 GB/s: 344.6 us, twice as long.
TEST(Uec, RodKeepsOnePathAndRudSpraysOverBoth) {
  const Topology topo = two_paths(Time::ns(100));
  const auto programs = packet_test::transfers(2, {{0, 1, 8u << 20}});
  PacketConfig rud = packet_config_for_fabric("uec");
  PacketConfig rod = rud;
  rod.delivery = Delivery::Rod;
  rod.spray = false;
  const Outcome a = simulate(topo, programs, rud, RoutingPolicy::Spray);
  const Outcome o = simulate(topo, programs, rod, RoutingPolicy::Spray);
  const double fast = 2048 * kWire / 50e9;
  EXPECT_NEAR(a.result.makespan.seconds(), fast, 0.05 * fast);
  EXPECT_NEAR(o.result.makespan.seconds(), 2 * fast, 0.05 * 2 * fast);
  // RUD's packets cross both spines (6 directed links carry data), ROD's one (4); their ACKs
  // are packets on the reverse links (pkt25ctl), sprayed for RUD (6 more), on one reverse path
  // for ROD (4 more, its entropy hashed the other way).
  auto used = [](const Outcome& r) {
    return std::count_if(r.result.link_bytes.begin(), r.result.link_bytes.end(),
                         [](double b) { return b > 0; });
  };
  EXPECT_EQ(used(a), 12);
  EXPECT_EQ(used(o), 8);
  EXPECT_EQ(o.stats.max_reorder, 0u);
  EXPECT_EQ(o.stats.trims, 0u);
}

// UEC's ACK carries a 64-bit SACK bitmap past the cumulative PSN (UEC 1.0, PDS), so ACKs coalesce
// across spraying's reordering. Two paths, one 1.8 us longer (900 ns more on each spine link):
// the round robin puts every odd packet ~10 packets (1.8 us / 168 ns per 4,206 B at 25 GB/s)
// behind the even ones, so half the packets arrive out of order. 1 MiB is 256 packets; an ACK
// every 4 arrivals is 256 / 4 = 64 ACKs with the bitmap, and without it every out-of-order
// packet is acknowledged at once (more than the 128 odd ones).
TEST(Uec, SackBitmapCoalescesAcksAcrossReordering) {
  const Topology topo = two_paths(Time::ns(1000));
  const auto programs = packet_test::transfers(2, {{0, 1, 1u << 20}});
  PacketConfig cfg = packet_config_for_fabric("uec");
  EXPECT_TRUE(cfg.sack_bitmap);
  cfg.ack_every = 4;
  const Outcome sack = simulate(topo, programs, cfg, RoutingPolicy::Spray);
  cfg.sack_bitmap = false;
  const Outcome one = simulate(topo, programs, cfg, RoutingPolicy::Spray);
  for (const Outcome* r : {&sack, &one}) {
    EXPECT_GE(r->stats.max_reorder, 8u);  // the reordering is there
    EXPECT_EQ(r->stats.retransmissions, 0u);
    EXPECT_EQ(r->stats.trims, 0u);
  }
  EXPECT_EQ(sack.stats.control_sent, 64u);
  EXPECT_GT(one.stats.control_sent, 128u);
}

// ROD under trimming: the receiver discards what comes after a missing packet and NACKs it; the
// sender goes back and resends from there, so everything arrives once and in order.
TEST(Uec, RodGoesBackToTheFirstMissingPacket) {
  std::vector<packet_test::Transfer> list;
  for (Rank s = 0; s < 4; ++s) list.push_back({s, 4, 1u << 20});
  const Topology topo = packet_test::star(5, k400G, Time::us(1));
  const auto programs = packet_test::transfers(5, list);
  PacketConfig cfg = packet_config_for_fabric("uec");
  cfg.delivery = Delivery::Rod;
  cfg.spray = false;
  cfg.switch_buffer = Bytes(128 << 10);
  const Outcome r = simulate(topo, programs, cfg);
  EXPECT_GT(r.stats.trims, 0u);
  EXPECT_GT(r.stats.out_of_order_discards, 0u);
  EXPECT_GE(r.stats.nacks, 1u);
  EXPECT_EQ(r.stats.max_reorder, 0u);
  EXPECT_EQ(r.stats.payload_bytes_delivered, 4u << 20);
  EXPECT_GE(r.stats.retransmissions, r.stats.trims);  // the go-back resends more than the trims
}

// One 400 Gb/s cable of 1 us between two GPUs, 1024 packets back to back (a fixed window wide
// enough), 1% of frames corrupted. With link-level retry each corrupted frame is replayed one
// link round trip plus one serialisation later (2 x 1 us + 84.12 ns), holding the frames behind
// it: the transfer takes exactly replays x 2.08412 us longer than on a clean cable, and the
// transport retransmits nothing. Without it the same frames are lost end to end. ACKs are
// frames on the reverse direction of the cable and can be corrupted too: the receiver sends one
// at the end (`ack_every: 0`, and an RTO above the ~110 us it takes), so that a replay on the
// reverse direction would also move the end by one replay and the equality holds for data and
// control frames alike; without LLR every corrupted frame is dropped, a data frame (`drops`) or an
// ACK (`control_drops`).
TEST(Uec, LinkLevelRetryReplaysCorruptedFramesHopByHop) {
  TopologyBuilder b("cable");
  b.add_device(packet_test::gpu(0));
  b.add_device(packet_test::gpu(1));
  Link cable = packet_test::link(0, 1, k400G, Time::us(1));
  cable.medium = LinkMedium::Optical;
  b.add_link(cable);
  const Topology topo = std::move(b).build();
  const auto programs = packet_test::transfers(2, {{0, 1, 4u << 20}});
  PacketConfig cfg = packet_config_for_fabric("uec");
  cfg.congestion = CongestionControl::None;
  cfg.initial_window = 2048;
  cfg.ack_every = 0;
  cfg.rto_min = Time::ms(1);  // the one ACK comes after ~110 us: no timeout before it
  const Outcome clean = simulate(topo, programs, cfg);
  cfg.loss_rate = 0.01;
  cfg.llr = true;
  const Outcome llr = simulate(topo, programs, cfg);
  EXPECT_GT(llr.stats.llr_replays, 0u);
  EXPECT_LT(llr.stats.llr_replays, 40u);  // 1% of 1024 frames: about 10
  EXPECT_EQ(llr.stats.llr_replays, llr.stats.corrupted_frames);
  EXPECT_EQ(llr.stats.retransmissions, 0u);
  EXPECT_EQ(llr.stats.drops, 0u);
  const std::int64_t per_replay = 2 * 1'000'000 + 84'120;  // ps
  EXPECT_EQ((llr.result.makespan - clean.result.makespan).picoseconds(),
            static_cast<std::int64_t>(llr.stats.llr_replays) * per_replay);
  cfg.llr = false;
  const Outcome e2e = simulate(topo, programs, cfg);
  EXPECT_GT(e2e.stats.corrupted_frames, 0u);
  EXPECT_EQ(e2e.stats.drops + e2e.stats.control_drops, e2e.stats.corrupted_frames);
  EXPECT_GE(e2e.stats.retransmissions, e2e.stats.drops);
  EXPECT_EQ(e2e.stats.llr_replays, 0u);
  EXPECT_EQ(e2e.stats.payload_bytes_delivered, 4u << 20);
}

}  // namespace
}  // namespace lockstep
