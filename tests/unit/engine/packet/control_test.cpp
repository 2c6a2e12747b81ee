// Control packets on the wire (docs/packet-engine.md "Control packets"): ACKs take the reverse
// route, are serialised and queue like data; and a slow link is never taken for a deadlock.
#include <gtest/gtest.h>

#include "fixtures.hpp"
#include "lockstep/engine/packet/packet_engine.hpp"

namespace lockstep {
namespace {

using packet_test::Outcome;
using packet_test::simulate;

const Bandwidth k400G = Bandwidth::gbps(400);  // 5e10 B/s: 20 ps per byte

// The reliable transport with a fixed window: no congestion control, no host cost, 4096 B of
// payload + 26 B of header (82.44 ns at 400 Gb/s), 64 B ACKs (1.28 ns).
PacketConfig fixed_window(std::uint32_t window, std::uint32_t ack_every) {
  PacketConfig c = packet_config_for_fabric("ethernet");
  c.payload = Bytes(4096);
  c.header = Bytes(26);
  c.ack_wire = Bytes(64);
  c.ecn = false;
  c.congestion = CongestionControl::None;
  c.host_per_message = Time::zero();
  c.initial_window = window;
  c.ack_every = ack_every;
  return c;
}

// GPU0 -> switch -> GPU1, 1 us per link, 64 packets in a window of W = 8. Cut-through, a packet
// takes 2L + ser = 2,082.44 ns from its first bit leaving to its delivery, an ACK 2L + 1.28 ns.
// With an ACK every N packets the sender sends N packets back to back when the ACK of a group's
// last one arrives, so packet k + W leaves P = N ser + 4L + ser_ack after packet k:
//   N = 1: P = 82.44 + 4,000 + 1.28 = 4,083.72 ns; N = 2: P = 4,166.16 ns
// (window-limited: W ser = 659.52 ns < P). Packet 63 leaves at 7 ser + 7 P and lands ser + 2L
// later: N = 1: 659.52 + 28,586.04 + 2,000 = 31,245.56 ns; N = 2: 31,822.64 ns. Throughput is
// W x 4096 B / P: 8.02 and 7.87 GB/s.
TEST(PacketControl, AckEveryNPacketsSetsTheWindowLimitedRate) {
  const Topology topo = packet_test::star(2, k400G, Time::us(1));
  const auto programs = packet_test::transfers(2, {{0, 1, 64 * 4096}});
  const Outcome one = simulate(topo, programs, fixed_window(8, 1));
  EXPECT_EQ(one.result.makespan, Time::ps(31'245'560));
  EXPECT_EQ(one.stats.control_sent, 64u);
  const Outcome two = simulate(topo, programs, fixed_window(8, 2));
  EXPECT_EQ(two.result.makespan, Time::ps(31'822'640));
  EXPECT_EQ(two.stats.control_sent, 32u);
  EXPECT_EQ(two.stats.control_delivered, 32u);
  EXPECT_EQ(two.stats.retransmissions, 0u);
  // The ACKs' bytes are on the reverse links: GPU1 -> switch and switch -> GPU0.
  const DirLinkId back = topo.ports(1).front().out;
  EXPECT_DOUBLE_EQ(two.result.link_bytes[back], 32 * 64.0);
}

// The ACK of GPU0's first packet queues behind a burst on the switch's port to GPU0. GPU2 and
// GPU3 each send 40 packets to GPU0 at once (two arrive per ser, one leaves): the port starts its
// i-th packet at L + i ser. GPU0 sends 41 packets to GPU1 in a window of 40, so packet 40 waits
// for packet 0's ACK, which reaches the switch at 3L + ser = 3,082.44 ns. By then packets
// 0..25 of each burst have arrived (L + 25 ser = 3,061 ns) and 26 have started: 26 wait.
//   In the data queue the ACK starts after them at L + 52 ser = 5,286.88 ns and reaches GPU0 at
//   2L + 52 ser + 1.28 = 6,288.16 ns; packet 40 lands at + ser + 2L = 8,370.60 ns.
//   With control_priority it waits only for the packet being sent (until L + 26 ser = 3,143.44
//   ns), reaches GPU0 at 4,144.72 ns, and packet 40 lands at 6,227.16 ns.
// The difference is the queue's drain time, 26 ser = 2,143.44 ns.
TEST(PacketControl, AckBehindADataQueueWaitsForItsDrainTime) {
  const Topology topo = packet_test::star(4, k400G, Time::us(1));
  const auto programs =
      packet_test::transfers(4, {{0, 1, 41 * 4096}, {2, 0, 40 * 4096}, {3, 0, 40 * 4096}});
  auto fct = [&](bool priority) {
    PacketConfig cfg = fixed_window(40, 1);
    cfg.control_priority = priority;
    const Outcome r = simulate(topo, programs, cfg);
    EXPECT_EQ(r.stats.drops + r.stats.control_drops, 0u);
    for (std::size_t i = 0; i < r.stats.flows.size(); ++i)
      if (r.stats.flows.src(i) == 0) return r.stats.flows.end(i);
    return Time::zero();
  };
  EXPECT_EQ(fct(false), Time::ps(8'370'600));
  EXPECT_EQ(fct(true), Time::ps(6'227'160));
}

// GPU0 -> switch at 400 Gb/s, switch -> GPU1 at 1 kb/s (125 B/s): 20,000 B are 4 packets of
// 4096 + 26 B and one of 3,616 + 26 B (InfiniBand), 20,130 wire bytes, 161.04 s on the slow
// link. Each packet is still serialising when the watchdog looks (its period is stretched to
// the longest hop, 33 s here), which is progress, not a deadlock: the last packet lands at
// L + 161.04 s + L, and its ACK goes back over the slow link afterwards.
TEST(PacketControl, SlowLinkIsNotADeadlock) {
  TopologyBuilder b("slow");
  b.add_device(packet_test::gpu(0));
  b.add_device(packet_test::gpu(1));
  const DeviceId sw = b.add_device(packet_test::fabric_switch(0));
  b.add_link(packet_test::link(0, sw, k400G, Time::ns(100)));
  b.add_link(packet_test::link(1, sw, Bandwidth::bytes_per_second(125), Time::ns(100)));
  const Topology topo = std::move(b).build();
  const auto programs = packet_test::transfers(2, {{0, 1, 20'000}});
  const Outcome r = simulate(topo, programs, packet_config_for_fabric("infiniband"));
  EXPECT_FALSE(r.stats.deadlock.detected);
  EXPECT_EQ(r.result.makespan, Time::ps(161'040'000'200'000));
  EXPECT_EQ(r.stats.control_delivered, 1u);
}

// A lost ACK is recovered by the next one. GPU0 and GPU1 are wired to two switches, A and B;
// GPU1's 41 packets to GPU0 go through A, their ACKs back through B (the routes' hashes on
// channel 2 pick them; the test checks), in a window of 40: packet 40 leaves when packet 0 is
// acknowledged. GPU2 and GPU3, wired to B alone, each send 40 packets to GPU0 at once, so B's
// buffer (16 packets, no dynamic threshold) fills while their two packets per slot meet one
// leaving, and GPU0's ACKs, here 8,000 B so that they never fit in the room one leaving packet
// makes, are dropped there while it stays full (4 of them). Every ACK carries the receiver's
// cumulative point, so the first that gets through acknowledges every packet before it: GPU1
// resends nothing and finishes long before its 1 ms RTO would have fired. (Were each ACK to
// acknowledge its own packet only, packet 0's would be lost for good and the RTO would resend it.)
TEST(PacketControl, LostAckIsRecoveredByTheNextCumulativeAck) {
  TopologyBuilder b("two_switches");
  for (std::uint32_t i = 0; i < 4; ++i) b.add_device(packet_test::gpu(i));
  const DeviceId a = b.add_device(packet_test::fabric_switch(0));
  const DeviceId sb = b.add_device(packet_test::fabric_switch(0));
  for (DeviceId g : {0u, 1u}) b.add_link(packet_test::link(g, a, k400G, Time::us(1)));
  for (DeviceId g : {0u, 1u, 2u, 3u}) b.add_link(packet_test::link(g, sb, k400G, Time::us(1)));
  const Topology topo = std::move(b).build();
  const auto programs =
      packet_test::transfers(4, {{1, 0, 41 * 4096, 2}, {2, 0, 40 * 4096}, {3, 0, 40 * 4096}});
  PacketConfig cfg = fixed_window(40, 1);
  cfg.switch_buffer = Bytes(16 * 4122);
  cfg.dynamic_threshold = 1e6;
  cfg.ack_wire = Bytes(8000);
  const Outcome r = simulate(topo, programs, cfg);
  auto out = [&](DeviceId from, DeviceId to) {
    for (const Port& p : topo.ports(from))
      if (p.peer == to) return p.out;
    return DirLinkId{0};
  };
  // GPU1's data through A; B carries only its ACKs to GPU1.
  ASSERT_DOUBLE_EQ(r.result.link_bytes[out(1, a)], 41 * 4122.0);
  const std::uint64_t lost_acks = r.stats.links.drops[out(sb, 1)];
  EXPECT_DOUBLE_EQ(r.result.link_bytes[out(sb, 1)], (41.0 - lost_acks) * 8000);
  EXPECT_GT(lost_acks, 0u);
  EXPECT_EQ(r.stats.links.drops[out(a, 0)], 0u);
  EXPECT_EQ(r.stats.links.retransmissions[out(1, a)], 0u);
  std::size_t flow = r.stats.flows.size();
  for (std::size_t i = 0; i < r.stats.flows.size(); ++i)
    if (r.stats.flows.src(i) == 1) flow = i;
  ASSERT_LT(flow, r.stats.flows.size());
  EXPECT_LT(r.stats.flows.end(flow), cfg.rto_min);
}

}  // namespace
}  // namespace lockstep
