#pragma once
// What `lockstep topo` prints: an Inventory as an aligned text table, JSON (the inventory object
// of results.json, json.hpp) or CSV. Every number carries its unit in its column (or key, or
// metric) name; the output depends only on the inventory, so the same scenario prints
// byte-identical text.
#include <string>

#include "lockstep/core/error.hpp"
#include "lockstep/topology/inventory.hpp"

namespace lockstep::report {

enum class TopoFormat { Table, Json, Csv };

/// Parses "table", "json" or "csv"; InputError naming `--format` otherwise.
TopoFormat parse_topo_format(const std::string& text);

/// The whole report in one string, ending with a newline.
std::string format_inventory(const Inventory& inv, TopoFormat format);

/// Dollars at a readable magnitude, as the HTML report writes them: $37.18M, $30.0k, $2.50.
std::string format_usd(double usd);

}  // namespace lockstep::report
