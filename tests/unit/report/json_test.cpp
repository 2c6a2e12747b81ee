#include "lockstep/report/json.hpp"

#include <gtest/gtest.h>

#include <limits>

#include "sample_results.hpp"

namespace lockstep::report {
namespace {

using testing::sample_results;

TEST(ResultsJson, TopLevelKeysInFixedOrder) {
  const auto j = results_to_json(sample_results());
  std::vector<std::string> keys;
  for (const auto& [key, value] : j.items()) keys.push_back(key);
  EXPECT_EQ(keys,
            (std::vector<std::string>{"schema_version", "lockstep_version", "title", "scenario",
                                      "seed", "variant_keys", "summary", "variants", "notes"}));
  EXPECT_EQ(j["schema_version"], kResultsSchemaVersion);
  EXPECT_EQ(j["seed"], 7);
}

TEST(ResultsJson, UnitsConvertedIntoKeyedFields) {
  const auto inv = results_to_json(sample_results())["variants"][0]["inventory"];
  // 400 Gb/s = 50e9 bytes/s = 50 GB/s; 2.5 us stays 2.5 in a *_us key.
  EXPECT_DOUBLE_EQ(inv["injection_per_gpu_GBps"].get<double>(), 50.0);
  EXPECT_DOUBLE_EQ(inv["max_one_way_latency_us"].get<double>(), 2.5);
  // Line totals: 8 switches x $25,000 = $200,000 and 8 x 5 W = 40 W.
  EXPECT_DOUBLE_EQ(inv["lines"][0]["cost_usd"].get<double>(), 200000.0);
  EXPECT_DOUBLE_EQ(inv["lines"][0]["power_w"].get<double>(), 40.0);
}

TEST(ResultsJson, SummaryTakesLargestMessageAndJitterTail) {
  const auto s = results_to_json(sample_results())["summary"];
  ASSERT_EQ(s.size(), 2u);
  EXPECT_DOUBLE_EQ(s[0]["peak_busbw_GBps"].get<double>(), 400.5);  // the 1 GiB row, not 1 KiB
  EXPECT_EQ(s[0]["peak_busbw_op"], "all_reduce");
  EXPECT_DOUBLE_EQ(s[0]["p99_iteration_time_us"].get<double>(), 1.3e6);
  // The TCP variant ran nothing: its figures are null, not zero.
  EXPECT_TRUE(s[1]["peak_busbw_GBps"].is_null());
  EXPECT_TRUE(s[1]["iteration_time_us"].is_null());
  EXPECT_TRUE(results_to_json(sample_results())["variants"][1]["training"].is_null());
}

TEST(ResultsJson, NonFiniteNumbersBecomeNull) {
  auto r = sample_results();
  r.variants[0].sweeps[0].rows[0].busbw_GBps = std::numeric_limits<double>::infinity();
  r.variants[0].training->mfu = std::numeric_limits<double>::quiet_NaN();
  const auto j = results_to_json(r);
  EXPECT_TRUE(j["variants"][0]["collectives"][0]["rows"][0]["busbw_GBps"].is_null());
  EXPECT_TRUE(j["variants"][0]["training"]["mfu"].is_null());
}

TEST(ResultsJson, DeterministicAndRoundTrips) {
  const std::string a = results_json_text(sample_results());
  EXPECT_EQ(a, results_json_text(sample_results()));
  ASSERT_FALSE(a.empty());
  EXPECT_EQ(a.back(), '\n');
  const auto parsed = nlohmann::json::parse(a);
  EXPECT_EQ(parsed["variants"][0]["collectives"][0]["rows"][1]["bytes"].get<std::uint64_t>(),
            1u << 30);
  EXPECT_EQ(parsed["scenario"]["text"], sample_results().scenario_text);
}

TEST(ResultsJson, InvalidUtf8InScenarioIsReplacedNotThrown) {
  auto r = sample_results();
  r.scenario_text = "name: \xff\xfe";
  EXPECT_NO_THROW(results_json_text(r));
}

}  // namespace
}  // namespace lockstep::report
