// The functional executor on hand-written programs: data movement, FIFO matching, reductions,
// and every kind of broken program reported as an InputError naming ranks and ops.
#include "lockstep/engine/functional/executor.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "lockstep/collective/collective.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/engine/functional/verify.hpp"

namespace lockstep {
namespace {

BufferRange in(std::uint64_t off, std::uint64_t bytes) {
  return {Buffer::Input, off, bytes};
}
BufferRange out(std::uint64_t off, std::uint64_t bytes) {
  return {Buffer::Output, off, bytes};
}

MaterializedProgramSet two_ranks(DataType t = DataType::Int32, std::uint64_t bytes = 16) {
  MaterializedProgramSet p(2, t);
  for (Rank r = 0; r < 2; ++r) p.set_buffers(r, {bytes, bytes, 0, false});
  return p;
}

std::string error_of(const ProgramSet& p) {
  std::vector<RankBuffers> none;
  FunctionalOptions o;
  o.move_data = false;
  try {
    execute(p, none, o);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

std::int32_t at(const std::vector<std::byte>& b, std::size_t i) {
  std::int32_t v;
  std::memcpy(&v, b.data() + 4 * i, 4);
  return v;
}
void put(std::vector<std::byte>& b, std::size_t i, std::int32_t v) {
  std::memcpy(b.data() + 4 * i, &v, 4);
}

// Two messages on one pair and channel meet their receives in program order (FIFO), whatever
// order the ops run in: the first recv gets elements 0-1, the second elements 2-3.
TEST(Executor, FifoMatchingAndReduce) {
  MaterializedProgramSet p = two_ranks();
  p.add(0, make_send(1, in(0, 8)));
  p.add(0, make_send(1, in(8, 8)));
  p.add(1, make_copy(in(0, 16), out(0, 16)));
  Op r1 = make_recv(0, out(0, 8), RecvMode::Reduce);
  r1.add_dep(0);
  p.add(1, r1);
  Op r2 = make_recv(0, out(8, 8), RecvMode::Copy);
  r2.add_dep(0);
  p.add(1, r2);
  for (Schedule s : {Schedule::Forward, Schedule::Reverse}) {
    std::vector<RankBuffers> b = allocate_buffers(p);
    for (int i = 0; i < 4; ++i) {
      put(b[0].input, i, 10 + i);
      put(b[1].input, i, 100 * (i + 1));
    }
    FunctionalOptions o;
    o.schedule = s;
    const FunctionalResult r = execute(p, b, o);
    EXPECT_EQ(at(b[1].output, 0), 110);  // 10 + 100
    EXPECT_EQ(at(b[1].output, 1), 211);  // 11 + 200
    EXPECT_EQ(at(b[1].output, 2), 12);
    EXPECT_EQ(at(b[1].output, 3), 13);
    EXPECT_EQ(r.ranks[0].bytes_sent, 16u);
    EXPECT_EQ(r.ranks[1].bytes_received, 16u);
    EXPECT_EQ(r.steps, 1u);
  }
}

// Integer sums wrap modulo 2^32: INT32_MAX + 1 = INT32_MIN, exactly.
TEST(Executor, IntegerSumsWrap) {
  MaterializedProgramSet p = two_ranks(DataType::Int32, 4);
  p.add(0, make_send(1, in(0, 4)));
  p.add(1, make_recv(0, in(0, 4), RecvMode::Reduce));
  std::vector<RankBuffers> b = allocate_buffers(p);
  put(b[0].input, 0, 1);
  put(b[1].input, 0, 2147483647);
  execute(p, b);
  EXPECT_EQ(at(b[1].input, 0), -2147483647 - 1);
}

// A net_reduce group of 3 ranks: every member gets 1 + 2 + 3 = 6.
TEST(Executor, NetReduceSumsTheGroup) {
  MaterializedProgramSet p(3, DataType::Int32);
  const std::uint32_t g = p.add_group({0, 1, 2});
  for (Rank r = 0; r < 3; ++r) {
    p.set_buffers(r, {4, 4, 0, false});
    p.add(r, make_net_reduce(g, in(0, 4), out(0, 4)));
  }
  std::vector<RankBuffers> b = allocate_buffers(p);
  for (Rank r = 0; r < 3; ++r) put(b[r].input, 0, static_cast<std::int32_t>(r + 1));
  execute(p, b);
  for (Rank r = 0; r < 3; ++r) EXPECT_EQ(at(b[r].output, 0), 6);
}

// Both ranks receive before they send: nobody can move. The error names both ranks and ops.
TEST(Executor, DeadlockNamesRanksAndOps) {
  MaterializedProgramSet p = two_ranks();
  for (Rank r = 0; r < 2; ++r) {
    p.add(r, make_recv(1 - r, out(0, 8), RecvMode::Copy));
    Op s = make_send(1 - r, in(0, 8));
    s.add_dep(0);
    p.add(r, s);
  }
  const std::string e = error_of(p);
  EXPECT_NE(e.find("deadlock: 2 of 2 ranks"), std::string::npos) << e;
  EXPECT_NE(e.find("rank 0 op 0 (recv 8 B from rank 1"), std::string::npos) << e;
  EXPECT_NE(e.find("rank 1 op 0 (recv 8 B from rank 0"), std::string::npos) << e;
}

// A correct ring all-reduce with one send removed. Matching is FIFO per pair and channel, so
// rank 2's remaining 5 sends meet rank 3's first 5 receives and rank 3's sixth receive from rank
// 2 (op 11: 2(n-1) = 6 steps x [send, recv], the last recv) waits forever. The report names it.
TEST(Executor, BrokenRingIsADeadlock) {
  CollectiveSpec s;
  s.ranks = 4;
  s.bytes = Bytes(400);
  const auto ring = make_collective(s);
  MaterializedProgramSet broken(4, s.type);
  for (Rank r = 0; r < 4; ++r) {
    broken.set_buffers(r, ring->buffers(r));
    for (OpIndex i = 0; i < ring->num_ops(r); ++i) {
      Op op = ring->op(r, i);
      // Rank 2's first send becomes a zero-length compute: rank 3 never gets step 0's block.
      if (r == 2 && i == 0) op = make_compute(Time::zero());
      broken.add(r, op);
    }
  }
  const std::string e = error_of(broken);
  EXPECT_EQ(e,
            "programs: deadlock: 1 of 4 ranks cannot progress: rank 3 op 11 (recv 100 B "
            "from rank 2 on channel 0, no matching send)");
}

TEST(Executor, SizeMismatch) {
  MaterializedProgramSet p = two_ranks();
  p.add(0, make_send(1, in(0, 8)));
  p.add(1, make_recv(0, out(0, 12), RecvMode::Copy));
  EXPECT_EQ(error_of(p),
            "programs: size mismatch: rank 0 op 0 sends 8 B to rank 1 on channel 0 but rank 1 "
            "op 0 receives 12 B");
}

TEST(Executor, UnreceivedMessage) {
  MaterializedProgramSet p = two_ranks();
  p.add(0, make_send(1, in(0, 8), 3));
  EXPECT_NE(error_of(p).find("rank 0 op 0 (send 8 B to rank 1 on channel 3) is never received"),
            std::string::npos);
}

TEST(Executor, RangeOutsideBuffer) {
  MaterializedProgramSet p = two_ranks();
  p.add(0, make_copy(in(8, 16), out(0, 16)));
  EXPECT_NE(error_of(p).find("rank 0 op 0 (copy 16 B): source range [8, 24) is outside the input "
                             "buffer of 16 B"),
            std::string::npos);
}

// A missing dependency is a race: with the reverse schedule the executor runs the in-place
// reduce before the send that should have read the old data, and verification catches it.
TEST(Executor, ReverseScheduleExposesMissingDependency) {
  CollectiveSpec s;
  s.ranks = 2;
  s.bytes = Bytes(4);
  s.type = DataType::Int32;
  MaterializedProgramSet p(2, s.type);
  for (Rank r = 0; r < 2; ++r) {
    p.set_buffers(r, {4, 4, 0, true});
    p.add(r, make_send(1 - r, in(0, 4)));
    p.add(r, make_recv(1 - r, in(0, 4), RecvMode::Reduce));  // should depend on op 0
  }
  EXPECT_TRUE(verify_collective(s, p).ok);
  FunctionalOptions reverse;
  reverse.schedule = Schedule::Reverse;
  EXPECT_FALSE(verify_collective(s, p, reverse).ok);
}

}  // namespace
}  // namespace lockstep
