#pragma once
// The configuration tree: settings as a small tree that remembers where each value came from, so
// a consumer can say "cluster.k: must be even (scenario.yaml:4:6)" whether its settings came from
// a YAML file (yaml_reader.hpp), a JSON file (json_reader.hpp) or CLI flags (--k 8).
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lockstep/core/error.hpp"
#include "lockstep/core/units.hpp"

namespace lockstep {

/// Above this many values the readers refuse a document: YAML aliases can expand a small file
/// into an exponential tree ("billion laughs").
inline constexpr std::size_t kMaxDocumentValues = 4'000'000;

class ArgNode {
 public:
  enum class Kind : std::uint8_t { Scalar, Map, List };

  static ArgNode scalar(std::string value, std::string path, SourceLocation where = {});
  static ArgNode map(std::string path, SourceLocation where = {});
  static ArgNode list(std::string path, SourceLocation where = {});

  Kind kind() const { return kind_; }
  const std::string& path() const { return path_; }  // dotted path, e.g. "cluster.sites[1].k"
  const SourceLocation& where() const { return where_; }
  const std::string& text() const { return text_; }  // scalars only

  // Map access. Lookups mark a key as used; check_all_used() reports the first unused key as an
  // "unknown key" error with its location (the usual typo catcher).
  bool has(const std::string& key) const;
  const ArgNode* find(const std::string& key) const;
  const ArgNode& at(const std::string& key) const;  // InputError "missing required key" if absent
  void set(const std::string& key, ArgNode value);
  const std::vector<std::string>& keys() const { return order_; }
  void check_all_used() const;

  // List access.
  const std::vector<ArgNode>& items() const { return items_; }
  void push(ArgNode value) { items_.push_back(std::move(value)); }

  // Typed scalar reads; each throws InputError naming path() and where() when the text does not
  // parse or lies outside [min, max].
  std::int64_t as_int(std::int64_t min, std::int64_t max) const;
  double as_double(double min, double max) const;
  bool as_bool() const;
  Time as_time() const;
  Bytes as_bytes() const;
  /// A rate of at least kMinBandwidth (core/units.hpp), else an InputError saying so.
  Bandwidth as_bandwidth() const;
  /// One of `choices`, else "unknown value 'x' (expected one of a, b, c)".
  const std::string& as_choice(const std::vector<std::string>& choices) const;

  // Optional-with-default helpers for map nodes.
  std::int64_t get_int(const std::string& key, std::int64_t fallback, std::int64_t min,
                       std::int64_t max) const;
  double get_double(const std::string& key, double fallback, double min, double max) const;
  bool get_bool(const std::string& key, bool fallback) const;
  std::string get_string(const std::string& key, const std::string& fallback) const;
  Bandwidth get_bandwidth(const std::string& key, Bandwidth fallback) const;
  Time get_time(const std::string& key, Time fallback) const;

  [[noreturn]] void fail(const std::string& message) const;  // InputError at this node

 private:
  Kind kind_ = Kind::Scalar;
  std::string text_;
  std::string path_;
  SourceLocation where_;
  std::map<std::string, ArgNode> children_;
  std::vector<std::string> order_;
  std::vector<ArgNode> items_;
  mutable std::map<std::string, bool> used_;
};

/// How errors name a node's kind: "a value", "a map", "a list".
const char* kind_name(ArgNode::Kind kind);

/// True when a reader found an empty document (no content at all, or only comments).
bool is_empty_document(const ArgNode& root);

}  // namespace lockstep
