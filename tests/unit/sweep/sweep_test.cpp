#include "lockstep/sweep/sweep.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "lockstep/core/error.hpp"

namespace lockstep::sweep {
namespace {

namespace fs = std::filesystem;

// A sweep file and its base in a fresh folder (the base is found beside the sweep file).
class SweepFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("lockstep_sweep_test_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    write("base.yaml",
          "version: 1\ncluster: {system: hgx-h100, fabric: ib-ndr, nodes: 1}\n"
          "collectives: [{op: all_reduce, min_bytes: 1MiB, max_bytes: 1MiB}]\n");
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
  }
  SweepPlan parse(const std::string& text) {
    write("s.yaml", text);
    return parse_sweep(text, (dir_ / "s.yaml").string(), "test");
  }
  fs::path dir_;
};

TEST(Fnv1a, PublishedVectors) {
  // FNV-1a 64: the offset basis for "", and the reference value for "a" (draft-eastlake-fnv).
  EXPECT_EQ(fnv1a_hex(""), "cbf29ce484222325");
  EXPECT_EQ(fnv1a_hex("a"), "af63dc4c8601ec8c");
}

TEST_F(SweepFiles, GridIsTheProductFirstKeySlowest) {
  const SweepPlan plan = parse(
      "scenario: base.yaml\ngrid:\n  cluster.fabric: [ib-ndr, tcp]\n"
      "  collectives.0.max_bytes: [1MiB, 2MiB, 4MiB]\n");
  ASSERT_EQ(plan.points.size(), 6u);  // 2 x 3
  EXPECT_EQ(plan.points[1].spec.name, "cluster.fabric=ib-ndr, collectives.0.max_bytes=2MiB");
  EXPECT_EQ(plan.points[3].spec.name, "cluster.fabric=tcp, collectives.0.max_bytes=1MiB");
  EXPECT_EQ(plan.keys, (std::vector<std::string>{"cluster.fabric", "collectives.0.max_bytes"}));
  EXPECT_EQ(plan.points[0].values_json,
            R"({"cluster.fabric":"ib-ndr","collectives.0.max_bytes":"1MiB"})");
  EXPECT_EQ(plan.points[0].id, fnv1a_hex(plan.points[0].values_json));
  EXPECT_EQ(plan.title, "s");
  const report::RunInput in = point_input(plan, plan.points[5]);
  EXPECT_EQ(in.cluster.at("fabric").text(), "tcp");
  EXPECT_EQ(in.collectives->items()[0].at("max_bytes").text(), "4MiB");
  EXPECT_NO_THROW(check_points(plan));
}

TEST_F(SweepFiles, PointsRunAndReadBack) {
  const SweepPlan plan =
      parse("scenario: base.yaml\npoints:\n  - {cluster.fabric: tcp}\n  - {engine: flow}\n");
  ASSERT_EQ(plan.points.size(), 2u);
  const std::string text = run_point(plan, plan.points[0]);
  write("p.json", text);
  EXPECT_TRUE(point_finished(plan, plan.points[0], dir_ / "p.json"));
  EXPECT_FALSE(point_finished(plan, plan.points[1], dir_ / "p.json"));  // other values
  SweepPlan changed = plan;
  changed.base_hash = fnv1a_hex("another base");
  EXPECT_FALSE(point_finished(changed, plan.points[0], dir_ / "p.json"));
  const report::Variant v = read_point(text);
  EXPECT_EQ(v.name, "cluster.fabric=tcp");
  ASSERT_EQ(v.sweeps.size(), 1u);
  EXPECT_EQ(v.inventory.gpus, 8u);
  const report::RunResults merged = merge_points(plan, {v, v});
  EXPECT_EQ(merged.variants[1].name, "engine=flow");  // named by the plan
  const report::CsvTable t = sweep_table(plan, merged);
  EXPECT_EQ(t.header[0], "point");
  EXPECT_EQ(t.header[1], "cluster.fabric");
  EXPECT_EQ(t.header[2], "engine");
  EXPECT_EQ(t.header[3], "gpus");
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows[0][1], "tcp");
  EXPECT_EQ(t.rows[0][2], "");  // the first point leaves the engine as the base has it
  EXPECT_EQ(t.rows[1][2], "flow");
}

TEST_F(SweepFiles, ErrorsAreLocated) {
  const std::vector<std::string> bad = {
      "scenario: base.yaml\ngrid:\n  fabric: [tcp]\n",                      // no section named
      "scenario: base.yaml\ngrid:\n  report.title: [x]\n",                  // report cannot vary
      "scenario: base.yaml\npoints: []\n",                                  // nothing to run
      "scenario: base.yaml\ngrid: {job.tp: [1]}\npoints: [{job.tp: 1}]\n",  // both
      "scenario: nope.yaml\ngrid: {cluster.nodes: [1]}\n",                  // no base
      "scenario: base.yaml\npoints: [{cluster.nodes: 1}, {cluster.nodes: 1}]\n",  // twice
      "scenario: base.yaml\ngrid: {cluster.nodes: [1]}\ncolour: red\n",           // unknown key
  };
  for (const auto& text : bad) {
    try {
      parse(text);
      ADD_FAILURE() << "accepted: " << text;
    } catch (const InputError& e) {
      EXPECT_TRUE(e.where().known()) << text << " -> " << e.what();
    }
  }
  write("varied.yaml",
        "version: 1\ncluster: {system: hgx-h100, nodes: 1}\nvariants: {fabric: [tcp]}\n");
  EXPECT_THROW(parse("scenario: varied.yaml\ngrid: {cluster.nodes: [1]}\n"), InputError);
  // A value the section rejects is found before any point runs, naming the point.
  const SweepPlan plan = parse("scenario: base.yaml\ngrid: {cluster.nodes: [1, 0]}\n");
  try {
    check_points(plan);
    ADD_FAILURE() << "nodes: 0 accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("in point 'cluster.nodes=0'"), std::string::npos)
        << e.what();
  }
}

// Llama 3 8B (Meta's model card: 32 layers, hidden 4096, MLP 14336, 32 heads, 8 KV heads of
// 128, vocabulary 128,256) on one HGX H100 (HBM3 3.35 TB/s x the catalog's 0.9 = 3.015e12 B/s),
// one request of 1,024 prompt tokens and 2 output tokens: its TPOT is one batch-1 decode step at
// context 1,025. A layer's 218,103,808 weights x 2 B / tp, its K and V ceil(8 / tp) heads x
// (128 + 128) x 2 B per token, the output layer 128,256 x 4096 x 2 B / tp:
//   TP 4: 32 x (109,051,904 + 1,025 x 1,024) + 262,668,288 = 3,785,916,416 B: 1,255.71 us;
//   TP 8: 32 x (54,525,952 + 1,025 x 512) + 131,334,144 = 1,892,958,208 B: 627.85 us;
// plus 64 all-reduces of 8 KiB, NCCL's ring LL on NVLink: 6.6 + 2 (tp - 1) x 0.6 us of latency
// (tuning.cc's baseLat and hwLat; 10.2 us at TP 4, 15.0 at TP 8) and under 0.2 us of bytes.
// The two points' makespans are TTFT + TPOT (one request, arriving at 0), 8 GPUs each.
TEST_F(SweepFiles, InferenceColumnsCarryTheBatchOneDecodeTpot) {
  write("serve.yaml",
        "version: 1\ncluster: {system: hgx-h100, fabric: ib-ndr, nodes: 1}\n"
        "job:\n  type: inference\n  model: llama3-8b\n  tp: 8\n"
        "  requests: {prompt: 1024, output: 2, concurrency: 1, count: 1}\n"
        "  batching: {max_batch: 1}\n");
  const SweepPlan plan = parse(
      "scenario: serve.yaml\npoints:\n  - {job.tp: 4, job.replicas: 2}\n"
      "  - {job.tp: 8, job.replicas: 1}\n");
  check_points(plan);
  std::vector<report::Variant> variants;
  for (const SweepPoint& p : plan.points) variants.push_back(read_point(run_point(plan, p)));
  const report::CsvTable t = sweep_table(plan, merge_points(plan, variants));
  auto column = [&](const std::string& name) {
    const auto it = std::find(t.header.begin(), t.header.end(), name);
    EXPECT_NE(it, t.header.end()) << name;
    return static_cast<std::size_t>(it - t.header.begin());
  };
  ASSERT_EQ(t.rows.size(), 2u);
  const double hbm = 0.9 * 3.35e12;
  const double kernels[] = {3'785'916'416.0 / hbm, 1'892'958'208.0 / hbm};
  const double latency[] = {10.2e-6, 15.0e-6};
  for (std::size_t i = 0; i < 2; ++i) {
    const auto& row = t.rows[i];
    const double tpot = std::stod(row[column("tpot_p50_ms")]) / 1e3;
    EXPECT_GE(tpot, kernels[i] + 64 * latency[i]) << row[0];
    EXPECT_LT(tpot, kernels[i] + 64 * (latency[i] + 0.2e-6)) << row[0];
    EXPECT_EQ(row[column("tpot_p99_ms")], row[column("tpot_p50_ms")]);  // one request
    const double ttft = std::stod(row[column("ttft_p50_ms")]) / 1e3;
    const double makespan = ttft + tpot;
    EXPECT_NEAR(std::stod(row[column("output_tokens_per_s_per_gpu")]), 2 / makespan / 8, 1e-6);
    EXPECT_NEAR(std::stod(row[column("cost_per_million_tokens_usd")]),
                8 * makespan / 3600 * 2.5 / 2e-6, 1e-6);
    EXPECT_EQ(row[column("iteration_time_us")], "");  // no training step
  }
  EXPECT_EQ(t.rows[0][column("job.tp")], "4");
}

}  // namespace
}  // namespace lockstep::sweep
