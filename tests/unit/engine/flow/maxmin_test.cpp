// Max-min fairness on systems small enough to solve by hand.
#include "lockstep/engine/flow/maxmin.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace lockstep {
namespace {

using Use = MaxMinSolver::Use;

TEST(MaxMin, OneFlowGetsTheWholeLink) {
  MaxMinSolver s({3.0});
  const Use u[] = {{0, 1}};
  const auto v = s.add(u);
  s.solve();
  EXPECT_DOUBLE_EQ(s.rate(v), 3.0);
  ASSERT_EQ(s.changed().size(), 1u);
}

TEST(MaxMin, TwoFlowsOnOneLinkGetHalfEach) {
  MaxMinSolver s({10.0});
  const Use u[] = {{0, 1}};
  const auto a = s.add(u), b = s.add(u);
  s.solve();
  EXPECT_DOUBLE_EQ(s.rate(a), 5.0);
  EXPECT_DOUBLE_EQ(s.rate(b), 5.0);
  // b leaves: a is alone again and gets 10.
  s.remove(b);
  s.solve();
  EXPECT_DOUBLE_EQ(s.rate(a), 10.0);
}

// The textbook example: link A (capacity 1) carries flows 1, 2; link B (capacity 10) flows 2, 3.
// Filling: A saturates at lambda = 1/2, freezing flows 1 and 2 at 0.5; B then has 10 - 0.5 = 9.5
// left for flow 3 alone.
TEST(MaxMin, ClassicTwoLinkExample) {
  MaxMinSolver s({1.0, 10.0});
  const Use f1[] = {{0, 1}};
  const Use f2[] = {{0, 1}, {1, 1}};
  const Use f3[] = {{1, 1}};
  const auto a = s.add(f1), b = s.add(f2), c = s.add(f3);
  s.solve();
  EXPECT_DOUBLE_EQ(s.rate(a), 0.5);
  EXPECT_DOUBLE_EQ(s.rate(b), 0.5);
  EXPECT_DOUBLE_EQ(s.rate(c), 9.5);
  EXPECT_DOUBLE_EQ(s.load(0), 1.0);
  EXPECT_DOUBLE_EQ(s.load(1), 10.0);
  // Flow 1 leaves: A now limits flow 2 to 1; flow 3 gets 10 - 1 = 9.
  s.remove(a);
  s.solve();
  EXPECT_DOUBLE_EQ(s.rate(b), 1.0);
  EXPECT_DOUBLE_EQ(s.rate(c), 9.0);
  EXPECT_EQ(s.changed().size(), 2u);
}

// A variable standing for two identical flows (coefficient 2) and a single flow share a link of
// capacity 3: 2x + y <= 3 with x = y gives x = y = 1.
TEST(MaxMin, CoefficientsCountIdenticalFlows) {
  MaxMinSolver s({3.0});
  const Use two[] = {{0, 2}};
  const Use one[] = {{0, 1}};
  const auto x = s.add(two), y = s.add(one);
  s.solve();
  EXPECT_DOUBLE_EQ(s.rate(x), 1.0);
  EXPECT_DOUBLE_EQ(s.rate(y), 1.0);
  EXPECT_DOUBLE_EQ(s.weight(0), 3.0);
}

TEST(MaxMin, OnlyTouchedComponentsAreResolved) {
  MaxMinSolver s({4.0, 6.0});
  const Use on0[] = {{0, 1}};
  const Use on1[] = {{1, 1}};
  const auto a = s.add(on0), b = s.add(on1);
  s.solve();
  // A new flow on link 1 changes b (6 -> 3) and itself, never a on the untouched link 0.
  const auto c = s.add(on1);
  s.solve();
  ASSERT_EQ(s.changed().size(), 2u);
  for (const auto v : s.changed()) EXPECT_NE(v, a);
  EXPECT_DOUBLE_EQ(s.rate(b), 3.0);
  EXPECT_DOUBLE_EQ(s.rate(c), 3.0);
  EXPECT_DOUBLE_EQ(s.rate(a), 4.0);
}

// Link A (capacity 10) carries x and y, link B (capacity 4) y and z: B saturates first at
// 4/2 = 2 (y, z), then A gives x 10 - 2 = 8.
struct TwoLinks {
  MaxMinSolver s{{10.0, 4.0}};
  Use on_a[1] = {{0, 1}};
  Use on_both[2] = {{0, 1}, {1, 1}};
  Use on_b[1] = {{1, 1}};
  MaxMinSolver::VarId x = s.add(on_a), y = s.add(on_both), z = s.add(on_b);
  TwoLinks() { s.solve(); }
};

// A connection's next transfer replaces its last one: same uses, so the allocation cannot
// change. The newcomer takes y's rate (2) and is the only variable reported, without a solve.
TEST(MaxMin, AReplacementTakesTheRateWithoutASolve) {
  TwoLinks t;
  const std::uint64_t visited = t.s.visited();
  t.s.remove(t.y);
  const auto next = t.s.add(t.on_both);
  t.s.solve();
  EXPECT_EQ(t.s.visited(), visited);
  ASSERT_EQ(t.s.changed().size(), 1u);
  EXPECT_EQ(t.s.changed()[0], next);
  EXPECT_DOUBLE_EQ(t.s.rate(next), 2.0);
  EXPECT_DOUBLE_EQ(t.s.previous_rate(next), 0.0);
  EXPECT_DOUBLE_EQ(t.s.rate(t.x), 8.0);
  EXPECT_DOUBLE_EQ(t.s.rate(t.z), 2.0);
}

TEST(MaxMin, AVariableAddedAndRemovedBeforeTheSolveLeavesNoTrace) {
  TwoLinks t;
  const std::uint64_t visited = t.s.visited();
  t.s.remove(t.s.add(t.on_b));
  t.s.solve();
  EXPECT_EQ(t.s.visited(), visited);
  EXPECT_TRUE(t.s.changed().empty());
  EXPECT_DOUBLE_EQ(t.s.rate(t.z), 2.0);
}

// Not a replacement: y leaves B, so A holds x and the newcomer at 5 each and z has B's 4.
TEST(MaxMin, ANewcomerOnOtherLinksIsSolved) {
  TwoLinks t;
  t.s.remove(t.y);
  const auto other = t.s.add(t.on_a);
  t.s.solve();
  EXPECT_DOUBLE_EQ(t.s.rate(other), 5.0);
  EXPECT_DOUBLE_EQ(t.s.rate(t.x), 5.0);
  EXPECT_DOUBLE_EQ(t.s.rate(t.z), 4.0);
  EXPECT_EQ(t.s.changed().size(), 3u);
}

// A replacement in a component that also changed otherwise is solved with it: a third flow on
// B gives y's successor and z 4/3 each, x gets 10 - 4/3. The successor is reported once.
TEST(MaxMin, AReplacementInAChangedComponentIsSolvedWithIt) {
  TwoLinks t;
  t.s.remove(t.y);
  const auto next = t.s.add(t.on_both);
  const auto extra = t.s.add(t.on_b);
  t.s.solve();
  EXPECT_DOUBLE_EQ(t.s.rate(next), 4.0 / 3);
  EXPECT_DOUBLE_EQ(t.s.rate(extra), 4.0 / 3);
  EXPECT_DOUBLE_EQ(t.s.rate(t.z), 4.0 / 3);
  EXPECT_DOUBLE_EQ(t.s.rate(t.x), 10.0 - 4.0 / 3);
  const auto changed = t.s.changed();
  EXPECT_EQ(std::count(changed.begin(), changed.end(), next), 1);
  EXPECT_EQ(changed.size(), 4u);
}

TEST(MaxMin, RemovedSlotsAreReused) {
  MaxMinSolver s({1.0});
  const Use u[] = {{0, 1}};
  const auto a = s.add(u);
  s.remove(a);
  const auto b = s.add(u);
  EXPECT_EQ(a, b);
  EXPECT_EQ(s.num_variables(), 1u);
}

}  // namespace
}  // namespace lockstep
