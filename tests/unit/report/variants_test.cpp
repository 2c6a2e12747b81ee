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

TEST(Variants, SubstitutesIntoACopyOfTheCluster) {
  const ArgNode cluster = yaml("builder: preset\nfabric: ib-ndr\nnodes: 32\n", "cluster");
  std::vector<std::string> keys;
  const auto v = parse_variants(yaml("fabric: [roce-400g, tcp]\n", "variants"), keys);
  const ArgNode tcp = apply_variant(cluster, v[1]);
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
  const ArgNode changed = apply_variant(cluster, v[0]);
  EXPECT_EQ(changed.at("site").at("fabric").text(), "tcp");
  EXPECT_EQ(changed.at("site").at("nodes").text(), "4");
  const auto bad = parse_variants(yaml("builder.fabric: [tcp]\n", "variants"), keys);
  EXPECT_THROW(apply_variant(cluster, bad[0]), InputError);  // builder is not a map
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

TEST(Variants, ErrorsNameTheLocation) {
  std::vector<std::string> keys;
  const std::vector<std::string> bad = {
      "fabric: []\n",                                          // nothing to compare
      "- {name: a, fabric: x}\n- {name: a, fabric: y}\n",      // duplicate names
      "- tcp\n",                                               // list item not a map
      "- {name: only}\n",                                      // changes nothing
      "a: [1,2,3,4]\nb: [1,2,3,4]\nc: [1,2,3,4]\nd: [1,2]\n",  // 128 > 64 variants
      "fabric..x: [1]\n",                                      // malformed key
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
