// The scenario loader: version, top-level keys, section types, and where each error points.
#include "lockstep/scenario/scenario.hpp"

#include <gtest/gtest.h>

#include <string>

#include "../core/error_of.hpp"
#include "lockstep/topology/builder.hpp"

namespace lockstep {
namespace {

TEST(Scenario, MinimalScenarioLoads) {
  const Scenario s =
      parse_scenario("version: 1\ncluster:\n  builder: fat_tree\n  k: 4\n", "dir/small.yaml");
  EXPECT_EQ(s.version, 1);
  EXPECT_EQ(s.name, "small");  // the file name without directory and extension
  EXPECT_EQ(s.seed, 1u);
  EXPECT_FALSE(s.seed_given);
  EXPECT_EQ(s.cluster.at("builder").text(), "fat_tree");
  EXPECT_EQ(s.cluster.at("k").where().str(), "dir/small.yaml:4:6");
  EXPECT_FALSE(s.job.has_value());
  EXPECT_FALSE(s.engine.has_value());
}

TEST(Scenario, OptionalSectionsAreHandedOverWithPaths) {
  const Scenario s = parse_scenario(
      "version: 1\nname: demo\ndescription: a test\nseed: 42\ncluster: {builder: torus}\n"
      "engine: {name: flow}\ncollectives: {op: all_reduce}\njob: {steps: 3}\n"
      "variants: [{name: a}]\nreport: {format: html}\n",
      "s.yaml");
  EXPECT_EQ(s.name, "demo");
  EXPECT_EQ(s.description, "a test");
  EXPECT_EQ(s.seed, 42u);
  EXPECT_TRUE(s.seed_given);
  ASSERT_TRUE(s.engine && s.collectives && s.job && s.variants && s.report);
  EXPECT_EQ(s.job->at("steps").path(), "job.steps");
  EXPECT_EQ(s.variants->kind(), ArgNode::Kind::List);
  EXPECT_EQ(s.variants->items()[0].at("name").path(), "variants[0].name");
}

TEST(Scenario, MissingVersionIsReportedAtTheTop) {
  EXPECT_EQ(error_of([] { parse_scenario("cluster: {builder: torus}\n", "v.yaml"); }),
            "v.yaml:1:1: version: missing 'version: 1' (the scenario schema version)");
}

TEST(Scenario, WrongVersionIsReportedAtTheValue) {
  EXPECT_EQ(error_of([] { parse_scenario("version: 2\ncluster: {builder: torus}\n", "v.yaml"); }),
            "v.yaml:1:10: version: unsupported scenario version '2' (this lockstep reads "
            "version 1)");
}

TEST(Scenario, UnknownTopLevelKeyNamesTheKnownOnes) {
  const std::string message =
      error_of([] { parse_scenario("version: 1\nclustr: {}\ncluster: {}\n", "u.yaml"); });
  EXPECT_EQ(message.rfind("u.yaml:2:1: clustr: unknown top-level key 'clustr' (expected one of "
                          "version, name, description, seed, cluster",
                          0),
            0u)
      << message;
}

TEST(Scenario, MissingClusterIsAnError) {
  EXPECT_EQ(error_of([] { parse_scenario("version: 1\nname: x\n", "c.yaml"); }),
            "c.yaml:1:1: cluster: missing required key 'cluster' (the machine to simulate)");
}

TEST(Scenario, ClusterMustBeAMap) {
  EXPECT_EQ(error_of([] { parse_scenario("version: 1\ncluster: [a, b]\n", "c.yaml"); }),
            "c.yaml:2:1: cluster: expected a map of settings, got a list");
  EXPECT_EQ(error_of([] { parse_scenario("version: 1\ncluster:\n", "c.yaml"); }),
            "c.yaml:2:1: cluster: 'cluster' is empty (expected a map of settings)");
}

TEST(Scenario, NameMustBeText) {
  EXPECT_EQ(error_of([] { parse_scenario("version: 1\nname: [x]\ncluster: {a: 1}\n", "n.yaml"); }),
            "n.yaml:2:1: name: expected a text value, got a list");
}

TEST(Scenario, NegativeSeedIsOutOfRange) {
  const std::string message =
      error_of([] { parse_scenario("version: 1\nseed: -3\ncluster: {a: 1}\n", "s.yaml"); });
  EXPECT_EQ(message.rfind("s.yaml:2:7: seed: -3 is out of range", 0), 0u) << message;
}

TEST(Scenario, EmptyFileAndTopLevelListAreErrors) {
  EXPECT_EQ(error_of([] { parse_scenario("", "e.yaml"); }),
            "e.yaml:1:1: the scenario file is empty (expected 'version: 1' and 'cluster:')");
  EXPECT_EQ(error_of([] { parse_scenario("- version: 1\n", "l.yaml"); }),
            "l.yaml:1:1: a scenario must be a map of top-level keys, got a list");
}

TEST(Scenario, SectionKindsAreChecked) {
  EXPECT_EQ(
      error_of([] { parse_scenario("version: 1\ncluster: {a: 1}\nvariants: 3\n", "v.yaml"); }),
      "v.yaml:3:11: variants: expected a map or a list, got a value");
  EXPECT_EQ(error_of([] { parse_scenario("version: 1\ncluster: {a: 1}\njob: [1]\n", "j.yaml"); }),
            "j.yaml:3:1: job: expected a map, got a list");
  EXPECT_EQ(error_of([] { parse_scenario("version: 1\ncluster: {a: 1}\nengine:\n", "e.yaml"); }),
            "e.yaml:3:1: engine: expected a map or a name, got nothing");
  const Scenario named = parse_scenario("version: 1\ncluster: {a: 1}\nengine: flow\n", "n.yaml");
  EXPECT_EQ(named.engine->text(), "flow");
}

TEST(Scenario, BundledScenariosParse) {
  for (const char* name :
       {"default", "fat_tree_16k", "torus_4x4x4", "gb200_nvl72_pair", "two_sites_50km"}) {
    const std::string path = std::string(LOCKSTEP_SOURCE_DIR) + "/scenarios/" + name + ".yaml";
    const Scenario s = load_scenario(path);
    EXPECT_EQ(s.cluster.kind(), ArgNode::Kind::Map) << name;
    EXPECT_FALSE(s.description.empty()) << name;
  }
}

TEST(Scenario, BundledScenariosBuildFeasibleDesigns) {
  // Only the inventory: the 16K-GPU fat tree's graph is not needed here.
  BuildOptions options;
  options.want_graph = false;
  for (const char* name : {"default", "torus_4x4x4", "gb200_nvl72_pair", "two_sites_50km"}) {
    const std::string path = std::string(LOCKSTEP_SOURCE_DIR) + "/scenarios/" + name + ".yaml";
    const BuildResult r = build_topology(load_scenario(path).cluster, options);
    EXPECT_TRUE(r.inventory.feasible) << name;
    EXPECT_GT(r.inventory.gpus, 0u) << name;
  }
  const std::string path = std::string(LOCKSTEP_SOURCE_DIR) + "/scenarios/default.yaml";
  // One SU: 32 nodes x 8 GPUs, one NIC per GPU.
  const BuildResult su = build_topology(load_scenario(path).cluster, options);
  EXPECT_EQ(su.inventory.gpus, 256u);
  EXPECT_EQ(su.inventory.nics, 256u);
  EXPECT_EQ(su.inventory.nodes, 32u);
}

TEST(Scenario, JobTypeIsTrainOrInference) {
  const std::string head = "version: 1\ncluster: {builder: torus}\njob: {model: llama3-8b, type: ";
  EXPECT_NO_THROW(parse_scenario(head + "train}\n", "j.yaml"));
  // "job: {model: llama3-8b, type: " is 30 characters (6 + 7 + 11 + 6): the value starts at
  // column 31.
  EXPECT_EQ(error_of([&] { parse_scenario(head + "banana}\n", "j.yaml"); }),
            "j.yaml:3:31: job.type: unknown value 'banana' (expected one of train, inference)");
  EXPECT_NO_THROW(parse_scenario(head + "inference}\n", "j.yaml"));
  EXPECT_NE(error_of([&] {
              parse_scenario(head + "[train]}\n", "j.yaml");
            }).find("job.type: expected a text value, got a list"),
            std::string::npos);
}
}  // namespace
}  // namespace lockstep
