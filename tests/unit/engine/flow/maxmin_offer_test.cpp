// The newcomer's offer of the local max-min solve (docs/flow-engine.md, S3): the room left
// on its TIGHTEST constraint. Hand-derived like maxmin_test.cpp.
#include <gtest/gtest.h>

#include "lockstep/engine/flow/maxmin.hpp"

namespace lockstep {
namespace {

using Use = MaxMinSolver::Use;

// Link A (capacity 6) carries x, held at 2 by link C (capacity 2); link B (capacity 10) carries y,
// held at 3 by link D (capacity 3). A newcomer w on B and A has 7 of room on B and 4 on A: it is
// offered 4, which is its max-min rate (A saturates with w highest on it; x and y keep their
// bottlenecks C and D), so the check passes and nothing is filled. Offered B's 7 (the first
// link's, or the loosest), A would be over capacity and a region would be filled.
TEST(MaxMin, ANewcomerIsOfferedTheRoomOfItsTightestLink) {
  MaxMinSolver s({6.0, 10.0, 2.0, 3.0});
  const Use ux[] = {{0, 1}, {2, 1}};
  const Use uy[] = {{1, 1}, {3, 1}};
  const auto x = s.add(ux), y = s.add(uy);
  s.solve();
  ASSERT_DOUBLE_EQ(s.rate(x), 2.0);
  ASSERT_DOUBLE_EQ(s.rate(y), 3.0);
  const std::uint64_t visited = s.visited();
  const Use uw[] = {{1, 1}, {0, 1}};  // B listed first: the offer is not the first link's room
  const auto w = s.add(uw);
  s.solve();
  EXPECT_EQ(s.visited(), visited);
  EXPECT_DOUBLE_EQ(s.rate(w), 4.0);
  EXPECT_DOUBLE_EQ(s.rate(x), 2.0);
  EXPECT_DOUBLE_EQ(s.rate(y), 3.0);
  ASSERT_EQ(s.changed().size(), 1u);
  EXPECT_EQ(s.changed()[0], w);
}

}  // namespace
}  // namespace lockstep
