#include "lockstep/core/error.hpp"

#include <fmt/format.h>

namespace lockstep {
namespace {
std::string compose(const std::string& field, const std::string& message,
                    const SourceLocation& where) {
  std::string out;
  if (where.known()) out += where.str() + ": ";
  if (!field.empty()) out += field + ": ";
  out += message;
  return out;
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
