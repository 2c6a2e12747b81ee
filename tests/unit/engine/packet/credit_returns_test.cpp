// Credits on their way back to a transmitter come out oldest first, and the overflow holds what
// is in flight, not every return the link ever had.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "../../../../src/engine/packet/simulator.hpp"

namespace lockstep::packet {
namespace {

// A busy link: 20 returns always in flight, 10,000 returned in all. Five sit inline, 15 in the
// ring, whose size is the power of two >= 15 from its first 8: 16. (The vector it replaced grew
// to 4,096 before it dropped the consumed half.) Every return comes out once, in order.
TEST(PacketCreditReturns, RingHoldsWhatIsInFlight) {
  CreditReturns r;
  std::vector<std::int64_t> out;
  std::int64_t next = 0;
  for (; next < 20; ++next) r.push_back(next, static_cast<std::uint32_t>(next % 7));
  EXPECT_EQ(r.ring_size(), 16u);
  for (; next < 10000; ++next) {
    out.push_back(r.front_time());
    EXPECT_EQ(r.front_wire(), static_cast<std::uint32_t>(r.front_time() % 7));
    r.pop_front();
    r.push_back(next, static_cast<std::uint32_t>(next % 7));
  }
  // In flight now: 9,980 .. 9,999.
  std::vector<std::int64_t> pending;
  r.for_each([&](std::int64_t at, std::uint32_t) {
    pending.push_back(at);
    return true;
  });
  ASSERT_EQ(pending.size(), 20u);
  for (std::size_t i = 0; i < pending.size(); ++i)
    EXPECT_EQ(pending[i], 9980 + static_cast<std::int64_t>(i));
  while (!r.empty()) {
    out.push_back(r.front_time());
    r.pop_front();
  }
  ASSERT_EQ(out.size(), 10000u);
  for (std::size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i], static_cast<std::int64_t>(i));
  EXPECT_EQ(r.ring_size(), 16u);
}

// Up to five returns need no ring at all.
TEST(PacketCreditReturns, FiveStayInline) {
  CreditReturns r;
  for (int i = 0; i < 5; ++i) r.push_back(i, 1);
  EXPECT_EQ(r.ring_size(), 0u);
  r.push_back(5, 1);
  EXPECT_EQ(r.ring_size(), 8u);
}

}  // namespace
}  // namespace lockstep::packet
