#pragma once
// Strict JSON (RFC 8259) text -> the same ArgNode tree as the YAML reader gives, with the same
// paths and file:line:column locations. Large graphs (from_file) come as JSON.
#include <cstddef>
#include <string>
#include <string_view>

#include "lockstep/config/arg_node.hpp"

namespace lockstep {

/// Parses strict JSON into the tree parse_yaml_args() would give, with the same locations,
/// duplicate-key check and value limit. Syntax errors are reported at the line:column where the
/// reader stopped.
ArgNode parse_json_args(std::string_view text, const std::string& filename,
                        const std::string& root_path = "",
                        std::size_t max_values = kMaxDocumentValues);

}  // namespace lockstep
