// Strict JSON (RFC 8259) -> ArgNode with exact line:column for every value. A small reader of our
// own, because the JSON libraries at hand do not report positions of values, and going through a
// YAML parser costs seconds and gigabytes on graphs of 100,000 links.
#include "lockstep/config/json_reader.hpp"

#include <fmt/format.h>

#include <unordered_set>

namespace lockstep {
namespace {

constexpr int kMaxDepth = 200;

class JsonReader {
 public:
  JsonReader(std::string_view text, const std::string& file, std::size_t max_values)
      : text_(text), file_(file), max_values_(max_values) {}

  ArgNode document(const std::string& root_path) {
    skip_space();
    ArgNode root = value(root_path, here(), 0);
    skip_space();
    if (pos_ < text_.size()) fail(fmt::format("unexpected {} after the JSON value", shown()));
    return root;
  }

 private:
  SourceLocation here() const { return SourceLocation{file_, line_, column_}; }

  [[noreturn]] void fail(const std::string& what) const {
    throw InputError("", "JSON syntax error: " + what, here());
  }

  std::string shown() const {
    if (pos_ >= text_.size()) return "end of file";
    const auto c = static_cast<unsigned char>(text_[pos_]);
    return c >= 0x20 && c < 0x7F ? fmt::format("'{}'", static_cast<char>(c))
                                 : fmt::format("byte 0x{:02X}", c);
  }

  void advance() {
    if (text_[pos_] == '\n') {
      ++line_;
      column_ = 1;
    } else {
      ++column_;
    }
    ++pos_;
  }

  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r')) {
      advance();
    }
  }

  void expect(char c, const char* context) {
    if (pos_ >= text_.size() || text_[pos_] != c) {
      fail(fmt::format("unexpected {} (expected '{}' {})", shown(), c, context));
    }
    advance();
  }

  // `where` locates maps and lists (for a member: its key); scalars carry their own position.
  ArgNode value(const std::string& path, const SourceLocation& where, int depth) {
    if (++count_ > max_values_) {
      throw InputError(path, fmt::format("document too large (more than {} values)", max_values_),
                       where);
    }
    if (depth > kMaxDepth) throw InputError(path, "nested too deeply", where);
    if (pos_ >= text_.size()) fail("unexpected end of file (expected a value)");
    const char c = text_[pos_];
    if (c == '{') return object(path, where, depth);
    if (c == '[') return array(path, where, depth);
    const SourceLocation at = here();
    if (c == '"') return ArgNode::scalar(string_literal(), path, at);
    if (c == '-' || (c >= '0' && c <= '9')) return ArgNode::scalar(number(), path, at);
    for (const char* word : {"true", "false", "null"}) {
      if (text_.substr(pos_, std::char_traits<char>::length(word)) == word) {
        for (const char* p = word; *p; ++p) advance();
        return ArgNode::scalar(word[0] == 'n' ? "" : word, path, at);
      }
    }
    fail(fmt::format("unexpected {} (expected a value)", shown()));
  }

  ArgNode object(const std::string& path, const SourceLocation& where, int depth) {
    ArgNode out = ArgNode::map(path, where);
    std::unordered_set<std::string> seen;
    advance();  // '{'
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == '}') {
      advance();
      return out;
    }
    while (true) {
      skip_space();
      const SourceLocation key_at = here();
      if (pos_ >= text_.size() || text_[pos_] != '"') {
        fail(fmt::format("unexpected {} (expected a quoted key)", shown()));
      }
      const std::string key = string_literal();
      const std::string child_path = path.empty() ? key : path + "." + key;
      if (!seen.insert(key).second) {
        throw InputError(child_path, fmt::format("duplicate key '{}'", key), key_at);
      }
      skip_space();
      expect(':', "after a key");
      skip_space();
      out.set(key, value(child_path, key_at, depth + 1));
      skip_space();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        advance();
        continue;
      }
      expect('}', "or ',' after a member");
      return out;
    }
  }

  ArgNode array(const std::string& path, const SourceLocation& where, int depth) {
    ArgNode out = ArgNode::list(path, where);
    advance();  // '['
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == ']') {
      advance();
      return out;
    }
    for (std::size_t index = 0;; ++index) {
      skip_space();
      out.push(value(fmt::format("{}[{}]", path, index), here(), depth + 1));
      skip_space();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        advance();
        continue;
      }
      expect(']', "or ',' after a list item");
      return out;
    }
  }

  std::string number() {
    const std::size_t start = pos_;
    auto digits = [&] {
      const std::size_t from = pos_;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') advance();
      if (pos_ == from) fail(fmt::format("unexpected {} in a number", shown()));
    };
    if (text_[pos_] == '-') advance();
    if (pos_ < text_.size() && text_[pos_] == '0') {
      advance();
    } else {
      digits();
    }
    if (pos_ < text_.size() && text_[pos_] == '.') {
      advance();
      digits();
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      advance();
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) advance();
      digits();
    }
    return std::string(text_.substr(start, pos_ - start));
  }

  unsigned hex4() {
    unsigned v = 0;
    for (int i = 0; i < 4; ++i) {
      if (pos_ >= text_.size()) fail("unexpected end of file in a \\u escape");
      const char c = text_[pos_];
      const int d = c >= '0' && c <= '9'   ? c - '0'
                    : c >= 'a' && c <= 'f' ? c - 'a' + 10
                    : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                           : -1;
      if (d < 0) fail(fmt::format("unexpected {} in a \\u escape", shown()));
      v = v * 16 + static_cast<unsigned>(d);
      advance();
    }
    return v;
  }

  static void append_utf8(std::string& out, unsigned cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  std::string string_literal() {
    advance();  // opening quote
    std::string out;
    while (true) {
      if (pos_ >= text_.size()) fail("unexpected end of file in a string");
      const char c = text_[pos_];
      if (c == '"') {
        advance();
        return out;
      }
      if (static_cast<unsigned char>(c) < 0x20) fail("control character in a string");
      if (c != '\\') {
        out += c;
        advance();
        continue;
      }
      advance();
      if (pos_ >= text_.size()) fail("unexpected end of file in a string");
      const char e = text_[pos_];
      advance();
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out += e;
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          unsigned cp = hex4();
          if (cp >= 0xD800 && cp < 0xDC00 && text_.substr(pos_, 2) == "\\u") {
            advance();
            advance();
            const unsigned low = hex4();
            if (low < 0xDC00 || low > 0xDFFF) fail("invalid UTF-16 surrogate pair");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          }
          append_utf8(out, cp);
          break;
        }
        default:
          fail(fmt::format("unknown escape '\\{}' in a string", e));
      }
    }
  }

  std::string_view text_;
  const std::string& file_;
  std::size_t max_values_;
  std::size_t count_ = 0;
  std::size_t pos_ = 0;
  int line_ = 1;
  int column_ = 1;
};

}  // namespace

ArgNode parse_json_args(std::string_view text, const std::string& filename,
                        const std::string& root_path, std::size_t max_values) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return ArgNode::scalar("", root_path, SourceLocation{filename, 1, 1});
  }
  return JsonReader(text, filename, max_values).document(root_path);
}

}  // namespace lockstep
