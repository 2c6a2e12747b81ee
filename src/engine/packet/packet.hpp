#pragma once
// The packet engine's packets (not a public API): what a packet carries from hop to hop, the pool
// its slots come from, and the intrusive FIFO an output queue keeps them in. Picosecond times and
// their saturating sum live here too, as every part of the engine uses them.
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <type_traits>
#include <vector>

#include "huge_pages.hpp"
#include "lockstep/core/units.hpp"

namespace lockstep::packet {

inline constexpr std::uint32_t kNil = 0xFFFFFFFFu;

// Times are plain picoseconds here, never negative. Past Time's range an event lands at kNever,
// Time::infinite(), where the run ends; nothing wraps. For non-negative times the saturating sum
// is Time's sum (core/units.hpp): kNever plus anything stays kNever.
inline constexpr std::int64_t kNever = Time::infinite().picoseconds();
inline std::int64_t later(std::int64_t t, std::int64_t delay) {
  std::int64_t sum = 0;
  return __builtin_add_overflow(t, delay, &sum) ? kNever : sum;
}

// kCtl marks a control packet (ACK, or NACK / CNP / RCCC grant with those flags; kEcn on an
// ACK echoes the congestion marks of the packets it acknowledges). A control packet carries no
// payload: its `payload` field holds the receiver's cumulative point (every packet below it has
// arrived; a grant's: the bytes granted to the flow so far) and `seq` the packet whose arrival
// sent it. kCorrupt: a frame that failed its FCS on a cable (uec_link.cpp). kFabric: a data
// packet of a transfer through the fabric (Flow::fabric), whose payload was inflated by the
// fabric's efficiency rather than the board's (the link counters undo it).
enum PacketFlag : std::uint8_t {
  kEcn = 1,
  kTrimmed = 2,
  kCtl = 4,
  kNack = 8,
  kCnp = 16,
  kCorrupt = 32,
  kGrant = 64,
  kFabric = 128,
};
enum HopTurn : std::uint8_t { kUp = 1, kDown = 2 };

/// 48 bytes: the run is bound by cache misses on packets, so keep them small.
struct Packet {
  std::int64_t tail = 0;  // when its last bit reaches the device it is at (cut-through bound)
  std::uint32_t flow = kNil;
  std::uint32_t seq = 0;
  // Its position in the route arena: the link it is queued for or travelling on. (Not the
  // path's index: finding the link it came in over and the next one would then read the
  // path's PathRef first, a dependent cache miss per hop at 8,192 hosts.)
  std::uint32_t at = 0;
  // The links before and after `at` on its route (kNil at either end), copied from the arena
  // when it arrives: leaving, it needs both, and reading the arena then was a cache miss behind
  // the packet's own (half of try_transmit at 8,192 hosts, the arena line long evicted).
  std::uint32_t in = kNil;
  std::uint32_t nxt = kNil;
  std::uint32_t next = kNil;  // intrusive FIFO link
  std::uint32_t wire = 0;     // bytes on the wire
  std::uint32_t payload = 0;
  std::uint16_t hop = 0;  // index in the route of the link it is queued for / travelling on
  std::uint16_t hops = 0;
  std::uint8_t lane = 0;     // on the link it is queued for / travelling on
  std::uint8_t in_lane = 0;  // on the link it arrived over (its buffer there is released)
  std::uint8_t flags = 0;
};

/// The packets in flight, in slabs of 2^17 (6 MiB: three 2 MiB pages, huge_pages.hpp) that never
/// move, with a free list through Packet::next (last freed, first reused). A vector doubling as
/// it grew held up to twice the packets at their peak, and both copies while it moved them; its
/// free list was a second vector (8 MiB at 8,192 hosts). A slot is found by one shift into a
/// table of slab pointers, which stays in cache (16 entries at 2 M packets).
class PacketPool {
 public:
  Packet& operator[](std::uint32_t i) { return slabs_[i >> kShift][i & kMask]; }
  const Packet& operator[](std::uint32_t i) const { return slabs_[i >> kShift][i & kMask]; }
  /// Slots ever used: the peak number of packets at once.
  std::uint32_t size() const { return size_; }
  std::uint32_t take() {
    if (free_ != 0xFFFFFFFFu) {
      const std::uint32_t i = free_;
      free_ = (*this)[i].next;
      return i;
    }
    if ((size_ & kMask) == 0) add_slab();
    // Constructed on first use: a slab's untouched pages take no memory (a small run, one slab).
    new (&(*this)[size_]) Packet{};
    return size_++;
  }
  void give(std::uint32_t i) {
    (*this)[i].next = free_;
    free_ = i;
  }

 private:
  static constexpr std::uint32_t kShift = 17, kMask = (1u << kShift) - 1;
  static constexpr std::size_t kSlabBytes = sizeof(Packet) << kShift;
  static_assert(kSlabBytes % kHugePage == 0);
  static_assert(std::is_trivially_destructible_v<Packet>);  // slabs are freed, not destroyed
  struct Free {
    void operator()(Packet* p) const { std::free(p); }
  };
  void add_slab() {
    void* raw = std::aligned_alloc(kHugePage, kSlabBytes);
    if (raw == nullptr) throw std::bad_alloc();
    advise_huge_pages(raw, kSlabBytes);
    slabs_.emplace_back(static_cast<Packet*>(raw));
  }
  std::vector<std::unique_ptr<Packet[], Free>> slabs_;
  std::uint32_t size_ = 0;
  std::uint32_t free_ = 0xFFFFFFFFu;
};

struct Fifo {
  std::uint32_t head = kNil;
  std::uint32_t tail = kNil;
  std::int64_t bytes = 0;
};

}  // namespace lockstep::packet
