// The analytical engine against hand-derived alpha-beta times.
#include "lockstep/engine/analytical/analytical_engine.hpp"

#include <gtest/gtest.h>

#include "fixtures.hpp"
#include "lockstep/collective/collective.hpp"
#include "lockstep/core/error.hpp"

namespace lockstep {
namespace {

// Two GPUs joined by one link of 50 GB/s and 1 us.
Topology two_gpus() {
  TopologyBuilder b("pair");
  const DeviceId a = b.add_device(Device{DeviceKind::Gpu, 0, 0, 0, 0});
  const DeviceId c = b.add_device(Device{DeviceKind::Gpu, 0, 0, 0, 1});
  b.add_link(Link{a, c, Bandwidth::gBps(50), Time::us(1), LinkMedium::NvLink});
  return std::move(b).build();
}

// n GPUs on one switch, each link 50 GB/s and 1 us (so a GPU-to-GPU path is 2 us, 50 GB/s).
Topology star(std::uint32_t n) {
  return analytical_test::star(n, Bandwidth::gBps(50), Time::us(1));
}

RunResult run(const Topology& topo, const ProgramSet& programs, EngineOptions options = {}) {
  const auto router = make_router(topo, RouterOptions{});
  EngineInput in;
  in.topology = &topo;
  in.programs = &programs;
  in.placement = topo.gpus();
  in.router = router.get();
  in.options = options;
  return make_analytical_engine()->run(in);
}

MaterializedProgramSet one_transfer(std::uint64_t bytes) {
  MaterializedProgramSet p(2, DataType::Uint8);
  p.add(0, make_send(1, BufferRange{Buffer::Input, 0, bytes}));
  p.add(1, make_recv(0, BufferRange{Buffer::Output, 0, bytes}, RecvMode::Copy));
  return p;
}

TEST(AnalyticalEngine, OneTransferIsLatencyPlusSizeOverBandwidth) {
  // 1 MiB over 50 GB/s: 1048576 / 50e9 s = 20.97152 us exactly; plus the 1 us link latency.
  const Topology topo = two_gpus();
  const auto programs = one_transfer(1048576);
  const RunResult r = run(topo, programs);
  EXPECT_EQ(r.makespan, Time::ps(1'000'000 + 20'971'520));
  EXPECT_EQ(r.rank_finish[0], r.makespan);
  EXPECT_DOUBLE_EQ(r.link_bytes[0], 1048576.0);  // a -> b direction only
  EXPECT_DOUBLE_EQ(r.link_bytes[1], 0.0);
}

TEST(AnalyticalEngine, OverheadAndEfficiency) {
  // + 0.5 us per message; efficiency 0.5 doubles the wire time: 41.94304 us.
  const Topology topo = two_gpus();
  const auto programs = one_transfer(1048576);
  EngineOptions o;
  o.per_message_overhead = Time::ns(500);
  o.transfer_efficiency = 0.5;
  EXPECT_EQ(run(topo, programs, o).makespan, Time::ps(500'000 + 1'000'000 + 41'943'040));
}

TEST(AnalyticalEngine, RingAllReduceIsTwoNMinusOneSteps) {
  // Ring all-reduce of S = 4,000,000 B over n = 4 GPUs on an ideal switch (path 50 GB/s, 2 us):
  // 2(n-1) steps of a + S/(nB) = 2 us + 1e6 B / 50e9 B/s = 2 + 20 = 22 us -> 6 x 22 = 132 us.
  const Topology topo = star(4);
  CollectiveSpec spec;
  spec.ranks = 4;
  spec.bytes = Bytes(4'000'000);
  const auto programs = make_collective(spec);
  const RunResult r = run(topo, *programs);
  EXPECT_EQ(r.makespan, Time::us(132));
  // Bytes conserved: each rank sends 2(n-1) blocks of 1e6 B, each over 2 directed links.
  double total = 0;
  for (double b : r.link_bytes) total += b;
  EXPECT_DOUBLE_EQ(total, 4 * 6 * 1e6 * 2);
}

TEST(AnalyticalEngine, DeterministicAndComputeOps) {
  const Topology topo = star(3);
  MaterializedProgramSet p(3, DataType::Uint8);
  p.add(0, make_compute(Time::us(5)));
  Op send = make_send(2, BufferRange{Buffer::Input, 0, 500'000});
  send.add_dep(0);
  p.add(0, send);
  p.add(2, make_recv(0, BufferRange{Buffer::Output, 0, 500'000}, RecvMode::Copy));
  // 5 us compute, then 2 us + 500000 / 50e9 s = 10 us: rank 2 finishes at 17 us.
  const RunResult a = run(topo, p);
  const RunResult b = run(topo, p);
  EXPECT_EQ(a.makespan, Time::us(17));
  EXPECT_EQ(a.rank_finish, b.rank_finish);
  EXPECT_EQ(a.rank_finish[1], Time::zero());
}

TEST(AnalyticalEngine, TwoTransfersIntoOneGpuTakeItsLinkInTurn) {
  // GPUs 0 and 1 each send 500,000 B to GPU 2 at time 0 (path 2 us, 50 GB/s: alone 2 + 10 =
  // 12 us). Both cross the switch's link to GPU 2, which sends one at a time: rank 0's, ready
  // first in (time, rank) order, ends at 12 us; rank 1's bytes go after it, 10 + 10 us, and it
  // ends at 22 us, when 1 MB has crossed the shared link at 50 GB/s.
  const Topology topo = star(3);
  MaterializedProgramSet p(3, DataType::Uint8);
  p.add(0, make_send(2, BufferRange{Buffer::Input, 0, 500'000}));
  p.add(1, make_send(2, BufferRange{Buffer::Input, 0, 500'000}));
  p.add(2, make_recv(0, BufferRange{Buffer::Output, 0, 500'000}, RecvMode::Copy));
  p.add(2, make_recv(1, BufferRange{Buffer::Output, 500'000, 500'000}, RecvMode::Copy));
  const RunResult r = run(topo, p);
  EXPECT_EQ(r.rank_finish[0], Time::us(12));
  EXPECT_EQ(r.rank_finish[1], Time::us(22));
  EXPECT_EQ(r.makespan, Time::us(22));
}

TEST(AnalyticalEngine, UnmatchedReceiveIsAnInputError) {
  const Topology topo = two_gpus();
  MaterializedProgramSet p(2, DataType::Uint8);
  p.add(0, make_recv(1, BufferRange{Buffer::Output, 0, 8}, RecvMode::Copy));
  try {
    run(topo, p);
    FAIL() << "unmatched receive accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("rank 0 op 0"), std::string::npos) << e.what();
  }
}

TEST(AnalyticalEngine, SizeMismatchIsAnInputError) {
  const Topology topo = two_gpus();
  MaterializedProgramSet p(2, DataType::Uint8);
  p.add(0, make_send(1, BufferRange{Buffer::Input, 0, 8}));
  p.add(1, make_recv(0, BufferRange{Buffer::Output, 0, 16}, RecvMode::Copy));
  EXPECT_THROW(run(topo, p), InputError);
}

}  // namespace
}  // namespace lockstep
