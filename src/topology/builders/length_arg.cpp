#include "length_arg.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <string_view>

namespace lockstep::builders {

double length_metres(const ArgNode& node) {
  if (node.kind() != ArgNode::Kind::Scalar) node.fail("expected a length such as 3m or 50km");
  std::string_view text = node.text();
  double value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr == text.data() || !std::isfinite(value)) {
    node.fail(fmt::format("'{}' is not a length (expected e.g. 3m or 50km)", text));
  }
  std::string_view unit(ptr, static_cast<std::size_t>(text.data() + text.size() - ptr));
  while (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);
  double scale = 0;
  if (unit == "m") {
    scale = 1;
  } else if (unit == "km") {
    scale = 1000;
  } else if (unit.empty()) {
    node.fail(fmt::format("'{}' needs a unit (m or km)", text));
  } else {
    node.fail(fmt::format("unknown length unit '{}' in '{}' (use m or km)", unit, text));
  }
  if (value < 0) node.fail(fmt::format("'{}' is negative", text));
  // Longer than the Earth's circumference: a typo, not a fibre.
  if (value * scale > 4.0e7) node.fail(fmt::format("'{}' is absurdly long", text));
  return value * scale;
}

}  // namespace lockstep::builders
