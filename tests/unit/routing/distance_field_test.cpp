// DistanceField::reach stops as soon as the source is known (stamping it from its own ports
// when the layer before it is complete, rather than expanding that whole layer): everything
// the source's walk reads -- its distance, and the distance, GPU relay flag and least latency
// of every device closer -- equals what the breadth-first search run to the end gives, on
// fabrics with switches, GPU relays (torus, full mesh) and both (HGX servers).
#include "../../../src/routing/distance_field.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "../topology/topology_test_util.hpp"

namespace lockstep {
namespace {

using routing_detail::DistanceField;

// Every (destination, source) pair of devices in `t`, each `stride`-th destination, the source
// searched for afresh and, as the router's cached fields are, after the sources before it;
// counts in `reached` the sources the search reached (so that the comparison is not of
// unreachable pairs only).
void expect_reach_as_full_search(const Topology& t, std::uint32_t stride, int& reached) {
  DistanceField full(t), cached(t);
  const auto n = static_cast<DeviceId>(t.num_devices());
  for (DeviceId dst = 0; dst < n; dst += stride) {
    full.within(dst, dst, DistanceField::kUnreached - 1);  // every layer expanded
    for (DeviceId from = 0; from < n; ++from) {
      for (const bool fresh : {true, false}) {
        DistanceField afresh(t);
        DistanceField& early = fresh ? afresh : cached;
        const bool ok = early.reach(dst, from);
        ASSERT_EQ(ok, full.dist(from) != DistanceField::kUnreached) << dst << " <- " << from;
        if (!ok) continue;
        reached += fresh;
        ASSERT_EQ(early.dist(from), full.dist(from)) << dst << " <- " << from;
        for (DeviceId v = 0; v < n; ++v) {
          const std::string at =
              std::to_string(dst) + " <- " + std::to_string(from) + ": " + std::to_string(v);
          // Farther devices: a stamped distance is never wrong.
          if (full.dist(v) >= full.dist(from)) {
            if (early.dist(v) != DistanceField::kUnreached) {
              ASSERT_EQ(early.dist(v), full.dist(v)) << at;
            }
            continue;
          }
          ASSERT_EQ(early.dist(v), full.dist(v)) << at;
          ASSERT_EQ(early.gpu_chain(v), full.gpu_chain(v)) << at;
          ASSERT_EQ(early.latency(v), full.latency(v)) << at;
        }
      }
    }
  }
}

TEST(DistanceField, ReachGivesWhatTheFullSearchGivesUpToTheSource) {
  const std::vector<test::Kv> clusters = {
      {{"builder", "fat_tree"}, {"gpu", "h100"}, {"gpus", "64"}, {"switch", "qm9700"}},
      {{"builder", "torus"}, {"dims", "4x3x2"}, {"gpu", "h100"}},
      {{"builder", "full_mesh"}, {"gpus", "6"}, {"link_bandwidth", "50GB/s"}},
      test::small_dragonfly(),
  };
  for (const auto& kv : clusters) {
    SCOPED_TRACE(kv[0].second);
    const Topology t = std::move(*test::build(kv).graph);
    // About eight destinations, each reached from many sources.
    const auto devices = static_cast<std::uint32_t>(t.num_devices());
    int reached = 0;
    expect_reach_as_full_search(t, std::max(1u, devices / 8), reached);
    EXPECT_GT(reached, static_cast<int>(devices));
  }
  // HGX servers on a rail-optimised fabric of two leaves per rail: routes climb to the spines.
  int reached = 0;
  expect_reach_as_full_search(test::hgx_h100(40), 97, reached);
  EXPECT_GT(reached, 1000);
}

}  // namespace
}  // namespace lockstep
