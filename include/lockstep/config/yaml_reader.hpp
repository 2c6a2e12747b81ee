#pragma once
// YAML text -> an ArgNode tree that remembers, for every node, its dotted path and the
// file:line:column it came from. Topology reads from_file graphs with it, the scenario layer
// whole scenario files.
//
// Example: parse_yaml_args("k: 4\n", "a.yaml", "cluster").at("k") has path "cluster.k" and
// location a.yaml:1:4.
#include <cstddef>
#include <string>
#include <string_view>

#include "lockstep/config/arg_node.hpp"

namespace lockstep {

/// Parses one YAML document. Maps become Map nodes, sequences List nodes, everything else a
/// Scalar (null and empty values become the empty string). Syntax errors, duplicate keys,
/// non-scalar keys, extra documents and more than `max_values` values throw InputError with
/// file:line:column.
ArgNode parse_yaml_args(std::string_view text, const std::string& filename,
                        const std::string& root_path = "",
                        std::size_t max_values = kMaxDocumentValues);

}  // namespace lockstep
