#pragma once
// Scenario variants: the same job on clusters that differ in a few keys, compared side by side.
// Two spellings (docs/scenario-variants.md):
//   variants: {fabric: [ib-ndr, roce-400g, tcp]}      one variant per value; with several keys,
//                                                     every combination (first key slowest)
//   variants: [{name: IB, fabric: ib-ndr}, ...]       explicit variants, each naming its values
// Keys are dotted scenario keys ("job.tp", "engine.name", "collectives.0.max_bytes": a number
// indexes a list); a key whose first part is no scenario section is a key of `cluster:`, as
// variants have always read ("fabric", "site.fabric"). A key a map lacks is added (its section's
// parser then rejects it if it does not know it). `lockstep sweep` applies its points the same
// way (scenario/sweep.hpp).
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lockstep/config/arg_node.hpp"

namespace lockstep::report {

struct VariantSpec {
  std::string name;                                        // "fabric=ib-ndr" or the given name
  std::vector<std::pair<std::string, std::string>> shown;  // key -> value as text, for reports
  std::vector<std::pair<std::string, ArgNode>> values;     // key -> value node to substitute
};

/// The sections of a scenario a variant or a sweep point may change.
inline const std::vector<std::string>& overridable_sections() {
  static const std::vector<std::string> sections{"cluster",     "engine", "packet",
                                                 "collectives", "job",    "seed"};
  return sections;
}

/// `key` split at its dots, starting with its section: "job.tp" -> {job, tp}; with
/// `cluster_shorthand` a key that names no section is a cluster key ("fabric" -> {cluster,
/// fabric}), without it an error. Throws InputError at `where` for empty parts and for keys of
/// the sections nothing may vary (version, name, variants, report ...).
std::vector<std::string> scenario_key_path(const std::string& key, const ArgNode& where,
                                           bool cluster_shorthand);

/// Replaces (or adds) the value at path[1..] of `section` (the section path[0] names), copying
/// the maps and lists along the way; a path of one part replaces the whole section. Throws
/// InputError at the value's location when the section is absent or a step is not a map (or a
/// list with that index).
void override_section(std::optional<ArgNode>& section, const std::vector<std::string>& path,
                      const ArgNode& value);

/// A scalar's text, or {...} / [...] for a map or a list: how a value is named in a report.
std::string shown_value(const ArgNode& value);

/// The variants a `variants:` section declares; one unnamed "base" variant when there is none.
/// Throws InputError (with file:line:column) for empty lists, non-map list items, duplicate
/// names and malformed keys. Returns the keys varied in `keys` (file order).
std::vector<VariantSpec> parse_variants(const std::optional<ArgNode>& section,
                                        std::vector<std::string>& keys);

}  // namespace lockstep::report
