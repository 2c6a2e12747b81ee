#pragma once
// The reader of json.hpp's variant records: a variant written by results_to_json reads back to
// the same Variant, so that json_text of it again is byte-identical. `lockstep sweep` keeps each
// point's results in such a record (its resumable per-point file, and what MPI ranks send to
// rank 0) and merges them into one RunResults for results.json, the CSV tables and report.html.
#include <nlohmann/json.hpp>

#include "lockstep/report/results.hpp"

namespace lockstep::report {

/// One element of results.json's `variants` (definitions/variant). Throws
/// nlohmann::json::exception on a record of another shape (a file lockstep did not write).
Variant variant_from_json(const nlohmann::ordered_json& json);

}  // namespace lockstep::report
