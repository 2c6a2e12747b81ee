#include "lockstep/scenario/scenario.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <limits>

#include "lockstep/config/args_file.hpp"
#include "lockstep/config/yaml_reader.hpp"

namespace lockstep {
namespace {

// A section that must be a map (`cluster:`, `job:` ...); an empty value is called out as such
// because "expected a map, got a value" reads oddly for `cluster:` with nothing after it.
const ArgNode& require_map(const ArgNode& node, const std::string& key) {
  if (node.kind() == ArgNode::Kind::Map) return node;
  if (node.kind() == ArgNode::Kind::Scalar && node.text().empty()) {
    node.fail(fmt::format("'{}' is empty (expected a map of settings)", key));
  }
  node.fail(fmt::format("expected a map of settings, got {}", kind_name(node.kind())));
}

const std::string& require_scalar(const ArgNode& node) {
  if (node.kind() != ArgNode::Kind::Scalar) {
    node.fail(fmt::format("expected a text value, got {}", kind_name(node.kind())));
  }
  return node.text();
}

std::string stem_of(const std::string& filename) {
  return std::filesystem::path(filename).stem().string();
}

void check_version(const ArgNode& root) {
  const ArgNode* version = root.find("version");
  if (version == nullptr) {
    throw InputError(
        "version",
        fmt::format("missing 'version: {}' (the scenario schema version)", kScenarioVersion),
        SourceLocation{root.where().file, 1, 1});
  }
  if (version->kind() != ArgNode::Kind::Scalar || version->text() != "1") {
    version->fail(fmt::format("unsupported scenario version '{}' (this lockstep reads version {})",
                              version->kind() == ArgNode::Kind::Scalar ? version->text() : "?",
                              kScenarioVersion));
  }
}

void check_known_keys(const ArgNode& root) {
  const auto& known = scenario_top_level_keys();
  for (const auto& key : root.keys()) {
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      const ArgNode& node = *root.find(key);
      node.fail(fmt::format("unknown top-level key '{}' (expected one of {})", key,
                            fmt::join(known, ", ")));
    }
  }
}

// A section owned by a later layer. Each accepts a map; some also a list (several collectives,
// several variants) or a bare name (engine: flow).
enum Accepts : unsigned { kMap = 1, kList = 2, kName = 4 };

std::optional<ArgNode> optional_section(const ArgNode& root, const std::string& key,
                                        unsigned accepts) {
  const ArgNode* node = root.find(key);
  if (node == nullptr) return std::nullopt;
  const bool empty = node->kind() == ArgNode::Kind::Scalar && node->text().empty();
  const bool ok = (node->kind() == ArgNode::Kind::Map && (accepts & kMap)) ||
                  (node->kind() == ArgNode::Kind::List && (accepts & kList)) ||
                  (node->kind() == ArgNode::Kind::Scalar && !empty && (accepts & kName));
  if (ok) return *node;
  std::vector<std::string> expected;
  if (accepts & kMap) expected.push_back("a map");
  if (accepts & kList) expected.push_back("a list");
  if (accepts & kName) expected.push_back("a name");
  node->fail(fmt::format("expected {}, got {}", fmt::join(expected, " or "),
                         empty ? "nothing" : kind_name(node->kind())));
}

// `type:` names what the job simulates: a training step (`train`, the default) or inference
// serving (`inference`, docs/inference.md); any other word is refused rather than run as one.
void check_job_type(const ArgNode& job) {
  const ArgNode* type = job.find("type");
  if (type == nullptr) return;
  require_scalar(*type);
  type->as_choice({"train", "inference"});
}

}  // namespace

const std::vector<std::string>& scenario_top_level_keys() {
  static const std::vector<std::string> keys{"version", "name",     "description", "seed",
                                             "cluster", "engine",   "packet",      "collectives",
                                             "job",     "variants", "report"};
  return keys;
}

Scenario parse_scenario(std::string_view text, const std::string& filename) {
  const ArgNode root = parse_yaml_args(text, filename);
  if (is_empty_document(root)) {
    throw InputError("", "the scenario file is empty (expected 'version: 1' and 'cluster:')",
                     SourceLocation{filename, 1, 1});
  }
  if (root.kind() != ArgNode::Kind::Map) {
    root.fail(
        fmt::format("a scenario must be a map of top-level keys, got {}", kind_name(root.kind())));
  }
  check_version(root);
  check_known_keys(root);

  Scenario s;
  s.file = filename;
  s.name = stem_of(filename);
  if (const ArgNode* name = root.find("name")) s.name = require_scalar(*name);
  if (const ArgNode* description = root.find("description")) {
    s.description = require_scalar(*description);
  }
  if (const ArgNode* seed = root.find("seed")) {
    s.seed = static_cast<std::uint64_t>(seed->as_int(0, std::numeric_limits<std::int64_t>::max()));
    s.seed_given = true;
  }
  const ArgNode* cluster = root.find("cluster");
  if (cluster == nullptr) {
    throw InputError("cluster", "missing required key 'cluster' (the machine to simulate)",
                     SourceLocation{filename, 1, 1});
  }
  s.cluster = require_map(*cluster, "cluster");
  s.engine = optional_section(root, "engine", kMap | kName);
  s.packet = optional_section(root, "packet", kMap);
  s.collectives = optional_section(root, "collectives", kMap | kList);
  s.job = optional_section(root, "job", kMap);
  if (s.job) check_job_type(*s.job);
  s.variants = optional_section(root, "variants", kMap | kList);
  s.report = optional_section(root, "report", kMap);
  return s;
}

Scenario load_scenario(const std::string& path) {
  return parse_scenario(read_text_file(path, "scenario"), path);
}

}  // namespace lockstep
