#pragma once
// The packet engine's event list, ordered by (time, sequence) so that events at equal times run
// in the order they were scheduled and a run is reproducible. No allocation once enough blocks
// exist; events are cancelled by generation counters kept in the component they address (a stale
// event is recognised and ignored).
//
// It is a radix heap (Ahuja, Mehlhorn, Orlin and Tarjan 1990) on base-16 digits: a simulation
// never schedules an event before the one it is handling, so keys only grow, and an event is filed
// by the highest hexadecimal digit in which its time differs from `last`, the time of the latest
// event taken out, and its value there: bucket (level, digit). The lowest non-empty bucket holds
// the earliest events; when the current time's are used up its events are refiled around its
// earliest time, each one level lower at least, so an event moves at most 16 times. (With binary
// digits, 64 buckets, an event scheduled 2^17-2^20 ps ahead, as most are, moved about half as many
// times as its delay has bits, 8-10 copies, since each refill took it down two levels on average:
// the refiling was a quarter of `run` in `perf`. Four bits take it down one digit a refill.)
// Buckets are chains of blocks, appended to and scanned in order. The 4-ary heap before the radix
// heap did ~9 dependent cache misses per pop once 190K events were pending (8,192 hosts) and was
// a third of the run time.
// Within one time, bucket 0 is kept sorted by sequence: events refiled into it are sorted once,
// and events pushed at the current time carry a larger sequence than all of them. Each bucket
// remembers its earliest event, so the next event is known one step ahead (peek) and the
// engine can prefetch its packet and links while it handles the current one.
#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <type_traits>
#include <vector>

#include "huge_pages.hpp"

namespace lockstep::packet {

enum class EventKind : std::uint8_t {
  LinkFree,      // a: link, b: the packet's ingress link, c: next in its queue (a prefetch hint)
  Arrive,        // a: packet, b: link at route[hop], c: route[hop + 1] (kNil: the last hop),
                 // d: its arena position, or at the last hop its flow
  CreditReturn,  // a: link, b: lane — credits a waiting transmitter needs are back
  Pfc,           // a: link, b: lane, c: 1 pause / 0 resume — reaches the transmitter
  Wake,          // a: link, b: generation — an injecting flow became eligible
  AckTimer,      // a: flow, b: generation — a receiver's delayed ACK is due
  FlowTimer,     // a: flow, b: generation — retransmission timeout
  CcTimer,       // a: flow, b: generation — DCQCN rate increase / alpha decay
  OpDone,        // a: rank, b: op
  Watchdog,
};

/// 32 bytes: the ordering key (time, then scheduling order) and four payload words.
struct Event {
  std::int64_t time = 0;
  std::uint64_t order = 0;  // sequence << 8 | kind
  std::uint32_t a = 0, b = 0, c = 0, d = 0;
  EventKind kind() const { return static_cast<EventKind>(order & 0xFF); }
};

class EventQueue {
 public:
  void push(std::int64_t time, EventKind kind, std::uint32_t a, std::uint32_t b = 0,
            std::uint32_t c = 0, std::uint32_t d = 0) {
    // The engine never schedules into the past; should it, the queue stays exact (at O(n)).
    if (time < last_) rebase(time);
    file(Event{time, next_seq_++ << 8 | static_cast<std::uint8_t>(kind), a, b, c, d});
    ++size_;
  }
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  /// The event pop() would return if nothing earlier were pushed first, or null when empty. For
  /// prefetching the next event's data while the current one is handled; pop() is the authority.
  const Event* peek() const {
    if (head_ < now_.size()) return &now_[head_];
    if (levels_ == 0) return nullptr;
    return &buckets_[lowest()].min;
  }
  /// The earliest event (smallest time, then earliest scheduled). Requires !empty().
  Event pop() {
    if (head_ == now_.size()) refill();
    --size_;
    return now_[head_++];
  }
  void reserve(std::size_t n) { now_.reserve(n); }
  /// Bytes held for events (blocks and the current time's vector), for memory accounting.
  std::size_t capacity_bytes() const {
    return blocks_ * sizeof(Block) + now_.capacity() * sizeof(Event);
  }

 private:
  // The buckets are chains of fixed-size blocks from one free list: a bucket's events are
  // only ever appended and then all moved down at once, so a chain is all a bucket needs, and
  // memory follows the events pending, not the sum of each bucket's largest size (as vectors,
  // which keep their capacity, the buckets held ~14x the peak pending events at 1,024 hosts).
  // A block emptied by a refill goes back to the free list while still in cache.
  static constexpr std::uint32_t kBlock = 127;  // 127 x 32 B + the link: 4,072 B
  struct Block {
    Event ev[kBlock];
    Block* next = nullptr;
  };
  struct Bucket {
    Block* head = nullptr;
    Block* tail = nullptr;
    std::uint32_t fill = kBlock;  // events in the tail block
    Event min;                    // its earliest event (valid when the bucket has events)
  };

  static bool before(const Event& x, const Event& y) {
    return x.time < y.time || (x.time == y.time && x.order < y.order);
  }
  static constexpr unsigned kDigitBits = 4, kDigits = 1u << kDigitBits;
  static constexpr unsigned kLevels = 64 / kDigitBits;
  // Bucket of an event at a time after last_: level x 16 + digit.
  std::size_t bucket_of(std::int64_t time) const {
    const auto t = static_cast<std::uint64_t>(time);
    const auto level =
        static_cast<unsigned>(std::bit_width(t ^ static_cast<std::uint64_t>(last_)) - 1) /
        kDigitBits;
    return level * kDigits + ((t >> (level * kDigitBits)) & (kDigits - 1));
  }
  // The lowest non-empty bucket (some is): its events are the earliest.
  std::size_t lowest() const {
    const auto level = static_cast<unsigned>(std::countr_zero(levels_));
    return level * kDigits + static_cast<unsigned>(std::countr_zero(digits_[level]));
  }
  Block* take_block() {
    if (free_ == nullptr) {
      if (spare_ == 0) add_chunk();
      --spare_;
      ++blocks_;
      return new (next_++) Block{};
    }
    Block* b = free_;
    free_ = b->next;
    b->next = nullptr;
    return b;
  }
  // Blocks come in chunks of 16, doubling up to a 2 MiB page's worth (515), from then on
  // 2 MiB-aligned and advised (huge_pages.hpp): a bucket's tail and a refill's source are read
  // at random among ~2,500 blocks at 8,192 hosts.
  void add_chunk() {
    constexpr std::size_t kHuge = kHugePage / sizeof(Block);
    const std::size_t n =
        std::min(kHuge, std::size_t{16} << std::min<std::size_t>(chunks_.size(), 6));
    void* raw =
        n == kHuge ? std::aligned_alloc(kHugePage, kHugePage) : std::malloc(n * sizeof(Block));
    if (raw == nullptr) throw std::bad_alloc();
    if (n == kHuge) advise_huge_pages(raw, kHugePage);
    chunks_.emplace_back(static_cast<Block*>(raw));
    next_ = static_cast<Block*>(raw);
    spare_ = n;
  }
  // Appends to the event's bucket and keeps track of each bucket's earliest event.
  void file(const Event& e) {
    if (e.time == last_) {
      now_.push_back(e);
      return;
    }
    const std::size_t i = bucket_of(e.time);
    Bucket& b = buckets_[i];
    const auto level = static_cast<unsigned>(i / kDigits);
    const auto bit = static_cast<std::uint16_t>(1u << (i % kDigits));
    if (!(digits_[level] & bit) || before(e, b.min)) b.min = e;
    digits_[level] |= bit;
    levels_ |= static_cast<std::uint16_t>(1u << level);
    if (b.fill == kBlock) {
      Block* n = take_block();
      if (b.tail == nullptr) {
        b.head = n;
      } else {
        b.tail->next = n;
      }
      b.tail = n;
      b.fill = 0;
    }
    b.tail->ev[b.fill++] = e;
  }
  bool filled(std::size_t i) const { return digits_[i / kDigits] & (1u << (i % kDigits)); }
  // Empties bucket i and calls f on each of its events, in the order they were filed; each block
  // goes back to the free list once read.
  template <class F>
  void drain(std::size_t i, F f) {
    Bucket& b = buckets_[i];
    Block* blk = b.head;
    const std::uint32_t last_fill = b.fill;
    b.head = b.tail = nullptr;
    b.fill = kBlock;
    const auto level = static_cast<unsigned>(i / kDigits);
    digits_[level] &= static_cast<std::uint16_t>(~(1u << (i % kDigits)));
    if (digits_[level] == 0) levels_ &= static_cast<std::uint16_t>(~(1u << level));
    while (blk != nullptr) {
      Block* next = blk->next;
      const std::uint32_t n = next == nullptr ? last_fill : kBlock;
      for (std::uint32_t k = 0; k < n; ++k) f(blk->ev[k]);
      blk->next = free_;
      free_ = blk;
      blk = next;
    }
  }
  // The current time's events are used up: move the lowest non-empty bucket down around its
  // earliest time. Its events share its digit and the ones above with that time, and no bucket
  // below it has events: they land below its level, and every other bucket stays as it is.
  void refill() {
    now_.clear();
    head_ = 0;
    const std::size_t i = lowest();
    last_ = buckets_[i].min.time;
    drain(i, [this](const Event& e) { file(e); });
    sort_now();
  }
  void rebase(std::int64_t time) {
    std::vector<Event> all(now_.begin() + static_cast<std::ptrdiff_t>(head_), now_.end());
    for (std::size_t i = 0; i < buckets_.size(); ++i)
      if (filled(i)) drain(i, [&all](const Event& e) { all.push_back(e); });
    now_.clear();
    head_ = 0;
    last_ = time;
    for (const Event& e : all) file(e);
    sort_now();
  }
  // Events refiled at the current time are sorted once; those pushed at it later carry a
  // larger sequence than all of them.
  void sort_now() {
    if (now_.size() > 1)
      std::sort(now_.begin(), now_.end(),
                [](const Event& x, const Event& y) { return x.order < y.order; });
  }

  std::vector<Event> now_;  // bucket 0: events at last_, sorted by sequence
  std::array<Bucket, kLevels * kDigits> buckets_{};
  std::array<std::uint16_t, kLevels> digits_{};  // per level, bit d: bucket (level, d) has events
  std::uint16_t levels_ = 0;                     // bit l: some bucket of level l has events
  std::size_t head_ = 0;                         // events of now_ before head_ have been taken out
  std::size_t size_ = 0;
  std::int64_t last_ = 0;
  std::uint64_t next_seq_ = 0;
  struct FreeChunk {
    void operator()(Block* b) const { std::free(b); }
  };
  static_assert(std::is_trivially_destructible_v<Block>);  // chunks are freed, not destroyed
  std::vector<std::unique_ptr<Block, FreeChunk>> chunks_;  // every block, owned
  Block* next_ = nullptr;   // the current chunk's first block never taken
  std::size_t spare_ = 0;   // and how many it has left
  std::size_t blocks_ = 0;  // blocks taken from chunks
  Block* free_ = nullptr;
};

}  // namespace lockstep::packet
