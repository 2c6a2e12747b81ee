// The event queue is an exact priority queue on (time, scheduling order): whatever the mix of
// pushes and pops, events come out in the order a sort of everything pushed would give.
#include "../../../../src/engine/packet/event_queue.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
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

// Ties filed against different clocks come out in scheduling order. Buckets are (level, digit)
// of the highest hexadecimal digit in which an event's time differs from `last`, the latest
// time taken out. X at 0x3000 ps with last = 0: 0x3000's highest set bit is 13, level 13 / 4 = 3,
// digit 3. Y at 0x10 (level 1) runs first: last = 0x10. Z at 0x3000: 0x3000 ^ 0x10 = 0x3010,
// bucket (3, 3) again, behind X; W at 0x2FFF: 0x2FEF, bit 13, digit 2, bucket (3, 2), which is
// lower, so W runs next: last = 0x2FFF. V at 0x3000: 0x1FFF, bit 12, still level 3, digit 3; U
// at 0x2FFF is at the current time and goes straight to the current list. Then (3, 3) is
// refiled around its earliest time, 0x3000, and X, Z, V all land at the current time, sorted by
// sequence: Y, W, U, X, Z, V.
TEST(PacketEventQueue, TiesFiledAgainstDifferentClocksRunInSchedulingOrder) {
  EventQueue q;
  q.push(0x3000, EventKind::Arrive, 'X');
  q.push(0x10, EventKind::Arrive, 'Y');
  std::vector<std::uint32_t> got{q.pop().a};
  q.push(0x3000, EventKind::Arrive, 'Z');
  q.push(0x2FFF, EventKind::Arrive, 'W');
  got.push_back(q.pop().a);
  q.push(0x3000, EventKind::Arrive, 'V');
  q.push(0x2FFF, EventKind::Arrive, 'U');
  std::vector<std::int64_t> times;
  while (!q.empty()) {
    const Event* next = q.peek();
    const Event e = q.pop();
    ASSERT_EQ(next->a, e.a);
    got.push_back(e.a);
    times.push_back(e.time);
  }
  EXPECT_EQ(got, (std::vector<std::uint32_t>{'Y', 'W', 'U', 'X', 'Z', 'V'}));
  EXPECT_EQ(times, (std::vector<std::int64_t>{0x2FFF, 0x3000, 0x3000, 0x3000}));
}

// A digit rolls over: with last = 0xFFF, an event 1 ps later (0x1000) differs in digit 3 and
// is filed at level 3, beside one 4,096 ps later (0x1FFF, the same digit value 1), while one
// 65,536 ps later (0x10FFF) differs in digit 4. Refiling (3, 1) around 0x1000 puts 0x1FFF at
// level 2 (0x1FFF ^ 0x1000 = 0xFFF); the order stays the times': C (at last), A, B, D.
TEST(PacketEventQueue, ADigitRollingOverKeepsTimeOrder) {
  EventQueue q;
  q.push(0xFFF, EventKind::Arrive, 'S');
  ASSERT_EQ(q.pop().a, static_cast<std::uint32_t>('S'));
  q.push(0x1FFF, EventKind::Arrive, 'B');
  q.push(0x10FFF, EventKind::Arrive, 'D');
  q.push(0x1000, EventKind::Arrive, 'A');
  q.push(0xFFF, EventKind::Arrive, 'C');
  std::vector<std::uint32_t> got;
  while (!q.empty()) {
    const std::uint32_t next = q.peek()->a;
    got.push_back(q.pop().a);
    ASSERT_EQ(got.back(), next);
  }
  EXPECT_EQ(got, (std::vector<std::uint32_t>{'C', 'A', 'B', 'D'}));
}

// Events at the end of time (Time's "never", INT64_MAX ps: level 15) and a second ahead
// (10^12 ps) keep their order; one pushed 10 ps after the event taken out at 10^12 runs before
// the end-of-time events, which run in scheduling order.
TEST(PacketEventQueue, FarFutureEventsKeepTheirOrder) {
  constexpr std::int64_t kEnd = std::numeric_limits<std::int64_t>::max();
  EventQueue q;
  q.push(kEnd, EventKind::Watchdog, 1);
  q.push(1'000'000'000'000, EventKind::Arrive, 2);
  q.push(5, EventKind::Arrive, 3);
  q.push(kEnd, EventKind::Watchdog, 4);
  EXPECT_EQ(q.peek()->a, 3u);
  EXPECT_EQ(q.pop().a, 3u);
  EXPECT_EQ(q.peek()->a, 2u);
  EXPECT_EQ(q.pop().time, 1'000'000'000'000);
  q.push(1'000'000'000'010, EventKind::Arrive, 5);
  std::vector<std::uint32_t> got;
  while (!q.empty()) got.push_back(q.pop().a);
  EXPECT_EQ(got, (std::vector<std::uint32_t>{5, 1, 4}));
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
