#include "lockstep/config/args_file.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "lockstep/config/json_reader.hpp"
#include "lockstep/config/yaml_reader.hpp"

namespace lockstep {

std::string read_text_file(const std::string& path, const std::string& field,
                           const SourceLocation& where) {
  // Scenario and graph files are small; refuse anything that could exhaust memory.
  constexpr std::uintmax_t kMaxFileBytes = 512ull << 20;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw InputError(field, fmt::format("cannot read '{}': no such file", path), where);
  }
  if (std::filesystem::file_size(path, ec) > kMaxFileBytes) {
    throw InputError(field, fmt::format("'{}' is too large (over 512 MiB)", path), where);
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (!in.good() && !in.eof()) {
    throw InputError(field, fmt::format("cannot read '{}'", path), where);
  }
  return buffer.str();
}

ArgNode load_args_file(const std::string& path, const std::string& root_path,
                       const std::string& field, const SourceLocation& where) {
  const std::string text = read_text_file(path, field, where);
  const bool json = path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0;
  return json ? parse_json_args(text, path, root_path) : parse_yaml_args(text, path, root_path);
}

}  // namespace lockstep
