#pragma once
// The packet engine's event list: a vector-backed binary heap of plain structs ordered by
// (time, sequence), so events at equal times run in the order they were scheduled and a run is
// reproducible. No allocation once the vector has grown; events are cancelled by generation
// counters kept in the component they address (a stale event is recognised and ignored).
#include <cstdint>
#include <vector>

namespace lockstep::packet {

enum class EventKind : std::uint8_t {
  LinkFree,      // a: link — its transmitter finished serialising a packet
  Arrive,        // a: packet — reaches the far end of the link at route[hop]
  CreditReturn,  // a: link, b: lane — credits a waiting transmitter needs are back
  Pfc,           // a: link, b: lane, c: 1 pause / 0 resume — reaches the transmitter
  Wake,          // a: link, b: generation — an injecting flow became eligible
  Control,       // a: flow, b: seq, c: incarnation<<8 | flags — ACK/NACK/CNP
  FlowTimer,     // a: flow, b: generation — retransmission timeout
  CcTimer,       // a: flow, b: generation — DCQCN rate increase / alpha decay
  OpDone,        // a: rank, b: op
  Watchdog,
};

/// 32 bytes: the ordering key (time, then scheduling order) and three payload words.
struct Event {
  std::int64_t time = 0;
  std::uint64_t order = 0;  // sequence << 8 | kind
  std::uint32_t a = 0, b = 0, c = 0;
  EventKind kind() const { return static_cast<EventKind>(order & 0xFF); }
};

/// A 4-ary min-heap (shallower than a binary heap, and a node's children share a cache line
/// pair), keyed by (time, order).
class EventQueue {
 public:
  void push(std::int64_t time, EventKind kind, std::uint32_t a, std::uint32_t b = 0,
            std::uint32_t c = 0) {
    heap_.push_back(Event{time, next_seq_++ << 8 | static_cast<std::uint8_t>(kind), a, b, c});
    sift_up(heap_.size() - 1);
  }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  const Event& top() const { return heap_.front(); }
  Event pop() {
    Event e = heap_.front();
    const Event last = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) sift_down(last);
    return e;
  }
  void reserve(std::size_t n) { heap_.reserve(n); }

 private:
  static bool before(const Event& x, const Event& y) {
    return x.time < y.time || (x.time == y.time && x.order < y.order);
  }
  void sift_up(std::size_t i) {
    Event e = heap_[i];
    while (i > 0) {
      std::size_t parent = (i - 1) / 4;
      if (!before(e, heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = e;
  }
  // Places `e` (the former last element) starting from the root.
  void sift_down(const Event& e) {
    const std::size_t n = heap_.size();
    std::size_t i = 0;
    while (true) {
      const std::size_t first = 4 * i + 1;
      if (first >= n) break;
      std::size_t best = first;
      const std::size_t end = first + 4 < n ? first + 4 : n;
      for (std::size_t c = first + 1; c < end; ++c)
        if (before(heap_[c], heap_[best])) best = c;
      if (!before(heap_[best], e)) break;
      heap_[i] = heap_[best];
      i = best;
    }
    heap_[i] = e;
  }
  std::vector<Event> heap_;
  std::uint64_t next_seq_ = 0;
};

}  // namespace lockstep::packet
