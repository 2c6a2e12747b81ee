#pragma once
// The pending instants of a flow-engine run, each to its event bucket (internal to EventQueue).
//
// Every instant is looked up when an event is pushed for it and erased when its events run: in a
// ring all-reduce over 192 GPUs that is 1.3 M instants, a few thousand pending at once (every
// flow finishes at its own picosecond). std::unordered_map spent a node allocation and a chain
// walk through cold memory on each (a sixth of the event loop's own time on the three-rack GB200
// ring, bench_flow_cases calib.gb200.n48.all_reduce); this table is open addressing with linear
// probing, at most half full, in one array, and erases by shifting the probe run back (Knuth,
// TAOCP vol. 3, 6.4, Algorithm R), so no tombstones accumulate over millions of instants. Which
// bucket an instant maps to never affects the order events run in (the queue's heap of times
// decides that).
#include <cstdint>
#include <vector>

namespace lockstep::flow_detail {

class InstantIndex {
 public:
  static constexpr std::uint32_t kMissing = 0xFFFFFFFFu;

  InstantIndex() { slots_.resize(kFirstSize); }

  /// The bucket of instant `ps`, or kMissing.
  std::uint32_t find(std::int64_t ps) const {
    for (std::size_t i = home(ps);; i = next(i)) {
      const Slot& s = slots_[i];
      if (s.bucket == kMissing) return kMissing;
      if (s.ps == ps) return s.bucket;
    }
  }

  /// Records `bucket` for instant `ps`, which must not be present.
  void insert(std::int64_t ps, std::uint32_t bucket) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    place(ps, bucket);
    ++size_;
  }

  /// Forgets instant `ps`, which must be present.
  void erase(std::int64_t ps) {
    std::size_t hole = home(ps);
    while (slots_[hole].ps != ps || slots_[hole].bucket == kMissing) hole = next(hole);
    // Algorithm R: move back every later entry of the probe run whose home does not lie
    // cyclically in (hole, j], so that every entry stays reachable from its home.
    for (std::size_t j = next(hole);; j = next(j)) {
      if (slots_[j].bucket == kMissing) break;
      const std::size_t h = home(slots_[j].ps);
      const bool stays = hole < j ? (hole < h && h <= j) : (hole < h || h <= j);
      if (stays) continue;
      slots_[hole] = slots_[j];
      hole = j;
    }
    slots_[hole].bucket = kMissing;
    --size_;
  }

  void clear() {
    for (Slot& s : slots_) s.bucket = kMissing;
    size_ = 0;
  }

  std::size_t size() const { return size_; }

 private:
  struct Slot {
    std::int64_t ps = 0;
    std::uint32_t bucket = kMissing;
  };
  static constexpr std::size_t kFirstSize = 64;

  // Fibonacci hashing: the top bits of the key times 2^64 / golden ratio (times in picoseconds
  // share their low bits far less than their high ones, and the multiply spreads both).
  std::size_t home(std::int64_t ps) const {
    return static_cast<std::size_t>((static_cast<std::uint64_t>(ps) * 0x9E3779B97F4A7C15ull) >>
                                    shift_);
  }
  std::size_t next(std::size_t i) const { return (i + 1) & (slots_.size() - 1); }
  void place(std::int64_t ps, std::uint32_t bucket) {
    std::size_t i = home(ps);
    while (slots_[i].bucket != kMissing) i = next(i);
    slots_[i] = Slot{ps, bucket};
  }
  void grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    --shift_;
    for (const Slot& s : old)
      if (s.bucket != kMissing) place(s.ps, s.bucket);
  }

  std::vector<Slot> slots_;
  std::size_t size_ = 0;
  unsigned shift_ = 64 - 6;  // 64 - log2(slots_.size())
};

}  // namespace lockstep::flow_detail
