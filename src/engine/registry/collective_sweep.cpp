// Collective sweep rows printed the way nccl-tests does (the sweeps themselves: nccl/sweep.hpp).
#include "lockstep/engine/collective_sweep.hpp"

#include <fmt/format.h>

#include "lockstep/core/error.hpp"

namespace lockstep {

std::string format_collective_rows(const std::vector<CollectiveRow>& rows,
                                   const std::string& format) {
  std::string out;
  if (format == "csv") {
    out.append("bytes,count,type,algorithm,protocol,time_us,algbw_GBps,busbw_GBps\n");
    for (const auto& r : rows)
      out +=
          fmt::format("{},{},{},{},{},{:.2f},{:.2f},{:.2f}\n", r.bytes, r.count, r.type,
                      r.algorithm, r.protocol, r.time.microseconds(), r.algbw_GBps, r.busbw_GBps);
  } else if (format == "json") {
    out.push_back('[');
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto& r = rows[i];
      out += fmt::format(
          "{}\n  {{\"bytes\": {}, \"count\": {}, \"type\": \"{}\", \"redop\": \"{}\", "
          "\"algorithm\": \"{}\", \"protocol\": \"{}\", \"channels\": {}, \"time_us\": {:.3f}, "
          "\"algbw_GBps\": {:.3f}, \"busbw_GBps\": {:.3f}}}",
          i == 0 ? "" : ",", r.bytes, r.count, r.type, r.redop, r.algorithm, r.protocol, r.channels,
          r.time.microseconds(), r.algbw_GBps, r.busbw_GBps);
    }
    out += rows.empty() ? "]\n" : "\n]\n";
  } else if (format == "table") {
    out += fmt::format("#{:>13} {:>13} {:>8} {:>6} {:>16} {:>8} {:>4} {:>12} {:>11} {:>11}\n",
                       "size(B)", "count", "type", "redop", "algorithm", "protocol", "ch",
                       "time(us)", "algbw(GB/s)", "busbw(GB/s)");
    for (const auto& r : rows)
      out += fmt::format(
          " {:>13} {:>13} {:>8} {:>6} {:>16} {:>8} {:>4} {:>12.2f} {:>11.2f} "
          "{:>11.2f}\n",
          r.bytes, r.count, r.type, r.redop, r.algorithm, r.protocol, r.channels,
          r.time.microseconds(), r.algbw_GBps, r.busbw_GBps);
  } else {
    throw InputError("format",
                     fmt::format("unknown format '{}' (expected table, csv or json)", format));
  }
  return out;
}

}  // namespace lockstep
