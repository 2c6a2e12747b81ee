#pragma once
// A scenario file: a versioned YAML document describing a cluster and, optionally, the job to
// run on it, the engine, the variants to compare and the report to write. The loader checks the
// top level (version, known keys, their types) and hands each section, as an ArgNode that
// remembers file:line:column, to the layer that understands it:
//   cluster      -> topology (build_topology)          docs/scenario.md
//   engine, collectives -> collective/engine options   docs/scenario-engine.md, -collectives.md
//   packet       -> packet engine (packet_config_from_args)  docs/scenario.md, packet-engine.md
//   job          -> workload                           docs/scenario-job.md
//   variants, report -> report                         docs/scenario-variants.md, -report.md
//
// Example:
//   Scenario s = load_scenario("scenarios/default.yaml");
//   BuildResult r = build_topology(s.cluster);
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/config/arg_node.hpp"

namespace lockstep {

inline constexpr int kScenarioVersion = 1;

struct Scenario {
  std::string file;  // the path it was read from (or the name given to parse_scenario)
  int version = kScenarioVersion;
  std::string name;         // defaults to the file name without directory and extension
  std::string description;  // free text, may be empty
  std::uint64_t seed = 1;   // master seed for everything random in a run
  bool seed_given = false;  // true when the file sets `seed:`
  ArgNode cluster;          // map with `builder:` (or a preset) and its arguments

  // Optional sections, parsed by their consumers (each calls check_all_used()).
  std::optional<ArgNode> engine;       // a map, or a bare engine name
  std::optional<ArgNode> packet;       // a map: packet-engine settings (docs/packet-engine.md)
  std::optional<ArgNode> collectives;  // a map or a list
  std::optional<ArgNode> job;          // a map
  std::optional<ArgNode> variants;     // a map or a list
  std::optional<ArgNode> report;       // a map
};

/// The top-level keys a scenario may have, in documentation order.
const std::vector<std::string>& scenario_top_level_keys();

/// Reads and validates a scenario file. Throws InputError with file:line:column for syntax
/// errors, duplicate keys, a missing or unsupported `version`, unknown top-level keys, sections
/// of the wrong type and a missing `cluster`.
Scenario load_scenario(const std::string& path);

/// Same, from text; `filename` is used in error locations.
Scenario parse_scenario(std::string_view text, const std::string& filename);

}  // namespace lockstep
