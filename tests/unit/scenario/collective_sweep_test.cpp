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

}  // namespace
}  // namespace lockstep
