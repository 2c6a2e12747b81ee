#include "lockstep/core/memory_budget.hpp"

#include <gtest/gtest.h>

#include "lockstep/core/error.hpp"

namespace lockstep {
namespace {

TEST(MemoryBudget, EstimateListsItsPartsLargestFirst) {
  RunEstimate e;
  e.add("graph", 512.0 * 1024);
  e.add("flow engine", 3.0 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(e.total(), 3.0 * 1024 * 1024 * 1024 + 512.0 * 1024);
  EXPECT_EQ(e.text(), "3 GiB (flow engine 3 GiB, graph 512 KiB)");
}

TEST(MemoryBudget, OverBudgetIsAnInputErrorWithTheEstimate) {
  RunEstimate e;
  e.add("alltoallv matrix", 8e10);  // 100,000^2 sizes of 8 bytes
  MemoryBudget b{.bytes = 1024.0 * 1024 * 1024};
  try {
    admit(e, b, "try fewer --ranks");
    FAIL() << "admitted";
  } catch (const InputError& err) {
    EXPECT_EQ(err.field(), "--max-memory");
    EXPECT_NE(err.bare_message().find("74.5 GiB (alltoallv matrix 74.5 GiB)"), std::string::npos)
        << err.bare_message();
    EXPECT_NE(err.bare_message().find("budget of 1 GiB; try fewer --ranks"), std::string::npos)
        << err.bare_message();
  }
  b.bytes = 1e11;
  EXPECT_TRUE(admit(e, b, ""));
  b.dry_run = true;  // printed, not run, even when it fits
  EXPECT_FALSE(admit(e, b, ""));
}

TEST(MemoryBudget, PacketEventsHaveTheirOwnBudget) {
  RunEstimate e;
  e.events = 1e9;
  MemoryBudget b{.bytes = 1e9, .max_events = kDefaultMaxEvents};
  try {
    admit(e, b, "");
    FAIL() << "admitted";
  } catch (const InputError& err) {
    EXPECT_EQ(err.field(), "--max-events");
    // 1e9 events at 5.6 M per CPU-second: 179 s.
    EXPECT_NE(err.bare_message().find("about 179 s of CPU"), std::string::npos)
        << err.bare_message();
  }
  b.max_events = 2e9;
  EXPECT_TRUE(admit(e, b, ""));
}

TEST(MemoryBudget, DefaultIsHalfTheMachine) {
  const double machine = machine_memory_bytes();
  EXPECT_GT(machine, 64.0 * 1024 * 1024);  // any machine that builds lockstep has more
  EXPECT_DOUBLE_EQ(default_memory_budget(), machine / 2);
}

}  // namespace
}  // namespace lockstep
