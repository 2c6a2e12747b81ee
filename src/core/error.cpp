#include "lockstep/core/error.hpp"

#include <fmt/format.h>

namespace lockstep {
namespace {
// The message is one line on a terminal: a key or value holding a newline, an escape sequence or
// another control character (from a file or a flag) is shown escaped, as C writes it.
std::string escape_controls(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (byte < 0x20 || byte == 0x7f) {
      out += fmt::format("\\x{:02x}", byte);
    } else {
      out += c;
    }
  }
  return out;
}

std::string compose(const std::string& field, const std::string& message,
                    const SourceLocation& where) {
  std::string out;
  if (where.known()) out += where.str() + ": ";
  if (!field.empty()) out += field + ": ";
  out += message;
  return escape_controls(out);
}
}  // namespace

std::string SourceLocation::str() const {
  if (!known()) return {};
  if (line <= 0) return file;
  return fmt::format("{}:{}:{}", file, line, column);
}

InputError::InputError(std::string field, std::string message, SourceLocation where)
    : std::runtime_error(compose(field, message, where)),
      field_(std::move(field)),
      message_(std::move(message)),
      where_(std::move(where)) {}

}  // namespace lockstep
