#include "lockstep/config/arg_node.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>
#include <cmath>

namespace lockstep {

ArgNode ArgNode::scalar(std::string value, std::string path, SourceLocation where) {
  ArgNode n;
  n.kind_ = Kind::Scalar;
  n.text_ = std::move(value);
  n.path_ = std::move(path);
  n.where_ = std::move(where);
  return n;
}

ArgNode ArgNode::map(std::string path, SourceLocation where) {
  ArgNode n;
  n.kind_ = Kind::Map;
  n.path_ = std::move(path);
  n.where_ = std::move(where);
  return n;
}

ArgNode ArgNode::list(std::string path, SourceLocation where) {
  ArgNode n = map(std::move(path), std::move(where));
  n.kind_ = Kind::List;
  return n;
}

void ArgNode::fail(const std::string& message) const {
  throw InputError(path_, message, where_);
}

bool ArgNode::has(const std::string& key) const {
  return children_.count(key) != 0;
}

const ArgNode* ArgNode::find(const std::string& key) const {
  auto it = children_.find(key);
  if (it == children_.end()) return nullptr;
  used_[key] = true;
  return &it->second;
}

const ArgNode& ArgNode::at(const std::string& key) const {
  if (kind_ != Kind::Map) fail("expected a map with key '" + key + "'");
  const ArgNode* n = find(key);
  if (n == nullptr) fail(fmt::format("missing required key '{}'", key));
  return *n;
}

void ArgNode::set(const std::string& key, ArgNode value) {
  if (children_.count(key) == 0) order_.push_back(key);
  children_.insert_or_assign(key, std::move(value));
}

void ArgNode::check_all_used() const {
  for (const auto& key : order_) {
    if (!used_[key]) {
      const ArgNode& child = children_.at(key);
      throw InputError(child.path_, fmt::format("unknown key '{}'", key), child.where_);
    }
  }
}

const char* kind_name(ArgNode::Kind kind) {
  switch (kind) {
    case ArgNode::Kind::Scalar:
      return "a value";
    case ArgNode::Kind::Map:
      return "a map";
    case ArgNode::Kind::List:
      return "a list";
  }
  return "?";
}

std::int64_t ArgNode::as_int(std::int64_t min, std::int64_t max) const {
  if (kind_ != Kind::Scalar) fail(fmt::format("expected an integer, got {}", kind_name(kind_)));
  std::int64_t v = 0;
  const char* b = text_.data();
  const char* e = b + text_.size();
  auto [ptr, ec] = std::from_chars(b, e, v);
  if (ec == std::errc::result_out_of_range) fail(fmt::format("'{}' is absurdly large", text_));
  if (ec != std::errc() || ptr != e) fail(fmt::format("expected an integer, got '{}'", text_));
  if (v < min || v > max) {
    fail(fmt::format("{} is out of range (must be between {} and {})", v, min, max));
  }
  return v;
}

double ArgNode::as_double(double min, double max) const {
  if (kind_ != Kind::Scalar) fail(fmt::format("expected a number, got {}", kind_name(kind_)));
  double v = 0;
  const char* b = text_.data();
  const char* e = b + text_.size();
  auto [ptr, ec] = std::from_chars(b, e, v);
  if (ec != std::errc() || ptr != e || !std::isfinite(v)) {
    fail(fmt::format("expected a number, got '{}'", text_));
  }
  if (v < min || v > max) {
    fail(fmt::format("{} is out of range (must be between {} and {})", text_, min, max));
  }
  return v;
}

bool ArgNode::as_bool() const {
  if (kind_ == Kind::Scalar) {
    if (text_ == "true" || text_ == "yes" || text_ == "on") return true;
    if (text_ == "false" || text_ == "no" || text_ == "off") return false;
  }
  fail(fmt::format("expected true or false, got '{}'", text_));
}

namespace {
template <typename F>
auto reparse(const ArgNode& n, F parse) {
  if (n.kind() != ArgNode::Kind::Scalar) n.fail("expected a value with a unit");
  try {
    return parse(n.text(), n.path());
  } catch (const InputError& e) {
    throw InputError(n.path(), e.bare_message(), n.where());
  }
}
}  // namespace

Time ArgNode::as_time() const {
  return reparse(*this, [](std::string_view t, std::string_view f) { return parse_time(t, f); });
}
Bytes ArgNode::as_bytes() const {
  return reparse(*this, [](std::string_view t, std::string_view f) { return parse_bytes(t, f); });
}
Bandwidth ArgNode::as_bandwidth() const {
  const Bandwidth bw =
      reparse(*this, [](std::string_view t, std::string_view f) { return parse_bandwidth(t, f); });
  // Slower links would let a GPU's memory take longer than Time's range to cross them.
  if (bw < kMinBandwidth) {
    fail(fmt::format("'{}' is below {:.4f} Mb/s, the slowest rate lockstep accepts (docs/units.md)",
                     text_, kMinBandwidth.gigabits_per_second() * 1e3));
  }
  return bw;
}

const std::string& ArgNode::as_choice(const std::vector<std::string>& choices) const {
  if (kind_ == Kind::Scalar) {
    for (const auto& c : choices)
      if (c == text_) return c;
  }
  fail(fmt::format("unknown value '{}' (expected one of {})", text_, fmt::join(choices, ", ")));
}

std::int64_t ArgNode::get_int(const std::string& key, std::int64_t fallback, std::int64_t min,
                              std::int64_t max) const {
  const ArgNode* n = find(key);
  return n ? n->as_int(min, max) : fallback;
}
double ArgNode::get_double(const std::string& key, double fallback, double min, double max) const {
  const ArgNode* n = find(key);
  return n ? n->as_double(min, max) : fallback;
}
bool ArgNode::get_bool(const std::string& key, bool fallback) const {
  const ArgNode* n = find(key);
  return n ? n->as_bool() : fallback;
}
std::string ArgNode::get_string(const std::string& key, const std::string& fallback) const {
  const ArgNode* n = find(key);
  if (n == nullptr) return fallback;
  if (n->kind() != Kind::Scalar) n->fail("expected a value");
  return n->text();
}
Bandwidth ArgNode::get_bandwidth(const std::string& key, Bandwidth fallback) const {
  const ArgNode* n = find(key);
  return n ? n->as_bandwidth() : fallback;
}
Time ArgNode::get_time(const std::string& key, Time fallback) const {
  const ArgNode* n = find(key);
  return n ? n->as_time() : fallback;
}

bool is_empty_document(const ArgNode& root) {
  return root.kind() == ArgNode::Kind::Scalar && root.text().empty();
}

}  // namespace lockstep
