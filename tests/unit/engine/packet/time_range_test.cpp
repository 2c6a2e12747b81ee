// The packet engine on slow links, up to and past the end of Time's range (2^63 - 1 ps): exact
// inside it, infinite past it, never wrapped, and no deadlock reported for packets that simply
// take long to serialise.
#include <gtest/gtest.h>

#include "fixtures.hpp"
#include "lockstep/engine/packet/packet_engine.hpp"

namespace lockstep {
namespace {

using packet_test::Outcome;
using packet_test::simulate;

// GPU0 -> switch -> GPU1, 100 ns per link, 200 ns switch, cut-through, 4096 B payload + 26 B
// IB headers: path latency 400 ns, and the time is 400 ns + wire bytes / B (timing_test.cpp).
PacketConfig ib() {
  PacketConfig c = packet_config_for_fabric("infiniband");
  c.switch_latency = Time::ns(200);
  return c;
}

// At the slowest rate lockstep accepts, 2^22 ps per byte exactly, a 4,122 B packet takes 17.3
// ms: the 500 us watchdog saw no packet start or arrive for a whole period and reported a
// deadlock. 1 MiB = 256 packets, 1,055,232 wire bytes: 400 ns + 1,055,232 x 2^22 ps.
TEST(PacketTimeRange, TheSlowestAcceptedRateIsNoDeadlock) {
  const Topology topo = packet_test::star(2, kMinBandwidth, Time::ns(100));
  const Outcome r = simulate(topo, packet_test::transfers(2, {{0, 1, 1 << 20}}), ib());
  EXPECT_FALSE(r.stats.deadlock.detected);
  EXPECT_EQ(r.result.makespan.picoseconds(), 400'000 + 1'055'232LL * 4'194'304);
}

// 1 GiB at 1 Kb/s (125 B/s, 8 x 10^9 ps per byte): 262,144 packets, 1,080,557,568 wire bytes,
// 8,644,460,544,000,400,000 ps in all, 93.7% of the range.
TEST(PacketTimeRange, OneGibAtOneKilobitIsExactJustInsideTheRange) {
  const Topology topo = packet_test::star(2, Bandwidth::bytes_per_second(125), Time::ns(100));
  const Outcome r = simulate(topo, packet_test::transfers(2, {{0, 1, 1 << 30}}), ib());
  EXPECT_EQ(r.result.makespan.picoseconds(), 8'644'460'544'000'400'000);
}

// Twice that is past the range: infinite, for the run and both ranks.
TEST(PacketTimeRange, TwoGibAtOneKilobitIsInfinite) {
  const Topology topo = packet_test::star(2, Bandwidth::bytes_per_second(125), Time::ns(100));
  const Outcome r =
      simulate(topo, packet_test::transfers(2, {{0, 1, std::uint64_t{2} << 30}}), ib());
  EXPECT_EQ(r.result.makespan, Time::infinite());
  EXPECT_EQ(r.result.rank_finish[0], Time::infinite());
  EXPECT_EQ(r.result.rank_finish[1], Time::infinite());
  EXPECT_EQ(r.stats.makespan, Time::infinite());
}

// A compute op past the range (a rank that waits forever) ends the run there; the other rank's
// transfer of 1 MiB at 400 Gb/s finishes on time (timing_test.cpp: 21,504,640 ps).
TEST(PacketTimeRange, AnInfiniteComputeOpDoesNotStopOtherRanks) {
  const Topology topo = packet_test::star(3, Bandwidth::gbps(400), Time::ns(100));
  MaterializedProgramSet p(3);
  p.add(0, make_send(1, {Buffer::Input, 0, 1 << 20}));
  p.add(1, make_recv(0, {Buffer::Output, 0, 1 << 20}, RecvMode::Copy));
  p.add(2, make_compute(Time::s(1e6)));
  Op after = make_compute(Time::s(9e6));  // then 9 x 10^6 s more: 10^7 s in all
  after.add_dep(0);
  p.add(2, after);
  const Outcome r = simulate(topo, p, ib());
  EXPECT_EQ(r.result.rank_finish[1], Time::ps(21'504'640));
  EXPECT_EQ(r.result.rank_finish[2], Time::infinite());
  EXPECT_EQ(r.result.makespan, Time::infinite());
}

}  // namespace
}  // namespace lockstep
