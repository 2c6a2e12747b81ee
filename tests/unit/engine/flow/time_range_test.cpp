// Transfers at the edge of Time's range (2^63 - 1 ps, 106.75 days): exact just inside it,
// infinite past it, never wrapped. A 2 GiB all-reduce over a 1 Kb/s link used to finish in
// 31.76 us: the completion time of its flow, past 2^63 ps as a double, wrapped to a negative
// time when cast to an integer, and the event ran at once.
#include <gtest/gtest.h>

#include "fixtures.hpp"
#include "lockstep/collective/collective.hpp"

namespace lockstep {
namespace {

using flow_test::input_for;
using flow_test::LazyRing;
using flow_test::star;

const Bandwidth k1Kbps = Bandwidth::bytes_per_second(125);
const Time kLat = Time::us(1);  // per link: 2 us GPU-switch-GPU

MaterializedProgramSet one_transfer(std::uint64_t bytes) {
  MaterializedProgramSet p(2);
  p.add(0, make_send(1, {Buffer::Input, 0, bytes}));
  p.add(1, make_recv(0, {Buffer::Output, 0, bytes}, RecvMode::Copy));
  return p;
}

RunResult run(const Topology& t, const ProgramSet& p) {
  auto router = make_router(t, {});
  return make_flow_engine()->run(input_for(t, p, *router, {}));
}

TEST(FlowTimeRange, OneGibAtOneKilobitIsExactJustInsideTheRange) {
  // 2 us + 2^30 B / 125 B/s = 2 us + 8,589,934.592 s.
  const RunResult r = run(star(2, k1Kbps, kLat), one_transfer(std::uint64_t{1} << 30));
  EXPECT_EQ(r.makespan.picoseconds(), 8'589'934'592'000'000'000 + 2'000'000);
}

TEST(FlowTimeRange, TwoGibAtOneKilobitIsInfiniteNotShort) {
  // 17,179,869.184 s: past the range.
  const RunResult r = run(star(2, k1Kbps, kLat), one_transfer(std::uint64_t{2} << 30));
  EXPECT_EQ(r.makespan, Time::infinite());
  EXPECT_EQ(r.rank_finish[0], Time::infinite());
  EXPECT_EQ(r.rank_finish[1], Time::infinite());
}

TEST(FlowTimeRange, RingAllReduceOfTwoGibAtOneKilobitIsInfinite) {
  // The case: two GPUs, 2 GiB. Each ring step moves 1 GiB each way, 8.6 x 10^6 s, which
  // fits; the second step takes the clock past the range.
  const RunResult r = run(star(2, k1Kbps, kLat), LazyRing(2, std::uint64_t{2} << 30));
  EXPECT_EQ(r.makespan, Time::infinite());
}

TEST(FlowTimeRange, AFastRankFinishesWhileASlowOneRunsPastTheRange) {
  // Rank 0 sends 2 GiB to rank 1 over the slow star; ranks 2 and 3 swap 1 MB on their own
  // links, which are fast: 2 us + 20 us.
  TopologyBuilder b("mixed");
  for (std::uint32_t i = 0; i < 4; ++i) b.add_device(flow_test::gpu(i));
  const DeviceId s = b.add_device(flow_test::sw());
  b.add_link(Link{0, s, k1Kbps, kLat});
  b.add_link(Link{1, s, k1Kbps, kLat});
  b.add_link(Link{2, s, Bandwidth::gBps(50), kLat});
  b.add_link(Link{3, s, Bandwidth::gBps(50), kLat});
  const Topology t = std::move(b).build();
  MaterializedProgramSet p(4);
  p.add(0, make_send(1, {Buffer::Input, 0, std::uint64_t{2} << 30}));
  p.add(1, make_recv(0, {Buffer::Output, 0, std::uint64_t{2} << 30}, RecvMode::Copy));
  p.add(2, make_send(3, {Buffer::Input, 0, 1'000'000}));
  p.add(3, make_recv(2, {Buffer::Output, 0, 1'000'000}, RecvMode::Copy));
  const RunResult r = run(t, p);
  EXPECT_EQ(r.rank_finish[2], Time::us(22));
  EXPECT_EQ(r.rank_finish[3], Time::us(22));
  EXPECT_EQ(r.rank_finish[1], Time::infinite());
  EXPECT_EQ(r.makespan, Time::infinite());
}

}  // namespace
}  // namespace lockstep
