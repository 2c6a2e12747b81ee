#pragma once
// YAML and JSON text -> ArgNode trees that remember, for every node, its dotted path and the
// file:line:column it came from. The topology layer needs this for from_file graphs; the
// scenario layer reuses it for whole scenario files.
//
// Example: parse_yaml_args("k: 4\n", "a.yaml", "cluster").at("k") has path "cluster.k" and
// location a.yaml:1:4.
#include <cstddef>
#include <string>
#include <string_view>

#include "lockstep/core/error.hpp"
#include "lockstep/topology/args.hpp"

namespace lockstep {

/// Above this many values a document is refused: YAML aliases can expand a small file into an
/// exponential tree ("billion laughs").
inline constexpr std::size_t kMaxDocumentValues = 4'000'000;

/// Parses one YAML document. Maps become Map nodes, sequences List nodes, everything else a
/// Scalar (null and empty values become the empty string). Syntax errors, duplicate keys,
/// non-scalar keys, extra documents and more than `max_values` values throw InputError with
/// file:line:column.
ArgNode parse_yaml_args(std::string_view text, const std::string& filename,
                        const std::string& root_path = "",
                        std::size_t max_values = kMaxDocumentValues);

/// Parses strict JSON (RFC 8259) into the same tree, with the same locations, duplicate-key
/// check and value limit. Syntax errors are reported at the line:column where the reader stopped.
ArgNode parse_json_args(std::string_view text, const std::string& filename,
                        const std::string& root_path = "",
                        std::size_t max_values = kMaxDocumentValues);

/// True when the parsed document was empty (no content at all, or only comments).
bool is_empty_document(const ArgNode& root);

/// Reads a whole file. A missing or unreadable file is an InputError naming `field` and the
/// place that referred to the file (`where`).
std::string read_text_file(const std::string& path, const std::string& field,
                           const SourceLocation& where = {});

/// Reads and parses a file, as JSON when its name ends in ".json", else as YAML.
ArgNode load_args_file(const std::string& path, const std::string& root_path,
                       const std::string& field, const SourceLocation& where = {});

}  // namespace lockstep
