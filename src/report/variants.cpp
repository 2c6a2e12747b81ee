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
    if (parts.back().empty()) where.fail(fmt::format("malformed scenario key '{}'", key));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return parts;
}

bool is_index(const std::string& part) {
  return !part.empty() && part.size() < 10 &&
         std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string joined(const std::vector<std::string>& parts, std::size_t n) {
  return fmt::format("{}", fmt::join(parts.begin(), parts.begin() + static_cast<long>(n), "."));
}

// Replaces (or adds) node[path[depth]...] with `value`, copying the maps and lists on the way.
ArgNode substitute(const ArgNode& node, const std::vector<std::string>& path, std::size_t depth,
                   const ArgNode& value) {
  const std::string& key = path[depth];
  const bool last = depth + 1 == path.size();
  if (node.kind() == ArgNode::Kind::List) {
    const std::size_t n = node.items().size();
    if (!is_index(key) || std::stoul(key) >= n) {
      value.fail(fmt::format("cannot substitute '{}': '{}' is a list of {} item{}, indexed 0..{}",
                             joined(path, path.size()), joined(path, depth), n, n == 1 ? "" : "s",
                             n == 0 ? 0 : n - 1));
    }
    const std::size_t index = std::stoul(key);
    ArgNode copy = ArgNode::list(node.path(), node.where());
    for (std::size_t i = 0; i < n; ++i) {
      if (i != index) {
        copy.push(node.items()[i]);
      } else {
        copy.push(last ? value : substitute(node.items()[i], path, depth + 1, value));
      }
    }
    return copy;
  }
  if (node.kind() != ArgNode::Kind::Map) {
    value.fail(fmt::format("cannot substitute '{}': '{}' is not a map", joined(path, path.size()),
                           joined(path, depth)));
  }
  ArgNode copy = node;
  if (last) {
    copy.set(key, value);
    return copy;
  }
  const ArgNode* child = node.find(key);
  if (child == nullptr) {
    value.fail(fmt::format("cannot substitute '{}': the scenario has no '{}'",
                           joined(path, path.size()), joined(path, depth + 1)));
  }
  copy.set(key, substitute(*child, path, depth + 1, value));
  return copy;
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
    scenario_key_path(key, values, true);
    keys.push_back(key);
    axes.emplace_back(key, std::move(list));
  }
  // No cap on the count: each variant's cluster is built, run and dropped in turn, so memory is
  // the largest variant's (report/run.hpp), and time is what the user asked for.
  std::size_t total = 1;
  for (const auto& axis : axes) {
    if (total > (std::size_t{1} << 40) / axis.second.size()) {
      section.fail("more than 2^40 variants (the product of the lists)");
    }
    total *= axis.second.size();
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
  std::vector<VariantSpec> out;
  for (const auto& item : section.items()) {
    if (item.kind() != ArgNode::Kind::Map) item.fail("expected a map of scenario keys and values");
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
      scenario_key_path(key, value, true);
      if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
      spec.shown.emplace_back(key, shown_value(value));
      spec.values.emplace_back(key, value);
      name_parts.push_back(key + "=" + shown_value(value));
    }
    if (spec.values.empty()) item.fail("a variant must change at least one scenario key");
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
    if (section->keys().empty()) section->fail("expected at least one scenario key to vary");
    out = from_map(*section, keys);
  } else if (section->kind() == ArgNode::Kind::List) {
    if (section->items().empty()) section->fail("expected at least one variant");
    out = from_list(*section, keys);
  } else {
    section->fail("expected a map of scenario keys to lists of values, or a list of variants");
  }
  std::set<std::string> names;
  for (const auto& v : out) {
    if (!names.insert(v.name).second) {
      section->fail(fmt::format("two variants are both named '{}'", v.name));
    }
  }
  return out;
}

std::string shown_value(const ArgNode& value) {
  if (value.kind() == ArgNode::Kind::Scalar) return value.text();
  return value.kind() == ArgNode::Kind::Map ? "{...}" : "[...]";
}

std::vector<std::string> scenario_key_path(const std::string& key, const ArgNode& where,
                                           bool cluster_shorthand) {
  std::vector<std::string> path = split_dotted(key, where);
  const auto& sections = overridable_sections();
  if (std::find(sections.begin(), sections.end(), path[0]) != sections.end()) {
    if (path[0] == "seed" && path.size() > 1) {
      where.fail(fmt::format("'seed' is a number, it has no key '{}'", path[1]));
    }
    return path;
  }
  for (const char* fixed : {"version", "description", "variants", "report"}) {
    if (path[0] == fixed) {
      where.fail(fmt::format("'{}' cannot vary (a variant or sweep point changes {})", path[0],
                             fmt::join(sections, ", ")));
    }
  }
  if (!cluster_shorthand) {
    where.fail(fmt::format("unknown scenario key '{}' (a key starts with one of {})", key,
                           fmt::join(sections, ", ")));
  }
  path.insert(path.begin(), "cluster");
  return path;
}

void override_section(std::optional<ArgNode>& section, const std::vector<std::string>& path,
                      const ArgNode& value) {
  if (path.size() == 1) {
    section = value;
    return;
  }
  if (!section) {
    value.fail(fmt::format("cannot substitute '{}': the scenario has no '{}' section",
                           joined(path, path.size()), path[0]));
  }
  section = substitute(*section, path, 1, value);
}

}  // namespace lockstep::report
