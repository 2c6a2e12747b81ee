#pragma once
// Telemetry recorders shared by engines: columnar, keyed by ids, no text in the hot path.
//  - FlowLog: one row per completed transfer (src, dst, bytes, start, end); percentiles of the
//    flow completion time are computed after the run.
//  - LinkSeriesLog: per directed link, bytes carried and peak queue depth per sample period,
//    appended lazily as packets are sent (no periodic events).
#include <cstdint>
#include <span>
#include <vector>

#include "lockstep/core/units.hpp"

namespace lockstep {

class FlowLog {
 public:
  void reserve(std::size_t n);
  void add(std::uint32_t src, std::uint32_t dst, std::uint64_t bytes, Time start, Time end) {
    src_.push_back(src);
    dst_.push_back(dst);
    bytes_.push_back(bytes);
    start_.push_back(start.picoseconds());
    end_.push_back(end.picoseconds());
  }
  std::size_t size() const { return src_.size(); }
  std::uint32_t src(std::size_t i) const { return src_[i]; }
  std::uint32_t dst(std::size_t i) const { return dst_[i]; }
  std::uint64_t bytes(std::size_t i) const { return bytes_[i]; }
  Time start(std::size_t i) const { return Time::ps(start_[i]); }
  Time end(std::size_t i) const { return Time::ps(end_[i]); }
  Time completion(std::size_t i) const { return Time::ps(end_[i] - start_[i]); }
  /// Completion-time percentile, q in [0, 1] (nearest rank); zero when empty.
  Time completion_percentile(double q) const;

 private:
  std::vector<std::uint32_t> src_, dst_;
  std::vector<std::uint64_t> bytes_;
  std::vector<std::int64_t> start_, end_;
};

class LinkSeriesLog {
 public:
  /// Starts recording `links` directed links with the given sample period (0 disables).
  void reset(std::size_t links, Time period);
  bool enabled() const { return period_ps_ > 0; }
  Time period() const { return Time::ps(period_ps_); }
  void add_bytes(std::uint32_t link, Time at, double bytes) {
    if (period_ps_ > 0) slot(bytes_[link], at) += static_cast<float>(bytes);
  }
  /// Bytes sent uniformly over [from, to), split across the sample periods it spans.
  void add_span(std::uint32_t link, Time from, Time to, double bytes) {
    if (period_ps_ > 0) spread(link, from.picoseconds(), to.picoseconds(), bytes);
  }
  void note_queue(std::uint32_t link, Time at, double queued_bytes) {
    if (period_ps_ <= 0) return;
    float& q = slot(queue_[link], at);
    if (queued_bytes > q) q = static_cast<float>(queued_bytes);
  }
  std::span<const float> bytes(std::uint32_t link) const { return bytes_[link]; }
  std::span<const float> peak_queue(std::uint32_t link) const { return queue_[link]; }
  std::size_t links() const { return bytes_.size(); }

 private:
  void spread(std::uint32_t link, std::int64_t from, std::int64_t to, double bytes);
  float& slot(std::vector<float>& v, Time at) {
    const auto i = static_cast<std::size_t>(at.picoseconds() / period_ps_);
    if (i >= v.size()) v.resize(i + 1, 0.0f);
    return v[i];
  }
  std::int64_t period_ps_ = 0;
  std::vector<std::vector<float>> bytes_;
  std::vector<std::vector<float>> queue_;
};

}  // namespace lockstep
