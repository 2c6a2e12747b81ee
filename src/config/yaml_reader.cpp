#include "lockstep/config/yaml_reader.hpp"

#include <fmt/format.h>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include <algorithm>
#include <deque>
#include <map>
#include <sstream>
#include <unordered_set>
#include <vector>

namespace lockstep {
namespace {

// Nesting recurses; deeper documents are refused before they can exhaust the stack.
constexpr int kMaxDepth = 200;

// What aliases (*name) may add to a document beyond its own text. Without aliases a document's
// tree grows with its file (bounded by the file size limit); each alias copies its anchor's whole
// subtree, so nested aliases grow exponentially ("billion laughs": 600 bytes of YAML, billions of
// values). 16 MiB and 100,000 values are far beyond what a scenario shares by reference (a
// cluster block used by two variants) and build in milliseconds.
constexpr std::size_t kMaxAliasBytes = 16u << 20;
constexpr std::size_t kMaxAliasValues = 100'000;

// One node as yaml-cpp's events describe it. An alias points at its anchor's node instead of
// copying it, so this tree stays as large as the text; nodes live in TreeBuilder's arena (an
// anchor used inside itself makes a cycle, which shared ownership would leak).
struct RawNode {
  enum class Kind { Null, Scalar, Map, List } kind = Kind::Null;
  YAML::Mark mark;
  std::string text;
  std::vector<const RawNode*> items;  // a list's items; a map's key, value, key, value ...
};

// Builds RawNodes from one document's events.
class TreeBuilder : public YAML::EventHandler {
 public:
  const RawNode* root() const { return root_; }
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    add(make(RawNode::Kind::Null, mark), anchor);
  }
  void OnAlias(const YAML::Mark&, YAML::anchor_t anchor) override {
    // yaml-cpp refuses an undefined anchor before this event.
    add(anchors_.at(anchor), 0);
  }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                const std::string& value) override {
    RawNode* node = make(RawNode::Kind::Scalar, mark);
    node->text = value;
    add(node, anchor);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(make(RawNode::Kind::List, mark), anchor);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open(make(RawNode::Kind::Map, mark), anchor);
  }
  void OnMapEnd() override { close(); }

 private:
  RawNode* make(RawNode::Kind kind, const YAML::Mark& mark) {
    RawNode& node = arena_.emplace_back();
    node.kind = kind;
    node.mark = mark;
    return &node;
  }
  void add(const RawNode* node, YAML::anchor_t anchor) {
    if (anchor != 0) anchors_[anchor] = node;
    if (open_.empty()) {
      root_ = node;
    } else {
      open_.back()->items.push_back(node);
    }
  }
  void open(RawNode* node, YAML::anchor_t anchor) {
    add(node, anchor);
    open_.push_back(node);
  }
  void close() { open_.pop_back(); }

  std::deque<RawNode> arena_;
  std::map<YAML::anchor_t, const RawNode*> anchors_;
  std::vector<RawNode*> open_;
  const RawNode* root_ = nullptr;
};

class YamlConverter {
 public:
  YamlConverter(const std::string& file, std::size_t max_values)
      : file_(file), max_values_(max_values) {}

  SourceLocation at(const YAML::Mark& m) const {
    if (m.is_null()) return SourceLocation{file_, 0, 0};
    return SourceLocation{file_, m.line + 1, m.column + 1};  // yaml-cpp marks are 0-based
  }

  ArgNode convert_root(const RawNode& root, const std::string& path, const SourceLocation& where) {
    return convert_child(root, path, where, 0);
  }

 private:
  // `where` locates maps, lists and nulls (for a map value: its key, which is where a reader
  // looks); scalars carry their own mark.
  ArgNode convert(const RawNode& node, const std::string& path, const SourceLocation& where,
                  int depth) {
    if (++count_ > max_values_) {
      throw InputError(path, fmt::format("document too large (more than {} values)", max_values_),
                       where);
    }
    if (depth > kMaxDepth) throw InputError(path, "nested too deeply", where);
    if (alias_depth_ > 0) charge_alias(node, path, where);
    switch (node.kind) {
      case RawNode::Kind::Scalar:
        return ArgNode::scalar(node.text, path, at(node.mark));
      case RawNode::Kind::List:
        return convert_list(node, path, where, depth);
      case RawNode::Kind::Map:
        return convert_map(node, path, where, depth);
      case RawNode::Kind::Null:
        break;
    }
    return ArgNode::scalar("", path, where);
  }

  // Counts what an alias's copy costs: the values and, per value, about the memory it takes
  // (the node, its path and text).
  void charge_alias(const RawNode& node, const std::string& path, const SourceLocation& where) {
    alias_values_ += 1;
    alias_bytes_ += sizeof(ArgNode) + path.size() + node.text.size() + file_.size();
    if (alias_values_ > kMaxAliasValues || alias_bytes_ > kMaxAliasBytes) {
      throw InputError(path,
                       fmt::format("aliases (*name) expand the document past {} values or {} MiB",
                                   kMaxAliasValues, kMaxAliasBytes >> 20),
                       where);
    }
  }

  // A node reached a second time is an alias's copy (the first visit is its anchor's own text).
  ArgNode convert_child(const RawNode& child, const std::string& path, const SourceLocation& where,
                        int depth) {
    const bool copy = !visited_.insert(&child).second;
    alias_depth_ += copy ? 1 : 0;
    ArgNode out = convert(child, path, where, depth);
    alias_depth_ -= copy ? 1 : 0;
    return out;
  }

  ArgNode convert_list(const RawNode& node, const std::string& path, const SourceLocation& where,
                       int depth) {
    ArgNode out = ArgNode::list(path, where);
    std::size_t index = 0;
    for (const RawNode* item : node.items) {
      const SourceLocation item_where = item->mark.is_null() ? where : at(item->mark);
      out.push(convert_child(*item, fmt::format("{}[{}]", path, index++), item_where, depth + 1));
    }
    return out;
  }

  ArgNode convert_map(const RawNode& node, const std::string& path, const SourceLocation& where,
                      int depth) {
    ArgNode out = ArgNode::map(path, where);
    std::unordered_set<std::string> seen;
    for (std::size_t i = 0; i + 1 < node.items.size(); i += 2) {
      const RawNode& key_node = *node.items[i];
      const SourceLocation key_where = at(key_node.mark);
      if (key_node.kind != RawNode::Kind::Scalar) {
        throw InputError(path, "a map key must be a plain name, not a map or list", key_where);
      }
      const std::string& key = key_node.text;
      const std::string child_path = path.empty() ? key : path + "." + key;
      if (!seen.insert(key).second) {
        throw InputError(child_path, fmt::format("duplicate key '{}'", key), key_where);
      }
      out.set(key, convert_child(*node.items[i + 1], child_path, key_where, depth + 1));
    }
    return out;
  }

  const std::string& file_;
  std::size_t max_values_;
  std::size_t count_ = 0;
  std::unordered_set<const RawNode*> visited_;
  int alias_depth_ = 0;
  std::size_t alias_values_ = 0;
  std::size_t alias_bytes_ = 0;
};

// yaml-cpp 0.7 (Debian 12) leaves a ',' outside any [...] or {...} in its token queue: the
// document parser reads it as an empty node without consuming it, so every further
// Parser::HandleNextDocument returns one more empty document at the same place and YAML::LoadAll
// collects them until memory runs out (`printf ','` is enough). This reader asks for at most three
// documents; two empty ones in a row at one mark are that token.
bool stuck_on_token(const RawNode* a, const RawNode* b) {
  return a != nullptr && b != nullptr && a->kind == RawNode::Kind::Null &&
         b->kind == RawNode::Kind::Null && a->mark.pos == b->mark.pos;
}

// Where the stuck ',' is: the first one at or after the empty node's mark (properties such as
// `&name` or `!tag` may stand before it).
SourceLocation stray_comma(std::string_view text, const YAML::Mark& mark, const std::string& file) {
  int line = mark.line + 1;
  int column = mark.column + 1;
  for (std::size_t i = static_cast<std::size_t>(std::max(mark.pos, 0)); i < text.size(); ++i) {
    if (text[i] == ',') break;
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return SourceLocation{file, line, column};
}

}  // namespace

ArgNode parse_yaml_args(std::string_view text, const std::string& filename,
                        const std::string& root_path, std::size_t max_values) {
  const SourceLocation start{filename, 1, 1};
  YamlConverter converter(filename, max_values);
  std::istringstream in{std::string(text)};
  // The first document, a second one (an error) and, when that second one is empty, a third
  // that tells a stuck token from a genuine empty document.
  TreeBuilder documents[3];
  int found = 0;
  try {
    YAML::Parser parser(in);
    while (found < 3 && parser.HandleNextDocument(documents[found])) {
      ++found;
      const RawNode* last = documents[found - 1].root();
      if (found >= 2 && (last == nullptr || last->kind != RawNode::Kind::Null)) break;
    }
  } catch (const YAML::DeepRecursion& e) {
    throw InputError("", "YAML nested too deeply", converter.at(e.mark));
  } catch (const YAML::Exception& e) {
    throw InputError("", "YAML syntax error: " + e.msg, converter.at(e.mark));
  }
  for (int i = 0; i + 1 < found; ++i) {
    if (stuck_on_token(documents[i].root(), documents[i + 1].root())) {
      throw InputError("", "YAML syntax error: ',' outside a flow collection ([...] or {...})",
                       stray_comma(text, documents[i].root()->mark, filename));
    }
  }
  if (found == 0 || documents[0].root() == nullptr) {
    return ArgNode::scalar("", root_path, start);
  }
  if (found > 1) {
    const RawNode* extra = documents[1].root();
    throw InputError("", "only one YAML document is allowed per file (found a second '---')",
                     extra == nullptr ? start : converter.at(extra->mark));
  }
  const RawNode& root = *documents[0].root();
  return converter.convert_root(root, root_path,
                                root.mark.is_null() ? start : converter.at(root.mark));
}

}  // namespace lockstep
