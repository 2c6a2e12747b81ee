// What `lockstep topo` prints: units in every numeric column, the three formats agreeing.
#include "lockstep/scenario/topo_output.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace lockstep {
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
  // The switch line: 8 x 500 W = 4.0 kW, 8 x $20,000 = $160,000.
  EXPECT_NE(t.find("4.0      160000\n"), std::string::npos) << t;
}

TEST(TopoOutput, JsonCarriesTheSameFigures) {
  const auto j = nlohmann::json::parse(format_inventory(sample(), TopoFormat::Json));
  EXPECT_EQ(j["gpus_count"], 16);
  EXPECT_EQ(j["feasible"], false);
  EXPECT_DOUBLE_EQ(j["injection_per_gpu_Gbps"].get<double>(), 400.0);
  EXPECT_DOUBLE_EQ(j["bisection_Tbps"].get<double>(), 3.2);
  EXPECT_DOUBLE_EQ(j["max_one_way_latency_us"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(j["power_kW"].get<double>(), 12.345);
  EXPECT_EQ(j["tiers"][0]["switches_count"], 8);
  EXPECT_EQ(j["bill_of_materials"][0]["item"], "Switch \"X\"");
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
}  // namespace lockstep
