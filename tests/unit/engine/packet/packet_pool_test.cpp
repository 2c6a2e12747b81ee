// The packet pool: slots reused last freed first, the peak count as its size, and packets that
// never move as the pool grows (slabs, not a vector that reallocates).
#include <gtest/gtest.h>

#include <cstdint>

#include "../../../../src/engine/packet/simulator.hpp"

namespace lockstep::packet {
namespace {

// Three taken (0, 1, 2), 1 then 0 given back: the next takes are 0, 1 (last freed first), then
// a new slot, 3. Four slots were ever in use at once.
TEST(PacketPool, ReusesTheLastFreedFirst) {
  PacketPool pool;
  EXPECT_EQ(pool.take(), 0u);
  EXPECT_EQ(pool.take(), 1u);
  EXPECT_EQ(pool.take(), 2u);
  pool.give(1);
  pool.give(0);
  EXPECT_EQ(pool.take(), 0u);
  EXPECT_EQ(pool.take(), 1u);
  EXPECT_EQ(pool.take(), 3u);
  EXPECT_EQ(pool.size(), 4u);
}

// 300,000 packets span three slabs of 131,072: each keeps its contents and its address.
TEST(PacketPool, PacketsStayPutAcrossSlabs) {
  PacketPool pool;
  const std::uint32_t first = pool.take();
  const Packet* where = &pool[first];
  EXPECT_EQ(where->flow, kNil);  // a new slot is a default packet
  for (std::uint32_t i = 1; i < 300000; ++i) pool[pool.take()].seq = i;
  EXPECT_EQ(&pool[first], where);
  EXPECT_EQ(pool.size(), 300000u);
  for (std::uint32_t i = 1; i < 300000; ++i) ASSERT_EQ(pool[i].seq, i);
}

}  // namespace
}  // namespace lockstep::packet
