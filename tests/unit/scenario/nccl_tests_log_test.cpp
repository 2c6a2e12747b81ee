// nccl-tests logs read back and compared with the prediction (scenario/nccl_tests_log.hpp).
#include "lockstep/scenario/nccl_tests_log.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "../core/error_of.hpp"
#include "lockstep/topology/presets.hpp"

namespace lockstep {
namespace {

NcclCluster two_hgx_h100() {
  PresetRequest r;
  r.system = "hgx-h100";
  r.fabric = "ib-ndr";
  r.nodes = 2;
  return nccl_cluster(resolve_preset(r));
}

NcclTestsLog read(const std::string& text, std::optional<CollectiveOp> op = std::nullopt) {
  std::istringstream in(text);
  return read_nccl_tests_log(in, "log.txt", op);
}

// A log as a 2-node run prints it, with the chatter around the rows that must be skipped.
const char* const kLog =
    "node1:1234:1234 [0] NCCL INFO Bootstrap : Using ib0:10.0.0.1<0>\n"
    "# Collective test starting: all_reduce_perf\n"
    "# nThread 1 nGpus 8 minBytes 8 maxBytes 32 step: 2(factor) warmup iters: 5 iters: 20 agg "
    "iters: 1 validation: 1 graph: 0\n"
    "#\n"
    "# Using devices\n"
    "#  Rank  0 Group  0 Pid  41234 on      node1 device  0 [0000:18:00] NVIDIA H100 80GB HBM3\n"
    "#  Rank 15 Group  0 Pid  51234 on      node2 device  7 [0000:db:00] NVIDIA H100 80GB HBM3\n"
    "node1:1234:1250 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.0.0.1<0>\n"
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
    "time   algbw   busbw #wrong\n"
    "           8             2     float     sum      -1    40.00    0.00    0.00      0    "
    "39.50    0.00    0.00      0\n"
    "node2:77:77 [3] NCCL WARN Cuda failure 'out of memory' (a warning, not a row)\n"
    "[1,0]<stdout>:          16             4     float     sum      -1    45.20    0.00    "
    "0.00      0    45.00    0.00    0.00      0\n"
    "          32             8     float     sum      -1    50.00    0.00    0.00    N/A    "
    "50.00    0.00    0.00    N/A\n"
    "# Out of bounds values : 0 OK\n"
    "# Avg bus bandwidth    : 0 \n";

TEST(NcclTestsLog, ReadsRowsAndSkipsChatter) {
  const NcclTestsLog log = read(kLog);
  ASSERT_EQ(log.rows.size(), 3u);
  EXPECT_EQ(log.ranks, 16u);  // "#  Rank 15": ranks 0 .. 15
  EXPECT_EQ(log.ranks_line, 6);
  EXPECT_EQ(log.rows[0].line, 10);
  EXPECT_EQ(log.rows[0].op, CollectiveOp::AllReduce);
  EXPECT_EQ(log.rows[1].bytes, 16u);  // behind mpirun's tag
  EXPECT_EQ(log.rows[1].time_us, 45.2);
  EXPECT_EQ(log.rows[2].root, -1);
  EXPECT_EQ(log.rows[2].time_decimals, 2);
}

// srun -l's "12: " tag is cut, and columns stay the file's; half rows are counted and passed.
TEST(NcclTestsLog, SrunTagsAndUnmodelledTypes) {
  const NcclTestsLog log = read(
      "# Collective test starting: all_reduce_perf\n"
      " 0:            8             2     float     sum      -1    40.00    0.00    0.00      0\n"
      " 0:            8             4      half     sum      -1    40.00    0.00    0.00      0\n");
  ASSERT_EQ(log.rows.size(), 1u);
  EXPECT_EQ(log.rows[0].time_us, 40.0);
  EXPECT_EQ(log.unmodelled_rows, 1u);
  EXPECT_EQ(log.unmodelled_types, std::vector<std::string>{"half"});
  const std::string e = error_of([] {
    read("# Collective test starting: all_reduce_perf\n12: 8 2 float sum -1 fast 0 0 0\n");
  });
  EXPECT_NE(e.find("log.txt:2:22: time: 'fast'"), std::string::npos) << e;
}

// 8, 16 and 32 B all-reduce on 2 x 8 H100 by hand (tests/unit/nccl/transport_test.cpp): tree LL,
// 20 launch + baseLat 6.8 + 2 x (7 x 0.6 + 5.0) = 45.20 us (the bytes take under 1 ns). Against
// 40, 45.2 and 50 us: (45.2 - 40) / 40 = +13%, 0, (45.2 - 50) / 50 = -9.6%; |error| median 9.6,
// p90 (nearest rank 3 of 3) 13, max 13.
TEST(NcclTestsLog, HandWrittenLogGivesHandComputedErrors) {
  const auto rows = compare_nccl_tests_log(read(kLog), two_hgx_h100(), nullptr, {});
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_NEAR(rows[0].predicted.time.microseconds(), 45.2, 1e-9);
  EXPECT_NEAR(rows[0].error_pct, 13.0, 1e-9);
  EXPECT_NEAR(rows[1].error_pct, 0.0, 1e-9);
  EXPECT_NEAR(rows[2].error_pct, -9.6, 1e-9);
  const CalibrationSummary s = summarise(rows);
  EXPECT_EQ(s.rows, 3u);
  EXPECT_NEAR(s.median_pct, 9.6, 1e-9);
  EXPECT_NEAR(s.p90_pct, 13.0, 1e-9);
  EXPECT_NEAR(s.max_pct, 13.0, 1e-9);
}

// --in-place reads the second group: 39.50 us at 8 B.
TEST(NcclTestsLog, InPlaceGroup) {
  std::istringstream in(kLog);
  const NcclTestsLog log = read_nccl_tests_log(in, "log.txt", std::nullopt, true);
  EXPECT_EQ(log.rows.at(0).time_us, 39.5);
  std::istringstream one("# Collective test starting: all_reduce_perf\n8 2 float sum -1 4 0 0 0\n");
  EXPECT_NE(error_of([&] {
              read_nccl_tests_log(one, "log.txt", std::nullopt, true);
            }).find("log.txt:2:25: the row has no in-place group"),
            std::string::npos);
}

TEST(NcclTestsLog, RankCountMustMatchTheCluster) {
  PresetRequest r;
  r.system = "hgx-h100";
  const std::string e = error_of(
      [&] { compare_nccl_tests_log(read(kLog), nccl_cluster(resolve_preset(r)), {}, {}); });
  EXPECT_NE(e.find("log.txt:6:1: the log ran 16 ranks"), std::string::npos) << e;
}

TEST(NcclTestsLog, OldLayoutWithoutRootAndTheOpFromTheFlag) {
  // nccl-tests before 2.11: no root column, no "Collective test starting" line.
  const std::string old =
      "     1048576        262144     float     sum    48.01   21.84   38.22  0e+00    48.00   "
      "21.84   38.22  0e+00\n";
  EXPECT_EQ(read(old, CollectiveOp::AllGather).rows.at(0).op, CollectiveOp::AllGather);
  EXPECT_EQ(read(old, CollectiveOp::AllGather).rows.at(0).root, -1);
  const std::string e = error_of([&] { read(old); });
  EXPECT_NE(e.find("log.txt:1:6: the log does not name its collective"), std::string::npos) << e;
}

TEST(NcclTestsLog, MalformedLogsFailAtTheirLine) {
  const std::string head = "# Collective test starting: all_gather_perf\n";
  auto error = [&](const std::string& body) { return error_of([&] { read(head + body); }); };
  // Too few columns, a time that is no number, a type lockstep lacks, no rows at all.
  EXPECT_NE(error("8 2 float sum -1 40.0 0.00\n").find("log.txt:2:1: expected an nccl-tests row"),
            std::string::npos);
  EXPECT_NE(error("8 2 float sum -1 fast 0 0 0 1 0 0 0\n").find("log.txt:2:18: time: 'fast'"),
            std::string::npos);
  // Only types lockstep lacks: nothing to compare (a -d all log's half rows are passed over).
  EXPECT_NE(error("8 4 half sum -1 4 0 0 0 4 0 0 0\n8 4 half sum -1 4 0 0 0 4 0 0 0\n")
                .find("log.txt:3:1: no rows of a type lockstep models (2 rows of half;"),
            std::string::npos);
  EXPECT_NE(error("# nothing ran\n").find("log.txt:2:1: no nccl-tests result rows"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              read("# Collective test starting: all_mix_perf\n");
            }).find("log.txt:1:29: unknown collective 'all_mix_perf'"),
            std::string::npos);
}

}  // namespace
}  // namespace lockstep
