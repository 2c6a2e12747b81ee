#include "lockstep/report/html.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "lockstep/report/assets.hpp"
#include "lockstep/report/json.hpp"
#include "sample_results.hpp"

namespace lockstep::report {
namespace {

using testing::sample_results;

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(Html, EscapesJsonForScript) {
  EXPECT_EQ(escape_json_for_script(R"({"a":"</script><!--&"})"),
            R"({"a":"\u003c/script\u003e\u003c!--\u0026"})");
  // The escaped text is still the same JSON value.
  const std::string raw = R"({"a":"</script><!--&"})";
  EXPECT_EQ(nlohmann::json::parse(escape_json_for_script(raw)), nlohmann::json::parse(raw));
}

TEST(Html, EscapesHtml) {
  EXPECT_EQ(escape_html("a<b & \"c\" 'd'>"), "a&lt;b &amp; &quot;c&quot; &#39;d&#39;&gt;");
}

TEST(Html, SelfContainedWithDataLibraryAndScript) {
  const std::string html = render_html(sample_results());
  // Three script elements (data, library, page script); user text cannot add or close one.
  EXPECT_EQ(count(html, "<script"), 3u);
  EXPECT_EQ(count(html, "</script>"), 3u);
  EXPECT_EQ(count(html, "LOCKSTEP_"), 0u) << "a placeholder was left unfilled";
  EXPECT_NE(html.find(std::string(chart_library_js().substr(0, 200))), std::string::npos);
  EXPECT_NE(html.find("vegaEmbed"), std::string::npos);
  // Nothing is fetched: no http(s) src/href attributes.
  EXPECT_EQ(count(html, "src=\"http"), 0u);
  EXPECT_EQ(count(html, "href=\"http"), 0u);
  EXPECT_NE(html.find("<title>Test &lt;run&gt; &amp; &quot;quotes&quot;</title>"),
            std::string::npos);
}

TEST(Html, EmbeddedDataParsesBackToResultsJson) {
  const std::string html = render_html(sample_results());
  const std::string open = "<script type=\"application/json\" id=\"lockstep-data\">";
  const auto start = html.find(open);
  ASSERT_NE(start, std::string::npos);
  const auto body = start + open.size();
  const auto end = html.find("</script>", body);
  const auto embedded = nlohmann::ordered_json::parse(html.substr(body, end - body));
  EXPECT_EQ(embedded, results_to_json(sample_results()));
}

TEST(Html, LibraryVersionsNamed) {
  EXPECT_NE(chart_library_versions().find("vega-lite "), std::string_view::npos);
}

}  // namespace
}  // namespace lockstep::report
