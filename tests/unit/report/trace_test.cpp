// The training trace is valid trace-event JSON (every event has ph, ts, pid, tid and name;
// complete slices have a non-negative duration; begin/end slices balance per thread) and shows
// the iteration the simulation computed.
#include "lockstep/report/trace.hpp"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "../workload/test_cluster.hpp"

namespace lockstep {
namespace {

TrainResult traced_pipeline() {
  // The 2-stage pipeline of the workload tests (iteration 17 ms; stage 0 computes 6 ms).
  TrainConfig c = testing::tiny_config(1, 2, 1, 2);
  c.trace_ranks = {0, 1};
  SimulateOptions o =
      testing::reference_options(Time::zero(), Bandwidth::bytes_per_second(2'097'152'000));
  o.record_timeline = true;
  return simulate_training(testing::star_cluster(1, 2), c, o);
}

TEST(Trace, IsValidTraceEventJson) {
  const auto doc = nlohmann::json::parse(report::training_trace_json(traced_pipeline()));
  ASSERT_TRUE(doc.contains("traceEvents"));
  std::map<std::pair<int, int>, int> open;  // (pid, tid) -> B minus E
  int slices = 0;
  for (const auto& e : doc["traceEvents"]) {
    for (const char* key : {"ph", "ts", "pid", "tid", "name"}) {
      ASSERT_TRUE(e.contains(key)) << key << " missing in " << e.dump();
    }
    const std::string ph = e["ph"];
    ASSERT_TRUE(ph == "X" || ph == "B" || ph == "E" || ph == "M" || ph == "C") << ph;
    EXPECT_GE(e["ts"].get<double>(), 0.0);
    const auto thread = std::make_pair(e["pid"].get<int>(), e["tid"].get<int>());
    if (ph == "X") {
      ASSERT_TRUE(e.contains("dur"));
      EXPECT_GE(e["dur"].get<double>(), 0.0);
      ++slices;
    }
    if (ph == "B") ++open[thread];
    if (ph == "E") {
      EXPECT_GE(--open[thread], 0);
    }
  }
  for (const auto& [thread, depth] : open) EXPECT_EQ(depth, 0);
  EXPECT_GT(slices, 0);
}

TEST(Trace, SlicesShowTheSimulatedIteration) {
  // Rank 0 (stage 0) computes F 0-1, F 1-2, B 9-11, B 15-17 ms: 6 ms of kernels, last end 17 ms.
  const auto doc = nlohmann::json::parse(report::training_trace_json(traced_pipeline()));
  double compute_us = 0, last_end_us = 0;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] != "X" || e["pid"] != 0) continue;
    const std::string cat = e["cat"];
    if (cat == "forward" || cat == "backward") compute_us += e["dur"].get<double>();
    last_end_us = std::max(last_end_us, e["ts"].get<double>() + e["dur"].get<double>());
  }
  EXPECT_NEAR(compute_us, 6000.0, 1e-6);
  EXPECT_NEAR(last_end_us, 17000.0, 1e-6);
}

TEST(Trace, IdenticalInputsGiveIdenticalBytes) {
  EXPECT_EQ(report::training_trace_json(traced_pipeline()),
            report::training_trace_json(traced_pipeline()));
}

}  // namespace
}  // namespace lockstep
