// `lockstep topo`'s output: table and CSV here; JSON is results.json's inventory (json.cpp).
#include "lockstep/report/inventory.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "lockstep/core/error.hpp"
#include "lockstep/report/json.hpp"

namespace lockstep::report {
namespace {

// One summary figure: a name with its unit, and its value already rendered.
struct Figure {
  std::string key;    // machine name with unit suffix (CSV metric)
  std::string label;  // human name with unit in parentheses (table)
  std::string text;   // rendered value
};

std::string fixed(double v, int decimals) {
  return fmt::format("{:.{}f}", v, decimals);
}

std::vector<Figure> summary(const Inventory& inv) {
  const double inj_gbps = inv.injection_per_gpu.gigabits_per_second();
  const double bis_tbps = inv.bisection.gigabits_per_second() / 1e3;
  const double lat_us = inv.max_one_way_latency.microseconds();
  auto count = [](std::string key, std::string label, std::uint64_t v) {
    return Figure{std::move(key), std::move(label), std::to_string(v)};
  };
  return {
      count("gpus_count", "GPUs (count)", inv.gpus),
      count("nodes_count", "nodes (count)", inv.nodes),
      count("nics_count", "NICs (count)", inv.nics),
      count("network_ports_per_gpu_count", "network ports per GPU (count)", inv.ports_per_gpu),
      count("cables_count", "cables (count)", inv.cables),
      count("transceivers_count", "transceivers (count)", inv.transceivers),
      {"power_kW", "power (kW)", fixed(inv.power_w / 1e3, 1)},
      {"cost_USD", "approximate cost (USD)", fixed(inv.cost_usd, 0)},
      {"network_cost_USD", "network cost, all but GPUs (USD)", fixed(network_cost_usd(inv), 0)},
      {"network_cost_per_gpu_USD", "network cost per GPU (USD)",
       fixed(network_cost_per_gpu_usd(inv), 2)},
      {"injection_per_gpu_Gbps", "injection per GPU (Gb/s)", fixed(inj_gbps, 1)},
      {"bisection_Tbps", "bisection, one direction (Tb/s)", fixed(bis_tbps, 3)},
      count("diameter_switch_hops", "diameter (switch hops)", inv.diameter_switch_hops),
      {"max_one_way_latency_us", "max one-way latency (us)", fixed(lat_us, 3)},
  };
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// Left-aligned first column, right-aligned numbers.
std::string table(const std::vector<std::string>& header,
                  const std::vector<std::vector<std::string>>& rows, std::size_t left_columns) {
  std::vector<std::size_t> width(header.size());
  for (std::size_t c = 0; c < header.size(); ++c) {
    width[c] = header[c].size();
    for (const auto& r : rows) width[c] = std::max(width[c], r[c].size());
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      if (c > 0) out += "  ";
      out += c < left_columns ? fmt::format("{:<{}}", cells[c], width[c])
                              : fmt::format("{:>{}}", cells[c], width[c]);
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = line(header);
  for (const auto& r : rows) out += line(r);
  return out;
}

std::string as_table(const Inventory& inv) {
  std::string out = fmt::format("design: {}\n", inv.design);
  out += fmt::format("feasible: {}\n", inv.feasible ? "yes" : "no");
  for (const auto& p : inv.problems) out += fmt::format("  - {}\n", p);
  if (!inv.graph_built) out += "graph: not built (computed from the design's parameters)\n";
  out += "\n";
  std::vector<std::vector<std::string>> rows;
  for (const Figure& f : summary(inv)) {
    // Money reads as money here (the CSV keeps the plain number for spreadsheets).
    if (f.key == "cost_USD") {
      rows.push_back({"approximate cost", format_usd(inv.cost_usd)});
    } else if (f.key == "network_cost_USD") {
      rows.push_back({"network cost (all but GPUs)", format_usd(network_cost_usd(inv))});
    } else if (f.key == "network_cost_per_gpu_USD") {
      rows.push_back({"network cost per GPU", format_usd(network_cost_per_gpu_usd(inv))});
    } else {
      rows.push_back({f.label, f.text});
    }
  }
  out += table({"figure", "value"}, rows, 1);

  rows.clear();
  for (const TierFigures& t : inv.tiers) {
    rows.push_back({t.tier, std::to_string(t.switches), std::to_string(t.ports_used),
                    std::to_string(t.ports_free), fixed(t.oversubscription, 2)});
  }
  out += "\nswitch tiers\n";
  out += table({"tier", "switches (count)", "ports used (count)", "ports free (count)",
                "oversubscription (down:up)"},
               rows, 1);

  rows.clear();
  std::string notes;
  for (const InventoryLine& l : inv.lines) {
    const double n = static_cast<double>(l.count);
    // A part another line pays for reads "included", not $0; its note says in what.
    const bool included = l.price_note.starts_with("included");
    rows.push_back({l.category, l.tier, l.item, std::to_string(l.count), fixed(l.unit_power_w, 1),
                    included ? "included"
                             : "$" + fixed(l.unit_price_usd, 0) +
                                   (l.price_note.starts_with("estimate") ? " (est.)" : ""),
                    fixed(l.unit_power_w * n / 1e3, 1),
                    included ? "included" : format_usd(l.unit_price_usd * n)});
    if (!l.price_note.empty()) notes += fmt::format("  {}: {}\n", l.item, l.price_note);
  }
  out += "\nbill of materials\n";
  out += table(
      {"category", "tier", "item", "count", "unit power (W)", "unit price", "power (kW)", "cost"},
      rows, 3);
  if (!notes.empty()) out += "prices:\n" + notes;
  return out;
}

// Long format, one figure per row; the metric name carries the unit.
std::string as_csv(const Inventory& inv) {
  std::string out = "metric,value\n";
  out += fmt::format("design,{}\n", csv_field(inv.design));
  out += fmt::format("feasible,{}\n", inv.feasible ? "yes" : "no");
  for (const auto& p : inv.problems) out += fmt::format("problem,{}\n", csv_field(p));
  for (const Figure& f : summary(inv)) out += fmt::format("{},{}\n", f.key, f.text);
  for (const TierFigures& t : inv.tiers) {
    out += fmt::format("tier.{}.switches_count,{}\n", t.tier, t.switches);
    out += fmt::format("tier.{}.ports_used_count,{}\n", t.tier, t.ports_used);
    out += fmt::format("tier.{}.ports_free_count,{}\n", t.tier, t.ports_free);
    out += fmt::format("tier.{}.oversubscription_ratio,{}\n", t.tier, fixed(t.oversubscription, 2));
  }
  for (const InventoryLine& l : inv.lines) {
    const std::string base =
        fmt::format("{}.{}{}", l.category, l.tier.empty() ? "" : l.tier + ".", l.item);
    out += fmt::format("{},{}\n", csv_field(base + ".count"), l.count);
    out += fmt::format("{},{}\n", csv_field(base + ".unit_power_W"), fixed(l.unit_power_w, 1));
    out += fmt::format("{},{}\n", csv_field(base + ".unit_price_USD"), fixed(l.unit_price_usd, 0));
    if (!l.price_note.empty())
      out += fmt::format("{},{}\n", csv_field(base + ".price_note"), csv_field(l.price_note));
  }
  return out;
}

}  // namespace

TopoFormat parse_topo_format(const std::string& text) {
  if (text == "table") return TopoFormat::Table;
  if (text == "json") return TopoFormat::Json;
  if (text == "csv") return TopoFormat::Csv;
  throw InputError("--format",
                   fmt::format("unknown format '{}' (expected one of table, json, csv)", text));
}

std::string format_usd(double usd) {
  if (std::abs(usd) >= 1e6) return fmt::format("${:.2f}M", usd / 1e6);
  if (std::abs(usd) >= 1e3) return fmt::format("${:.1f}k", usd / 1e3);
  return fmt::format("${:.2f}", usd);
}

std::string format_inventory(const Inventory& inv, TopoFormat format) {
  switch (format) {
    case TopoFormat::Table:
      return as_table(inv);
    case TopoFormat::Json:
      return json_text(inventory_to_json(inv));
    case TopoFormat::Csv:
      return as_csv(inv);
  }
  return {};
}

}  // namespace lockstep::report
