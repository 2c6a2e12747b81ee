// Flow-engine timings derived by hand on tiny topologies.
#include "lockstep/engine/flow/flow_engine.hpp"

#include <gtest/gtest.h>

#include <numeric>

#include "fixtures.hpp"
#include "lockstep/collective/collective.hpp"
#include "lockstep/core/error.hpp"

namespace lockstep {
namespace {

using flow_test::input_for;
using flow_test::LazyRing;
using flow_test::star;

const Bandwidth kB = Bandwidth::gBps(50);  // 5e10 B/s: 1 MB takes exactly 20 us
const Time kLat = Time::us(1);             // per link, so a GPU-switch-GPU path has 2 us

MaterializedProgramSet one_transfer(Rank ranks, Rank from, Rank to, std::uint64_t bytes) {
  MaterializedProgramSet p(ranks);
  p.add(from, make_send(to, {Buffer::Input, 0, bytes}));
  p.add(to, make_recv(from, {Buffer::Output, 0, bytes}, RecvMode::Copy));
  return p;
}

// Idle path: latency 2 us + 1e6 B / 5e10 B/s = 20 us, so 22 us exactly.
TEST(FlowEngine, OneTransferOnAnIdlePathTakesLatencyPlusSizeOverBandwidth) {
  const Topology t = star(2, kB, kLat);
  auto router = make_router(t, {});
  const auto p = one_transfer(2, 0, 1, 1'000'000);
  auto engine = make_flow_engine();
  EngineOptions opt;
  opt.record_ops = true;
  const RunResult r = engine->run(input_for(t, p, *router, opt));
  EXPECT_EQ(r.makespan, Time::us(22));
  EXPECT_EQ(r.ops[0][0].end, Time::us(22));
  EXPECT_EQ(r.ops[1][0].end, Time::us(22));
  // Both directed links on the path carried the megabyte, nothing else did.
  EXPECT_DOUBLE_EQ(std::accumulate(r.link_bytes.begin(), r.link_bytes.end(), 0.0), 2e6);

  // Overhead 1 us per message; efficiency 0.5 doubles the wire bytes: 1 + 2 + 40 = 43 us.
  opt.per_message_overhead = Time::us(1);
  opt.transfer_efficiency = 0.5;
  EXPECT_EQ(engine->run(input_for(t, p, *router, opt)).makespan, Time::us(43));
}

// Two GPUs on one cable (no switch, no NIC): 1 us + 1e6 B / 5e10 B/s = 21 us exactly, whether
// the cable joins two servers (a torus, a full mesh of one-GPU nodes) or runs on the board
// (NVLink, xGMI). Across servers the cable is a network link, so with the NCCL glue's options a
// network efficiency of 0.8 applies there (1 + 25 = 26 us), and on the board the transfer
// efficiency of 0.5 (1 + 40 = 41 us).
TEST(FlowEngine, OneTransferOnAnIdleDirectLinkTakesLatencyPlusSizeOverBandwidth) {
  for (const bool same_server : {false, true}) {
    TopologyBuilder b("pair");
    const DeviceId g0 = b.add_device(Device{DeviceKind::Gpu, 0, 0, 0, 0});
    const DeviceId g1 = b.add_device(Device{DeviceKind::Gpu, 0, same_server ? 0u : 1u, 0, 0});
    const LinkMedium m = same_server ? LinkMedium::NvLink : LinkMedium::CopperDac;
    b.add_link(Link{g0, g1, kB, kLat, m, same_server ? 0.0 : 1.0});
    const Topology t = std::move(b).build();
    auto router = make_router(t, {});
    const auto p = one_transfer(2, 0, 1, 1'000'000);
    auto engine = make_flow_engine();
    EngineOptions opt;
    EXPECT_EQ(engine->run(input_for(t, p, *router, opt)).makespan, Time::us(21)) << same_server;
    opt.transfer_efficiency = 0.5;
    opt.network_transfer_efficiency = 0.8;
    EXPECT_EQ(engine->run(input_for(t, p, *router, opt)).makespan, Time::us(same_server ? 41 : 26))
        << same_server;
  }
}

// GPUs 0 and 1 both send 1 MB to GPU 2: GPU 2's downlink is shared, each gets 2.5e10 B/s, so
// each takes 2 us + 40 us.
TEST(FlowEngine, TwoTransfersSharingALinkGetHalfEach) {
  const Topology t = star(3, kB, kLat);
  auto router = make_router(t, {});
  MaterializedProgramSet p(3);
  p.add(0, make_send(2, {Buffer::Input, 0, 1'000'000}));
  p.add(1, make_send(2, {Buffer::Input, 0, 1'000'000}));
  p.add(2, make_recv(0, {Buffer::Output, 0, 1'000'000}, RecvMode::Copy));
  p.add(2, make_recv(1, {Buffer::Output, 0, 1'000'000}, RecvMode::Copy));
  auto engine = make_flow_engine();
  EngineOptions opt;
  opt.record_ops = true;
  const RunResult r = engine->run(input_for(t, p, *router, opt));
  EXPECT_EQ(r.ops[0][0].end, Time::us(42));
  EXPECT_EQ(r.ops[1][0].end, Time::us(42));
}

// Two messages on one connection (same ranks and channel) stream one after the other, as on one
// NCCL channel / queue pair: the first ends at 2 + 20 us, the second streams from 20 to 40 us and
// arrives at 42 us. On two channels they share the links instead: both arrive at 2 + 40 us.
TEST(FlowEngine, MessagesOnOneConnectionAreSentInOrder) {
  const Topology t = star(2, kB, kLat);
  auto router = make_router(t, {});
  EngineOptions opt;
  opt.record_ops = true;
  for (const std::uint16_t second_channel : {0, 1}) {
    MaterializedProgramSet p(2);
    p.add(0, make_send(1, {Buffer::Input, 0, 1'000'000}));
    p.add(0, make_send(1, {Buffer::Input, 0, 1'000'000}, second_channel));
    p.add(1, make_recv(0, {Buffer::Output, 0, 1'000'000}, RecvMode::Copy));
    p.add(1, make_recv(0, {Buffer::Output, 0, 1'000'000}, RecvMode::Copy, second_channel));
    const RunResult r = make_flow_engine()->run(input_for(t, p, *router, opt));
    EXPECT_EQ(r.ops[0][0].end, second_channel == 0 ? Time::us(22) : Time::us(42));
    EXPECT_EQ(r.ops[0][1].end, Time::us(42));
  }
}

// After the first of two sharers finishes, the other speeds up: A sends 1 MB and B 2 MB into
// GPU 2. Both run at 2.5e10 until A's 1 MB is done at 40 us (B has 1 MB left), then B alone at
// 5e10 needs 20 us more: B ends at 2 + 60 = 62 us, A at 42 us.
TEST(FlowEngine, RatesChangeWhenAFlowLeaves) {
  const Topology t = star(3, kB, kLat);
  auto router = make_router(t, {});
  MaterializedProgramSet p(3);
  p.add(0, make_send(2, {Buffer::Input, 0, 1'000'000}));
  p.add(1, make_send(2, {Buffer::Input, 0, 2'000'000}));
  p.add(2, make_recv(0, {Buffer::Output, 0, 1'000'000}, RecvMode::Copy));
  p.add(2, make_recv(1, {Buffer::Output, 0, 2'000'000}, RecvMode::Copy));
  auto engine = make_flow_engine();
  EngineOptions opt;
  opt.record_ops = true;
  const RunResult r = engine->run(input_for(t, p, *router, opt));
  EXPECT_EQ(r.ops[0][0].end, Time::us(42));
  EXPECT_EQ(r.ops[1][0].end, Time::us(62));
  EXPECT_EQ(r.makespan, Time::us(62));
}

// Ring all-reduce of S over n GPUs on an ideal switch: 2(n-1) steps of a + S/(nB) each. With
// n = 4, S = 4 MB, B = 5e10, a = 2 us: step = 2 + 20 = 22 us, total 6 * 22 = 132 us.
TEST(FlowEngine, RingAllReduceOnAnIdealSwitchMatchesTheFormula) {
  const Topology t = star(4, kB, kLat);
  auto router = make_router(t, {});
  const LazyRing ring(4, 4'000'000);
  FlowEngine aggregated({});
  const RunResult a = aggregated.run(input_for(t, ring, *router));
  EXPECT_EQ(a.makespan, Time::us(132));
  EXPECT_EQ(aggregated.last_stats().class_size, 4u);  // one class of four ranks, simulated once

  FlowEngine individual({.aggregate = false});
  const RunResult b = individual.run(input_for(t, ring, *router));
  EXPECT_EQ(b.makespan, Time::us(132));
  EXPECT_EQ(individual.last_stats().class_size, 1u);
  EXPECT_EQ(a.rank_finish, b.rank_finish);
  // Every up- and downlink carried 2(n-1) chunks of 1 MB in both runs.
  EXPECT_EQ(a.link_bytes, b.link_bytes);
  for (const double bytes : b.link_bytes) EXPECT_DOUBLE_EQ(bytes, 6e6);
}

// The same formula with the ring programs of make_collective (collective layer): 132 us.
TEST(FlowEngine, CollectiveRingAllReduceMatchesTheFormula) {
  const Topology t = star(4, kB, kLat);
  auto router = make_router(t, {});
  CollectiveSpec spec;
  spec.op = CollectiveOp::AllReduce;
  spec.algorithm = Algorithm::Ring;
  spec.ranks = 4;
  spec.bytes = Bytes(4'000'000);
  spec.type = DataType::Float32;
  const auto ring = make_collective(spec);
  const RunResult r = make_flow_engine()->run(input_for(t, *ring, *router));
  EXPECT_EQ(r.makespan, Time::us(132));
  // Two channels (each a ring over half the data, laid out one after the other in the program)
  // run together and share every link: a step is 2 + (0.5 MB at 2.5e10 B/s) = 22 us again. Run
  // one after the other they would take 2 * 6 * (2 + 10) = 144 us.
  spec.channels = 2;
  const auto two = make_collective(spec);
  EXPECT_EQ(make_flow_engine()->run(input_for(t, *two, *router)).makespan, Time::us(132));
}

// A slower link tells one rank apart: the class must split, and the result equals the run that
// simulates every rank. GPU 2 has half bandwidth, so a chunk into it takes 2 + 40 us. Step k's
// transfer 1 -> 2 can start only when GPU 2 has received step k-1's (it posts recvs in order),
// so those six transfers run back to back: 6 * 42 = 252 us; every other chain is faster (22 us
// per step, or 42 for 2 -> 3 which starts as soon as 1 -> 2 of the step before ends).
TEST(FlowEngine, AsymmetrySplitsTheClassAndAgreesWithIndividualRun) {
  const Topology t = star(4, kB, kLat, 2);
  auto router = make_router(t, {});
  const LazyRing ring(4, 4'000'000);
  FlowEngine aggregated({});
  const RunResult a = aggregated.run(input_for(t, ring, *router));
  EXPECT_EQ(aggregated.last_stats().class_size, 1u);
  EXPECT_GE(aggregated.last_stats().attempts, 2u);
  FlowEngine individual({.aggregate = false});
  const RunResult b = individual.run(input_for(t, ring, *router));
  EXPECT_EQ(a.makespan, b.makespan);
  EXPECT_EQ(a.makespan, Time::us(252));
}

// Copy ops run at the local copy bandwidth: 1e6 B at 1e9 B/s = 1 ms; free when it is 0.
TEST(FlowEngine, LocalCopiesUseTheCopyBandwidth) {
  const Topology t = star(1, kB, kLat);
  auto router = make_router(t, {});
  MaterializedProgramSet p(1);
  p.add(0, make_copy({Buffer::Input, 0, 1'000'000}, {Buffer::Output, 0, 1'000'000}));
  Op c = make_compute(Time::us(5));
  c.add_dep(0);
  p.add(0, c);
  auto engine = make_flow_engine();
  EngineOptions opt;
  EXPECT_EQ(engine->run(input_for(t, p, *router, opt)).makespan, Time::us(5));
  opt.local_copy_bandwidth = Bandwidth::gBps(1);
  EXPECT_EQ(engine->run(input_for(t, p, *router, opt)).makespan, Time::us(1005));
}

// In-network reduction over a star: each contribution goes up to the switch (1 us + 20 us); the
// switch streams the sum back down as it reduces, starting when the first bytes arrive (at 1 us),
// so the result arrives at 1 us + 1 us + 20 us = 22 us for every member (2 latencies + S/B).
TEST(FlowEngine, NetReduceGoesUpToTheSwitchAndBack) {
  const Topology t = star(4, kB, kLat);
  auto router = make_router(t, {});
  MaterializedProgramSet p(4);
  const auto g = p.add_group({0, 1, 2, 3});
  for (Rank r = 0; r < 4; ++r)
    p.add(r, make_net_reduce(g, {Buffer::Input, 0, 1'000'000}, {Buffer::Output, 0, 1'000'000}));
  auto engine = make_flow_engine();
  const RunResult r = engine->run(input_for(t, p, *router));
  for (Rank k = 0; k < 4; ++k) EXPECT_EQ(r.rank_finish[k], Time::us(22));
}

// Pipelined rounds: a member's k-th NetReduce on a group joins round k. Rank 0 posts both rounds
// at t = 0; rank 1 joins both after a 100 us compute. Both rounds then run together: each member
// uploads 2 x 1 MB over its 50 GB/s link (done at 100 + 1 + 40 = 141 us) while the results stream
// down from 101 us (done at 101 + 1 + 40 = 142 us). (Mixing rounds would let rank 0 "reduce" its
// two rounds with itself and finish at 42 us.)
TEST(FlowEngine, NetReduceRoundsMatchInProgramOrderPerMember) {
  const Topology t = star(2, kB, kLat);
  auto router = make_router(t, {});
  MaterializedProgramSet p(2);
  const auto g = p.add_group({0, 1});
  const BufferRange in{Buffer::Input, 0, 1'000'000}, out{Buffer::Output, 0, 1'000'000};
  p.add(0, make_net_reduce(g, in, out));
  p.add(0, make_net_reduce(g, in, out));
  const OpIndex wait = p.add(1, make_compute(Time::us(100)));
  Op after_wait = make_net_reduce(g, in, out);
  after_wait.num_deps = 1;
  after_wait.deps[0] = wait;
  p.add(1, after_wait);
  p.add(1, after_wait);
  auto engine = make_flow_engine();
  const RunResult r = engine->run(input_for(t, p, *router));
  EXPECT_EQ(r.rank_finish[0], Time::us(142));
  EXPECT_EQ(r.rank_finish[1], Time::us(142));
}

TEST(FlowEngine, SameInputsGiveIdenticalResults) {
  const Topology t = flow_test::leaf_spine(2, 2, kB, kLat);
  auto router = make_router(t, {});
  const LazyRing ring(4, 1'000'000);
  auto engine = make_flow_engine();
  EngineOptions opt;
  opt.record_link_series = true;
  opt.record_ops = true;
  const RunResult a = engine->run(input_for(t, ring, *router, opt));
  const RunResult b = engine->run(input_for(t, ring, *router, opt));
  EXPECT_EQ(a.makespan, b.makespan);
  EXPECT_EQ(a.link_bytes, b.link_bytes);
  EXPECT_EQ(a.events, b.events);
  ASSERT_EQ(a.link_series.size(), b.link_series.size());
  for (std::size_t i = 0; i < a.link_series.size(); ++i)
    EXPECT_EQ(a.link_series[i].utilisation, b.link_series[i].utilisation);
}

TEST(FlowEngine, LinkSeriesShowsAFullLinkWhileTheTransferRuns) {
  const Topology t = star(2, kB, kLat);
  auto router = make_router(t, {});
  const auto p = one_transfer(2, 0, 1, 1'000'000);  // sends from 0 to 20 us, delivered at 22 us
  auto engine = make_flow_engine();
  EngineOptions opt;
  opt.record_link_series = true;
  opt.link_sample_period = Time::us(5);
  const RunResult r = engine->run(input_for(t, p, *router, opt));
  ASSERT_EQ(r.link_series.size(), 2u);  // GPU 0's uplink and GPU 1's downlink
  const auto& u = r.link_series[0].utilisation;
  ASSERT_EQ(u.size(), 5u);  // 22 us in 5 us bins
  for (int b = 0; b < 4; ++b) EXPECT_NEAR(u[b], 1.0, 1e-6);
  EXPECT_NEAR(u[4], 0.0, 1e-6);
}

// A run of more than a million sample periods widens the period rather than stopping early: 22 us
// at 1 ps would be 22e6 samples; the period becomes 22e6 ps / 999,999 + 1 = 23 ps, which gives
// floor(22e6 / 23) + 1 = 956,522 samples covering the whole run, full for the 20 us of sending.
TEST(FlowEngine, LinkSeriesOfALongRunWidensItsPeriod) {
  const Topology t = star(2, kB, kLat);
  auto router = make_router(t, {});
  const auto p = one_transfer(2, 0, 1, 1'000'000);
  auto engine = make_flow_engine();
  EngineOptions opt;
  opt.record_link_series = true;
  opt.link_sample_period = Time::ps(1);
  const RunResult r = engine->run(input_for(t, p, *router, opt));
  EXPECT_EQ(r.link_sample_period, Time::ps(23));
  ASSERT_EQ(r.link_series.size(), 2u);
  const auto& u = r.link_series[0].utilisation;
  ASSERT_EQ(u.size(), 956'522u);
  double busy = 0;
  for (float x : u) busy += x;
  EXPECT_NEAR(busy * 23e-12, 20e-6, 1e-9);  // 20 us at line rate
  EXPECT_NEAR(u.back(), 0.0, 1e-6);         // 21.99 us: delivered, the link idle
}

TEST(FlowEngine, BadProgramsAreInputErrors) {
  const Topology t = star(2, kB, kLat);
  auto router = make_router(t, {});
  auto engine = make_flow_engine();
  {  // a send nobody receives
    MaterializedProgramSet p(2);
    p.add(0, make_send(1, {Buffer::Input, 0, 8}));
    EXPECT_THROW(engine->run(input_for(t, p, *router)), InputError);
  }
  {  // sizes differ
    MaterializedProgramSet p(2);
    p.add(0, make_send(1, {Buffer::Input, 0, 8}));
    p.add(1, make_recv(0, {Buffer::Output, 0, 16}, RecvMode::Copy));
    EXPECT_THROW(engine->run(input_for(t, p, *router)), InputError);
  }
  {  // peer out of range
    MaterializedProgramSet p(2);
    p.add(0, make_send(7, {Buffer::Input, 0, 8}));
    EXPECT_THROW(engine->run(input_for(t, p, *router)), InputError);
  }
  {  // placement too short
    const auto p = one_transfer(2, 0, 1, 8);
    EngineInput in = input_for(t, p, *router);
    in.placement = in.placement.subspan(0, 1);
    EXPECT_THROW(engine->run(in), InputError);
  }
}

// Ops released by one op at the same instant start in program order, so sends post in order and
// FIFO matching pairs them with the recvs as written. Rank 0 computes for 1 us, then sends
// 1,000 B and 3,000 B to rank 1 (both wait only for the compute); rank 1 receives 1,000 B then
// 3,000 B. At 1 GB/s with 1 us per link: the first message streams from 1 to 2 us, the second
// (same connection, so after it) from 2 to 5 us and arrives 2 us later, at 7 us. Released in
// the other order, the 3,000 B send would meet the 1,000 B recv: a size mismatch.
TEST(FlowEngine, OpsReleasedTogetherStartInProgramOrder) {
  const Topology t = star(2, Bandwidth::gBps(1), kLat);
  auto router = make_router(t, {});
  MaterializedProgramSet p(2);
  const OpIndex compute = p.add(0, make_compute(Time::us(1)));
  for (const std::uint64_t bytes : {1'000u, 3'000u}) {
    Op send = make_send(1, {Buffer::Input, 0, bytes});
    send.add_dep(compute);
    p.add(0, send);
    p.add(1, make_recv(0, {Buffer::Output, 0, bytes}, RecvMode::Copy));
  }
  EngineOptions opt;
  opt.record_ops = true;
  const RunResult r = make_flow_engine()->run(input_for(t, p, *router, opt));
  EXPECT_EQ(r.ops[1][0].end, Time::us(4));  // 1 us compute + 1 us streaming + 2 us latency
  EXPECT_EQ(r.ops[1][1].end, Time::us(7));
  EXPECT_EQ(r.makespan, Time::us(7));
}

}  // namespace
}  // namespace lockstep
