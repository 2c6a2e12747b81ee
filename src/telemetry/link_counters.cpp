#include "lockstep/telemetry/link_counters.hpp"

#include <algorithm>
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

bool eventful(const LinkCounters& c, std::size_t i) {
  return at(c.drops, i) + at(c.trims, i) + at(c.ecn_marks, i) + at(c.pauses, i) +
             at(c.credit_stalls, i) + at(c.cnps, i) + at(c.retransmissions, i) >
         0;
}

LinkReport report_of(const Topology& topo, const DeviceNames& names, const LinkCounters& c,
                     const LinkSeriesLog* series, Time makespan, DirLinkId l) {
  LinkReport r;
  r.link = l;
  r.name = names.link_name(topo, l);
  r.bytes = at(c.bytes, l);
  const double bps = topo.link(Topology::link_of(l)).bandwidth.bytes_per_second();
  if (bps > 0 && makespan > Time::zero()) r.utilisation = r.bytes / (bps * makespan.seconds());
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

}  // namespace

void LinkCounters::reset(std::size_t links, bool packet) {
  bytes.assign(links, 0.0);
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
}

std::vector<LinkReport> busiest_links(const Topology& topo, const LinkCounters& counters,
                                      const LinkSeriesLog* series, Time makespan, std::size_t n) {
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
  // Links where the fabric pushed back, even when they carried less.
  std::size_t extra = 0;
  for (DirLinkId l = 0; l < links && extra < n; ++l) {
    if (!eventful(counters, l) || std::find(chosen.begin(), chosen.end(), l) != chosen.end())
      continue;
    chosen.push_back(l);
    ++extra;
  }
  const DeviceNames names(topo);
  std::vector<LinkReport> out;
  for (DirLinkId l : chosen) out.push_back(report_of(topo, names, counters, series, makespan, l));
  return out;
}

LinkReport link_totals(const LinkCounters& c) {
  LinkReport t;
  for (std::size_t i = 0; i < c.bytes.size(); ++i) {
    t.bytes += c.bytes[i];
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
