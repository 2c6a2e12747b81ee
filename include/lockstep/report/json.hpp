#pragma once
// results.json: everything a run produced, machine-readable, with the unit in every key
// (time_us, busbw_GBps, cost_usd). The format is described by docs/results.schema.json; keys keep
// a fixed order and numbers print in their shortest round-trip form, so the same run gives
// byte-identical output.
#include <nlohmann/json.hpp>
#include <string>

#include "lockstep/report/results.hpp"

namespace lockstep::report {

/// The version of the results.json format; bump it when a key changes meaning or goes away.
inline constexpr int kResultsSchemaVersion = 1;

nlohmann::ordered_json inventory_to_json(const Inventory& inventory);
nlohmann::ordered_json results_to_json(const RunResults& results);

/// results_to_json(results) as text, indented by two spaces, ending with a newline.
std::string results_json_text(const RunResults& results);

}  // namespace lockstep::report
