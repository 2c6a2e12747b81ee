#pragma once
// One check for the Clos designs the tests count by hand: the switches per tier, their ports,
// cables, transceivers and bill-of-materials lines a comment derived, on the inventory as
// counted from the built graph and as tallied in closed form (both must give the hand's numbers).
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "topology_test_util.hpp"

namespace lockstep::test {

/// What a hand derivation states of a Clos design; an empty field is not checked.
struct ExpectedClos {
  std::optional<bool> feasible;
  std::optional<std::uint64_t> leaves, spines, cores;
  std::optional<std::uint64_t> leaf_ports_free;
  std::optional<std::uint64_t> spine_ports_used, spine_ports_free;
  std::optional<std::uint64_t> core_ports_used, core_ports_free;
  std::optional<std::uint64_t> cables, transceivers;
  std::vector<std::pair<std::string, std::uint64_t>> lines;  // bill-of-materials item, count
  std::string design_has;                                    // a part of the design line
};

/// The count of the bill of materials' line `item` (0 without one).
inline std::uint64_t line_count(const Inventory& inv, const std::string& item) {
  for (const auto& l : inv.lines) {
    if (l.item == item) return l.count;
  }
  return 0;
}

inline void expect_clos(const Inventory& inv, const ExpectedClos& want) {
  auto check = [&](const std::optional<std::uint64_t>& expected, std::uint64_t got,
                   const char* what) {
    if (expected) {
      EXPECT_EQ(got, *expected) << what;
    }
  };
  // A missing tier has no switches and no ports.
  auto ports = [&](const char* tier, bool used) -> std::uint64_t {
    const TierFigures* t = tier_of(inv, tier);
    return t == nullptr ? 0 : used ? t->ports_used : t->ports_free;
  };
  if (want.feasible) {
    EXPECT_EQ(inv.feasible, *want.feasible);
  }
  check(want.leaves, switches_in(inv, "leaf"), "leaves");
  check(want.spines, switches_in(inv, "spine"), "spines");
  check(want.cores, switches_in(inv, "core"), "cores");
  check(want.leaf_ports_free, ports("leaf", false), "leaf ports free");
  check(want.spine_ports_used, ports("spine", true), "spine ports used");
  check(want.spine_ports_free, ports("spine", false), "spine ports free");
  check(want.core_ports_used, ports("core", true), "core ports used");
  check(want.core_ports_free, ports("core", false), "core ports free");
  check(want.cables, inv.cables, "cables");
  check(want.transceivers, inv.transceivers, "transceivers");
  for (const auto& [item, count] : want.lines) {
    EXPECT_EQ(line_count(inv, item), count) << item;
  }
  if (!want.design_has.empty()) {
    EXPECT_NE(inv.design.find(want.design_has), std::string::npos) << inv.design;
  }
}

/// Builds `kv` as a graph and in closed form and holds both to `want`.
inline void expect_clos_both_ways(const Kv& kv, const ExpectedClos& want) {
  for (const bool graph : {true, false}) {
    SCOPED_TRACE(graph ? "counted graph" : "closed form");
    const Inventory inv = build(kv, graph).inventory;
    EXPECT_EQ(inv.graph_built, graph);
    expect_clos(inv, want);
  }
}

}  // namespace lockstep::test
