// The training trace is valid trace-event JSON (every event has ph, ts, pid, tid and name;
// complete slices have a non-negative duration; begin/end slices balance per thread) and shows
// the iteration the simulation computed.
#include "lockstep/report/trace.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "../workload/test_cluster.hpp"
#include "lockstep/topology/faults.hpp"

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

// Total duration of rank `pid`'s compute-track slices whose name starts with `prefix`, in us,
// and their count.
std::pair<double, int> slices_of(const nlohmann::json& doc, int pid, const std::string& prefix) {
  double us = 0;
  int n = 0;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] != "X" || e["pid"] != pid || e["tid"] != 0) continue;
    if (e["name"].get<std::string>().rfind(prefix, 0) != 0) continue;
    us += e["dur"].get<double>();
    ++n;
  }
  return {us, n};
}

TEST(Trace, PipelineAndEndWaitsAreWaitSlices) {
  // Pipe transfers take 1 ms (2 MiB at 2 GiB/s). Stage 1 (layer 1 + head: F 2, B 4 ms): waits
  // 0-2 for micro-batch 0, F0 2-4, B0 4-8, F1 8-10, B1 10-14, sends 14-15, then waits 15-17 for
  // stage 0's last backward (15-17). Stage 0 waits 2-9 and 11-15 for gradients: 11 ms.
  const auto doc = nlohmann::json::parse(report::training_trace_json(traced_pipeline()));
  EXPECT_NEAR(slices_of(doc, 1, "wait: pipeline stage").first, 2000.0, 1e-6);
  EXPECT_NEAR(slices_of(doc, 1, "wait: slowest rank").first, 2000.0, 1e-6);
  EXPECT_NEAR(slices_of(doc, 0, "wait: pipeline stage").first, 11000.0, 1e-6);
  EXPECT_EQ(slices_of(doc, 0, "wait: slowest rank").second, 0);
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == "X" && e["name"].get<std::string>().rfind("wait", 0) == 0) {
      EXPECT_EQ(e["cat"], "wait");
    }
  }
}

TEST(Trace, DualPipePairsDrawTheirBackwardOnATrackOfItsOwn) {
  // pp 2, m 4: rank 0 runs F0.0 F1.0 F0.1 B1.0 F1.1&B0.0 B1.1 b0.1 W0.1 (DualPipe tests), rank 1
  // the mirror image, F0.1&B1.0 its pair. The pair's backward, on stage 0's layer 0 for either
  // (direction 0's micro-batch 0, direction 1's 0 = micro-batch 2 of the step), is drawn on tid
  // 3; no track's slices overlap, though the pair's two passes run at once.
  TrainConfig c = testing::tiny_config(1, 2, 1, 4);
  c.pipeline = PipelineSchedule::DualPipe;
  c.trace_ranks = {0, 1};
  SimulateOptions o =
      testing::reference_options(Time::zero(), Bandwidth::bytes_per_second(2'097'152'000));
  o.record_timeline = true;
  const auto doc = nlohmann::json::parse(
      report::training_trace_json(simulate_training(testing::star_cluster(1, 2), c, o)));
  std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> tracks;
  std::map<int, std::vector<std::string>> paired;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] != "X") continue;
    const double ts = e["ts"], dur = e["dur"];
    tracks[{e["pid"], e["tid"]}].push_back({ts, ts + dur});
    if (e["tid"] == 3) paired[e["pid"]].push_back(e["name"]);
  }
  for (auto& [track, slices] : tracks) {
    std::sort(slices.begin(), slices.end());
    for (std::size_t i = 1; i < slices.size(); ++i)
      EXPECT_LE(slices[i - 1].second, slices[i].first + 1e-6) << track.first << " " << track.second;
  }
  EXPECT_NE(std::find(paired[0].begin(), paired[0].end(), "B mb0 L0"), paired[0].end());
  EXPECT_NE(std::find(paired[1].begin(), paired[1].end(), "B mb2 L0"), paired[1].end());
}

TEST(Trace, LayerDetailDrawsOneSlicePerLayerPass) {
  // Stage 0 runs layer 0 forward and backward on 2 micro-batches: 4 passes of two kernels each
  // (attention, MLP). Default: 4 slices; trace_detail op: 8; the same 6 ms either way.
  TrainConfig c = testing::tiny_config(1, 2, 1, 2);
  c.trace_ranks = {0};
  SimulateOptions o =
      testing::reference_options(Time::zero(), Bandwidth::bytes_per_second(2'097'152'000));
  o.record_timeline = true;
  const Topology topo = testing::star_cluster(1, 2);
  const auto layer =
      nlohmann::json::parse(report::training_trace_json(simulate_training(topo, c, o)));
  c.trace_ops = true;
  const auto op = nlohmann::json::parse(report::training_trace_json(simulate_training(topo, c, o)));
  for (const char* pass : {"F", "B"}) {
    EXPECT_EQ(slices_of(layer, 0, pass).second, 2);
    EXPECT_EQ(slices_of(op, 0, pass).second, 4);
  }
  EXPECT_NEAR(slices_of(layer, 0, "F").first + slices_of(layer, 0, "B").first, 6000.0, 1e-6);
  EXPECT_NEAR(slices_of(op, 0, "F").first + slices_of(op, 0, "B").first, 6000.0, 1e-6);
}

TEST(Trace, TheSlowGpuIsMarkedAndItsTpPeerWaitsForIt) {
  // TP 2 in reduced expansion with noise: the group runs as one program rank at its slowest
  // member's pace. Rank 1 is twice as slow; a layer's forward takes 0.5 ms per rank at full
  // speed (tp 2 halves the tiny model's 1 ms), so over F 2 x 0.5 + head 0.5 and B 2 x 1 + head 1
  // rank 0 computes 4.5 ms and waits 4.5 ms for rank 1, which computes 9 ms and never waits
  // for a peer.
  TrainConfig c = testing::tiny_config(2, 1, 2, 2);
  c.expansion = Expansion::Reduced;
  c.trace_ops = true;
  c.trace_ranks = {0, 1, 2, 3};
  c.faults.push_back(parse_fault("slow-gpu:rank=1,x=2", "faults"));
  SimulateOptions o =
      testing::reference_options(Time::zero(), Bandwidth::bytes_per_second(2'097'152'000));
  o.record_timeline = true;
  const TrainResult r = simulate_training(testing::star_cluster(1, 4), c, o);
  const auto doc = nlohmann::json::parse(report::training_trace_json(r));
  const double f0 = slices_of(doc, 0, "F").first + slices_of(doc, 0, "B").first;
  const double f1 = slices_of(doc, 1, "F").first + slices_of(doc, 1, "B").first;
  EXPECT_NEAR(f0, 4500.0, 1e-3);
  EXPECT_NEAR(slices_of(doc, 0, "wait: TP peer rank 1").first, 4500.0, 1e-3);
  EXPECT_NEAR(f1, 9000.0, 1e-3);
  EXPECT_EQ(slices_of(doc, 1, "wait: TP peer").second, 0);
  // Ranks 2 and 3 (replica 1, full speed) are drawn from their own replica's run, and their
  // gradients wait for replica 0's slow group: a data-parallel wait replica 0 does not have.
  EXPECT_NEAR(slices_of(doc, 2, "F").first + slices_of(doc, 2, "B").first, 4500.0, 1e-3);
  EXPECT_EQ(slices_of(doc, 2, "wait: TP peer").second, 0);
  EXPECT_GT(slices_of(doc, 2, "wait: data-parallel").first, 4000.0);
  int marked = 0;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] != "M" || e["name"] != "process_name") continue;
    const std::string name = e["args"]["name"];
    EXPECT_EQ(name.find("SLOW") != std::string::npos, e["pid"] == 1) << name;
    marked += name.find("SLOW GPU x2.00") != std::string::npos;
    EXPECT_EQ(e["args"]["slowdown"].get<double>(), e["pid"] == 1 ? 2.0 : 1.0);
  }
  EXPECT_EQ(marked, 1);
  EXPECT_EQ(r.timeline_drawn_as, (std::vector<std::uint32_t>{0, 1, 2, 3}));
}

TEST(Trace, IdenticalInputsGiveIdenticalBytes) {
  EXPECT_EQ(report::training_trace_json(traced_pipeline()),
            report::training_trace_json(traced_pipeline()));
}

}  // namespace
}  // namespace lockstep
