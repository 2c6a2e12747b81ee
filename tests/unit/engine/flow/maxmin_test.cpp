// Max-min fairness on systems small enough to solve by hand.
#include "lockstep/engine/flow/maxmin.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

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

// Link A (capacity 4) carries x and y at 2 each; link B (capacity 10) carries y only. A newcomer
// on B alone is offered B's room, 8, which is its max-min rate: y is held at 2 by A. No filling.
TEST(MaxMin, ANewcomerOnALinkWithRoomTakesTheRoomWithoutASolve) {
  MaxMinSolver s({4.0, 10.0});
  const Use on_a[] = {{0, 1}};
  const Use on_both[] = {{0, 1}, {1, 1}};
  const Use on_b[] = {{1, 1}};
  const auto x = s.add(on_a), y = s.add(on_both);
  s.solve();
  const std::uint64_t visited = s.visited();
  const auto w = s.add(on_b);
  s.solve();
  EXPECT_EQ(s.visited(), visited);
  EXPECT_DOUBLE_EQ(s.rate(w), 8.0);
  EXPECT_DOUBLE_EQ(s.rate(x), 2.0);
  EXPECT_DOUBLE_EQ(s.rate(y), 2.0);
  ASSERT_EQ(s.changed().size(), 1u);
  EXPECT_EQ(s.changed()[0], w);
  EXPECT_DOUBLE_EQ(s.previous_rate(w), 0.0);
}

// Three links of capacity 4 in a triangle, a flow on each pair of neighbours: every link carries
// two flows at 2. When a leaves, b and c still meet on link 1, full, at 2 each: nothing moves.
TEST(MaxMin, ALeaverWhoseNeighboursAreHeldElsewhereMovesNothing) {
  MaxMinSolver s({4.0, 4.0, 4.0});
  const Use ua[] = {{2, 1}, {0, 1}};
  const Use ub[] = {{0, 1}, {1, 1}};
  const Use uc[] = {{1, 1}, {2, 1}};
  const auto a = s.add(ua), b = s.add(ub), c = s.add(uc);
  s.solve();
  EXPECT_DOUBLE_EQ(s.rate(a), 2.0);
  const std::uint64_t visited = s.visited();
  s.remove(a);
  s.solve();
  EXPECT_EQ(s.visited(), visited);
  EXPECT_TRUE(s.changed().empty());
  EXPECT_DOUBLE_EQ(s.rate(b), 2.0);
  EXPECT_DOUBLE_EQ(s.rate(c), 2.0);
}

// A chain: flow i crosses links i and i + 1 (capacity 2 each), so every inner link carries two
// flows at 1. A newcomer on link 5 alone finds it full: the region of link 5 (flows 4, 5 and the
// newcomer) is filled with flows 3 and 6 held at 1, which leaves 2 for the three on link 5: 2/3
// each. Flow 3 keeps its bottleneck (link 3, shared with flow 2 at 1), so the check passes and
// nothing else in the 20-flow component is visited or moves.
TEST(MaxMin, ANewcomerOnAFullLinkMovesOnlyItsRegion) {
  constexpr std::uint32_t kFlows = 20;
  MaxMinSolver s(std::vector<double>(kFlows + 1, 2.0));
  std::vector<MaxMinSolver::VarId> flows;
  for (std::uint32_t i = 0; i < kFlows; ++i) {
    const Use u[] = {{i, 1}, {i + 1, 1}};
    flows.push_back(s.add(u));
  }
  s.solve();
  for (const auto f : flows) EXPECT_DOUBLE_EQ(s.rate(f), 1.0);
  const std::uint64_t visited = s.visited();
  const Use on5[] = {{5, 1}};
  const auto g = s.add(on5);
  s.solve();
  EXPECT_EQ(s.visited() - visited, 3u);
  EXPECT_DOUBLE_EQ(s.rate(g), 2.0 / 3);
  EXPECT_DOUBLE_EQ(s.rate(flows[4]), 2.0 / 3);
  EXPECT_DOUBLE_EQ(s.rate(flows[5]), 2.0 / 3);
  for (std::uint32_t i = 0; i < kFlows; ++i)
    if (i != 4 && i != 5) {
      EXPECT_DOUBLE_EQ(s.rate(flows[i]), 1.0) << i;
    }
  EXPECT_EQ(s.changed().size(), 3u);
}

// The incremental solver (replacements, the local check, regions, whole components) against a
// fresh solve of the same variables, over random changes on 10 links of three capacities: the
// rates agree, and changed() lists exactly the variables whose rate moved.
TEST(MaxMin, IncrementalSolvesMatchAFreshSolveOverRandomChanges) {
  constexpr std::uint32_t kLinks = 10;
  std::vector<double> capacity(kLinks);
  for (std::uint32_t c = 0; c < kLinks; ++c) capacity[c] = 1.0 + static_cast<double>(c % 3);
  std::mt19937_64 rng(7);
  auto pick = [&](std::uint64_t n) { return rng() % n; };
  MaxMinSolver s(capacity);
  std::vector<std::vector<Use>> uses_of;  // by variable id; empty once removed
  for (int step = 0; step < 400; ++step) {
    const std::uint64_t changes = 1 + pick(3);
    for (std::uint64_t k = 0; k < changes; ++k) {
      std::vector<MaxMinSolver::VarId> alive;
      for (MaxMinSolver::VarId v = 0; v < uses_of.size(); ++v)
        if (!uses_of[v].empty()) alive.push_back(v);
      if (!alive.empty() && pick(5) < 2) {
        const auto v = alive[pick(alive.size())];
        s.remove(v);
        uses_of[v].clear();
        continue;
      }
      std::vector<Use> u;
      const std::uint32_t first = static_cast<std::uint32_t>(pick(kLinks));
      const std::uint64_t hops = 1 + pick(3);
      for (std::uint64_t h = 0; h < hops; ++h)
        u.push_back(
            Use{static_cast<std::uint32_t>((first + 3 * h) % kLinks), pick(4) == 0 ? 2.0 : 1.0});
      const auto v = s.add(u);
      if (uses_of.size() <= v) uses_of.resize(v + 1);
      uses_of[v] = u;
    }
    std::vector<double> before(uses_of.size());
    for (MaxMinSolver::VarId v = 0; v < uses_of.size(); ++v) before[v] = s.rate(v);
    s.solve();
    std::vector<bool> listed(uses_of.size(), false);
    for (const auto v : s.changed()) listed[v] = true;
    // The reference adds everything and solves once; `grown` adds one variable per solve.
    MaxMinSolver reference(capacity), grown(capacity);
    std::vector<MaxMinSolver::VarId> ref_id(uses_of.size()), grown_id(uses_of.size());
    for (MaxMinSolver::VarId v = 0; v < uses_of.size(); ++v) {
      if (uses_of[v].empty()) continue;
      ref_id[v] = reference.add(uses_of[v]);
      grown_id[v] = grown.add(uses_of[v]);
      grown.solve();
    }
    reference.solve();
    for (MaxMinSolver::VarId v = 0; v < uses_of.size(); ++v) {
      if (uses_of[v].empty()) continue;
      const double want = reference.rate(ref_id[v]);
      EXPECT_NEAR(s.rate(v), want, 1e-9 * want) << "step " << step << " variable " << v;
      EXPECT_NEAR(grown.rate(grown_id[v]), want, 1e-9 * want) << "step " << step;
      if (std::abs(s.rate(v) - before[v]) > 1e-12 * want) {
        EXPECT_TRUE(listed[v]) << "step " << step << " variable " << v;
      }
    }
  }
}

}  // namespace
}  // namespace lockstep
