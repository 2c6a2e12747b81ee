#pragma once
// Two kinds of failure. InputError: the user's input is wrong (exit code 2); the message is one
// line that names the field and, for files, file:line:column. Anything else escaping to main is
// an internal error (exit code 1).
#include <stdexcept>
#include <string>

namespace lockstep {

/// Where in an input file a value came from. line and column are 1-based; 0 means unknown.
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;
  bool known() const { return !file.empty(); }
  /// "file:line:column" or "" when unknown.
  std::string str() const;
};

class InputError : public std::runtime_error {
 public:
  /// `field` is the dotted path of the offending key ("cluster.nodes"), may be empty.
  InputError(std::string field, std::string message, SourceLocation where = {});
  const std::string& field() const { return field_; }
  const SourceLocation& where() const { return where_; }
  const std::string& bare_message() const { return message_; }

 private:
  std::string field_;
  std::string message_;
  SourceLocation where_;
};

}  // namespace lockstep
