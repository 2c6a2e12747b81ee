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
                          r.algbw_GBps, r.busbw_GBps, r.redop, r.channels});
  }
  return sweep;
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
  } else {
    throw InputError("format", fmt::format("unknown format '{}' (expected table or csv)", format));
  }
  return out;
}

}  // namespace lockstep::report
