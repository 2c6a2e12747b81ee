#pragma once
// Configuration files: reading one whole, and parsing it with the reader its name calls for.
#include <cstddef>
#include <string>

#include "lockstep/config/arg_node.hpp"
#include "lockstep/core/error.hpp"

namespace lockstep {

/// Scenario and graph files are read whole. The largest a builder writes (--emit of a k = 48 fat
/// tree, 27,648 GPUs) is 21 MB; a reader holds about 35 bytes per byte of it.
inline constexpr std::size_t kMaxFileBytes = 64u << 20;

/// Reads a whole file of at most kMaxFileBytes. A missing, unreadable or oversized file, a
/// directory or a device is an InputError naming `field` and the place that referred to the
/// file (`where`).
std::string read_text_file(const std::string& path, const std::string& field,
                           const SourceLocation& where = {});

/// Reads and parses a file, as JSON when its name ends in ".json", else as YAML.
ArgNode load_args_file(const std::string& path, const std::string& root_path,
                       const std::string& field, const SourceLocation& where = {});

}  // namespace lockstep
