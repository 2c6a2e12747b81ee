#pragma once
// Configuration files: reading one whole, and parsing it with the reader its name calls for.
#include <string>

#include "lockstep/config/arg_node.hpp"
#include "lockstep/core/error.hpp"

namespace lockstep {

/// Reads a whole file. A missing or unreadable file is an InputError naming `field` and the
/// place that referred to the file (`where`).
std::string read_text_file(const std::string& path, const std::string& field,
                           const SourceLocation& where = {});

/// Reads and parses a file, as JSON when its name ends in ".json", else as YAML.
ArgNode load_args_file(const std::string& path, const std::string& root_path,
                       const std::string& field, const SourceLocation& where = {});

}  // namespace lockstep
