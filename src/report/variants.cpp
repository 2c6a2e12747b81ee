// Expanding a scenario's `variants:` section and substituting each variant into the cluster.
#include "lockstep/report/variants.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

namespace lockstep::report {
namespace {

std::vector<std::string> split_dotted(const std::string& key, const ArgNode& where) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = key.find('.', start);
    parts.push_back(key.substr(start, dot - start));
    if (parts.back().empty()) where.fail(fmt::format("malformed cluster key '{}'", key));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return parts;
}

// Replaces (or adds) node[parts...] with `value`, copying the maps along the path.
ArgNode substitute(const ArgNode& node, const std::vector<std::string>& parts, std::size_t depth,
                   const ArgNode& value) {
  ArgNode copy = node;
  const std::string& key = parts[depth];
  if (depth + 1 == parts.size()) {
    copy.set(key, value);
    return copy;
  }
  const ArgNode* child = node.find(key);
  if (child == nullptr || child->kind() != ArgNode::Kind::Map) {
    value.fail(
        fmt::format("cannot substitute '{}': cluster has no map '{}'", fmt::join(parts, "."), key));
  }
  copy.set(key, substitute(*child, parts, depth + 1, value));
  return copy;
}

std::string shown_value(const ArgNode& value) {
  if (value.kind() == ArgNode::Kind::Scalar) return value.text();
  return value.kind() == ArgNode::Kind::Map ? "{...}" : "[...]";
}

std::vector<VariantSpec> from_map(const ArgNode& section, std::vector<std::string>& keys) {
  // Each key's values; a scalar is a one-value list.
  std::vector<std::pair<std::string, std::vector<const ArgNode*>>> axes;
  for (const auto& key : section.keys()) {
    const ArgNode& values = section.at(key);
    std::vector<const ArgNode*> list;
    if (values.kind() == ArgNode::Kind::List) {
      for (const auto& v : values.items()) list.push_back(&v);
    } else {
      list.push_back(&values);
    }
    if (list.empty()) values.fail("expected at least one value to compare");
    split_dotted(key, values);
    keys.push_back(key);
    axes.emplace_back(key, std::move(list));
  }
  std::size_t total = 1;
  for (const auto& axis : axes) {
    total *= axis.second.size();
    if (total > kMaxVariants) {
      section.fail(fmt::format("more than {} variants (the product of the lists)", kMaxVariants));
    }
  }
  std::vector<VariantSpec> out(total);
  for (std::size_t i = 0; i < total; ++i) {
    std::size_t rest = i;
    std::vector<std::size_t> pick(axes.size());
    for (std::size_t a = axes.size(); a-- > 0;) {  // last key varies fastest
      pick[a] = rest % axes[a].second.size();
      rest /= axes[a].second.size();
    }
    std::vector<std::string> name_parts;
    for (std::size_t a = 0; a < axes.size(); ++a) {
      const ArgNode& value = *axes[a].second[pick[a]];
      out[i].shown.emplace_back(axes[a].first, shown_value(value));
      out[i].values.emplace_back(axes[a].first, value);
      name_parts.push_back(axes[a].first + "=" + shown_value(value));
    }
    out[i].name = fmt::format("{}", fmt::join(name_parts, ", "));
  }
  return out;
}

std::vector<VariantSpec> from_list(const ArgNode& section, std::vector<std::string>& keys) {
  if (section.items().size() > kMaxVariants) {
    section.fail(fmt::format("more than {} variants", kMaxVariants));
  }
  std::vector<VariantSpec> out;
  for (const auto& item : section.items()) {
    if (item.kind() != ArgNode::Kind::Map) item.fail("expected a map of cluster keys and values");
    VariantSpec spec;
    std::vector<std::string> name_parts;
    for (const auto& key : item.keys()) {
      const ArgNode& value = item.at(key);
      if (key == "name") {
        if (value.kind() != ArgNode::Kind::Scalar || value.text().empty()) {
          value.fail("expected a non-empty name");
        }
        spec.name = value.text();
        continue;
      }
      split_dotted(key, value);
      if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
      spec.shown.emplace_back(key, shown_value(value));
      spec.values.emplace_back(key, value);
      name_parts.push_back(key + "=" + shown_value(value));
    }
    if (spec.values.empty()) item.fail("a variant must change at least one cluster key");
    if (spec.name.empty()) spec.name = fmt::format("{}", fmt::join(name_parts, ", "));
    out.push_back(std::move(spec));
  }
  return out;
}

}  // namespace

std::vector<VariantSpec> parse_variants(const std::optional<ArgNode>& section,
                                        std::vector<std::string>& keys) {
  keys.clear();
  if (!section) return {VariantSpec{"base", {}, {}}};
  std::vector<VariantSpec> out;
  if (section->kind() == ArgNode::Kind::Map) {
    if (section->keys().empty()) section->fail("expected at least one cluster key to vary");
    out = from_map(*section, keys);
  } else if (section->kind() == ArgNode::Kind::List) {
    if (section->items().empty()) section->fail("expected at least one variant");
    out = from_list(*section, keys);
  } else {
    section->fail("expected a map of cluster keys to lists of values, or a list of variants");
  }
  std::set<std::string> names;
  for (const auto& v : out) {
    if (!names.insert(v.name).second) {
      section->fail(fmt::format("two variants are both named '{}'", v.name));
    }
  }
  return out;
}

ArgNode apply_variant(const ArgNode& cluster, const VariantSpec& variant) {
  ArgNode result = cluster;
  for (const auto& [key, value] : variant.values) {
    result = substitute(result, split_dotted(key, value), 0, value);
  }
  return result;
}

}  // namespace lockstep::report
