// The flow engine's index of pending instants (src/engine/flow/instant_index.hpp): open
// addressing whose erase shifts probe runs back. Checked against std::map over random pushes and
// pops of instants, with keys chosen to share home slots (long probe runs, wrapping at the end).
#include "../../../../src/engine/flow/instant_index.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>

namespace lockstep::flow_detail {
namespace {

TEST(InstantIndex, FindsWhatWasInsertedAndForgetsWhatWasErased) {
  InstantIndex index;
  EXPECT_EQ(index.find(5), InstantIndex::kMissing);
  index.insert(5, 7);
  index.insert(0, 3);  // picosecond 0 is a time like any other
  EXPECT_EQ(index.find(5), 7u);
  EXPECT_EQ(index.find(0), 3u);
  index.erase(5);
  EXPECT_EQ(index.find(5), InstantIndex::kMissing);
  EXPECT_EQ(index.find(0), 3u);
  EXPECT_EQ(index.size(), 1u);
  index.clear();
  EXPECT_EQ(index.find(0), InstantIndex::kMissing);
  EXPECT_EQ(index.size(), 0u);
}

// 32 instants fill the first 64 slots half (the most before it grows), so many share a probe
// run (the chance that 32 homes among 64 are all distinct is below 1e-4, and the keys are fixed).
// Erasing every other instant, the rest must stay reachable after each erase: with a plain
// "empty the slot" erase a lookup stops at the hole and misses the run's later entries.
TEST(InstantIndex, ErasingTheHeadOfAProbeRunKeepsTheRestReachable) {
  InstantIndex index;
  std::map<std::int64_t, std::uint32_t> reference;
  for (std::uint32_t k = 0; k < 32; ++k) {
    const std::int64_t ps = std::int64_t{k} * 1'000'003;
    index.insert(ps, k);
    reference[ps] = k;
  }
  for (auto it = reference.begin(); it != reference.end();) {
    index.erase(it->first);
    it = reference.erase(it);
    if (it != reference.end()) ++it;  // every other key
    for (const auto& [ps, bucket] : reference) ASSERT_EQ(index.find(ps), bucket) << ps;
  }
}

TEST(InstantIndex, AgreesWithAMapOverRandomPushesAndPops) {
  InstantIndex index;
  std::map<std::int64_t, std::uint32_t> reference;
  std::mt19937_64 rng(20);
  for (std::uint32_t step = 0; step < 20'000; ++step) {
    // Times in a narrow range (many repeats and neighbours), as an event queue's are.
    const auto ps = static_cast<std::int64_t>(rng() % 4'096) * 1'000'000;
    const auto it = reference.find(ps);
    if (it == reference.end()) {
      index.insert(ps, step);
      reference.emplace(ps, step);
    } else if (rng() % 2 == 0) {
      index.erase(ps);
      reference.erase(it);
    }
    ASSERT_EQ(index.size(), reference.size());
    ASSERT_EQ(index.find(ps), reference.count(ps) ? reference[ps] : InstantIndex::kMissing);
  }
  for (const auto& [ps, bucket] : reference) ASSERT_EQ(index.find(ps), bucket);
}

}  // namespace
}  // namespace lockstep::flow_detail
