// Robustness: randomly damaged scenario and graph files must give an InputError (exit code 2) or
// a valid build, never another exception, a crash or a sanitizer report. A deterministic,
// in-test cousin of a fuzzer: the same seed damages the files the same way on every run.
#include <gtest/gtest.h>

#include "lockstep/config/json_reader.hpp"
#include "lockstep/core/rng.hpp"
#include "lockstep/scenario/scenario.hpp"
#include "lockstep/topology/builder.hpp"

namespace lockstep {
namespace {

const char* kScenario = R"(version: 1
name: mutant
seed: 3
cluster:
  builder: multi_site
  distance: 5km
  capacity: 800Gbps
  sites:
    a: {builder: fat_tree, k: 4}
    b:
      builder: from_file
      link_defaults: {bandwidth: 400Gbps, length: 3m}
      devices:
        - {id: g0, kind: gpu, node: 0}
        - {id: g1, kind: gpu, node: 1}
        - {id: s0, kind: switch, tier: 0}
      links:
        - {a: g0, b: s0}
        - {a: g1, b: s0, latency: 1us}
)";

const char* kJson = R"({"devices": [{"id": "g0", "kind": "gpu", "node": 0},
  {"id": "g1", "kind": "gpu", "node": 1}],
 "links": [{"a": "g0", "b": "g1", "bandwidth": "100Gbps", "length": "2m"}]})";

// One random edit: delete, insert or replace a byte, or duplicate a line.
std::string mutate(std::string text, Rng& rng) {
  static const std::string alphabet = ":{}[]-,\"' \n\t#&*!|>0123456789akx.";
  const std::size_t at = rng.below(text.size());
  switch (rng.below(4)) {
    case 0:
      text.erase(at, 1);
      break;
    case 1:
      text.insert(at, 1, alphabet[rng.below(alphabet.size())]);
      break;
    case 2:
      text[at] = alphabet[rng.below(alphabet.size())];
      break;
    default: {
      const std::size_t begin =
          text.rfind('\n', at) == std::string::npos ? 0 : text.rfind('\n', at);
      const std::size_t end = text.find('\n', at);
      text.insert(begin, text.substr(begin, end == std::string::npos ? end : end - begin));
    }
  }
  return text;
}

TEST(Mutation, DamagedScenariosFailCleanly) {
  Rng rng(20261122);
  BuildOptions options;
  options.want_graph = false;
  int input_errors = 0;
  for (int trial = 0; trial < 150; ++trial) {
    std::string text = kScenario;
    const auto edits = 1 + rng.below(3);
    for (std::uint64_t e = 0; e < edits; ++e) text = mutate(text, rng);
    try {
      build_topology(parse_scenario(text, "mutant.yaml").cluster, options);
    } catch (const InputError&) {
      ++input_errors;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "not an InputError: " << e.what() << "\n--- input ---\n" << text;
    }
  }
  // Most single-byte damage to this file is detectable; a few edits land in harmless places.
  EXPECT_GT(input_errors, 75);
}

TEST(Mutation, DamagedJsonFailsCleanly) {
  Rng rng(7);
  int input_errors = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const std::string text = mutate(kJson, rng);
    try {
      const ArgNode root = parse_json_args(text, "g.json", "cluster");
      ArgNode cluster = root;
      if (root.kind() == ArgNode::Kind::Map) {
        cluster.set("builder", ArgNode::scalar("from_file", "cluster.builder"));
        build_topology(cluster);
      }
    } catch (const InputError&) {
      ++input_errors;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "not an InputError: " << e.what() << "\n--- input ---\n" << text;
    }
  }
  EXPECT_GT(input_errors, 150);
}

}  // namespace
}  // namespace lockstep
