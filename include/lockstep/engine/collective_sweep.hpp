#pragma once
// One row of a collective sweep (nccl/sweep.hpp) and its table, CSV and JSON forms.
//
//   std::string csv = format_collective_rows(run_collective_sweep(sweep, cluster), "csv");
#include <cstdint>
#include <string>
#include <vector>

#include "lockstep/core/units.hpp"

namespace lockstep {

/// One nccl-tests row.
struct CollectiveRow {
  std::uint64_t bytes = 0;  // nccl-tests size
  std::uint64_t count = 0;  // elements as nccl-tests prints them (per rank for gathers)
  std::string type;         // "float"
  std::string redop;        // "sum" or "none"
  std::string algorithm;    // tuner name: ring, tree, nvls, ...
  std::string protocol;     // LL, LL128, Simple
  std::uint32_t channels = 0;
  Time time;
  double algbw_GBps = 0;
  double busbw_GBps = 0;
};

/// "table" (nccl-tests style, fixed-width), "csv" (header
/// bytes,count,type,algorithm,protocol,time_us,algbw_GBps,busbw_GBps) or "json" (an array of
/// objects with those keys plus redop and channels). InputError for another format.
std::string format_collective_rows(const std::vector<CollectiveRow>& rows,
                                   const std::string& format);

}  // namespace lockstep
