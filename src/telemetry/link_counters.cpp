#include "lockstep/telemetry/link_counters.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>

namespace lockstep {
namespace {

template <class T>
T at(const std::vector<T>& v, std::size_t i) {
  return i < v.size() ? v[i] : T{};
}

// Nearest rank: the smallest value with at least q of the samples at or below it.
double percentile(std::vector<float> v, double q) {
  if (v.empty()) return 0;
  auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size())));
  rank = std::clamp<std::size_t>(rank, 1, v.size());
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(rank - 1), v.end());
  return v[rank - 1];
}

// How hard the fabric pushed back on a link, most severe first: losses, pauses, marks, then the
// sender's reactions and credit waits (compared as a tuple).
std::array<std::uint64_t, 6> severity(const LinkCounters& c, std::size_t i) {
  return {at(c.drops, i) + at(c.trims, i), at(c.pauses, i), at(c.ecn_marks, i),
          at(c.retransmissions, i),        at(c.cnps, i),   at(c.credit_stalls, i)};
}

// Nearest rank over a power-of-two histogram: the upper edge of the bucket holding it.
double hist_percentile(const std::uint32_t* h, double q, double peak) {
  std::uint64_t total = 0;
  for (std::size_t b = 0; b < LinkCounters::kQueueBuckets; ++b) total += h[b];
  if (total == 0) return 0;
  const auto rank = std::max<std::uint64_t>(
      1, static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(total))));
  std::uint64_t seen = 0;
  for (std::size_t b = 0; b < LinkCounters::kQueueBuckets; ++b) {
    seen += h[b];
    if (seen >= rank) return b == 0 ? 0.0 : std::min(peak, std::ldexp(1.0, static_cast<int>(b)));
  }
  return peak;
}

LinkReport report_of(const Topology& topo, const DeviceNames& names, const LinkCounters& c,
                     const LinkSeriesLog* series, DirLinkId l) {
  const Time makespan = c.makespan;
  LinkReport r;
  r.link = l;
  r.name = names.link_name(topo, l);
  r.bytes = at(c.bytes, l);
  r.wire_bytes = at(c.wire_bytes, l);
  const double bps = topo.link(Topology::link_of(l)).bandwidth.bytes_per_second();
  if (bps > 0 && makespan > Time::zero()) r.utilisation = r.wire_bytes / (bps * makespan.seconds());
  r.drops = at(c.drops, l);
  r.trims = at(c.trims, l);
  r.ecn_marks = at(c.ecn_marks, l);
  r.pauses = at(c.pauses, l);
  r.paused = at(c.paused, l);
  r.credit_stalls = at(c.credit_stalls, l);
  r.cnps = at(c.cnps, l);
  r.retransmissions = at(c.retransmissions, l);
  r.dropped_bytes = at(c.dropped_bytes, l);
  r.queue_max = at(c.peak_queue, l);
  if (l < c.first_sent.size() && c.first_sent[l] <= c.last_sent[l]) {
    r.first_sent = c.first_sent[l];
    r.last_sent = c.last_sent[l];
  }
  const bool hist = c.queue_hist.size() >= (l + 1) * LinkCounters::kQueueBuckets;
  if (hist) {
    const std::uint32_t* h = &c.queue_hist[l * LinkCounters::kQueueBuckets];
    r.queue_p50 = hist_percentile(h, 0.5, r.queue_max);
    r.queue_p99 = hist_percentile(h, 0.99, r.queue_max);
  }
  if (series != nullptr && series->enabled() && l < series->links()) {
    const double period = series->period().seconds();
    const std::span<const float> bytes = series->bytes(l);
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      const double u = bps > 0 ? bytes[i] / (bps * period) : 0;
      if (u > r.peak_utilisation) {
        r.peak_utilisation = std::min(1.0, u);
        r.peak_at = Time::ps(series->period().picoseconds() * static_cast<std::int64_t>(i));
      }
    }
    if (hist) return r;
    // Queue percentiles over every period of the run, idle ones (depth 0) included.
    const std::span<const float> queue = series->peak_queue(l);
    const auto periods = static_cast<std::size_t>(
        std::ceil(makespan.seconds() / period - 1e-9));  // makespan / period, rounded up
    std::vector<float> depth(queue.begin(), queue.end());
    depth.resize(std::max(depth.size(), periods), 0.0f);
    r.queue_p50 = percentile(depth, 0.5);
    r.queue_p99 = percentile(depth, 0.99);
  }
  return r;
}

// The link's sampled utilisation, where the engine kept one: its peak period, the time at 90% or
// more, and the series in at most kSeriesPoints periods (means of k consecutive ones).
void add_series(const LinkCounters& c, LinkReport& r) {
  const auto it = std::find_if(c.series.begin(), c.series.end(),
                               [&](const LinkUtilisation& s) { return s.link == r.link; });
  if (c.series_period <= Time::zero() || it == c.series.end()) return;
  const std::vector<float>& u = it->utilisation;
  r.peak_utilisation = 0;
  for (std::size_t i = 0; i < u.size(); ++i) {
    if (u[i] > r.peak_utilisation) {
      r.peak_utilisation = std::min(1.0f, u[i]);
      r.peak_at = c.series_period * static_cast<std::int64_t>(i);
    }
    if (u[i] >= 0.9f) r.above_90 += c.series_period;
  }
  const std::size_t k = std::max<std::size_t>(
      1, (u.size() + LinkReport::kSeriesPoints - 1) / LinkReport::kSeriesPoints);
  r.series_period = c.series_period * static_cast<std::int64_t>(k);
  r.series.clear();
  r.queue_series.clear();
  const std::vector<float>& queue = it->queue_bytes;
  for (std::size_t lo = 0; lo < u.size(); lo += k) {
    const std::size_t hi = std::min(u.size(), lo + k);
    double sum = 0;
    for (std::size_t i = lo; i < hi; ++i) sum += u[i];
    // A queue's peak stays the peak of the longer period.
    if (hi <= queue.size()) {
      r.queue_series.push_back(*std::max_element(queue.begin() + static_cast<std::ptrdiff_t>(lo),
                                                 queue.begin() + static_cast<std::ptrdiff_t>(hi)));
    }
    // A last, partial period counts over its whole width, as the link was idle past the end.
    r.series.push_back(static_cast<float>(sum / static_cast<double>(k)));
  }
  r.events = coarsen_events(it->events, k);
}

}  // namespace

void LinkCounters::reset(std::size_t links, bool packet) {
  bytes.assign(links, 0.0);
  wire_bytes.assign(links, 0.0);
  const std::size_t n = packet ? links : 0;
  dropped_bytes.assign(n, 0.0);
  drops.assign(n, 0);
  trims.assign(n, 0);
  ecn_marks.assign(n, 0);
  pauses.assign(n, 0);
  paused.assign(n, Time::zero());
  credit_stalls.assign(n, 0);
  cnps.assign(n, 0);
  retransmissions.assign(n, 0);
  peak_queue.assign(n, 0.0);
  queue_hist.assign(n * kQueueBuckets, 0);
  first_sent.assign(n, Time::infinite());
  last_sent.assign(n, Time::zero());
  makespan = Time::zero();
}

std::vector<LinkReport> busiest_links(const Topology& topo, const LinkCounters& counters,
                                      const LinkSeriesLog* series, std::size_t n) {
  const std::size_t links = std::min(counters.bytes.size(), topo.num_directed_links());
  std::vector<DirLinkId> order(links);
  std::iota(order.begin(), order.end(), DirLinkId{0});
  const std::size_t keep = std::min(n, links);
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(keep), order.end(),
                    [&](DirLinkId a, DirLinkId b) {
                      return counters.bytes[a] > counters.bytes[b] ||
                             (counters.bytes[a] == counters.bytes[b] && a < b);
                    });
  std::vector<DirLinkId> chosen;
  for (std::size_t i = 0; i < keep && counters.bytes[order[i]] > 0; ++i) chosen.push_back(order[i]);
  // The links where the fabric pushed back hardest, even when they carried less.
  std::vector<DirLinkId> pushed;
  constexpr std::array<std::uint64_t, 6> kCalm{};
  for (DirLinkId l = 0; l < links; ++l)
    if (severity(counters, l) != kCalm &&
        std::find(chosen.begin(), chosen.end(), l) == chosen.end())
      pushed.push_back(l);
  const std::size_t more = std::min(n, pushed.size());
  std::partial_sort(pushed.begin(), pushed.begin() + static_cast<std::ptrdiff_t>(more),
                    pushed.end(), [&](DirLinkId a, DirLinkId b) {
                      const auto sa = severity(counters, a), sb = severity(counters, b);
                      return sa > sb || (sa == sb && a < b);
                    });
  chosen.insert(chosen.end(), pushed.begin(), pushed.begin() + static_cast<std::ptrdiff_t>(more));
  const DeviceNames names(topo);
  std::vector<LinkReport> out;
  for (DirLinkId l : chosen) {
    out.push_back(report_of(topo, names, counters, series, l));
    add_series(counters, out.back());
  }
  return out;
}

LinkReport link_totals(const LinkCounters& c) {
  LinkReport t;
  for (std::size_t i = 0; i < c.bytes.size(); ++i) {
    t.bytes += c.bytes[i];
    t.wire_bytes += at(c.wire_bytes, i);
    t.drops += at(c.drops, i);
    t.trims += at(c.trims, i);
    t.ecn_marks += at(c.ecn_marks, i);
    t.pauses += at(c.pauses, i);
    t.paused += at(c.paused, i);
    t.credit_stalls += at(c.credit_stalls, i);
    t.cnps += at(c.cnps, i);
    t.retransmissions += at(c.retransmissions, i);
    t.dropped_bytes += at(c.dropped_bytes, i);
    t.queue_max = std::max(t.queue_max, at(c.peak_queue, i));
  }
  return t;
}

}  // namespace lockstep
