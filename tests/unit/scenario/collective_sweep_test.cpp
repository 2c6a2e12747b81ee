// Collective sweeps read from flags and scenario sections (scenario/collective_sweep.hpp).
#include "lockstep/scenario/collective_sweep.hpp"

#include <gtest/gtest.h>

#include "lockstep/core/error.hpp"

namespace lockstep {
namespace {

TEST(CollectiveSweep, ParsesAndRejectsWithTheKey) {
  ArgNode m = ArgNode::map("collectives", SourceLocation{"s.yaml", 5, 3});
  m.set("op", ArgNode::scalar("all_gather", "collectives.op", {"s.yaml", 6, 7}));
  m.set("max_bytes", ArgNode::scalar("1GiB", "collectives.max_bytes", {"s.yaml", 7, 14}));
  const CollectiveSweep s = parse_collective_sweep(m);
  EXPECT_EQ(s.op, CollectiveOp::AllGather);
  EXPECT_EQ(s.max_bytes, Bytes::gib(1));
  ArgNode bad = ArgNode::map("collectives", SourceLocation{"s.yaml", 5, 3});
  bad.set("algo", ArgNode::scalar("spiral", "collectives.algo", {"s.yaml", 8, 9}));
  try {
    parse_collective_sweep(bad);
    FAIL() << "unknown algorithm accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().line, 8);
  }
  ArgNode typo = ArgNode::map("collectives", SourceLocation{"s.yaml", 5, 3});
  typo.set("max_byte", ArgNode::scalar("1GiB", "collectives.max_byte", {"s.yaml", 9, 3}));
  EXPECT_THROW(parse_collective_sweep(typo), InputError);
}

// alltoallv is timed (with its skew); skew belongs to alltoallv alone and has a range; barrier
// stays outside the NCCL model.
TEST(CollectiveSweep, AlltoallvAndItsSkew) {
  const auto sweep = [](const char* op, const char* skew) {
    ArgNode m = ArgNode::map("collectives", SourceLocation{"s.yaml", 5, 3});
    m.set("op", ArgNode::scalar(op, "collectives.op", {"s.yaml", 6, 7}));
    if (skew) m.set("skew", ArgNode::scalar(skew, "collectives.skew", {"s.yaml", 7, 9}));
    return parse_collective_sweep(m);
  };
  EXPECT_EQ(sweep("alltoallv", "1.2").skew, 1.2);
  EXPECT_EQ(sweep("alltoallv", nullptr).skew, 0.0);
  const auto line_of = [&](const char* op, const char* skew) {
    try {
      sweep(op, skew);
    } catch (const InputError& e) {
      return e.where().line;
    }
    return 0;
  };
  EXPECT_EQ(line_of("alltoall", "1"), 7);     // only alltoallv takes a skew
  EXPECT_EQ(line_of("alltoallv", "-1"), 7);   // below 0
  EXPECT_EQ(line_of("alltoallv", "101"), 7);  // above 100
  EXPECT_EQ(line_of("alltoallv", "lots"), 7);
  EXPECT_EQ(line_of("barrier", nullptr), 6);
}

TEST(CollectiveSweep, ReadsLinkFaultsAndRefusesSlowGpus) {
  ArgNode m = ArgNode::map("collectives", SourceLocation{"s.yaml", 5, 3});
  ArgNode faults = ArgNode::list("collectives.faults", {"s.yaml", 6, 11});
  faults.push(
      ArgNode::scalar("failed-link:link=nic3-leaf3", "collectives.faults[0]", {"s.yaml", 6, 12}));
  faults.push(
      ArgNode::scalar("degraded-link:link=7,x=0.25", "collectives.faults[1]", {"s.yaml", 6, 42}));
  m.set("faults", faults);
  const CollectiveSweep s = parse_collective_sweep(m);
  ASSERT_EQ(s.faults.size(), 2u);
  EXPECT_EQ(s.faults[0].a, "nic3");
  EXPECT_EQ(s.faults[1].link, 7u);
  EXPECT_EQ(s.faults[1].where.column, 42);  // for errors found once the topology is built
  // A slow GPU has no compute to slow in a collective: refused where it was written.
  ArgNode slow = ArgNode::map("collectives", SourceLocation{"s.yaml", 5, 3});
  slow.set("faults",
           ArgNode::scalar("slow-gpu:rank=1,x=2", "collectives.faults", {"s.yaml", 6, 11}));
  try {
    parse_collective_sweep(slow);
    FAIL() << "slow-gpu accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().line, 6);
    EXPECT_EQ(e.field(), "collectives.faults");
    EXPECT_NE(e.bare_message().find("a collective has none to slow"), std::string::npos);
  }
  // Its late start is what a collective sees of it (a straggler): accepted.
  ArgNode late = ArgNode::map("collectives", SourceLocation{"s.yaml", 5, 3});
  late.set("faults",
           ArgNode::scalar("slow-gpu:rank=1,delay=50us", "collectives.faults", {"s.yaml", 6, 11}));
  const CollectiveSweep l = parse_collective_sweep(late);
  ASSERT_EQ(l.faults.size(), 1u);
  EXPECT_EQ(l.faults[0].delay, Time::us(50));
}

}  // namespace
}  // namespace lockstep

namespace lockstep {
namespace {

// nccl-tests' names for the ops: its binaries (all_reduce_perf) and the names without '_'.
TEST(CollectiveSweep, ReadsNcclTestsOpNames) {
  EXPECT_EQ(parse_sweep_op("allreduce", "--op"), CollectiveOp::AllReduce);
  EXPECT_EQ(parse_sweep_op("all_reduce_perf", "--op"), CollectiveOp::AllReduce);
  EXPECT_EQ(parse_sweep_op("allgather", "--op"), CollectiveOp::AllGather);
  EXPECT_EQ(parse_sweep_op("reducescatter", "--op"), CollectiveOp::ReduceScatter);
  EXPECT_EQ(parse_sweep_op("alltoall_perf", "--op"), CollectiveOp::AllToAll);
  EXPECT_EQ(parse_sweep_op("sendrecv_perf", "--op"), CollectiveOp::SendRecv);
  EXPECT_EQ(parse_sweep_op("broadcast", "--op"), CollectiveOp::Broadcast);
  EXPECT_EQ(parse_sweep_op("reduce_perf", "--op"), CollectiveOp::Reduce);
  EXPECT_THROW(parse_sweep_op("all_reduce_perf_perf", "--op"), InputError);
  EXPECT_THROW(parse_sweep_op("_perf", "--op"), InputError);
}

// nccl-tests -i: sizes grow by a fixed step (8, 8 + 1 MiB, ...), never with a factor too.
TEST(CollectiveSweep, StepBytesAddsInsteadOfMultiplying) {
  ArgNode m = ArgNode::map("flags");
  m.set("min_bytes", ArgNode::scalar("8", "-b"));
  m.set("max_bytes", ArgNode::scalar("3145736", "-e"));  // 3 MiB + 8
  m.set("step_bytes", ArgNode::scalar("1MiB", "-i"));
  const auto sizes = parse_collective_sweep(m).sizes(8);
  ASSERT_EQ(sizes.size(), 4u);
  EXPECT_EQ(sizes[1], Bytes(1048584));
  EXPECT_EQ(sizes[3], Bytes(3145736));
  m.set("step_factor", ArgNode::scalar("2", "-f"));
  EXPECT_THROW(parse_collective_sweep(m), InputError);
  ArgNode tiny = ArgNode::map("flags");
  tiny.set("max_bytes", ArgNode::scalar("1GiB", "-e"));
  tiny.set("step_bytes", ArgNode::scalar("1KiB", "-i"));  // a million rows
  EXPECT_THROW(parse_collective_sweep(tiny), InputError);
}

}  // namespace
}  // namespace lockstep
