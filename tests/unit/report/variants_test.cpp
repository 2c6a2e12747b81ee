#include "lockstep/report/variants.hpp"

#include <gtest/gtest.h>

#include "lockstep/config/yaml_reader.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/report/run.hpp"

namespace lockstep::report {
namespace {

ArgNode yaml(const std::string& text, const std::string& root) {
  return parse_yaml_args(text, "test.yaml", root);
}

TEST(Variants, NoSectionIsOneBaseVariant) {
  std::vector<std::string> keys;
  const auto v = parse_variants(std::nullopt, keys);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].name, "base");
  EXPECT_TRUE(keys.empty());
}

TEST(Variants, MapOfListsIsTheProductFirstKeySlowest) {
  std::vector<std::string> keys;
  const auto v =
      parse_variants(yaml("fabric: [ib-ndr, tcp]\nnodes: [16, 64, 256]\n", "variants"), keys);
  // 2 fabrics x 3 node counts = 6 variants, fabric varying slowest.
  ASSERT_EQ(v.size(), 6u);
  EXPECT_EQ(keys, (std::vector<std::string>{"fabric", "nodes"}));
  EXPECT_EQ(v[0].name, "fabric=ib-ndr, nodes=16");
  EXPECT_EQ(v[2].name, "fabric=ib-ndr, nodes=256");
  EXPECT_EQ(v[3].name, "fabric=tcp, nodes=16");
  EXPECT_EQ(v[5].shown[1].second, "256");
}

RunInput with_cluster(const ArgNode& cluster) {
  RunInput in;
  in.cluster = cluster;
  return in;
}

TEST(Variants, SubstitutesIntoACopyOfTheCluster) {
  const ArgNode cluster = yaml("builder: preset\nfabric: ib-ndr\nnodes: 32\n", "cluster");
  std::vector<std::string> keys;
  const auto v = parse_variants(yaml("fabric: [roce-400g, tcp]\n", "variants"), keys);
  const ArgNode tcp = apply_variant(with_cluster(cluster), v[1]).cluster;
  EXPECT_EQ(tcp.at("fabric").text(), "tcp");
  EXPECT_EQ(tcp.at("nodes").text(), "32");
  // The key keeps its place in the map; the original cluster is untouched.
  EXPECT_EQ(tcp.keys(), (std::vector<std::string>{"builder", "fabric", "nodes"}));
  EXPECT_EQ(cluster.at("fabric").text(), "ib-ndr");
}

TEST(Variants, DottedKeysReachNestedMaps) {
  const ArgNode cluster =
      yaml("builder: multi_site\nsite:\n  fabric: ib-ndr\n  nodes: 4\n", "cluster");
  std::vector<std::string> keys;
  const auto v = parse_variants(yaml("site.fabric: [tcp]\n", "variants"), keys);
  const ArgNode changed = apply_variant(with_cluster(cluster), v[0]).cluster;
  EXPECT_EQ(changed.at("site").at("fabric").text(), "tcp");
  EXPECT_EQ(changed.at("site").at("nodes").text(), "4");
  const auto bad = parse_variants(yaml("builder.fabric: [tcp]\n", "variants"), keys);
  EXPECT_THROW(apply_variant(with_cluster(cluster), bad[0]), InputError);  // builder: a scalar
}

TEST(Variants, AnySectionOfTheScenario) {
  RunInput in = with_cluster(yaml("builder: preset\nnodes: 2\n", "cluster"));
  in.job = yaml("model: llama3-8b\ntp: 8\n", "job");
  in.collectives = yaml("- {op: all_reduce, max_bytes: 1MiB}\n- {op: all_gather}\n", "collectives");
  in.seed = 1;
  std::vector<std::string> keys;
  const auto v = parse_variants(
      yaml("- {job.tp: 4, collectives.1.op: broadcast, engine: flow, seed: 7, nodes: 4}\n",
           "variants"),
      keys);
  EXPECT_EQ(keys,
            (std::vector<std::string>{"job.tp", "collectives.1.op", "engine", "seed", "nodes"}));
  const RunInput out = apply_variant(in, v[0]);
  EXPECT_EQ(out.job->at("tp").text(), "4");
  EXPECT_EQ(out.job->at("model").text(), "llama3-8b");
  EXPECT_EQ(out.collectives->items()[0].at("op").text(), "all_reduce");  // item 0 untouched
  EXPECT_EQ(out.collectives->items()[1].at("op").text(), "broadcast");
  EXPECT_EQ(out.engine->text(), "flow");
  EXPECT_EQ(out.seed, 7u);
  EXPECT_EQ(out.cluster.at("nodes").text(), "4");
  EXPECT_EQ(in.job->at("tp").text(), "8");  // the base is a copy
  // A path the scenario lacks: no job section, list index out of range, a scalar stepped into.
  const std::vector<std::string> bad = {"- {job.tp: 2}\n", "- {collectives.2.op: x}\n",
                                        "- {job.tp.x: 1}\n"};
  RunInput no_job = in;
  no_job.job.reset();
  for (const auto& text : bad) {
    const auto b = parse_variants(yaml(text, "variants"), keys);
    const RunInput& base = text == bad[0] ? no_job : in;
    try {
      apply_variant(base, b[0]);
      ADD_FAILURE() << "accepted: " << text;
    } catch (const InputError& e) {
      EXPECT_TRUE(e.where().known()) << text << " -> " << e.what();
    }
  }
}

TEST(Variants, ScenarioKeyPath) {
  const ArgNode where = yaml("x: 1\n", "variants");
  EXPECT_EQ(scenario_key_path("job.tp", where, false), (std::vector<std::string>{"job", "tp"}));
  EXPECT_EQ(scenario_key_path("fabric", where, true),
            (std::vector<std::string>{"cluster", "fabric"}));
  EXPECT_THROW(scenario_key_path("fabric", where, false), InputError);  // a sweep names sections
  EXPECT_THROW(scenario_key_path("report.title", where, true), InputError);
  EXPECT_THROW(scenario_key_path("seed.x", where, true), InputError);
}

TEST(Variants, ExplicitListWithNames) {
  std::vector<std::string> keys;
  const auto v = parse_variants(
      yaml("- {name: InfiniBand, fabric: ib-ndr}\n- {fabric: tcp, nics_per_node: 4}\n", "variants"),
      keys);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].name, "InfiniBand");
  EXPECT_EQ(v[1].name, "fabric=tcp, nics_per_node=4");
  EXPECT_EQ(keys, (std::vector<std::string>{"fabric", "nics_per_node"}));
}

TEST(Variants, NoCapOnTheCount) {
  // 4 x 4 x 4 x 2 = 128 variants (64 was the cap before every section could vary).
  std::vector<std::string> keys;
  const auto v = parse_variants(
      yaml("a: [1,2,3,4]\nb: [1,2,3,4]\nc: [1,2,3,4]\nd: [1,2]\n", "variants"), keys);
  EXPECT_EQ(v.size(), 128u);
  EXPECT_EQ(v[127].name, "a=4, b=4, c=4, d=2");
}

TEST(Variants, ErrorsNameTheLocation) {
  std::vector<std::string> keys;
  const std::vector<std::string> bad = {
      "fabric: []\n",                                      // nothing to compare
      "- {name: a, fabric: x}\n- {name: a, fabric: y}\n",  // duplicate names
      "- tcp\n",                                           // list item not a map
      "- {name: only}\n",                                  // changes nothing
      "fabric..x: [1]\n",                                  // malformed key
  };
  for (const auto& text : bad) {
    try {
      parse_variants(yaml(text, "variants"), keys);
      ADD_FAILURE() << "accepted: " << text;
    } catch (const InputError& e) {
      EXPECT_TRUE(e.where().known()) << text << " -> " << e.what();
    }
  }
}

TEST(Downsample, AveragesRunsAndKeepsShortSeries) {
  // 6 values into 3 buckets: pairs (0,1) (2,3) (4,5) -> 0.5, 2.5, 4.5.
  EXPECT_EQ(downsample({0, 1, 2, 3, 4, 5}, 3), (std::vector<double>{0.5, 2.5, 4.5}));
  // 5 into 2: [0,2) and [2,5) -> (1+1)/2 = 1 and (4+4+4)/3 = 4.
  EXPECT_EQ(downsample({1, 1, 4, 4, 4}, 2), (std::vector<double>{1, 4}));
  EXPECT_EQ(downsample({1, 2}, 5), (std::vector<double>{1, 2}));
}

TEST(ReportOptions, DefaultsAndValidation) {
  EXPECT_EQ(parse_report_options(std::nullopt).busiest_links, 12u);
  const auto o = parse_report_options(yaml("title: My run\nbusiest_links: 4\n", "report"));
  EXPECT_EQ(o.title, "My run");
  EXPECT_EQ(o.busiest_links, 4u);
  EXPECT_THROW(parse_report_options(yaml("busiest_links: 0\n", "report")), InputError);
  EXPECT_THROW(parse_report_options(yaml("colour: red\n", "report")), InputError);
}

}  // namespace
}  // namespace lockstep::report
