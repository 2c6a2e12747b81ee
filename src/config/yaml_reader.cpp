#include "lockstep/config/yaml_reader.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <unordered_set>

namespace lockstep {
namespace {

// Nesting recurses; deeper documents are refused before they can exhaust the stack.
constexpr int kMaxDepth = 200;

class YamlConverter {
 public:
  YamlConverter(const std::string& file, std::size_t max_values)
      : file_(file), max_values_(max_values) {}

  SourceLocation at(const YAML::Mark& m) const {
    if (m.is_null()) return SourceLocation{file_, 0, 0};
    return SourceLocation{file_, m.line + 1, m.column + 1};  // yaml-cpp marks are 0-based
  }

  // `where` locates maps, lists and nulls (for a map value: its key, which is where a reader
  // looks); scalars carry their own mark.
  ArgNode convert(const YAML::Node& node, const std::string& path, const SourceLocation& where,
                  int depth) {
    if (++count_ > max_values_) {
      throw InputError(path, fmt::format("document too large (more than {} values)", max_values_),
                       where);
    }
    if (depth > kMaxDepth) throw InputError(path, "nested too deeply", where);
    switch (node.Type()) {
      case YAML::NodeType::Scalar:
        return ArgNode::scalar(node.Scalar(), path, at(node.Mark()));
      case YAML::NodeType::Sequence:
        return convert_list(node, path, where, depth);
      case YAML::NodeType::Map:
        return convert_map(node, path, where, depth);
      case YAML::NodeType::Null:
      case YAML::NodeType::Undefined:
        break;
    }
    return ArgNode::scalar("", path, where);
  }

 private:
  ArgNode convert_list(const YAML::Node& node, const std::string& path, const SourceLocation& where,
                       int depth) {
    ArgNode out = ArgNode::list(path, where);
    std::size_t index = 0;
    for (const auto& item : node) {
      const SourceLocation item_where = item.Mark().is_null() ? where : at(item.Mark());
      out.push(convert(item, fmt::format("{}[{}]", path, index++), item_where, depth + 1));
    }
    return out;
  }

  ArgNode convert_map(const YAML::Node& node, const std::string& path, const SourceLocation& where,
                      int depth) {
    ArgNode out = ArgNode::map(path, where);
    std::unordered_set<std::string> seen;
    for (const auto& pair : node) {
      const SourceLocation key_where = at(pair.first.Mark());
      if (!pair.first.IsScalar()) {
        throw InputError(path, "a map key must be a plain name, not a map or list", key_where);
      }
      const std::string& key = pair.first.Scalar();
      const std::string child_path = path.empty() ? key : path + "." + key;
      if (!seen.insert(key).second) {
        throw InputError(child_path, fmt::format("duplicate key '{}'", key), key_where);
      }
      out.set(key, convert(pair.second, child_path, key_where, depth + 1));
    }
    return out;
  }

  const std::string& file_;
  std::size_t max_values_;
  std::size_t count_ = 0;
};

}  // namespace

ArgNode parse_yaml_args(std::string_view text, const std::string& filename,
                        const std::string& root_path, std::size_t max_values) {
  const SourceLocation start{filename, 1, 1};
  std::vector<YAML::Node> documents;
  try {
    documents = YAML::LoadAll(std::string(text));
  } catch (const YAML::Exception& e) {
    const YamlConverter c(filename, max_values);
    throw InputError("", "YAML syntax error: " + e.msg, c.at(e.mark));
  }
  if (documents.empty()) return ArgNode::scalar("", root_path, start);
  YamlConverter converter(filename, max_values);
  if (documents.size() > 1) {
    throw InputError("", "only one YAML document is allowed per file (found a second '---')",
                     converter.at(documents[1].Mark()));
  }
  const YAML::Node& root = documents.front();
  return converter.convert(root, root_path,
                           root.Mark().is_null() ? start : converter.at(root.Mark()), 0);
}

}  // namespace lockstep
