// A sweep's record and its three formats: nccl-tests' table, CSV, and the JSON results.json and
// `lockstep collective --format json` share.
#include "lockstep/report/collective_rows.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "lockstep/core/error.hpp"
#include "lockstep/report/json.hpp"
#include "lockstep/topology/presets.hpp"

namespace lockstep::report {
namespace {

// One all-reduce row by hand: 1 MiB of floats (262,144 elements) in 50 us on a ring over 2
// channels: algbw = 1,048,576 B / 50 us = 20.97152 GB/s.
CollectiveSweep spec() {
  CollectiveSweep s;
  s.op = CollectiveOp::AllReduce;
  s.algo = Algorithm::Ring;
  s.engine = "flow";
  return s;
}

CollectiveRow row() {
  CollectiveRow r;
  r.bytes = 1048576;
  r.count = 262144;
  r.type = "float";
  r.redop = "sum";
  r.algorithm = "ring";
  r.protocol = "Simple";
  r.channels = 2;
  r.time = Time::us(50);
  r.algbw_GBps = 20.97152;
  r.busbw_GBps = 36.70016;  // x 2 (8 - 1) / 8 on 8 ranks
  return r;
}

TEST(CollectiveRows, RecordCarriesEveryColumn) {
  const Sweep s = sweep_record(spec(), {row()});
  EXPECT_EQ(s.op, "all_reduce");
  EXPECT_EQ(s.algorithm, "ring");
  EXPECT_EQ(s.engine, "flow");
  ASSERT_EQ(s.rows.size(), 1u);
  EXPECT_DOUBLE_EQ(s.rows[0].time_us, 50.0);
  EXPECT_EQ(s.rows[0].redop, "sum");
  EXPECT_EQ(s.rows[0].channels, 2u);
}

TEST(CollectiveRows, CsvAndTableLinesAreExact) {
  const Sweep s = sweep_record(spec(), {row()});
  EXPECT_EQ(format_collective_rows(s, "csv"),
            "bytes,count,type,algorithm,protocol,time_us,algbw_GBps,busbw_GBps\n"
            "1048576,262144,float,ring,Simple,50.00,20.97,36.70\n");
  const std::string table = format_collective_rows(s, "table");
  EXPECT_EQ(table.substr(table.find('\n') + 1),
            "       1048576        262144    float    sum             ring   Simple    2"
            "        50.00       20.97       36.70\n");
  EXPECT_THROW(format_collective_rows(s, "json"), InputError);
}

TEST(CollectiveRows, JsonIsOneShapeWithExactKeys) {
  const nlohmann::ordered_json j = sweeps_to_json({sweep_record(spec(), {row()})});
  ASSERT_EQ(j.size(), 1u);
  std::vector<std::string> keys;
  for (const auto& [key, value] : j[0].items()) keys.push_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{"op", "algorithm", "engine", "rows"}));
  keys.clear();
  for (const auto& [key, value] : j[0]["rows"][0].items()) keys.push_back(key);
  EXPECT_EQ(keys,
            (std::vector<std::string>{"bytes", "count", "type", "redop", "algorithm", "protocol",
                                      "channels", "time_us", "algbw_GBps", "busbw_GBps"}));
  const auto& r = j[0]["rows"][0];
  EXPECT_EQ(r["bytes"], 1048576);
  EXPECT_EQ(r["redop"], "sum");
  EXPECT_EQ(r["channels"], 2);
  EXPECT_DOUBLE_EQ(r["time_us"].get<double>(), 50.0);
  EXPECT_DOUBLE_EQ(r["algbw_GBps"].get<double>(), 20.97152);
  // Exactly the sweep results.json holds for a variant.
  RunResults results;
  results.variants.push_back({});
  results.variants[0].sweeps.push_back(sweep_record(spec(), {row()}));
  EXPECT_EQ(results_to_json(results)["variants"][0]["collectives"], j);
}

TEST(CollectiveRows, CsvHeaderIsExact) {
  CollectiveSweep s;
  s.min_bytes = Bytes::mib(1);
  s.max_bytes = Bytes::mib(2);
  const NcclCluster c = nccl_cluster(resolve_preset({.system = "hgx-h100"}));
  const auto rows = run_collective_sweep(s, c);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].count, 262144u);  // 1 MiB of floats
  const std::string csv = format_collective_rows(sweep_record(s, rows), "csv");
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "bytes,count,type,algorithm,protocol,time_us,algbw_GBps,busbw_GBps");
  EXPECT_EQ(csv.substr(csv.find('\n') + 1, 21), "1048576,262144,float,");
  EXPECT_THROW(format_collective_rows(sweep_record(s, rows), "xml"), InputError);
}

}  // namespace
}  // namespace lockstep::report
