// The channel pacer (src/engine/packet/channel_pacer.cpp) on a channel with two connections, one
// of them through a slow port: each connection's throughput derived by hand.
#include <gtest/gtest.h>

#include "fixtures.hpp"
#include "lockstep/engine/packet/packet_engine.hpp"

namespace lockstep {
namespace {

using packet_test::Outcome;

// GPU 0 wired straight to GPU 1 at 400 Gb/s (5e10 B/s, 20 ps/B) and to GPU 2 at 40 Gb/s
// (5e9 B/s, 200 ps/B), 100 ns each.
Topology two_ports() {
  TopologyBuilder b("two_ports");
  for (std::uint32_t i = 0; i < 3; ++i) b.add_device(packet_test::gpu(i));
  b.add_link(packet_test::link(0, 1, Bandwidth::gbps(400), Time::ns(100)));
  b.add_link(packet_test::link(0, 2, Bandwidth::gbps(40), Time::ns(100)));
  return std::move(b).build();
}

// GPU 0 sends 1 MiB to GPU 1 (A) and 1 MiB to GPU 2 (B) on one channel limited to C = 2e10 B/s
// (50 ps per payload byte: 204,800 ps per 4096 B packet on the channel's shared clock; each
// connection's own clock at its max-min share C / 2 while both stream, 409,600 ps a packet).
// Packets carry 26 B of InfiniBand header: 4122 wire bytes.
//  - B is held by its port, not by the pacer: a packet takes 4122 x 200 = 824,400 ps there, and
//    B's own clock (409,600 ps a packet) is due again before the port is free, so B streams at
//    its port, 4096 B / 824,400 ps = 4.968e9 B/s: the last of 256 packets leaves at
//    255 x 824,400 and lands 824,400 + 100,000 ps later, 211,146,400 ps.
//  - A takes what B leaves of C, as max-min does (C - 4.968e9 = 1.503e10 B/s), not C / 2: the
//    shared clock charges every packet of either connection and lets A's packets go up to 8
//    packets (1,638,400 ps) before it, so from the start the clock is never behind. A's packet
//    j goes at (j + n_B) x 204,800 - 1,638,400 ps, n_B being B's packets sent by then, one per
//    824,400 ps from 0. For j = 255: t = (255 + 82) x 204,800 - 1,638,400 = 67,379,200 ps,
//    and indeed B has sent floor(t / 824,400) + 1 = 82 by then. It lands 82,440 + 100,000 ps
//    later: 67,561,640 ps. At C / 2 it would take 256 x 409,600 = 104,857,600 ps.
TEST(ChannelPacer, ConnectionHeldByItsPortLeavesTheRestOfTheChannelToTheOther) {
  const Topology topo = two_ports();
  const auto programs = packet_test::transfers(3, {{0, 1, 1 << 20}, {0, 2, 1 << 20}});
  EngineOptions options;
  options.channel_send_bandwidth = Bandwidth::gBps(20);
  const Outcome r =
      packet_test::simulate(topo, programs, packet_config_for_fabric("infiniband"), options);
  ASSERT_EQ(r.stats.flows.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    const Time done = r.stats.flows.completion(i);
    if (r.stats.flows.dst(i) == 2) {
      EXPECT_EQ(done, Time::ps(211'146'400));
    } else {
      EXPECT_EQ(done, Time::ps(67'561'640));
    }
  }
  EXPECT_EQ(r.result.makespan, Time::ps(211'146'400));
}

}  // namespace
}  // namespace lockstep
