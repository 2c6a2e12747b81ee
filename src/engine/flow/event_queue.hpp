#pragma once
// Pending events of a flow-engine run in (time, push order) order (internal).
//
// Events come in bursts at a few instants: a 1,024-GPU NVLS tree all-reduce runs 2.6 M events in
// 13 K instants, 200 per instant, because nodes at the same depth of a tree move in step. So the
// events of one instant share a bucket (a vector in push order) and only the distinct instants
// sit in a binary heap; a push is a lookup of its instant's bucket (InstantIndex) and an append.
// (One heap of all events spent a sixth of such a run sifting.)
#include <algorithm>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "instant_index.hpp"
#include "lockstep/core/slot_pool.hpp"
#include "lockstep/core/units.hpp"

namespace lockstep::flow_detail {

template <class Event>  // has a `Time time` member
class EventQueue {
 public:
  bool empty() const { return instants_.empty(); }
  std::size_t size() const { return size_; }
  Time next_time() const { return instants_.front().first; }

  void push(const Event& e) {
    std::uint32_t b;
    if (!instants_.empty() && e.time == last_time_) {
      b = last_bucket_;
    } else {
      b = bucket_of_.find(e.time.picoseconds());
      if (b == InstantIndex::kMissing) {
        b = take_slot(buckets_, free_);
        bucket_of_.insert(e.time.picoseconds(), b);
        instants_.emplace_back(e.time, b);
        std::push_heap(instants_.begin(), instants_.end(), Later{});
      }
      last_time_ = e.time;
      last_bucket_ = b;
    }
    buckets_[b].push_back(e);
    ++size_;
  }

  /// Moves the events of the earliest instant, in push order, into `out` (replacing its contents).
  void take_next(std::vector<Event>& out) {
    std::pop_heap(instants_.begin(), instants_.end(), Later{});
    const auto [time, b] = instants_.back();
    instants_.pop_back();
    bucket_of_.erase(time.picoseconds());
    if (last_bucket_ == b) last_time_ = Time::ps(-1);
    out.clear();
    out.swap(buckets_[b]);
    size_ -= out.size();
    free_.push_back(b);
  }

  /// Calls fn(event) for every pending event, in no particular order.
  template <class Fn>
  void for_each(Fn&& fn) const {
    for (const auto& [time, b] : instants_)
      for (const Event& e : buckets_[b]) fn(e);
  }

  void clear() {
    for (const auto& [time, b] : instants_) {
      buckets_[b].clear();
      free_.push_back(b);
    }
    instants_.clear();
    bucket_of_.clear();
    size_ = 0;
    last_time_ = Time::ps(-1);
  }

 private:
  using Instant = std::pair<Time, std::uint32_t>;  // time, bucket
  struct Later {
    bool operator()(const Instant& a, const Instant& b) const { return a.first > b.first; }
  };

  std::vector<Instant> instants_;  // heap of the distinct pending times
  InstantIndex bucket_of_;         // pending instant (ps) -> bucket
  std::vector<std::vector<Event>> buckets_;
  std::vector<std::uint32_t> free_;
  std::size_t size_ = 0;
  // The bucket pushed to last: bursts of pushes tend to go to one instant.
  Time last_time_ = Time::ps(-1);
  std::uint32_t last_bucket_ = 0;
};

}  // namespace lockstep::flow_detail
