// report.html: the embedded template with its placeholders filled. The results travel as JSON
// inside <script type="application/json">, read by the page's own script, so the HTML never
// interpolates user text outside that element (and the title, which is escaped).
#include "lockstep/report/html.hpp"

#include <array>
#include <stdexcept>
#include <utility>

#include "lockstep/report/assets.hpp"
#include "lockstep/report/json.hpp"

namespace lockstep::report {

std::string escape_json_for_script(std::string_view json) {
  std::string out;
  out.reserve(json.size());
  for (char c : json) {
    switch (c) {
      case '<':
        out += "\\u003c";
        break;
      case '>':
        out += "\\u003e";
        break;
      case '&':
        out += "\\u0026";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string escape_html(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string render_html(const RunResults& results) {
  const std::string data = escape_json_for_script(results_json_text(results));
  const std::string title = escape_html(results.title.empty() ? "lockstep report" : results.title);
  const std::array<std::pair<std::string_view, std::string_view>, 5> fills{{
      {"<!--LOCKSTEP_TITLE-->", title},
      {"<!--LOCKSTEP_LIBRARY_VERSIONS-->", chart_library_versions()},
      {"/*LOCKSTEP_CHART_LIBRARY*/", chart_library_js()},
      {"/*LOCKSTEP_DATA*/", data},
      {"/*LOCKSTEP_REPORT_SCRIPT*/", report_script_js()},
  }};
  // One pass over the template: text substituted in is never searched again for placeholders.
  const std::string_view tmpl = report_template_html();
  std::string out;
  out.reserve(tmpl.size() + data.size() + chart_library_js().size() + report_script_js().size());
  std::size_t pos = 0;
  while (pos < tmpl.size()) {
    std::size_t best = std::string_view::npos;
    const std::pair<std::string_view, std::string_view>* which = nullptr;
    for (const auto& fill : fills) {
      const std::size_t at = tmpl.find(fill.first, pos);
      if (at < best) {
        best = at;
        which = &fill;
      }
    }
    if (which == nullptr) {
      out.append(tmpl.substr(pos));
      break;
    }
    out.append(tmpl.substr(pos, best - pos));
    out.append(which->second);
    pos = best + which->first.size();
  }
  return out;
}

}  // namespace lockstep::report
