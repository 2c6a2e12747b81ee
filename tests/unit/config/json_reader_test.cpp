// JSON -> ArgNode: the same tree and locations as from YAML, and a strict grammar.
#include "lockstep/config/json_reader.hpp"

#include <gtest/gtest.h>

#include <string>

#include "../core/error_of.hpp"

namespace lockstep {
namespace {

TEST(JsonArgs, ValuesKeepLocations) {
  const std::string text = "{\n  \"devices\": [\n    {\"id\": \"g0\", \"kind\": \"gpu\"}\n  ]\n}\n";
  const ArgNode root = parse_json_args(text, "g.json", "cluster");
  const ArgNode& kind = root.at("devices").items()[0].at("kind");
  EXPECT_EQ(kind.text(), "gpu");
  EXPECT_EQ(kind.path(), "cluster.devices[0].kind");
  // Line 3 is '    {"id": "g0", "kind": "gpu"}': 4 spaces, '{' at 5, "id" 6-9, ':' 10,
  // "g0" 12-15, ',' 16, "kind" 18-23, ':' 24, so the value "gpu" starts at column 26.
  EXPECT_EQ(kind.where().str(), "g.json:3:26");
}

TEST(JsonArgs, NumbersAndBooleansAreScalars) {
  const ArgNode root = parse_json_args("{\"n\": 12, \"x\": -1.5e3, \"b\": true}", "v.json");
  EXPECT_EQ(root.at("n").as_int(0, 100), 12);
  EXPECT_DOUBLE_EQ(root.at("x").as_double(-1e9, 1e9), -1500.0);
  EXPECT_TRUE(root.at("b").as_bool());
}

TEST(JsonArgs, SyntaxErrorOffsetBecomesLineAndColumn) {
  // Line 3 is '  "b": 2,}': "b" 3-5, ':' 6, '2' 8, ',' 9; the parser wants another key and stops
  // at the '}' in column 10.
  const std::string text = "{\n  \"a\": 1,\n  \"b\": 2,}\n";
  const std::string message = error_of([&] { parse_json_args(text, "j.json"); });
  EXPECT_EQ(message.rfind("j.json:3:10: JSON syntax error", 0), 0u) << message;
}

TEST(JsonArgs, TrailingGarbageIsAnError) {
  const std::string message = error_of([] { parse_json_args("{\"a\": 1} x", "t.json"); });
  EXPECT_EQ(message.rfind("t.json:1:10: JSON syntax error", 0), 0u) << message;
}

TEST(JsonArgs, DuplicateKeyIsAnError) {
  const std::string message = error_of([] { parse_json_args("{\"a\": 1, \"a\": 2}", "d.json"); });
  EXPECT_EQ(message, "d.json:1:10: a: duplicate key 'a'");
}

TEST(JsonArgs, StringEscapesAndEmptyContainers) {
  // \u00e9 is U+00E9 (UTF-8 C3 A9); \ud83d\ude00 is the surrogate pair of U+1F600 (F0 9F 98 80).
  const ArgNode root = parse_json_args(
      R"({"s": "a\"b\\c\/\n\u00e9\ud83d\ude00", "o": {}, "l": [], "z": null})", "e.json");
  EXPECT_EQ(root.at("s").text(), "a\"b\\c/\n\xC3\xA9\xF0\x9F\x98\x80");
  EXPECT_EQ(root.at("o").kind(), ArgNode::Kind::Map);
  EXPECT_TRUE(root.at("l").items().empty());
  EXPECT_EQ(root.at("z").text(), "");
}

TEST(JsonArgs, StrictGrammar) {
  // Each is invalid JSON; the column is where the reader stops.
  EXPECT_EQ(
      error_of([] { parse_json_args("[01]", "n.json"); }),
      "n.json:1:3: JSON syntax error: unexpected '1' (expected ']' or ',' after a list item)");
  EXPECT_EQ(error_of([] { parse_json_args("{\"a\": tru}", "l.json"); }),
            "l.json:1:7: JSON syntax error: unexpected 't' (expected a value)");
  EXPECT_EQ(error_of([] { parse_json_args("{a: 1}", "k.json"); }),
            "k.json:1:2: JSON syntax error: unexpected 'a' (expected a quoted key)");
  EXPECT_EQ(error_of([] { parse_json_args("[1, 2", "t.json"); }),
            "t.json:1:6: JSON syntax error: unexpected end of file (expected ']' or ',' after a "
            "list item)");
  EXPECT_EQ(error_of([] { parse_json_args("\"a\tb\"", "c.json"); }),
            "c.json:1:3: JSON syntax error: control character in a string");
}

}  // namespace
}  // namespace lockstep
