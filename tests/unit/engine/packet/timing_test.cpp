// Hand-derived timings of the packet engine on tiny fabrics.
#include <gtest/gtest.h>

#include "fixtures.hpp"
#include "lockstep/engine/packet/packet_engine.hpp"

namespace lockstep {
namespace {

using packet_test::Outcome;
using packet_test::simulate;
using packet_test::TinyRouter;

const Bandwidth k400G = Bandwidth::gbps(400);  // 5e10 B/s: exactly 20 ps per byte

PacketConfig ib(Time switch_latency) {
  PacketConfig c = packet_config_for_fabric("infiniband");
  c.switch_latency = switch_latency;
  return c;
}

// GPU0 -> switch -> GPU1, 400 Gb/s, 100 ns per link, 200 ns switch, cut-through, 4096 B payload
// + 26 B IB headers. 1 MiB = 256 packets of 4122 wire bytes = 82,440 ps each. Packets leave
// back to back; the last one leaves GPU0 at 255 x 82,440 ps, is forwarded 300 ns later (link +
// switch), finishes serialising 82,440 ps after that and lands 100 ns later:
//   256 x 82,440 + 400,000 = 21,504,640 ps = path latency + (bytes + 256 x 26) / B.
TEST(PacketTiming, UncontendedTransferIsLatencyPlusWireBytesOverBandwidth) {
  const Topology topo = packet_test::star(2, k400G, Time::ns(100));
  const auto programs = packet_test::transfers(2, {{0, 1, 1 << 20}});
  const Outcome r = simulate(topo, programs, ib(Time::ns(200)));
  EXPECT_EQ(r.result.makespan, Time::ps(21'504'640));
  EXPECT_EQ(r.stats.packets_delivered, 256u);
  EXPECT_EQ(r.stats.payload_bytes_delivered, 1u << 20);
  ASSERT_EQ(r.stats.flows.size(), 1u);
  EXPECT_EQ(r.stats.flows.completion(0), Time::ps(21'504'640));
}

// The same 1 MiB under a channel speed limit of 1e10 B/s (EngineOptions::channel_send_bandwidth,
// a fifth of the link): the channel's pacer spaces packets 4096 B x 100 ps/B = 409,600 ps apart
// and lets them run 8 packets (3,276,800 ps) ahead, so packet k + 1 (from 0) may leave at
// k x 409,600 - 3,276,800 ps once that is later than the port allows: the last leaves at
// 255 x 409,600 - 3,276,800 = 101,171,200 ps and lands 82,440 + 400,000 ps later.
TEST(PacketTiming, ChannelSpeedLimitPacesTheSendersPackets) {
  const Topology topo = packet_test::star(2, k400G, Time::ns(100));
  const auto programs = packet_test::transfers(2, {{0, 1, 1 << 20}});
  EngineOptions options;
  options.channel_send_bandwidth = Bandwidth::gBps(10);
  const Outcome r = simulate(topo, programs, ib(Time::ns(200)), options);
  EXPECT_EQ(r.result.makespan, Time::ps(101'171'200 + 82'440 + 400'000));
}

// 10,000 B = 4096 + 4096 + 1808: wire 10,000 + 3 x 26 = 10,078 B = 201,560 ps; the short last
// packet is still bound by its predecessor on the second link, so the total is again
// latency + wire / B = 400,000 + 201,560 ps.
TEST(PacketTiming, PartialLastPacket) {
  const Topology topo = packet_test::star(2, k400G, Time::ns(100));
  const auto programs = packet_test::transfers(2, {{0, 1, 10'000}});
  const Outcome r = simulate(topo, programs, ib(Time::ns(200)));
  EXPECT_EQ(r.result.makespan, Time::ps(601'560));
}

// Store-and-forward: the switch waits for each packet's last bit, which adds one packet
// serialisation (82,440 ps) per switch hop to the cut-through time.
TEST(PacketTiming, StoreAndForwardAddsOnePacketPerSwitch) {
  const Topology topo = packet_test::star(2, k400G, Time::ns(100));
  const auto programs = packet_test::transfers(2, {{0, 1, 1 << 20}});
  PacketConfig cfg = ib(Time::ns(200));
  cfg.cut_through = false;
  const Outcome r = simulate(topo, programs, cfg);
  EXPECT_EQ(r.result.makespan, Time::ps(21'504'640 + 82'440));
}

// Incast on InfiniBand: 4 senders x 256 KiB (64 packets each) into one 400G port. The shared
// output link is the bottleneck and never idles once the first packets arrive (200 ns in), so
// the last byte lands at 100 + 0 + 4 x 64 x 82,440 ps + 100 ns = N x S_wire / B + latency.
TEST(PacketTiming, InfiniBandIncastTakesNTimesSOverB) {
  const Topology topo = packet_test::star(5, k400G, Time::ns(100));
  std::vector<packet_test::Transfer> list;
  for (Rank s = 0; s < 4; ++s) list.push_back({s, 4, 256 << 10});
  const auto programs = packet_test::transfers(5, list);
  const Outcome r = simulate(topo, programs, ib(Time::zero()));
  EXPECT_EQ(r.result.makespan, Time::ps(200'000 + 4 * 64 * 82'440));
  EXPECT_EQ(r.stats.drops, 0u);
  EXPECT_EQ(r.stats.payload_bytes_delivered, 4u * (256 << 10));
}

// With per-port credits of only 16 KiB the senders stall on credits, but the switch queue (three
// packets per sender = 989 ns of work) outlasts the 200 ns credit round trip, so the bottleneck
// still never idles: same time, no drop, and every credit comes home.
TEST(PacketTiming, InfiniBandCreditsThrottleWithoutLossOrSlowdown) {
  const Topology topo = packet_test::star(5, k400G, Time::ns(100));
  std::vector<packet_test::Transfer> list;
  for (Rank s = 0; s < 4; ++s) list.push_back({s, 4, 256 << 10});
  const auto programs = packet_test::transfers(5, list);
  PacketConfig cfg = ib(Time::zero());
  cfg.port_buffer = Bytes(16 << 10);
  const Outcome r = simulate(topo, programs, cfg);
  EXPECT_EQ(r.result.makespan, Time::ps(200'000 + 4 * 64 * 82'440));
  EXPECT_GT(r.stats.credit_stalls, 0u);
  EXPECT_EQ(r.stats.drops, 0u);
  EXPECT_EQ(r.stats.credits_final, r.stats.credits_initial);
}

// Two flows from leaf 0 to leaf 1 over a 2-spine leaf-spine. Channels are picked so that ECMP
// hashes both onto the same spine: they share one uplink and take ~2 S / B. Spraying splits
// each flow over both spines: ~S / B.
TEST(PacketTiming, SprayingRemovesEcmpCollision) {
  const Topology topo = packet_test::leaf_spine(2, 2, 2, k400G, Time::ns(100));
  TinyRouter ecmp(topo, RoutingPolicy::Ecmp);
  std::vector<PathShare> a, b;
  std::uint16_t ch1 = 0;
  ecmp.route({0, 2, 0}, nullptr, a);
  for (ch1 = 0; ch1 < 64; ++ch1) {
    ecmp.route({1, 3, ch1}, nullptr, b);
    if (b[0].hops[1] == a[0].hops[1]) break;  // the same leaf-to-spine uplink
  }
  ASSERT_LT(ch1, 64);
  const std::uint64_t S = 2 << 20;
  const auto programs = packet_test::transfers(4, {{0, 2, S, 0}, {1, 3, S, ch1}});
  PacketConfig cfg = ib(Time::zero());
  const Outcome hashed = simulate(topo, programs, cfg, RoutingPolicy::Ecmp);
  cfg.spray = true;
  const Outcome sprayed = simulate(topo, programs, cfg, RoutingPolicy::Spray);
  cfg.spray = false;
  cfg.adaptive = true;
  const Outcome adaptive = simulate(topo, programs, cfg, RoutingPolicy::Spray);
  const double single = static_cast<double>(S) / k400G.bytes_per_second();
  EXPECT_GT(hashed.result.makespan.seconds(), 1.9 * single);
  EXPECT_LT(sprayed.result.makespan.seconds(), 1.1 * single);
  EXPECT_EQ(sprayed.stats.payload_bytes_delivered, 2 * S);
  // Adaptive (least-loaded of two paths per packet) also avoids most of the collision.
  EXPECT_LT(adaptive.result.makespan.seconds(), 1.25 * single);
  EXPECT_EQ(adaptive.stats.payload_bytes_delivered, 2 * S);
}

// A host cost per message (kernel TCP's syscall and wake-up) delays the first packet by exactly
// that much on an otherwise idle path: 601,560 ps (PartialLastPacket) + 5 us.
TEST(PacketTiming, HostCostPerMessageDelaysTheTransfer) {
  const Topology topo = packet_test::star(2, k400G, Time::ns(100));
  const auto programs = packet_test::transfers(2, {{0, 1, 10'000}});
  PacketConfig cfg = ib(Time::ns(200));
  cfg.host_per_message = Time::us(5);
  const Outcome r = simulate(topo, programs, cfg);
  EXPECT_EQ(r.result.makespan, Time::ps(601'560 + 5'000'000));
}

// GPU0 -> switch -> GPU1 as above without switch latency: 1 MiB takes 256 x 82,440 ps of
// serialisation + 200 ns of links = 21,304,640 ps.
constexpr std::int64_t kMiBWire = 256 * 82'440;

// Two 1 MiB messages from GPU0 to GPU1 posted at once. On one connection (same channel: one
// NCCL channel, one queue pair) they go out in order, the first delivered after one message's
// time and the second after two; on two channels they share the port packet by packet and both
// end after about two.
TEST(PacketTiming, MessagesOnOneConnectionGoOutInOrder) {
  const Topology topo = packet_test::star(2, k400G, Time::ns(100));
  EngineOptions o;
  o.record_ops = true;
  for (const std::uint16_t second : {0, 1}) {
    const auto programs = packet_test::transfers(2, {{0, 1, 1 << 20, 0}, {0, 1, 1 << 20, second}});
    const Outcome r = simulate(topo, programs, ib(Time::zero()), o);
    const Time first = r.result.ops[1][0].end, last = r.result.ops[1][1].end;
    if (second == 0) {
      EXPECT_EQ(first, Time::ps(kMiBWire + 200'000));
      EXPECT_EQ(last, Time::ps(2 * kMiBWire + 200'000));
    } else {
      EXPECT_GT(first, Time::ps(2 * kMiBWire));
    }
  }
}

// The NCCL glue's options, as the flow engine takes them (FlowMediumOptions.*): three 1 MiB
// messages on one connection with an overhead of 5 us each. Paid before the bytes, each waits for
// the previous one's last packet and then 5 us: 3 x (5 us + 21,104,640 ps) + 200 ns. As latency
// after the bytes, they stream back to back and the last is done 5 us after it lands. A message
// through the fabric pays network_message_latency once when it lands.
TEST(PacketTiming, OverheadsAsTheFlowEngineTakesThem) {
  const Topology topo = packet_test::star(2, k400G, Time::ns(100));
  const auto programs =
      packet_test::transfers(2, {{0, 1, 1 << 20}, {0, 1, 1 << 20}, {0, 1, 1 << 20}});
  EngineOptions o;
  o.per_message_overhead = Time::us(5);
  EXPECT_EQ(simulate(topo, programs, ib(Time::zero()), o).result.makespan,
            Time::ps(3 * (5'000'000 + kMiBWire) + 200'000));
  o.overhead_as_latency = true;
  EXPECT_EQ(simulate(topo, programs, ib(Time::zero()), o).result.makespan,
            Time::ps(3 * kMiBWire + 200'000 + 5'000'000));
  o.network_message_latency = Time::us(3);
  EXPECT_EQ(simulate(topo, programs, ib(Time::zero()), o).result.makespan,
            Time::ps(3 * kMiBWire + 200'000 + 5'000'000 + 3'000'000));
}

// Two GPUs on one direct link of 400 Gb/s and 100 ns, 1 MiB from one to the other.
Topology direct_pair(LinkMedium medium, bool same_server) {
  TopologyBuilder b("pair");
  b.add_device(packet_test::gpu(0));
  b.add_device(packet_test::gpu(same_server ? 0 : 1));
  Link l = packet_test::link(0, 1, k400G, Time::ns(100));
  l.medium = medium;
  b.add_link(l);
  return std::move(b).build();
}

// On the board (NVLink, xGMI) a transfer is a GPU copy, not a message of the fabric's transport:
// no fabric headers, no host cost, no window, whatever the fabric. The 256 packets of 4096 B
// leave back to back and the last lands one link latency after it was serialised:
//   256 x 4096 B x 20 ps + 100 ns = 20,971,520 + 100,000 ps = latency + S / B exactly.
// (No switch between the GPUs: the engine moves NVLink's 256 B packets 16 at a time, up to the
// fabric's MTU; with TCP's 1448 B payload 5 at a time, 820 packets of 1280 B, the last 256 B:
// the same bytes and time.)
TEST(PacketTiming, OnBoardCopyIsLatencyPlusSizeOverBandwidth) {
  const Topology topo = direct_pair(LinkMedium::NvLink, true);
  const auto programs = packet_test::transfers(2, {{0, 1, 1 << 20}});
  for (const char* fabric : {"infiniband", "roce", "tcp", "ultra_ethernet"}) {
    const Outcome r = simulate(topo, programs, packet_config_for_fabric(fabric));
    EXPECT_EQ(r.result.makespan, Time::ps(100'000 + 20'971'520)) << fabric;
    EXPECT_EQ(r.result.link_bytes[0], static_cast<double>(1 << 20)) << fabric;
    EXPECT_EQ(r.stats.retransmissions, 0u) << fabric;
  }
}

// A cable between GPUs of two servers (a torus) carries the fabric's packets, headers included:
// 256 x (4096 + 26) B x 20 ps + 100 ns = 21,204,640 ps = latency + (S + headers) / B.
TEST(PacketTiming, CableBetweenServersCarriesTheFabricsHeaders) {
  const Topology topo = direct_pair(LinkMedium::CopperDac, false);
  const auto programs = packet_test::transfers(2, {{0, 1, 1 << 20}});
  const Outcome r = simulate(topo, programs, ib(Time::zero()));
  EXPECT_EQ(r.result.makespan, Time::ps(100'000 + 256 * 82'440));
}

// NCCL's model runs NVLink and the network at different fractions of line rate (EngineOptions):
// an on-board copy of 1 MiB at transfer_efficiency 0.5 puts 2 MiB on the wire, 100 ns +
// 2,097,152 x 20 ps; through the fabric at network_transfer_efficiency 0.8, a payload rate
// that already covers the headers, the engine inflates the payload by 0.8 x (4096 + 26) / 4096
// = 0.805078125 only: ceil(1 MiB / 0.805078125) = 1,302,453 B, 318 packets (the last of
// 4,021 B) with 26 B each, 1,310,721 B: 100 ns + 26,214,420 ps, one byte over 1 MiB / 0.8.
// (Before, the fabric took 0.5 too; until the counters were put in payload it took 0.8 and
// the headers besides: 320 x 82,440 ps, 0.6% longer.)
TEST(PacketTiming, FabricTransfersTakeTheNetworkEfficiency) {
  const auto programs = packet_test::transfers(2, {{0, 1, 1 << 20}});
  EngineOptions o;
  o.transfer_efficiency = 0.5;
  o.network_transfer_efficiency = 0.8;
  const Topology board = direct_pair(LinkMedium::NvLink, true);
  EXPECT_EQ(simulate(board, programs, ib(Time::zero()), o).result.makespan,
            Time::ps(100'000 + 2 * 20'971'520));
  const Topology cable = direct_pair(LinkMedium::CopperDac, false);
  EXPECT_EQ(simulate(cable, programs, ib(Time::zero()), o).result.makespan,
            Time::ps(100'000 + 26'214'420));
}

}  // namespace
}  // namespace lockstep
