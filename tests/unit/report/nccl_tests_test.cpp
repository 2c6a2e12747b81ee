// nccl-tests' text layout (report/nccl_tests.hpp), held to the printf formats of nccl-tests'
// src/common.cu: the expected lines below are those formats applied by hand.
#include "lockstep/report/nccl_tests.hpp"

#include <gtest/gtest.h>

#include <string>

namespace lockstep::report {
namespace {

SweepRow row(std::uint64_t bytes, std::uint64_t count, double us, double algbw, double busbw) {
  SweepRow r;
  r.bytes = bytes;
  r.count = count;
  r.type = "float";
  r.redop = "sum";
  r.time_us = us;
  r.algbw_GBps = algbw;
  r.busbw_GBps = busbw;
  return r;
}

bool has(const std::string& text, const std::string& line) {
  return text.find(line) != std::string::npos;
}

TEST(NcclTestsFormat, ColumnsAsNcclTestsPrintsThem) {
  NcclTestsHeader h;
  h.min_bytes = 1048576;
  h.max_bytes = 134217728;
  h.step = "128(factor)";
  h.gpus = 8;
  h.ranks = 16;
  h.gpus_per_node = 8;
  h.gpu = "h100";
  const std::string out = format_nccl_tests(h, {{{row(1048576, 262144, 48.01, 21.84, 38.22),
                                                  row(134217728, 33554432, 12345.6, 10.87, 19.03)},
                                                 -1}});
  EXPECT_EQ(out.rfind("# Collective test starting: all_reduce_perf\n# nThread 1 nGpus 8 minBytes "
                      "1048576 maxBytes 134217728 step: 128(factor) warmup iters: 1 iters: 20 agg "
                      "iters: 1 validation: 0 graph: 0\n#\n# Using devices\n",
                      0),
            0u);
  // Rank 9 is node 1's second GPU.
  EXPECT_TRUE(
      has(out, "#  Rank  9 Group  0 Pid      0 on      node1 device  1 [0000:00:00] h100\n"));
  EXPECT_TRUE(has(out,
                  "#                                                              out-of-place"
                  "                       in-place          \n"));
  EXPECT_TRUE(has(out,
                  "#       size         count      type   redop    root     time   algbw   "
                  "busbw #wrong     time   algbw   busbw #wrong\n"));
  EXPECT_TRUE(has(out,
                  "#        (B)    (elements)                               (us)  (GB/s)  "
                  "(GB/s)            (us)  (GB/s)  (GB/s)       \n"));
  // %7.2f below 100 us, %7.0f from 10 ms; the in-place group repeats the out-of-place one.
  EXPECT_TRUE(has(out,
                  "     1048576        262144     float     sum      -1    48.01   21.84   "
                  "38.22    N/A    48.01   21.84   38.22    N/A\n"));
  EXPECT_TRUE(has(out,
                  "   134217728      33554432     float     sum      -1    12346   10.87   "
                  "19.03    N/A    12346   10.87   19.03    N/A\n"));
  // The mean busbw of the four groups: (38.22 + 19.03) / 2 = 28.625.
  EXPECT_TRUE(has(out, "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 28.625 \n#\n"));
}

TEST(NcclTestsFormat, TimeKeepsNcclTestsDigits) {
  EXPECT_EQ(nccl_tests_time(99.994), "  99.99");
  EXPECT_EQ(nccl_tests_time(104.94), "  104.9");
  EXPECT_EQ(nccl_tests_time(9999.94), " 9999.9");
  EXPECT_EQ(nccl_tests_time(10000.4), "  10000");
}

}  // namespace
}  // namespace lockstep::report
