// Bundles (FlowEngineConfig::bundle): identical flows that start together on one route are one
// solver variable of their summed coefficients. Max-min fairness gives identical flows on
// identical constraints identical rates, so a bundle's flows finish together, and every result
// must be that of the flows one by one, to the picosecond and link by link.
#include <gtest/gtest.h>

#include "../../../../src/engine/flow/path_cache.hpp"
#include "../../topology/topology_test_util.hpp"
#include "fixtures.hpp"
#include "lockstep/collective/collective.hpp"
#include "lockstep/engine/flow/flow_engine.hpp"

namespace lockstep {
namespace {

using flow_test::input_for;
using flow_test::leaf_spine;
using flow_test::spec_of;

struct Compared {
  std::uint64_t bundled_flows = 0;
  std::uint32_t class_size = 0;
};

// Runs `spec` on `t` with bundles and without, and expects the same times and link bytes.
Compared expect_same_with_and_without_bundles(const Topology& t, const CollectiveSpec& spec) {
  auto router = make_router(t, {});
  const auto programs = make_collective(spec);
  FlowEngine bundled({});
  const RunResult a = bundled.run(input_for(t, *programs, *router));
  FlowEngine one_by_one({.bundle = false});
  const RunResult b = one_by_one.run(input_for(t, *programs, *router));
  EXPECT_EQ(a.makespan, b.makespan);
  EXPECT_EQ(a.rank_finish, b.rank_finish);
  EXPECT_EQ(a.link_bytes.size(), b.link_bytes.size());
  for (std::size_t l = 0; l < a.link_bytes.size() && l < b.link_bytes.size(); ++l)
    EXPECT_NEAR(a.link_bytes[l], b.link_bytes[l], 1e-9 * b.link_bytes[l]) << "link " << l;
  EXPECT_EQ(one_by_one.last_stats().bundled_flows, 0u);
  return {bundled.last_stats().bundled_flows, bundled.last_stats().class_size};
}

// The small dragonfly (10 single-GPU nodes, one global link per pair of groups) has one minimal
// path between any two GPUs, so the 4 channels of each peer in a direct alltoall take the same
// links: the engine simulates 2 classes of 5 ranks, each sending to 9 peers on 4 channels, and
// 3 of each peer's 4 flows join the first's variable: 2 x 9 x 3 = 54.
TEST(Bundles, DragonflyAlltoallBundlesTheChannelsOfEachPeerAndKeepsEveryTime) {
  const Topology t = std::move(*test::build(test::small_dragonfly()).graph);
  const Compared c = expect_same_with_and_without_bundles(
      t, spec_of(CollectiveOp::AllToAll, Algorithm::Direct, 10, 4, 10 * 4 * 100'000));
  EXPECT_EQ(c.class_size, 5u);
  EXPECT_EQ(c.bundled_flows, 54u);
}

TEST(Bundles, DragonflyAllReduceKeepsEveryTime) {
  const Topology t = std::move(*test::build(test::small_dragonfly()).graph);
  for (const Algorithm algo : {Algorithm::Ring, Algorithm::Tree})
    expect_same_with_and_without_bundles(
        t, spec_of(CollectiveOp::AllReduce, algo, 10, 4, 10 * 4 * 100'000));
}

// ECMP hashes each channel's flow label: channels of one peer take different spines unless their
// hashes meet, and only flows on the very same links may be bundled.
TEST(Bundles, LeafSpineWithEcmpKeepsEveryTime) {
  const Topology t = leaf_spine(4, 4, Bandwidth::gBps(50), Time::us(1));
  const Rank n = static_cast<Rank>(t.gpus().size());
  expect_same_with_and_without_bundles(
      t, spec_of(CollectiveOp::AllToAll, Algorithm::Direct, n, 8, n * 8 * 65'536));
  expect_same_with_and_without_bundles(
      t, spec_of(CollectiveOp::AllReduce, Algorithm::Ring, n, 8, n * 8 * 65'536));
}

TEST(Bundles, RailOptimisedKeepsEveryTime) {
  const Topology t = test::hgx_h100(4);
  CollectiveSpec a2a = spec_of(CollectiveOp::AllToAll, Algorithm::Direct, 32, 4, 32 * 4 * 65'536);
  a2a.ranks_per_node = 8;
  expect_same_with_and_without_bundles(t, a2a);
  CollectiveSpec ring = spec_of(CollectiveOp::AllReduce, Algorithm::Ring, 32, 4, 32 * 4 * 65'536);
  ring.ranks_per_node = 8;
  expect_same_with_and_without_bundles(t, ring);
}

// The path cache keeps one copy of equal paths: on the small dragonfly every label gives GPU 0
// the same minimal path to GPU 9 (another group), so every key returns the same reference, past
// the table's growth (300 labels x 9 peers) and for labels beyond 32 bits; on a leaf-spine with
// ECMP two labels share a reference exactly when they hash onto the same spine.
TEST(Bundles, ThePathCacheSharesOneCopyOfEqualPaths) {
  const Topology d = std::move(*test::build(test::small_dragonfly()).graph);
  auto minimal = make_router(d, {});
  flow_detail::PathCache cache(*minimal);
  const DeviceId g0 = d.gpus()[0];
  const std::vector<PathShare>* first = &cache.get(g0, d.gpus()[9], 0);
  for (std::uint64_t label = 0; label < 300; ++label) {
    for (std::size_t peer = 1; peer < 10; ++peer) cache.get(g0, d.gpus()[peer], label);
    EXPECT_EQ(&cache.get(g0, d.gpus()[9], label), first) << label;
  }
  EXPECT_EQ(&cache.get(g0, d.gpus()[9], std::uint64_t{1} << 40), first);
  EXPECT_NE(&cache.get(g0, d.gpus()[8], 0), first);

  const Topology t = leaf_spine(2, 4, Bandwidth::gBps(50), Time::us(1));
  auto ecmp = make_router(t, {});
  flow_detail::PathCache spines(*ecmp);
  const DeviceId a = t.gpus()[0], b = t.gpus()[2];
  const std::vector<PathShare>& zero = spines.get(a, b, 0);
  int shared = 0, apart = 0;
  for (std::uint64_t label = 1; label < 32; ++label) {
    const std::vector<PathShare>& other = spines.get(a, b, label);
    EXPECT_EQ(&other == &zero, other[0].hops == zero[0].hops) << label;
    (&other == &zero ? shared : apart) += 1;
  }
  EXPECT_GT(shared, 0);
  EXPECT_GT(apart, 0);
}

}  // namespace
}  // namespace lockstep
