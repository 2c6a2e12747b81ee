// The flows' per-packet arrays (PerPacketArena, huge_pages.hpp): room in powers of two cut one
// after another from a chunk, room given back reused by the next array of its size, a cleared
// handle keeping its room, and what grows past it moving with its new contents.
#include <gtest/gtest.h>

#include <cstdint>

#include "../../../../src/engine/packet/huge_pages.hpp"

namespace lockstep::packet {
namespace {

std::ptrdiff_t bytes_apart(const void* a, const void* b) {
  return static_cast<const std::byte*>(b) - static_cast<const std::byte*>(a);
}

// A 2 MB flow has 489 packets of 4,096 B: its send times take 489 x 8 = 3,912 B, room 4,096;
// its states 489 B, room 512. From a fresh chunk they lie one after the other: the states
// start 4,096 B after the send times, and the next 512 B array 512 B after the states.
TEST(PerPacketArena, CutsPowersOfTwoInOrder) {
  PerPacketArena arena;
  PerPacket<std::int64_t> sent;
  PerPacket<std::uint8_t> state, got;
  arena.assign(sent, 489, std::int64_t{-1});
  arena.assign(state, 489, std::uint8_t{2});
  arena.assign(got, 489, std::uint8_t{0});
  EXPECT_EQ(bytes_apart(&sent[0], &state[0]), 4096);
  EXPECT_EQ(bytes_apart(&state[0], &got[0]), 512);
  EXPECT_EQ(sent.size(), 489u);
  EXPECT_EQ(sent[0], -1);
  EXPECT_EQ(sent[488], -1);
  EXPECT_EQ(state[488], 2);
  EXPECT_EQ(got[0], 0);
}

// A handle cleared and assigned again within its room stays where it was, refilled; one grown
// past it (600 x 8 = 4,800 B: room 8,192) moves, and its old 4,096 B go to the next array of
// that size.
TEST(PerPacketArena, ReusesRoom) {
  PerPacketArena arena;
  PerPacket<std::int64_t> a, b;
  arena.assign(a, 489, std::int64_t{7});
  const std::int64_t* first = &a[0];
  a.clear();
  EXPECT_TRUE(a.empty());
  arena.assign(a, 300, std::int64_t{0});
  EXPECT_EQ(&a[0], first);
  EXPECT_EQ(a.size(), 300u);
  EXPECT_EQ(a[0], 0);
  arena.assign(a, 600, std::int64_t{5});
  EXPECT_NE(&a[0], first);
  EXPECT_EQ(a[599], 5);
  arena.assign(b, 400, std::int64_t{1});
  EXPECT_EQ(&b[0], first);
}

}  // namespace
}  // namespace lockstep::packet
