// YAML -> ArgNode: every node keeps its dotted path and its 1-based file:line:column.
#include "lockstep/config/yaml_reader.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "../core/error_of.hpp"

namespace lockstep {
namespace {

TEST(YamlArgs, ScalarsKeepPathAndOneBasedLocation) {
  // "  k: 4" on line 2: the value '4' starts at column 6 (two spaces, 'k', ':', ' ').
  const ArgNode root = parse_yaml_args("cluster:\n  k: 4\n", "a.yaml");
  const ArgNode& k = root.at("cluster").at("k");
  EXPECT_EQ(k.text(), "4");
  EXPECT_EQ(k.path(), "cluster.k");
  EXPECT_EQ(k.where().str(), "a.yaml:2:6");
  EXPECT_EQ(k.as_int(0, 10), 4);
}

TEST(YamlArgs, MapValueIsLocatedAtItsKey) {
  // A nested map starts on the next line; errors about it point at its key, line 1 column 1.
  const ArgNode root = parse_yaml_args("cluster:\n  k: 4\n", "a.yaml");
  EXPECT_EQ(root.at("cluster").where().str(), "a.yaml:1:1");
  EXPECT_EQ(root.at("cluster").kind(), ArgNode::Kind::Map);
}

TEST(YamlArgs, ListItemsGetIndexedPaths) {
  const ArgNode root = parse_yaml_args("sites:\n  - k: 4\n  - k: 6\n", "s.yaml", "cluster");
  const ArgNode& sites = root.at("sites");
  ASSERT_EQ(sites.kind(), ArgNode::Kind::List);
  ASSERT_EQ(sites.items().size(), 2u);
  const ArgNode& second_k = sites.items()[1].at("k");
  EXPECT_EQ(second_k.path(), "cluster.sites[1].k");
  // Line 3 is "  - k: 6": '6' is the 8th character.
  EXPECT_EQ(second_k.where().str(), "s.yaml:3:8");
}

TEST(YamlArgs, NullAndEmptyValuesBecomeEmptyScalars) {
  const ArgNode root = parse_yaml_args("a:\nb: ~\nc: null\n", "n.yaml");
  for (const char* key : {"a", "b", "c"}) {
    EXPECT_EQ(root.at(key).kind(), ArgNode::Kind::Scalar) << key;
    EXPECT_EQ(root.at(key).text(), "") << key;
  }
  // The empty value of 'a' is reported at its key (line 1), not at the next line.
  EXPECT_EQ(root.at("a").where().str(), "n.yaml:1:1");
}

TEST(YamlArgs, KeyOrderIsPreserved) {
  const ArgNode root = parse_yaml_args("z: 1\na: 2\nm: 3\n", "o.yaml");
  EXPECT_EQ(root.keys(), (std::vector<std::string>{"z", "a", "m"}));
}

TEST(YamlArgs, DuplicateKeyIsAnErrorAtTheSecondOccurrence) {
  const std::string message =
      error_of([] { parse_yaml_args("cluster:\n  k: 4\n  k: 8\n", "d.yaml"); });
  EXPECT_EQ(message, "d.yaml:3:3: cluster.k: duplicate key 'k'");
}

TEST(YamlArgs, SyntaxErrorHasLocation) {
  // The flow sequence opened on line 1 is never closed; yaml-cpp stops at the end of input.
  const std::string message = error_of([] { parse_yaml_args("a: [1, 2\n", "s.yaml"); });
  EXPECT_NE(message.find("s.yaml:2:1: YAML syntax error"), std::string::npos) << message;
}

TEST(YamlArgs, UnterminatedStringIsASyntaxError) {
  const std::string message = error_of([] { parse_yaml_args("a: \"x", "q.yaml"); });
  EXPECT_EQ(message.rfind("q.yaml:1:", 0), 0u) << message;
  EXPECT_NE(message.find("YAML syntax error"), std::string::npos) << message;
}

TEST(YamlArgs, SecondDocumentIsRejected) {
  const std::string message = error_of([] { parse_yaml_args("a: 1\n---\nb: 2\n", "m.yaml"); });
  EXPECT_NE(message.find("m.yaml:3:1"), std::string::npos) << message;
  EXPECT_NE(message.find("only one YAML document"), std::string::npos) << message;
}

TEST(YamlArgs, ComplexKeyIsRejected) {
  const std::string message = error_of([] { parse_yaml_args("? [a, b]\n: 1\n", "c.yaml"); });
  EXPECT_NE(message.find("map key must be a plain name"), std::string::npos) << message;
}

TEST(YamlArgs, EmptyTextIsAnEmptyDocument) {
  EXPECT_TRUE(is_empty_document(parse_yaml_args("", "e.yaml")));
  EXPECT_TRUE(is_empty_document(parse_yaml_args("# only a comment\n", "e.yaml")));
  EXPECT_FALSE(is_empty_document(parse_yaml_args("a: 1\n", "e.yaml")));
}

TEST(YamlArgs, AliasBombIsStoppedByTheValueLimit) {
  // Level i is a list of two aliases of level i-1, so it expands to 2^(i+2) - 1 values and the
  // whole document to about 2^(n+3). With n = 10 that is ~8,000 values, over a limit of 1,000
  // (the default limit of 4,000,000 works the same way, only slower to reach in a test).
  std::string text = "l0: &a0 [x, x]\n";
  for (int i = 1; i <= 10; ++i) {
    text += fmt::format("l{}: &a{} [*a{}, *a{}]\n", i, i, i - 1, i - 1);
  }
  EXPECT_NO_THROW(parse_yaml_args(text, "bomb.yaml", "", 20'000));
  const std::string message = error_of([&] { parse_yaml_args(text, "bomb.yaml", "", 1000); });
  EXPECT_NE(message.find("document too large (more than 1000 values)"), std::string::npos)
      << message;
}

TEST(YamlArgs, StrayCommaIsASyntaxErrorNotAnEndlessStreamOfDocuments) {
  // yaml-cpp 0.7 never consumes a ',' outside [...] or {...}: LoadAll looped on it until
  // bad_alloc. The error points at the comma itself, after whatever precedes it.
  EXPECT_EQ(error_of([] { parse_yaml_args(",", "c.yaml"); }),
            "c.yaml:1:1: YAML syntax error: ',' outside a flow collection ([...] or {...})");
  EXPECT_NE(
      error_of([] { parse_yaml_args("a: 1\n,\n", "c.yaml"); }).find("c.yaml:2:1: YAML syntax"),
      std::string::npos);
  // "&x ," : the empty node starts at the anchor (column 1), the comma is at column 4.
  EXPECT_NE(error_of([] { parse_yaml_args("&x ,", "c.yaml"); }).find("c.yaml:1:4: YAML syntax"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_yaml_args("--- ,", "c.yaml"); }).find("c.yaml:1:5: YAML syntax"),
            std::string::npos);
}

TEST(YamlArgs, AliasesAreBudgetedInBytes) {
  // One 100,000-character string anchored and aliased N times: each copy costs its 100,000
  // bytes of text (plus a few hundred of node and path), so 100 copies (~10 MB) fit in the
  // 16 MiB alias budget (16,777,216 bytes) and 200 copies (~20 MB) do not.
  const std::string big = "s: &s " + std::string(100'000, 'x') + "\n";
  auto copies = [&](int n) {
    std::string text = big + "l:\n";
    for (int i = 0; i < n; ++i) text += "  - *s\n";
    return text;
  };
  EXPECT_NO_THROW(parse_yaml_args(copies(100), "b.yaml"));
  const std::string message = error_of([&] { parse_yaml_args(copies(200), "b.yaml"); });
  EXPECT_NE(message.find("aliases (*name) expand the document past 100000 values or 16 MiB"),
            std::string::npos)
      << message;
}

TEST(YamlArgs, AliasesAreBudgetedInValues) {
  // Level i = [*a(i-1), *a(i-1)]: its two aliases copy 2 x (2^(i+1) - 1) values, about 2^(n+3)
  // over n levels: n = 12 copies ~32,000 values (under 100,000), n = 15 ~262,000 (over).
  auto bomb = [](int n) {
    std::string text = "l0: &a0 [x, x]\n";
    for (int i = 1; i <= n; ++i)
      text += fmt::format("l{}: &a{} [*a{}, *a{}]\n", i, i, i - 1, i - 1);
    return text;
  };
  EXPECT_NO_THROW(parse_yaml_args(bomb(12), "bomb.yaml"));
  EXPECT_NE(error_of([&] { parse_yaml_args(bomb(15), "bomb.yaml"); }).find("aliases (*name)"),
            std::string::npos);
}

TEST(YamlArgs, AnAnchorUsedInsideItselfIsRefused) {
  // The alias makes a cycle: its expansion stops at the nesting limit, not at memory's end.
  EXPECT_NE(error_of([] { parse_yaml_args("a: &a [*a]\n", "r.yaml"); }).find("nested too deeply"),
            std::string::npos);
}

TEST(YamlArgs, DeepNestingIsRefusedBeforeTheStackRunsOut) {
  EXPECT_NE(error_of([] { parse_yaml_args(std::string(5000, '['), "d.yaml"); }).find("d.yaml:1:"),
            std::string::npos);
  EXPECT_NE(
      error_of([] { parse_yaml_args(std::string(5000, '['), "d.yaml"); }).find("nested too deeply"),
      std::string::npos);
}

}  // namespace
}  // namespace lockstep
