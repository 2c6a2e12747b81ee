// What `lockstep topo` prints: units in every numeric column, the three formats agreeing, and
// JSON that is results.json's inventory object.
#include "lockstep/report/inventory.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "lockstep/report/json.hpp"

namespace lockstep::report {
namespace {

Inventory sample() {
  Inventory inv;
  inv.design = "test design, with a comma";
  inv.gpus = 16;
  inv.nodes = 2;
  inv.nics = 16;
  inv.cables = 48;
  inv.transceivers = 64;
  inv.ports_per_gpu = 1;
  inv.power_w = 12'345;
  inv.cost_usd = 1'000'000.4;
  inv.injection_per_gpu = Bandwidth::gbps(400);
  inv.bisection = Bandwidth::gbps(3200);
  inv.diameter_switch_hops = 4;
  inv.max_one_way_latency = Time::ns(1500);
  inv.tiers.push_back({"leaf", 8, 32, 0, 2.0});
  inv.lines.push_back({"Switch \"X\"", "switch", "leaf", 8, 500, 20'000});
  inv.feasible = false;
  inv.problems.push_back("too many ports");
  return inv;
}

TEST(TopoOutput, TableHasUnitsAndValues) {
  const std::string t = format_inventory(sample(), TopoFormat::Table);
  EXPECT_NE(t.find("feasible: no\n  - too many ports\n"), std::string::npos) << t;
  EXPECT_NE(t.find("GPUs (count)"), std::string::npos);
  // 12,345 W = 12.3 kW; 400 Gb/s; 3,200 Gb/s = 3.2 Tb/s; 1,500 ns = 1.5 us.
  EXPECT_NE(t.find("power (kW)"), std::string::npos);
  EXPECT_NE(t.find(" 12.3\n"), std::string::npos) << t;
  EXPECT_NE(t.find(" 400.0\n"), std::string::npos) << t;
  EXPECT_NE(t.find(" 3.200\n"), std::string::npos) << t;
  EXPECT_NE(t.find(" 1.500\n"), std::string::npos) << t;
  EXPECT_NE(t.find("oversubscription (down:up)"), std::string::npos);
  // The switch line: 8 x 500 W = 4.0 kW, 8 x $20,000 = $160,000, written as money.
  EXPECT_NE(t.find("$20000         4.0  $160.0k\n"), std::string::npos) << t;
}

TEST(TopoOutput, MoneyAtAReadableMagnitude) {
  EXPECT_EQ(format_usd(47'232'000), "$47.23M");
  EXPECT_EQ(format_usd(160'000), "$160.0k");
  EXPECT_EQ(format_usd(999.5), "$999.50");
  EXPECT_EQ(format_usd(0), "$0.00");
}

TEST(TopoOutput, JsonIsTheResultsInventory) {
  const std::string text = format_inventory(sample(), TopoFormat::Json);
  EXPECT_EQ(text, json_text(inventory_to_json(sample())));
  const auto j = nlohmann::json::parse(text);
  const auto ordered = nlohmann::ordered_json::parse(text);
  std::vector<std::string> keys;
  for (const auto& [key, value] : ordered.items()) keys.push_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{"design",
                                            "gpus",
                                            "nodes",
                                            "nics",
                                            "tiers",
                                            "lines",
                                            "cables",
                                            "transceivers",
                                            "ports_per_gpu",
                                            "injection_per_gpu_GBps",
                                            "bisection_GBps",
                                            "diameter_switch_hops",
                                            "max_one_way_latency_us",
                                            "power_w",
                                            "cost_usd",
                                            "network_cost_usd",
                                            "network_cost_per_gpu_usd",
                                            "feasible",
                                            "problems",
                                            "graph_built"}));
  EXPECT_EQ(j["gpus"], 16);
  EXPECT_EQ(j["feasible"], false);
  EXPECT_EQ(j["problems"][0], "too many ports");
  // 400 Gb/s = 50 GB/s; 3,200 Gb/s = 400 GB/s; 1,500 ns = 1.5 us; 12,345 W; $1,000,000.40.
  EXPECT_DOUBLE_EQ(j["injection_per_gpu_GBps"].get<double>(), 50.0);
  EXPECT_DOUBLE_EQ(j["bisection_GBps"].get<double>(), 400.0);
  EXPECT_DOUBLE_EQ(j["max_one_way_latency_us"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(j["power_w"].get<double>(), 12345.0);
  EXPECT_DOUBLE_EQ(j["cost_usd"].get<double>(), 1000000.4);
  EXPECT_EQ(j["tiers"][0]["switches"], 8);
  EXPECT_DOUBLE_EQ(j["tiers"][0]["oversubscription"].get<double>(), 2.0);
  EXPECT_EQ(j["lines"][0]["item"], "Switch \"X\"");
  // The switch line: 8 x 500 W = 4,000 W, 8 x $20,000 = $160,000.
  EXPECT_DOUBLE_EQ(j["lines"][0]["power_w"].get<double>(), 4000.0);
  EXPECT_DOUBLE_EQ(j["lines"][0]["cost_usd"].get<double>(), 160000.0);
}

// The network-only subtotal leaves out the GPU line and nothing else: sample()'s switch line
// (8 x $20,000 = $160,000) plus a GPU line (16 x $30,000) and a NIC line (16 x $2,000 = $32,000)
// gives $192,000 of network, $12,000 per GPU, in all three formats.
TEST(TopoOutput, NetworkCostIsEverythingButGpus) {
  Inventory inv = sample();
  inv.lines.push_back({"GPU", "gpu", "", 16, 700, 30'000});
  inv.lines.push_back({"NIC", "nic", "", 16, 25, 2'000});
  EXPECT_DOUBLE_EQ(network_cost_usd(inv), 192'000.0);
  EXPECT_DOUBLE_EQ(network_cost_per_gpu_usd(inv), 12'000.0);
  const std::string t = format_inventory(inv, TopoFormat::Table);
  EXPECT_NE(t.find("network cost (all but GPUs)      $192.0k\n"), std::string::npos) << t;
  EXPECT_NE(t.find("network cost per GPU              $12.0k\n"), std::string::npos) << t;
  const std::string c = format_inventory(inv, TopoFormat::Csv);
  EXPECT_NE(c.find("\nnetwork_cost_USD,192000\nnetwork_cost_per_gpu_USD,12000.00\n"),
            std::string::npos)
      << c;
  const auto j = nlohmann::json::parse(format_inventory(inv, TopoFormat::Json));
  EXPECT_DOUBLE_EQ(j["network_cost_usd"].get<double>(), 192'000.0);
  EXPECT_DOUBLE_EQ(j["network_cost_per_gpu_usd"].get<double>(), 12'000.0);
  // No GPUs: the per-GPU figure is 0, not a division by zero.
  inv.gpus = 0;
  EXPECT_DOUBLE_EQ(network_cost_per_gpu_usd(inv), 0.0);
}

TEST(TopoOutput, CsvQuotesTextWithCommasAndQuotes) {
  const std::string c = format_inventory(sample(), TopoFormat::Csv);
  EXPECT_EQ(c.rfind("metric,value\ndesign,\"test design, with a comma\"\n", 0), 0u) << c;
  EXPECT_NE(c.find("\ngpus_count,16\n"), std::string::npos);
  EXPECT_NE(c.find("\ntier.leaf.oversubscription_ratio,2.00\n"), std::string::npos);
  EXPECT_NE(c.find("\n\"switch.leaf.Switch \"\"X\"\".count\",8\n"), std::string::npos) << c;
}

TEST(TopoOutput, FormatNamesAreChecked) {
  EXPECT_EQ(parse_topo_format("csv"), TopoFormat::Csv);
  EXPECT_THROW(parse_topo_format("xml"), InputError);
}

}  // namespace
}  // namespace lockstep::report
