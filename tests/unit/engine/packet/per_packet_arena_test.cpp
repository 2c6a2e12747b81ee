// The flows' per-packet arrays (PerPacketArena, huge_pages.hpp): room in quarter powers of two
// (multiples of 64 B) cut one after another from a chunk, a chunk's tail cut into the largest
// classes that fit, room given back reused by the next array of its class, a cleared handle
// keeping its room, and what grows past it moving with its new contents.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>

#include "../../../../src/engine/packet/huge_pages.hpp"

namespace lockstep::packet {
namespace {

std::ptrdiff_t bytes_apart(const void* a, const void* b) {
  return static_cast<const std::byte*>(b) - static_cast<const std::byte*>(a);
}

// The classes: 64 B at least; under 256 B a quarter step (16 or 32 B) is under 64 B, so 65 B
// takes 128 and 129 takes 192; from 256 up the quarter step is 2^k / 4: 257 B -> 320 (256 + 64),
// 4,097 -> 5,120 (4,096 + 1,024). TCP's 1,380 send times (11,040 B, past 8,192 + 2 x 2,048)
// take 12,288, not 16,384; 14,337 B, one past 1.75 x 8,192, takes 16,384.
TEST(PerPacketArena, RoomIsTheSmallestQuarterPowerOfTwoHoldingTheArray) {
  EXPECT_EQ(PerPacketArena::room_for(0), 64u);
  EXPECT_EQ(PerPacketArena::room_for(64), 64u);
  EXPECT_EQ(PerPacketArena::room_for(65), 128u);
  EXPECT_EQ(PerPacketArena::room_for(129), 192u);
  EXPECT_EQ(PerPacketArena::room_for(193), 256u);
  EXPECT_EQ(PerPacketArena::room_for(257), 320u);
  EXPECT_EQ(PerPacketArena::room_for(489), 512u);
  EXPECT_EQ(PerPacketArena::room_for(1380), 1536u);
  EXPECT_EQ(PerPacketArena::room_for(3912), 4096u);
  EXPECT_EQ(PerPacketArena::room_for(4097), 5120u);
  EXPECT_EQ(PerPacketArena::room_for(11040), 12288u);
  EXPECT_EQ(PerPacketArena::room_for(14336), 14336u);
  EXPECT_EQ(PerPacketArena::room_for(14337), 16384u);
  // Every class a multiple of 64 B, holding the array, and under 1.25 x its size past 256 B.
  for (std::size_t bytes = 1; bytes <= 70000; bytes += 37) {
    const std::size_t room = PerPacketArena::room_for(bytes);
    EXPECT_EQ(room % 64, 0u) << bytes;
    EXPECT_GE(room, bytes);
    if (bytes > 256) {
      EXPECT_LT(room, bytes + bytes / 4) << bytes;
    }
  }
}

// A TCP flow of 1,380 packets: send times 11,040 B in 12,288, states 1,380 B in 1,536 (1,024 +
// 2 x 256). From a fresh chunk the states start 12,288 B after the send times, the arrivals
// 1,536 B after the states.
TEST(PerPacketArena, CutsQuarterPowersOfTwoInOrder) {
  PerPacketArena arena;
  PerPacket<std::int64_t> sent;
  PerPacket<std::uint8_t> state, got;
  arena.assign(sent, 1380, std::int64_t{0});
  arena.assign(state, 1380, std::uint8_t{1});
  arena.assign(got, 1380, std::uint8_t{0});
  EXPECT_EQ(bytes_apart(&sent[0], &state[0]), 12288);
  EXPECT_EQ(bytes_apart(&state[0], &got[0]), 1536);
  EXPECT_EQ(state[1379], 1);
}

// The first chunk is 64 KiB. 40,960 B (1.25 x 32,768) and 64 B leave 24,512 B, too few for
// 32,768, which takes a new chunk; the tail is cut into 20,480 (1.25 x 16,384) at 41,024, 3,584
// (1.75 x 2,048) at 61,504 and 448 (1.75 x 256) at 65,088, and those are what arrays of those
// classes take next.
TEST(PerPacketArena, CutsAChunksTailIntoTheLargestClasses) {
  PerPacketArena arena;
  PerPacket<std::int64_t> a, b, c, d, e;
  PerPacket<std::uint8_t> s;
  arena.assign(a, 5120, std::int64_t{0});
  arena.assign(s, 64, std::uint8_t{0});
  EXPECT_EQ(bytes_apart(&a[0], &s[0]), 40960);
  arena.assign(b, 4096, std::int64_t{0});
  arena.assign(c, 56, std::int64_t{3});
  arena.assign(d, 448, std::int64_t{4});
  arena.assign(e, 2560, std::int64_t{5});
  EXPECT_EQ(bytes_apart(&a[0], &c[0]), 65088);
  EXPECT_EQ(bytes_apart(&a[0], &d[0]), 61504);
  EXPECT_EQ(bytes_apart(&a[0], &e[0]), 41024);
  EXPECT_EQ(c[55], 3);
  EXPECT_EQ(d[447], 4);
  EXPECT_EQ(e[2559], 5);
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
// past it (600 x 8 = 4,800 B: room 5,120) moves, and its old 4,096 B go to the next array of
// that class (480 x 8 = 3,840 B, past 3,584), not to 400 x 8 = 3,200 B (room 3,584).
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
  PerPacket<std::int64_t> small;
  arena.assign(small, 400, std::int64_t{1});
  EXPECT_NE(&small[0], first);
  arena.assign(b, 480, std::int64_t{1});
  EXPECT_EQ(&b[0], first);
}

}  // namespace
}  // namespace lockstep::packet
