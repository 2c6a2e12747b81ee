// One resolution of "preset or builder" for every command: flags and scenario files give the
// same preset, presets are checked before anything is built, builders get their own arguments.
#include "lockstep/scenario/cluster_source.hpp"

#include <gtest/gtest.h>

#include <string>

#include "../core/error_of.hpp"

namespace lockstep {
namespace {

ArgNode map_of(std::initializer_list<std::pair<const char*, const char*>> keys) {
  ArgNode m = ArgNode::map("cluster");
  for (const auto& [key, value] : keys) m.set(key, ArgNode::scalar(value, key));
  return m;
}

TEST(ClusterSource, PresetFlagsDefaultToAnHgxH100AndNameTheirFlags) {
  ClusterFlags flags;
  flags.nodes = "2";
  const ArgNode args = preset_flag_args(flags);
  EXPECT_EQ(args.keys(), (std::vector<std::string>{"system", "nodes"}));
  EXPECT_EQ(args.at("system").text(), "hgx-h100");
  EXPECT_EQ(args.at("nodes").path(), "--nodes");
}

TEST(ClusterSource, FlagsResolveToAPresetAndItsTitle) {
  ClusterFlags flags;
  flags.fabric = "ib-ndr";
  flags.nodes = "2";
  const ClusterSource source(nullptr, flags);
  ASSERT_NE(source.preset(), nullptr);
  // hgx-h100 ships 8 GPUs per node: 2 nodes are 16 ranks.
  EXPECT_EQ(source.preset()->ranks(), 16u);
  EXPECT_EQ(source.title(nullptr), "2 x hgx-h100 (16 GPUs), ib-ndr");
  // The graph of a preset is its rail-optimised fabric.
  EXPECT_EQ(source.build_args().at("builder").text(), "rail_optimized");
  EXPECT_EQ(source.build_args().at("nodes").text(), "2");
  const BuildResult built = source.build();
  ASSERT_TRUE(built.graph.has_value());
  EXPECT_EQ(built.graph->gpus().size(), 16u);
}

TEST(ClusterSource, PresetErrorsNameTheFlag) {
  ClusterFlags flags;
  flags.gpus_per_node = "16";
  EXPECT_EQ(error_of([&] { ClusterSource(nullptr, flags); }).rfind("--gpus-per-node: ", 0), 0u);
}

TEST(ClusterSource, AScenarioAndPresetFlagsAreOneTooMany) {
  ClusterFlags flags;
  flags.scenario = "s.yaml";
  flags.fabric = "ib-ndr";
  EXPECT_EQ(error_of([&] { load_cluster_scenario(flags, "--scenario"); }),
            "scenario: give either --scenario or --system/--fabric/--nodes");
  flags.fabric.clear();
  flags.gpus_per_node = "4";  // only --system, --fabric and --nodes name a cluster of their own
  EXPECT_EQ(error_of([&] { load_cluster_scenario(flags, "a scenario file"); }),
            "scenario: cannot read 's.yaml': no such file");
  flags.scenario.clear();
  EXPECT_FALSE(load_cluster_scenario(flags, "--scenario").has_value());
}

TEST(ClusterSource, PresetOrBuilderAsBuildTopologyReadsIt) {
  EXPECT_TRUE(is_preset_cluster(map_of({{"system", "hgx-h100"}})));
  EXPECT_TRUE(is_preset_cluster(map_of({{"builder", "preset"}, {"system", "hgx-h100"}})));
  EXPECT_TRUE(is_preset_cluster(map_of({{"type", "preset"}, {"system", "hgx-h100"}})));
  EXPECT_FALSE(is_preset_cluster(map_of({{"builder", "fat_tree"}, {"system", "hgx-h100"}})));
  EXPECT_FALSE(is_preset_cluster(map_of({{"type", "fat_tree"}, {"system", "hgx-h100"}})));
  // Without a system the preset builder's defaults apply; the builder resolves it.
  EXPECT_FALSE(is_preset_cluster(map_of({{"builder", "preset"}})));
  EXPECT_FALSE(is_preset_cluster(map_of({{"k", "4"}})));
}

TEST(ClusterSource, ScenarioPresetKeysAreCheckedWhereTheyStand) {
  const Scenario s = parse_scenario(
      "version: 1\ncluster:\n  builder: preset\n  system: hgx-h100\n  colour: red\n", "p.yaml");
  EXPECT_EQ(error_of([&] { ClusterSource(&s, ClusterFlags{}); }),
            "p.yaml:5:11: cluster.colour: unknown key 'colour'");
}

TEST(ClusterSource, ABuilderClusterIsBuiltFromItsOwnArguments) {
  const Scenario s =
      parse_scenario("version: 1\ncluster: {builder: fat_tree, k: 4}\n", "dir/small.yaml");
  const ClusterSource source(&s, ClusterFlags{});
  EXPECT_EQ(source.preset(), nullptr);
  EXPECT_EQ(source.build_args().at("builder").text(), "fat_tree");
  const BuildResult built = source.build();
  ASSERT_TRUE(built.graph.has_value());
  // A k = 4 fat tree has k^3 / 4 = 16 host ports, one GPU each.
  EXPECT_EQ(built.graph->gpus().size(), 16u);
  EXPECT_EQ(source.title(&*built.graph), "small (16 GPUs)");
}

}  // namespace
}  // namespace lockstep
