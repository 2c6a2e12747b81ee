#pragma once
// The report page's assets, embedded into the binary at build time from report/web/ (see
// report/web/embed.cmake): the HTML template and the minified charting library.
#include <string_view>

namespace lockstep::report {

/// report/web/template.html, with the placeholders html.cpp fills.
std::string_view report_template_html();
/// report/web/report.js: the page's script that turns the results into charts.
std::string_view report_script_js();
/// vega.min.js + vega-lite.min.js + vega-embed.min.js, in that order, as shipped on npm.
std::string_view chart_library_js();
/// "vega 6.4.0, vega-lite 6.4.1, vega-embed 7.3.0": what is inlined, for the page's footer.
std::string_view chart_library_versions();

}  // namespace lockstep::report
