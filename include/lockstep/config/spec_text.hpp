#pragma once
// Short texts users type for noise and faults, "kind:key=value,key=value" (docs/training.md):
//   auto [kind, body] = split_spec_kind("straggler:p=0.01,x=1.5");  // "straggler", "p=0.01,x=1.5"
//   auto params = parse_spec_params(body, "--jitter", text, {"p", "x"});  // {p: "0.01", x: "1.5"}
//   double p = parse_spec_number(params.at("p"), "--jitter", text);     // 0.01 ("5%" is 0.05)
// Every error is an InputError naming `field` and quoting the whole text.
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lockstep/config/arg_node.hpp"
#include "lockstep/core/error.hpp"

namespace lockstep {

/// InputError(field, "'TEXT': WHY").
[[noreturn]] void bad_spec(std::string_view field, std::string_view text, std::string_view why);

/// "kind:body" -> {kind, body}; a text without ':' is all kind.
std::pair<std::string_view, std::string_view> split_spec_kind(std::string_view text);

/// The key=value pairs of `body`, comma-separated, as texts; a key outside `allowed` or an item
/// without '=' is an error. Which keys are required is the caller's business.
std::map<std::string, std::string> parse_spec_params(std::string_view body, std::string_view field,
                                                     std::string_view text,
                                                     const std::vector<std::string>& allowed);

/// A finite number, "5%" read as 0.05.
double parse_spec_number(std::string_view value, std::string_view field, std::string_view text);

/// parse_spec_params with every value a number; the keys in `required` must be present.
std::map<std::string, double> parse_spec_numbers(std::string_view body, std::string_view field,
                                                 std::string_view text,
                                                 const std::vector<std::string>& allowed,
                                                 const std::vector<std::string>& required);

/// A noise or fault setting: one text or a list of them (null: none), each read by
/// `parse(const ArgNode& entry)`; an error is re-thrown at the entry's place. `example` shows
/// the form in the error for an entry that is not a text ("normal:5%").
template <typename Parse>
auto parse_spec_list(const ArgNode* node, Parse parse, const std::string& example) {
  std::vector<decltype(parse(*node))> out;
  if (node == nullptr) return out;
  auto one = [&](const ArgNode& n) {
    if (n.kind() != ArgNode::Kind::Scalar) n.fail("expected a text like " + example);
    try {
      out.push_back(parse(n));
    } catch (const InputError& e) {
      n.fail(e.bare_message());
    }
  };
  if (node->kind() == ArgNode::Kind::List) {
    for (const auto& item : node->items()) one(item);
  } else {
    one(*node);
  }
  return out;
}

}  // namespace lockstep
