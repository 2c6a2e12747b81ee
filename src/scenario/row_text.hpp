#pragma once
// Text tests the calibration row readers share (calibration_row.cpp reads the free-text columns,
// calibration_case.cpp the row as a case): lower-casing, substrings, whole words, model names
// and the first number a pattern captures.
#include <cctype>
#include <cstdint>
#include <regex>
#include <string>
#include <string_view>

namespace lockstep::row_text {

inline std::string lower(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}
inline bool has(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}
inline bool word_char(char ch) {
  return std::isalnum(static_cast<unsigned char>(ch)) != 0 || ch == '_';
}
// `word` standing alone: "ib" in "IB only" but not in "libfabric" or "NCCL_IB_HCA".
inline bool has_word(const std::string& text, std::string_view word) {
  for (std::size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
    const std::size_t end = at + word.size();
    if ((at == 0 || !word_char(text[at - 1])) && (end == text.size() || !word_char(text[end])))
      return true;
  }
  return false;
}
// `name` not followed by a digit: "h20" in "H20 141GB" but not in "H200".
inline bool has_model(const std::string& text, std::string_view name) {
  for (std::size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 1)) {
    const std::size_t end = at + name.size();
    if (end == text.size() || !std::isdigit(static_cast<unsigned char>(text[end]))) return true;
  }
  return false;
}
inline std::uint32_t first_number(const std::string& text, const std::regex& pattern) {
  std::smatch m;
  if (!std::regex_search(text, m, pattern)) return 0;
  const std::string n = m[1].str();
  if (n == "single" || n == "one") return 1;
  if (n == "two" || n == "dual") return 2;
  return static_cast<std::uint32_t>(std::stoul(n));
}

}  // namespace lockstep::row_text
