#pragma once
// The packet engine's per-link and per-device state (not a public API): what every hop reads of
// the link it leaves and the device it reaches, and per link and lane the credits, buffered bytes
// and PFC state of link-level flow control. Laid out by cache line: at 8,192 hosts none of it
// stays in cache, so each record a hop touches is a miss.
#include <cstddef>
#include <cstdint>
#include <memory>

#include "packet.hpp"

namespace lockstep::packet {

/// What stops a link's transmitter from overrunning the device at its far end.
enum class LinkControl : std::uint8_t { Sink, Credit, Pfc, Lossy };

// What every hop reads of a link (the packet's links in, out, and the one it leaves) in its first
// cache line, the rest in the second: at 8,192 hosts each is a miss, and the 104 bytes as they
// were laid out before straddled two or three lines at random offsets.
struct alignas(64) LinkState {
  double ps_per_byte = 0;
  std::int64_t latency = 0;
  std::int64_t last_tx = 0;      // when its latest packet started (the deadlock watch)
  std::int64_t far_latency = 0;  // the far device's port-to-port latency (DeviceState::latency)
  std::uint32_t src = kNil, dst = kNil;  // devices
  // The packet being serialised (buffer release and credit return happen when it is done).
  std::uint32_t cur_ingress = kNil;
  std::uint32_t cur_wire = 0;
  std::uint32_t inject = kNil;  // ring of flows injecting here (endpoint links)
  std::uint16_t paused = 0;     // PFC: lanes paused by the far end (bit mask)
  // PFC frames this link carries for the opposite link (its far end's ingress): the lanes whose
  // XOFF / XON state changed since the last frame, and the state that frame put on the wire.
  std::uint16_t pfc_pending = 0;
  LinkControl control = LinkControl::Sink;
  bool busy = false;
  // Between two fabric switches: whether the hop climbs (kUp) or descends (kDown) in the order
  // of (tier, device id); a packet changes lane level where a kDown hop meets a kUp hop.
  std::uint8_t turn = 0;
  // Credits count blocks of 2^credit_shift bytes: 64 B on InfiniBand cables (IBTA Vol. 1,
  // 7.9.4), bytes on board links; a packet takes ceil(wire / block) of them.
  std::uint8_t credit_shift = 0;
  std::uint8_t rr_lane = 0;
  std::uint8_t cur_in_lane = 0;  // its lane on the link it came in over
  std::uint8_t cur_queue = 0;    // the output queue it left (0 control, else lane + 1)
  bool to_endpoint = false;      // the far device is a GPU (DeviceState::endpoint)
  // Second line: injection, and PFC's thresholds for this link's ingress at the far end and
  // its frames (a PFC fabric's arrival reads xoff here; last_tx, which every packet's start
  // writes, stays in the first).
  std::int64_t xoff = 0, xon = 0;
  std::int64_t wake_at = -1;
  std::uint32_t inject_count = 0;
  std::uint32_t wake_gen = 0;
  std::uint16_t pfc_sent = 0;
};
static_assert(sizeof(LinkState) == 128 && offsetof(LinkState, xoff) == 64);

struct DeviceState {
  std::int64_t buffer = 0;  // shared buffer capacity (bytes), lossy admission
  std::int64_t used = 0;
  std::int64_t latency = 0;  // switch port-to-port latency
  bool endpoint = false;     // a GPU: sources and sinks traffic, never forwards
};

/// Credits on their way back to a transmitter, oldest first: a few inline (about as many as
/// one link latency holds at line rate, so the usual case needs no other memory), the rest
/// in an overflow ring that grows by doubling when full. (A vector appended to and consumed from
/// the front kept every return a busy link ever had until 4,096 were consumed: 49 MB of the
/// 333 MB heap at 8,192 hosts; the ring holds what is in flight, rounded up to a power of two.)
class CreditReturns {
 public:
  bool empty() const { return count_ == 0; }
  std::int64_t front_time() const { return at_[head_]; }
  std::uint32_t front_wire() const { return wire_[head_]; }
  void push_back(std::int64_t at, std::uint32_t wire) {
    if (count_ == kInline || ring_count_ > 0) {
      if (ring_count_ == ring_size()) grow();
      ring_[(ring_head_ + ring_count_) & (ring_size() - 1)] = {at, wire};
      ++ring_count_;
      return;
    }
    const auto i = static_cast<std::uint8_t>((head_ + count_) % kInline);
    at_[i] = at;
    wire_[i] = wire;
    ++count_;
  }
  void pop_front() {
    head_ = static_cast<std::uint8_t>((head_ + 1) % kInline);
    --count_;
    // Keep the inline part in front: refill it from the ring, which stays in order behind.
    while (count_ < kInline && ring_count_ > 0) {
      const auto i = static_cast<std::uint8_t>((head_ + count_) % kInline);
      at_[i] = ring_[ring_head_].at;
      wire_[i] = ring_[ring_head_].wire;
      ++count_;
      ring_head_ = (ring_head_ + 1) & (ring_size() - 1);
      --ring_count_;
    }
  }
  /// Calls f(at, wire) for each return, oldest first, while f returns true.
  template <class F>
  void for_each(F f) const {
    for (std::uint8_t k = 0; k < count_; ++k)
      if (!f(at_[(head_ + k) % kInline], wire_[(head_ + k) % kInline])) return;
    for (std::uint32_t k = 0; k < ring_count_; ++k) {
      const Entry& e = ring_[(ring_head_ + k) & (ring_size() - 1)];
      if (!f(e.at, e.wire)) return;
    }
  }
  /// Entries the ring can hold without growing (0 until the inline part first overflows).
  std::uint32_t ring_size() const { return ring_ ? std::uint32_t{1} << ring_log2_ : 0; }

 private:
  struct Entry {
    std::int64_t at;
    std::uint32_t wire;
  };
  void grow() {
    const std::uint32_t n = ring_size();
    const std::uint8_t log2 = ring_ ? static_cast<std::uint8_t>(ring_log2_ + 1) : 3;
    auto bigger = std::make_unique<Entry[]>(std::size_t{1} << log2);
    for (std::uint32_t k = 0; k < ring_count_; ++k) bigger[k] = ring_[(ring_head_ + k) & (n - 1)];
    ring_ = std::move(bigger);
    ring_log2_ = log2;
    ring_head_ = 0;
  }
  static constexpr std::uint8_t kInline = 5;
  std::uint8_t head_ = 0, count_ = 0;
  std::uint8_t ring_log2_ = 0;
  std::uint32_t ring_head_ = 0, ring_count_ = 0;
  std::int64_t at_[kInline] = {};
  std::uint32_t wire_[kInline] = {};
  std::unique_ptr<Entry[]> ring_;  // a pointer, not a vector: LaneState stays two cache lines
};

// Everything kept per link x lane, in two adjacent cache lines: at 8,192 hosts the per-link
// state no longer fits in cache, and each hop touched four separate arrays (and the heap
// block of a vector of credit returns) for it.
struct alignas(64) LaneState {
  std::int64_t credits = 0;        // transmitter's view
  std::int64_t ingress_bytes = 0;  // buffered at the far end
  bool waiting = false;            // the transmitter wants credits it does not have
  bool wake_pending = false;       // a CreditReturn event is scheduled
  std::uint8_t xoff_sent = 0;      // receiver side of PFC: PAUSE sent, no RESUME yet
  // Credits on their way back, in time order (a link's latency is fixed). They are collected
  // lazily when the transmitter is short of credits or more come back; an event is scheduled
  // only for a transmitter that is waiting for them, which saves one event per packet per hop.
  CreditReturns returns;
  std::int64_t pause_start = -1;
};
static_assert(sizeof(LaneState) == 128);

}  // namespace lockstep::packet
