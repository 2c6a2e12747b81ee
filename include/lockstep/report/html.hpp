#pragma once
// report.html: one self-contained file (no network fetches) holding the results as JSON, the
// page's script and the charting library (Vega, Vega-Lite and vega-embed from npm, inlined at
// build time, see report/web/). The page draws the summary, the topology by tiers, the bill of
// materials, bus bandwidth against message size, the iteration time breakdown, the jitter CDF,
// the busiest links' utilisation heat map and the scenario itself.
#include <string>
#include <string_view>

#include "lockstep/report/results.hpp"

namespace lockstep::report {

std::string render_html(const RunResults& results);

/// JSON text made safe to sit inside a <script> element: every '<', '>' and '&' (which JSON
/// allows only inside strings) becomes its \u00XX escape, so neither "</script>" nor "<!--" can
/// appear and JSON.parse still reads the same value.
std::string escape_json_for_script(std::string_view json);
/// Text made safe for HTML element content: & < > " '.
std::string escape_html(std::string_view text);

}  // namespace lockstep::report
