#include "lockstep/sweep/sweep.hpp"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace lockstep::sweep
