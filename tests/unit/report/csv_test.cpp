#include "lockstep/report/csv.hpp"

#include <gtest/gtest.h>

#include "sample_results.hpp"

namespace lockstep::report {
namespace {

using testing::sample_results;

const CsvTable* find(const std::vector<CsvTable>& tables, const std::string& name) {
  for (const auto& t : tables) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

TEST(Csv, FieldsQuotedOnlyWhenNeeded) {
  EXPECT_EQ(csv_field("plain"), "plain");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(csv_field(""), "");
}

TEST(Csv, NumbersShortestRoundTrip) {
  EXPECT_EQ(csv_number(0.5), "0.5");
  EXPECT_EQ(csv_number(400.5), "400.5");
  EXPECT_EQ(csv_number(1e6), "1000000");
  EXPECT_EQ(csv_number(0.1 + 0.2), "0.30000000000000004");  // exact, not rounded for display
  EXPECT_EQ(csv_number(std::numeric_limits<double>::quiet_NaN()), "");
}

TEST(Csv, WholeTableText) {
  const CsvTable t{"x", {"a", "b"}, {{"1", "two, three"}, {"4", "5"}}};
  EXPECT_EQ(to_csv(t), "a,b\n1,\"two, three\"\n4,5\n");
}

TEST(Csv, CollectivesTableHasNcclTestsColumns) {
  const auto tables = results_tables(sample_results());
  const CsvTable* c = find(tables, "collectives");
  ASSERT_NE(c, nullptr);
  ASSERT_EQ(c->rows.size(), 2u);
  EXPECT_EQ(to_csv(*c).substr(0, to_csv(*c).find('\n')),
            "variant,op,requested_algorithm,engine,bytes,count,type,algorithm,protocol,time_us,"
            "algbw_GBps,busbw_GBps");
  EXPECT_EQ(c->rows[1][4], "1073741824");
  EXPECT_EQ(c->rows[1][11], "400.5");
}

TEST(Csv, EveryRowAsWideAsItsHeader) {
  for (const auto& t : results_tables(sample_results())) {
    for (const auto& row : t.rows) EXPECT_EQ(row.size(), t.header.size()) << t.name;
  }
}

TEST(Csv, JitterCdfSteps) {
  // 4 sorted samples: the empirical CDF reaches 1/4, 2/4, 3/4, 4/4.
  const auto tables = results_tables(sample_results());
  const CsvTable* j = find(tables, "jitter_cdf");
  ASSERT_NE(j, nullptr);
  ASSERT_EQ(j->rows.size(), 4u);
  EXPECT_EQ(j->rows[0][3], "0.25");
  EXPECT_EQ(j->rows[3][3], "1");
  EXPECT_EQ(j->rows[2][2], "1200000");
}

TEST(Csv, EmptyTablesLeftOut) {
  RunResults empty;
  empty.variants.push_back(Variant{});
  const auto tables = results_tables(empty);
  EXPECT_EQ(find(tables, "collectives"), nullptr);
  EXPECT_EQ(find(tables, "training"), nullptr);
  EXPECT_NE(find(tables, "summary"), nullptr);
}

TEST(Csv, HeatmapBucketsStartAtMultiplesOfWidth) {
  const auto tables = results_tables(sample_results());
  const CsvTable* h = find(tables, "link_utilisation");
  ASSERT_NE(h, nullptr);
  ASSERT_EQ(h->rows.size(), 2u);
  EXPECT_EQ(h->rows[1][2], "10");  // second 10 us bucket starts at 10 us
  EXPECT_EQ(h->rows[1][3], "1");
}

}  // namespace
}  // namespace lockstep::report
