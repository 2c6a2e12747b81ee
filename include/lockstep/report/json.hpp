#pragma once
// The JSON writer of every result kind, with the unit in every key (time_us, busbw_GBps,
// cost_usd): results.json holds them all, and each command's `--format json` prints the same
// object for its kind (`collective`: the sweeps, `topo`: the inventory, `train`: the training
// step). The format is described by docs/results.schema.json (one definition per kind); keys keep
// a fixed order and numbers print in their shortest round-trip form, so the same run gives
// byte-identical output.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "lockstep/report/results.hpp"

namespace lockstep::report {

/// The version of the results.json format; bump it when a key changes meaning or goes away.
inline constexpr int kResultsSchemaVersion = 1;

/// One sweep: {op, algorithm, engine, rows} (definitions/sweep).
nlohmann::ordered_json sweep_to_json(const Sweep& sweep);
/// A list of sweeps, as a variant's `collectives` and `lockstep collective --format json`.
nlohmann::ordered_json sweeps_to_json(const std::vector<Sweep>& sweeps);
/// A training step (definitions/training), as `lockstep train --format json` prints it.
nlohmann::ordered_json training_to_json(const Training& training);
/// A bill of materials with its figures of merit (definitions/inventory), as `lockstep topo`.
nlohmann::ordered_json inventory_to_json(const Inventory& inventory);
/// One variant of results.json (definitions/variant); report/json_read.hpp reads it back.
nlohmann::ordered_json variant_to_json(const Variant& variant);
nlohmann::ordered_json results_to_json(const RunResults& results);

/// `value` as text, indented by two spaces, ending with a newline; invalid UTF-8 in strings
/// (user-given names and text) is replaced rather than thrown on.
std::string json_text(const nlohmann::ordered_json& value);

/// json_text(results_to_json(results)).
std::string results_json_text(const RunResults& results);

}  // namespace lockstep::report
