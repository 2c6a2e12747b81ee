#pragma once
// nccl-tests logs read back (`lockstep calibrate --from log.txt`, docs/nccl-tests.md): the result
// rows of any nccl-tests binary, each predicted on a cluster and compared with what was measured.
//
//   std::ifstream in("log.txt");
//   const NcclTestsLog log = read_nccl_tests_log(in, "log.txt");
//   const auto rows = compare_nccl_tests_log(log, nccl_cluster(preset), nullptr, {});
//   const CalibrationSummary s = summarise(rows);  // s.median_pct, s.p90_pct
#include <cstdint>
#include <istream>
#include <optional>
#include <string>
#include <vector>

#include "lockstep/nccl/sweep.hpp"

namespace lockstep {

/// One result row of the log: its out-of-place group (nccl-tests' headline numbers), or its
/// in-place group when read with `in_place`.
struct NcclTestsLogRow {
  int line = 0;  // 1-based line in the file
  CollectiveOp op = CollectiveOp::AllReduce;
  std::uint64_t bytes = 0;
  std::uint64_t count = 0;
  DataType type = DataType::Float32;
  std::string redop;  // sum, prod, ..., none
  int root = -1;      // -1 when the op has none, or the log has no root column
  double time_us = 0;
  double algbw_GBps = 0;
  double busbw_GBps = 0;
  int time_decimals = 2;  // as printed (%7.2f, %7.1f, %7.0f): the measurement's resolution
};

struct NcclTestsLog {
  std::string file;
  std::vector<NcclTestsLogRow> rows;
  std::uint32_t ranks = 0;  // from the "#  Rank N ..." lines (highest N + 1), 0 without them
  int ranks_line = 0;       // the first of those lines
  // Rows of types lockstep has no size for (half, uint64, fp8 in a -d all log), passed over.
  std::size_t unmodelled_rows = 0;
  std::vector<std::string> unmodelled_types;
};

/// Reads a log: result rows (size count type redop [root] then time algbw busbw #wrong per
/// group), the op from each "# Collective test starting: X_perf" line unless `op` is given, the
/// ranks from the "#  Rank" lines; NCCL INFO / WARN lines, other comments and mpirun's
/// "[1,0]<stdout>:" and srun's "0: " prefixes are skipped, rows of size 0 and of types lockstep
/// lacks too (counted). InputError at file:line:column for a malformed row, a row before any op
/// is known, no rows (of a type lockstep has) at all, or a row
/// without an in-place group when `in_place` asks for it.
NcclTestsLog read_nccl_tests_log(std::istream& in, const std::string& file,
                                 std::optional<CollectiveOp> op = std::nullopt,
                                 bool in_place = false);

/// How to predict the log's rows: the algorithm and protocol (nullopt: as NCCL's tuner picks, as
/// a log without NCCL_ALGO / NCCL_PROTO ran), the engine, SHARP.
struct CalibrationRequest {
  std::optional<Algorithm> algo;
  std::optional<nccl::Proto> proto;
  std::string engine = "analytical";
  bool sharp = false;
  std::string algo_field = "--algo";
};

/// One size of a log beside lockstep's prediction (not scenario/calibration_row.hpp's
/// CalibrationRow, a row of the calibration CSVs: one name for two types broke the ODR).
struct LogComparison {
  NcclTestsLogRow measured;
  CollectiveRow predicted;  // its time rounded as the log prints it (time_decimals)
  double error_pct = 0;     // (predicted - measured) / measured x 100
};

/// The one-size sweep that predicts `row` (its errors located at the row's line).
CollectiveSweep calibration_sweep(const NcclTestsLog& log, const NcclTestsLogRow& row,
                                  const CalibrationRequest& request);

/// Predicts every row on `cluster` (on `topology` for the flow and packet engines). InputError
/// at the log's rank lines when the log ran another number of ranks than the cluster has.
std::vector<LogComparison> compare_nccl_tests_log(const NcclTestsLog& log,
                                                  const NcclCluster& cluster,
                                                  const Topology* topology,
                                                  const CalibrationRequest& request);

struct CalibrationSummary {
  std::size_t rows = 0;
  double median_pct = 0;  // of |error|
  double p90_pct = 0;     // nearest rank: the smallest |error| 90% of rows do not exceed
  double max_pct = 0;
};
CalibrationSummary summarise(const std::vector<LogComparison>& rows);

}  // namespace lockstep
