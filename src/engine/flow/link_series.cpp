#include "link_series.hpp"

#include <algorithm>

namespace lockstep::flow_detail {

void fill_link_series(const std::vector<double>& capacities, const std::vector<RateChange>& log,
                      const std::vector<double>& link_bytes, std::uint32_t series_links,
                      Time sample_period, RunResult& result) {
  std::vector<char> logged(capacities.size(), 0);
  for (const RateChange& c : log) logged[c.link] = 1;
  std::vector<DirLinkId> links;
  for (DirLinkId l = 0; l < logged.size(); ++l)
    if (logged[l]) links.push_back(l);
  std::stable_sort(links.begin(), links.end(),
                   [&](DirLinkId a, DirLinkId b) { return link_bytes[a] > link_bytes[b]; });
  if (links.size() > series_links) links.resize(series_links);
  // At most a million samples per link: a longer run widens the period (a 21 s step at 10 us
  // would otherwise be cut at 10 s, and a heat map of it would miss half the step).
  constexpr std::int64_t kMaxBins = 1'000'000;
  Time period = sample_period > Time::zero() ? sample_period : Time::us(10);
  const std::int64_t span = result.makespan.picoseconds();
  if (span / period.picoseconds() + 1 > kMaxBins) period = Time::ps(span / (kMaxBins - 1) + 1);
  result.link_sample_period = period;
  const std::int64_t bins = span / period.picoseconds() + 1;
  std::vector<std::int32_t> slot_of(capacities.size(), -1);
  result.link_series.resize(links.size());
  for (std::size_t k = 0; k < links.size(); ++k) {
    slot_of[links[k]] = static_cast<std::int32_t>(k);
    result.link_series[k].link = links[k];
    result.link_series[k].utilisation.assign(static_cast<std::size_t>(bins), 0.0f);
  }
  // The log is in time order; integrate each link's piecewise-constant rate into the bins.
  std::vector<double> rate(links.size(), 0.0);
  std::vector<Time> since(links.size(), Time::zero());
  auto integrate = [&](std::size_t k, Time until) {
    const double cap = capacities[links[k]];
    Time t = since[k];
    while (t < until && rate[k] > 0) {
      const std::int64_t b = t.picoseconds() / period.picoseconds();
      if (b >= bins) break;
      const Time bin_end = Time::ps((b + 1) * period.picoseconds());
      const Time end = std::min(bin_end, until);
      result.link_series[k].utilisation[static_cast<std::size_t>(b)] +=
          static_cast<float>(rate[k] * (end - t).seconds() / (cap * period.seconds()));
      t = end;
    }
    since[k] = until;
  };
  for (const RateChange& c : log) {
    const std::int32_t k = slot_of[c.link];
    if (k < 0) continue;
    integrate(static_cast<std::size_t>(k), c.at);
    rate[static_cast<std::size_t>(k)] += c.delta;
  }
}

}  // namespace lockstep::flow_detail
