// EngineOptions::channel_send_bandwidth: one speed limit per (sending rank, channel), derived by
// hand on a star of 50 GB/s links with 1 us latency each (2 us GPU-switch-GPU).
#include <gtest/gtest.h>

#include <stdexcept>

#include "fixtures.hpp"
#include "lockstep/core/error.hpp"

namespace lockstep {
namespace {

using flow_test::input_for;
using flow_test::LazyRing;
using flow_test::star;

const Bandwidth kB = Bandwidth::gBps(50);  // 5e10 B/s
const Time kLat = Time::us(1);

// Rank 0 sends 1 MB to rank 1 and 1 MB to rank 2 at once (two connections, so concurrent).
// Cap 1e10 B/s. Same channel: both share the one cap, 5e9 each (the 5e10 uplink is not the
// bottleneck): 1e6 / 5e9 = 200 us, plus 2 us = 202 us. Different channels: each gets its own
// cap of 1e10 (below the uplink's fair share 2.5e10): 100 us + 2 = 102 us.
TEST(FlowChannelCap, SendsOfOneChannelShareItsCapAndChannelsGetOneEach) {
  const Topology t = star(3, kB, kLat);
  auto router = make_router(t, {});
  EngineOptions opt;
  opt.record_ops = true;
  opt.channel_send_bandwidth = Bandwidth::gBps(10);
  for (const std::uint16_t second_channel : {0, 1}) {
    MaterializedProgramSet p(3);
    p.add(0, make_send(1, {Buffer::Input, 0, 1'000'000}));
    p.add(0, make_send(2, {Buffer::Input, 0, 1'000'000}, second_channel));
    p.add(1, make_recv(0, {Buffer::Output, 0, 1'000'000}, RecvMode::Copy));
    p.add(2, make_recv(0, {Buffer::Output, 0, 1'000'000}, RecvMode::Copy, second_channel));
    const RunResult r = make_flow_engine()->run(input_for(t, p, *router, opt));
    const Time expected = second_channel == 0 ? Time::us(202) : Time::us(102);
    EXPECT_EQ(r.ops[0][0].end, expected);
    EXPECT_EQ(r.ops[0][1].end, expected);
  }
}

// The same two sends as one broadcast (Op::fan_out 2: one thread block loads the data once and
// stores it to both peers): each counts half its bytes against the channel's cap, so
// 0.5 r1 + 0.5 r2 <= 1e10 gives each 1e10 (the uplink carries 2e10 of its 5e10): 100 us + 2 us =
// 102 us, as on two channels, where fan_out 1 gave 202 us above.
TEST(FlowChannelCap, ABroadcastToTwoPeersCountsItsBytesOnceAgainstTheCap) {
  const Topology t = star(3, kB, kLat);
  auto router = make_router(t, {});
  EngineOptions opt;
  opt.record_ops = true;
  opt.channel_send_bandwidth = Bandwidth::gBps(10);
  MaterializedProgramSet p(3);
  for (const Rank peer : {1u, 2u}) {
    Op send = make_send(peer, {Buffer::Input, 0, 1'000'000});
    send.fan_out = 2;
    p.add(0, send);
    p.add(peer, make_recv(0, {Buffer::Output, 0, 1'000'000}, RecvMode::Copy));
  }
  const RunResult r = make_flow_engine()->run(input_for(t, p, *router, opt));
  EXPECT_EQ(r.ops[0][0].end, Time::us(102));
  EXPECT_EQ(r.ops[0][1].end, Time::us(102));
}

// Ring all-reduce, n = 4, S = 4 MB: 6 steps of 2 us + 1 MB / rate. Cap 2.5e10 (half the link):
// each step 2 + 40 = 42 us, 252 us in all, exactly, with the class aggregated and fast-forwarded
// and without. A cap above the link speed changes nothing: 6 * (2 + 20) = 132 us.
TEST(FlowChannelCap, RingUnderTheCapMatchesTheFormulaWithAndWithoutAggregation) {
  const Topology t = star(4, kB, kLat);
  auto router = make_router(t, {});
  const LazyRing ring(4, 4'000'000);
  for (const double cap_gbps : {25.0, 100.0}) {
    EngineOptions opt;
    opt.channel_send_bandwidth = Bandwidth::gBps(cap_gbps);
    FlowEngine aggregated({});
    FlowEngine individual({.aggregate = false});
    const RunResult a = aggregated.run(input_for(t, ring, *router, opt));
    const RunResult b = individual.run(input_for(t, ring, *router, opt));
    const Time expected = cap_gbps < 50 ? Time::us(252) : Time::us(132);
    EXPECT_EQ(a.makespan, expected);
    EXPECT_EQ(b.makespan, expected);
    EXPECT_EQ(a.rank_finish, b.rank_finish);
    EXPECT_EQ(a.link_bytes, b.link_bytes);
  }
}

TEST(FlowChannelCap, NegativeCapCannotBeGiven) {
  // Bandwidth itself refuses negative and non-finite rates (core/units.hpp).
  EngineOptions opt;
  EXPECT_THROW(opt.channel_send_bandwidth = Bandwidth::bytes_per_second(-1.0), std::domain_error);
}

}  // namespace
}  // namespace lockstep
