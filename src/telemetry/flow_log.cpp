#include "lockstep/telemetry/flow_log.hpp"

#include <algorithm>
#include <cmath>

namespace lockstep {

void FlowLog::reserve(std::size_t n) {
  src_.reserve(n);
  dst_.reserve(n);
  bytes_.reserve(n);
  start_.reserve(n);
  end_.reserve(n);
}

Time FlowLog::completion_percentile(double q) const {
  if (src_.empty()) return Time::zero();
  std::vector<std::int64_t> fct(src_.size());
  for (std::size_t i = 0; i < fct.size(); ++i) fct[i] = end_[i] - start_[i];
  q = std::clamp(q, 0.0, 1.0);
  // Nearest rank: the smallest value with at least q of the samples at or below it.
  auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(fct.size())));
  rank = std::clamp<std::size_t>(rank, 1, fct.size());
  std::nth_element(fct.begin(), fct.begin() + static_cast<std::ptrdiff_t>(rank - 1), fct.end());
  return Time::ps(fct[rank - 1]);
}

void LinkSeriesLog::spread(std::uint32_t link, std::int64_t from, std::int64_t to, double bytes) {
  if (to <= from) {
    slot(bytes_[link], Time::ps(from)) += static_cast<float>(bytes);
    return;
  }
  const double per_ps = bytes / static_cast<double>(to - from);
  for (std::int64_t t = from; t < to;) {
    const std::int64_t end = std::min(to, (t / period_ps_ + 1) * period_ps_);
    slot(bytes_[link], Time::ps(t)) += static_cast<float>(per_ps * static_cast<double>(end - t));
    t = end;
  }
}

void LinkSeriesLog::add_paused(std::uint32_t link, Time from, Time to) {
  if (period_ps_ <= 0) return;
  for (std::int64_t t = from.picoseconds(); t < to.picoseconds();) {
    const std::int64_t end = std::min(to.picoseconds(), (t / period_ps_ + 1) * period_ps_);
    entry(link, index(Time::ps(t))).paused_us += static_cast<float>((end - t) / 1e6);
    t = end;
  }
}

PeriodEvents& LinkSeriesLog::insert_entry(std::vector<PeriodEvents>& v, std::uint32_t i) {
  auto it = std::lower_bound(v.begin(), v.end(), i,
                             [](const PeriodEvents& e, std::uint32_t p) { return e.period < p; });
  if (it == v.end() || it->period != i) {
    it = v.insert(it, PeriodEvents{});
    it->period = i;
  }
  return *it;
}

std::vector<PeriodEvents> coarsen_events(std::span<const PeriodEvents> events, std::size_t k) {
  std::vector<PeriodEvents> out;
  for (const PeriodEvents& e : events) {
    const auto period = static_cast<std::uint32_t>(e.period / std::max<std::size_t>(k, 1));
    if (out.empty() || out.back().period != period) {
      out.push_back({});
      out.back().period = period;
    }
    for (std::size_t i = 0; i < e.count.size(); ++i) out.back().count[i] += e.count[i];
    out.back().paused_us += e.paused_us;
  }
  return out;
}

void LinkSeriesLog::reset(std::size_t links, Time period) {
  period_ps_ = period.picoseconds();
  bytes_.assign(period_ps_ > 0 ? links : 0, {});
  queue_.assign(period_ps_ > 0 ? links : 0, {});
  events_.assign(period_ps_ > 0 ? links : 0, {});
}

}  // namespace lockstep
