// A sweep's record and its rows as nccl-tests prints them (table) or as CSV.
#include "lockstep/report/collective_rows.hpp"

#include <fmt/format.h>

#include "lockstep/core/error.hpp"

namespace lockstep::report {

Sweep sweep_record(const CollectiveSweep& spec, const std::vector<CollectiveRow>& rows) {
  Sweep sweep;
  sweep.op = to_string(spec.op);
  sweep.algorithm = nccl::algorithm_name(spec.algo);
  sweep.engine = spec.engine;
  for (const FaultSpec& f : spec.faults) sweep.faults.push_back(f.text);
  for (const CollectiveRow& r : rows) {
    sweep.rows.push_back({r.bytes, r.count, r.type, r.algorithm, r.protocol, r.time.microseconds(),
                          r.algbw_GBps, r.busbw_GBps, r.redop, r.channels, r.links, r.network});
  }
  return sweep;
}

namespace {

std::string bytes_text(double b) {
  if (b >= 1e9) return fmt::format("{:.2f} GB", b / 1e9);
  if (b >= 1e6) return fmt::format("{:.2f} MB", b / 1e6);
  if (b >= 1e3) return fmt::format("{:.1f} kB", b / 1e3);
  return fmt::format("{:.0f} B", b);
}

// The packet engine's congestion counters of a link or a run, those that are not zero.
std::string events_text(const LinkReport& l) {
  std::string out;
  auto add = [&](std::uint64_t n, const char* what) {
    if (n > 0) out += fmt::format("{}{} {}", out.empty() ? "" : ", ", n, what);
  };
  if (l.pauses > 0)
    out += fmt::format("{} PFC pauses ({:.2f} us paused)", l.pauses, l.paused.microseconds());
  add(l.ecn_marks, "ECN marks");
  add(l.cnps, "CNPs");
  add(l.drops, "drops");
  add(l.trims, "trims");
  add(l.credit_stalls, "credit stalls");
  add(l.retransmissions, "retransmissions");
  return out.empty() ? "no congestion events" : out;
}

}  // namespace

std::string format_busiest_links(const Sweep& sweep) {
  if (sweep.rows.empty() || sweep.rows.back().links.empty()) return {};
  const SweepRow& r = sweep.rows.back();
  std::string out = fmt::format("# busiest links of the {} B {} ({} engine, {:.2f} us):\n", r.bytes,
                                sweep.op, sweep.engine, r.time_us);
  for (const LinkReport& l : r.links) {
    out +=
        fmt::format("#   {}: {}, {:.1f}% busy", l.name, bytes_text(l.bytes), 100 * l.utilisation);
    if (l.peak_utilisation > 0)
      out += fmt::format(
          " (peak {:.0f}% at {:.2f} us{})", 100 * l.peak_utilisation, l.peak_at.microseconds(),
          l.series.empty() ? "" : fmt::format(", >= 90% for {:.2f} us", l.above_90.microseconds()));
    if (l.last_sent > Time::zero())
      out += fmt::format(", sending {:.2f}-{:.2f} us", l.first_sent.microseconds(),
                         l.last_sent.microseconds());
    if (r.network) {
      out += fmt::format(", queue p50 {} p99 {} max {}, {}", bytes_text(l.queue_p50),
                         bytes_text(l.queue_p99), bytes_text(l.queue_max), events_text(l));
    }
    out += "\n";
  }
  if (r.network) out += fmt::format("# network: {}\n", events_text(*r.network));
  return out;
}

std::string format_collective_rows(const Sweep& sweep, const std::string& format) {
  std::string out;
  if (format == "csv") {
    out.append("bytes,count,type,algorithm,protocol,time_us,algbw_GBps,busbw_GBps\n");
    for (const auto& r : sweep.rows)
      out += fmt::format("{},{},{},{},{},{:.2f},{:.2f},{:.2f}\n", r.bytes, r.count, r.type,
                         r.algorithm, r.protocol, r.time_us, r.algbw_GBps, r.busbw_GBps);
  } else if (format == "table") {
    out += fmt::format("#{:>13} {:>13} {:>8} {:>6} {:>16} {:>8} {:>4} {:>12} {:>11} {:>11}\n",
                       "size(B)", "count", "type", "redop", "algorithm", "protocol", "ch",
                       "time(us)", "algbw(GB/s)", "busbw(GB/s)");
    for (const auto& r : sweep.rows)
      out += fmt::format(
          " {:>13} {:>13} {:>8} {:>6} {:>16} {:>8} {:>4} {:>12.2f} {:>11.2f} "
          "{:>11.2f}\n",
          r.bytes, r.count, r.type, r.redop, r.algorithm, r.protocol, r.channels, r.time_us,
          r.algbw_GBps, r.busbw_GBps);
    out += format_busiest_links(sweep);
  } else {
    throw InputError("format", fmt::format("unknown format '{}' (expected table or csv)", format));
  }
  return out;
}

}  // namespace lockstep::report
