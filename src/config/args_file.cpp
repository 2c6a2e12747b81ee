#include "lockstep/config/args_file.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "lockstep/config/json_reader.hpp"
#include "lockstep/config/yaml_reader.hpp"

namespace lockstep {

namespace {

// What stands at a path that is not a regular file, for the error message.
const char* what_is(std::filesystem::file_type type) {
  switch (type) {
    case std::filesystem::file_type::directory:
      return "a directory";
    case std::filesystem::file_type::character:
      return "a character device";
    case std::filesystem::file_type::block:
      return "a block device";
    case std::filesystem::file_type::socket:
      return "a socket";
    default:
      return nullptr;  // a pipe (`<(...)`) or a regular file: read it, within the size limit
  }
}

}  // namespace

std::string read_text_file(const std::string& path, const std::string& field,
                           const SourceLocation& where) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (status.type() == std::filesystem::file_type::not_found) {
    throw InputError(field, fmt::format("cannot read '{}': no such file", path), where);
  }
  // A device is refused by name (/dev/zero would otherwise be read up to the limit first).
  if (const char* kind = what_is(status.type())) {
    throw InputError(field, fmt::format("cannot read '{}': it is {}, not a file", path, kind),
                     where);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(field, fmt::format("cannot read '{}': permission denied", path), where);
  // Read in chunks and stop past the limit: a pipe has no size to check beforehand.
  std::string text;
  std::vector<char> chunk(1 << 20);
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    text.append(chunk.data(), static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxFileBytes) {
      throw InputError(
          field, fmt::format("'{}' is too large (over {} MiB)", path, kMaxFileBytes >> 20), where);
    }
  }
  if (in.bad()) throw InputError(field, fmt::format("cannot read '{}'", path), where);
  return text;
}

ArgNode load_args_file(const std::string& path, const std::string& root_path,
                       const std::string& field, const SourceLocation& where) {
  const std::string text = read_text_file(path, field, where);
  const bool json = path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0;
  return json ? parse_json_args(text, path, root_path) : parse_yaml_args(text, path, root_path);
}

}  // namespace lockstep
