#pragma once
// nccl-tests' own text (docs/nccl-tests.md): `lockstep collective --format nccl-tests` prints a
// sweep as an all_reduce_perf run would, header to footer, so that scripts written for nccl-tests
// read it; `lockstep calibrate` prints a log's rows beside lockstep's prediction.
//
//   NcclTestsHeader h;  // program, ranks, GPUs, sizes, step
//   fmt::print("{}", format_nccl_tests(h, sweep.rows));
#include <cstdint>
#include <string>
#include <vector>

#include "lockstep/report/results.hpp"
#include "lockstep/scenario/nccl_tests_log.hpp"

namespace lockstep::report {

/// The header nccl-tests prints before its rows (src/common.cu).
struct NcclTestsHeader {
  std::string program = "all_reduce_perf";  // "# Collective test starting: ..."
  long threads = 1, gpus = 1;               // nThread, nGpus (per process)
  std::uint64_t min_bytes = 0, max_bytes = 0;
  std::string step = "2(factor)";  // "2(factor)" or "1048576(bytes)"
  long warmup = 1, iters = 20, agg_iters = 1, graph = 0;
  // "#  Using devices": rank r runs on node r / gpus_per_node, device r % gpus_per_node.
  std::uint32_t ranks = 0, gpus_per_node = 1;
  std::string gpu;  // the catalog's name of the GPU
};

/// One rows block: the rows of one sweep with their root (-1 for ops without one).
struct NcclTestsBlock {
  std::vector<SweepRow> rows;
  int root = -1;
};

/// The whole log: header, "#  Using devices", the two-line column header, each row with its
/// out-of-place and in-place groups (the same prediction: lockstep models no copy between user
/// and NCCL buffers), #wrong N/A, and the "# Out of bounds values" / "# Avg bus bandwidth"
/// footer (the mean busbw of every group printed).
std::string format_nccl_tests(const NcclTestsHeader& header,
                              const std::vector<NcclTestsBlock>& blocks);
/// nccl-tests' time column: %7.0f from 10 ms, %7.1f from 100 us, else %7.2f.
std::string nccl_tests_time(double us);

/// `lockstep calibrate`'s output of the compared rows: "table" (with a summary line), "csv" or
/// "json" (rows and summary). `title` names the log and cluster in the table's first line.
std::string format_calibration(const std::vector<LogComparison>& rows, const std::string& title,
                               const std::string& format);

}  // namespace lockstep::report
