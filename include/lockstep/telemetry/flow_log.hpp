#pragma once
// Telemetry recorders shared by engines: columnar, keyed by ids, no text in the hot path.
//  - FlowLog: one row per completed transfer (src, dst, bytes, start, end); percentiles of the
//    flow completion time are computed after the run.
//  - LinkSeriesLog: per directed link, bytes carried and peak queue depth per sample period,
//    appended lazily as packets are sent (no periodic events), and the congestion events (PFC
//    pauses and paused time, ECN marks, drops, trims, CNPs, retransmissions) of the periods
//    that had any.
#include <array>
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

/// What happened at one link in one sample period (LinkSeriesLog::events): 32 bytes, kept only
/// for the periods in which the link had at least one event.
struct PeriodEvents {
  enum Kind : std::uint8_t { Pause, EcnMark, Drop, Trim, Cnp, Retransmission, kKinds };
  std::uint32_t period = 0;  // index: it starts at period x the sample period
  std::array<std::uint32_t, kKinds> count{};
  float paused_us = 0;  // time the link's transmitter spent paused within the period
};
static_assert(sizeof(PeriodEvents) == 32);

/// The same events over periods k times as long (period i becomes i / k; counts and paused
/// time add up).
std::vector<PeriodEvents> coarsen_events(std::span<const PeriodEvents> events, std::size_t k);

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
  /// One congestion event at `link` (the link counters' attribution, docs/telemetry.md).
  void count(std::uint32_t link, Time at, PeriodEvents::Kind what) {
    if (period_ps_ > 0) ++entry(link, index(at)).count[what];
  }
  /// The link's transmitter was paused over [from, to): split across the periods it spans.
  void add_paused(std::uint32_t link, Time from, Time to);
  /// The periods with an event, in time order.
  std::span<const PeriodEvents> events(std::uint32_t link) const { return events_[link]; }
  std::span<const float> bytes(std::uint32_t link) const { return bytes_[link]; }
  std::span<const float> peak_queue(std::uint32_t link) const { return queue_[link]; }
  std::size_t links() const { return bytes_.size(); }

 private:
  void spread(std::uint32_t link, std::int64_t from, std::int64_t to, double bytes);
  std::uint32_t index(Time at) const {
    return static_cast<std::uint32_t>(at.picoseconds() / period_ps_);
  }
  // The link's entry of period i: events arrive in time order, so it is nearly always the last
  // one or a new one; a pause's time is added when it ends, possibly to earlier periods.
  PeriodEvents& entry(std::uint32_t link, std::uint32_t i) {
    std::vector<PeriodEvents>& v = events_[link];
    if (v.empty() || v.back().period < i) {
      v.push_back({});
      v.back().period = i;
      return v.back();
    }
    if (v.back().period == i) return v.back();
    return insert_entry(v, i);
  }
  static PeriodEvents& insert_entry(std::vector<PeriodEvents>& v, std::uint32_t i);
  float& slot(std::vector<float>& v, Time at) {
    const auto i = static_cast<std::size_t>(at.picoseconds() / period_ps_);
    if (i >= v.size()) v.resize(i + 1, 0.0f);
    return v[i];
  }
  std::int64_t period_ps_ = 0;
  std::vector<std::vector<float>> bytes_;
  std::vector<std::vector<float>> queue_;
  std::vector<std::vector<PeriodEvents>> events_;
};

}  // namespace lockstep
