// The event queue is an exact priority queue on (time, scheduling order): whatever the mix of
// pushes and pops, events come out in the order a sort of everything pushed would give.
#include "../../../../src/engine/packet/event_queue.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

#include "lockstep/core/rng.hpp"

namespace lockstep::packet {
namespace {

// Three events at the same time come out in the order they were pushed, after an earlier one.
TEST(PacketEventQueue, EqualTimesRunInSchedulingOrder) {
  EventQueue q;
  q.push(50, EventKind::Arrive, 1);
  q.push(50, EventKind::LinkFree, 2);
  q.push(10, EventKind::Wake, 3);
  q.push(50, EventKind::Arrive, 4);
  std::vector<std::uint32_t> got;
  while (!q.empty()) got.push_back(q.pop().a);
  EXPECT_EQ(got, (std::vector<std::uint32_t>{3, 1, 2, 4}));
}

// A simulation-like workload: each pop schedules 0-3 events at now + a delay drawn from
// {0, small, large} (ties at the current time included). The popped sequence must equal the
// reference order: by time, then by push index.
TEST(PacketEventQueue, MatchesSortedReferenceUnderSimulationLikeUse) {
  struct Ref {
    std::int64_t time;
    std::uint32_t id;
  };
  EventQueue q;
  std::vector<Ref> pushed;
  std::vector<std::uint32_t> popped;
  Rng rng(7);
  std::uint32_t next_id = 0;
  auto push = [&](std::int64_t t) {
    pushed.push_back({t, next_id});
    q.push(t, EventKind::Arrive, next_id++);
  };
  for (int i = 0; i < 20; ++i) push(static_cast<std::int64_t>(rng.below(1000)));
  std::int64_t now = 0;
  while (!q.empty() && popped.size() < 20000) {
    // peek() names the event pop() returns when nothing is pushed in between.
    ASSERT_NE(q.peek(), nullptr);
    const std::uint32_t peeked = q.peek()->a;
    const Event e = q.pop();
    ASSERT_EQ(e.a, peeked);
    ASSERT_GE(e.time, now);
    now = e.time;
    popped.push_back(e.a);
    const auto n = rng.below(4);
    for (std::uint64_t k = 0; k < n && next_id < 20000; ++k) {
      const auto choice = rng.below(3);
      const std::int64_t delay = choice == 0   ? 0
                                 : choice == 1 ? static_cast<std::int64_t>(rng.below(100))
                                               : static_cast<std::int64_t>(rng.below(1 << 30));
      push(now + delay);
    }
  }
  ASSERT_TRUE(q.empty());
  EXPECT_EQ(q.peek(), nullptr);
  std::stable_sort(pushed.begin(), pushed.end(),
                   [](const Ref& x, const Ref& y) { return x.time < y.time; });
  ASSERT_EQ(popped.size(), pushed.size());
  for (std::size_t i = 0; i < pushed.size(); ++i) ASSERT_EQ(popped[i], pushed[i].id) << i;
}

// Scheduling before the last event taken out is not something the engine does, but the queue
// stays exact if it happens (also with negative times).
TEST(PacketEventQueue, PushIntoThePastStaysOrdered) {
  EventQueue q;
  q.push(100, EventKind::Arrive, 0);
  q.push(300, EventKind::Arrive, 1);
  EXPECT_EQ(q.pop().a, 0u);
  q.push(40, EventKind::Arrive, 2);
  q.push(-5, EventKind::Arrive, 3);
  q.push(300, EventKind::Arrive, 4);
  std::vector<std::uint32_t> got;
  while (!q.empty()) got.push_back(q.pop().a);
  EXPECT_EQ(got, (std::vector<std::uint32_t>{3, 2, 1, 4}));
}

// Memory follows the events pending, not what each bucket once held: blocks of 127 events
// (4,072 B), each bucket with at most one part-filled block at its tail and one being drained
// during a refill. The queue has 256 buckets (16 levels of 16 hexadecimal digits), but an event
// is filed at the highest digit in which its time differs from the last one taken out, so while
// every time is below 16^L only the L lowest levels' 16 L buckets hold any: blocks <= ceil(peak
// pending / 127) + 2 x 16 L. Here 20,000 events are pending at first and ~80,000 are pushed in
// all; the last time is ~1.8e7 ps, between 16^6 and 16^7, so L = 7 and the bound is 158 + 224 =
// 382 blocks, where blocks never returned to the free list would number ~630 (and 2 x 256 for
// every bucket would allow 670).
TEST(PacketEventQueue, HoldsAboutThePendingEvents) {
  EventQueue q;
  Rng rng(11);
  std::size_t peak = 0;
  for (int i = 0; i < 20000; ++i)
    q.push(static_cast<std::int64_t>(rng.below(1 << 20)), EventKind::Arrive, 0);
  std::size_t most_bytes = 0;
  std::int64_t latest = 0;
  while (!q.empty()) {
    peak = std::max(peak, q.size());
    const Event e = q.pop();
    latest = e.time;
    if (rng.below(4) != 0)
      q.push(e.time + static_cast<std::int64_t>(rng.below(1 << 20)), EventKind::Arrive, 0);
    most_bytes = std::max(most_bytes, q.capacity_bytes());
  }
  const std::size_t block = 127 * sizeof(Event) + sizeof(void*);
  EXPECT_EQ(block, 127u * 32 + 8);
  const auto levels =
      static_cast<std::size_t>((std::bit_width(static_cast<std::uint64_t>(latest)) + 3) / 4);
  EXPECT_EQ(levels, 7u);  // the comment's L
  EXPECT_LE(most_bytes, ((peak + 126) / 127 + 2 * 16 * levels) * block);
  EXPECT_GE(most_bytes, (peak + 126) / 127 * block);
}

}  // namespace
}  // namespace lockstep::packet
