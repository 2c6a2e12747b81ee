#pragma once
// A small open-addressing hash index from a 128-bit key to a dense 32-bit id (internal to the
// flow engine). Lookups on the hot path (send/recv matching, class routes) touch one or two
// cache lines instead of chasing std::unordered_map nodes.
#include <cstdint>
#include <vector>

#include "lockstep/core/rng.hpp"

namespace lockstep::flow_detail {

class FlatIndex {
 public:
  static constexpr std::uint32_t kMissing = 0xFFFFFFFFu;

  FlatIndex() { slots_.resize(64); }

  /// The id stored for (a, b), or kMissing.
  std::uint32_t find(std::uint64_t a, std::uint64_t b) const {
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = hash(a, b) & mask;; i = (i + 1) & mask) {
      const Entry& e = slots_[i];
      if (e.id == kMissing) return kMissing;
      if (e.a == a && e.b == b) return e.id;
    }
  }

  /// Stores id for (a, b), which must not be present yet.
  void insert(std::uint64_t a, std::uint64_t b, std::uint32_t id) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    place(a, b, id);
    ++size_;
  }

 private:
  struct Entry {
    std::uint64_t a = 0, b = 0;
    std::uint32_t id = kMissing;
  };
  static std::size_t hash(std::uint64_t a, std::uint64_t b) { return mix64(a ^ mix64(b)); }
  void place(std::uint64_t a, std::uint64_t b, std::uint32_t id) {
    const std::size_t mask = slots_.size() - 1;
    std::size_t i = hash(a, b) & mask;
    while (slots_[i].id != kMissing) i = (i + 1) & mask;
    slots_[i] = Entry{a, b, id};
  }
  void grow() {
    std::vector<Entry> old(slots_.size() * 2);
    old.swap(slots_);
    for (const Entry& e : old)
      if (e.id != kMissing) place(e.a, e.b, e.id);
  }

  std::vector<Entry> slots_;
  std::size_t size_ = 0;
};

}  // namespace lockstep::flow_detail
