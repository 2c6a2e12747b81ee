#include "lockstep/config/spec_text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "lockstep/core/error.hpp"

namespace lockstep {

void bad_spec(std::string_view field, std::string_view text, std::string_view why) {
  throw InputError(std::string(field), fmt::format("'{}': {}", text, why));
}

std::pair<std::string_view, std::string_view> split_spec_kind(std::string_view text) {
  auto colon = text.find(':');
  if (colon == std::string_view::npos) return {text, {}};
  return {text.substr(0, colon), text.substr(colon + 1)};
}

std::map<std::string, std::string> parse_spec_params(std::string_view body, std::string_view field,
                                                     std::string_view text,
                                                     const std::vector<std::string>& allowed) {
  std::map<std::string, std::string> out;
  while (!body.empty()) {
    auto comma = body.find(',');
    std::string_view item = body.substr(0, comma);
    body = comma == std::string_view::npos ? std::string_view{} : body.substr(comma + 1);
    auto eq = item.find('=');
    if (eq == std::string_view::npos) bad_spec(field, text, "expected key=value");
    std::string key(item.substr(0, eq));
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      bad_spec(field, text, fmt::format("unknown parameter '{}'", key));
    }
    out[key] = std::string(item.substr(eq + 1));
  }
  return out;
}

double parse_spec_number(std::string_view s, std::string_view field, std::string_view text) {
  bool percent = !s.empty() && s.back() == '%';
  if (percent) s.remove_suffix(1);
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) {
    bad_spec(field, text, fmt::format("'{}' is not a number", s));
  }
  return percent ? v / 100 : v;
}

std::map<std::string, double> parse_spec_numbers(std::string_view body, std::string_view field,
                                                 std::string_view text,
                                                 const std::vector<std::string>& allowed,
                                                 const std::vector<std::string>& required) {
  std::map<std::string, double> out;
  for (const auto& [key, value] : parse_spec_params(body, field, text, allowed))
    out[key] = parse_spec_number(value, field, text);
  for (const auto& key : required)
    if (!out.count(key)) bad_spec(field, text, fmt::format("missing '{}='", key));
  return out;
}

}  // namespace lockstep
