#pragma once
// A collective sweep as the report shows it: the record results.json's `collectives` and
// `lockstep collective --format json` both print (json.hpp sweeps_to_json), built from the
// sweep's rows in one place, and the nccl-tests style text of its rows.
//
//   const CollectiveSweep spec = parse_collective_sweep(args);
//   const Sweep sweep = sweep_record(spec, run_collective_sweep(spec, cluster, &topology));
//   fmt::print("{}", format_collective_rows(sweep, "csv"));
#include <string>
#include <vector>

#include "lockstep/nccl/sweep.hpp"
#include "lockstep/report/results.hpp"

namespace lockstep::report {

/// The report's record of one sweep: the op, the algorithm as requested, the engine, and each
/// row with its time in microseconds.
Sweep sweep_record(const CollectiveSweep& spec, const std::vector<CollectiveRow>& rows);

/// "table" (nccl-tests style, fixed-width) or "csv" (header
/// bytes,count,type,algorithm,protocol,time_us,algbw_GBps,busbw_GBps) of the sweep's rows; JSON
/// is json_text(sweeps_to_json(...)). InputError naming `format` for another format.
std::string format_collective_rows(const Sweep& sweep, const std::string& format);
/// The busiest links of the sweep's largest size (flow and packet engines, docs/telemetry.md),
/// as `#` comment lines after the table; empty when the row has none.
std::string format_busiest_links(const Sweep& sweep);

}  // namespace lockstep::report
