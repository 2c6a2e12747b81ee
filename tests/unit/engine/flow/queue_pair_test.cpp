// A connection's queue pairs (RouterOptions::queue_pairs, NCCL_IB_QPS_PER_CONNECTION) are one
// path share each. Shares whose members' paths load the same constraints with the same
// coefficients are identical solver variables, so max-min fairness gives them one rate and they
// stream and arrive together: the engine runs them as one variable with k times one flow's
// coefficients (docs/flow-engine.md R4). Every result must be that of the queue pairs one by one
// (FlowEngineConfig::bundle = false), to the picosecond and link by link.
#include <gtest/gtest.h>

#include "../../topology/topology_test_util.hpp"
#include "fixtures.hpp"
#include "lockstep/collective/collective.hpp"
#include "lockstep/engine/flow/flow_engine.hpp"

namespace lockstep {
namespace {

using flow_test::input_for;
using flow_test::leaf_spine;
using flow_test::spec_of;
using flow_test::star;

struct Runs {
  RunResult merged, one_by_one;
  FlowRunStats merged_stats;
};

// Runs `spec` on `t` with `qps` queue pairs per connection, merged and one by one, and expects
// the same picoseconds for every rank and the same bytes on every link.
Runs expect_same_merged_and_one_by_one(const Topology& t, const CollectiveSpec& spec,
                                       std::uint32_t qps, const EngineOptions& options = {}) {
  auto router = make_router(t, {.queue_pairs = qps});
  const auto programs = make_collective(spec);
  FlowEngine merged({});
  Runs r{merged.run(input_for(t, *programs, *router, options)), {}, merged.last_stats()};
  FlowEngine one_by_one({.bundle = false});
  r.one_by_one = one_by_one.run(input_for(t, *programs, *router, options));
  EXPECT_EQ(r.merged.makespan, r.one_by_one.makespan);
  EXPECT_EQ(r.merged.rank_finish, r.one_by_one.rank_finish);
  EXPECT_EQ(r.merged.link_bytes.size(), r.one_by_one.link_bytes.size());
  for (std::size_t l = 0; l < r.merged.link_bytes.size(); ++l)
    EXPECT_NEAR(r.merged.link_bytes[l], r.one_by_one.link_bytes[l],
                1e-9 * r.one_by_one.link_bytes[l])
        << "link " << l;
  EXPECT_EQ(one_by_one.last_stats().bundled_flows, 0u);
  return r;
}

// Four GPUs on one switch, 50 GB/s and 1 us per link, a ring all-reduce of 4 MB (1 MB chunks):
// each of the 2(n - 1) = 6 steps sends 1 MB to the next GPU over GPU-switch-GPU. With four queue
// pairs the step is four flows of 250 KB on the one path; the four share the sender's uplink at
// 12.5 GB/s each, so a step still takes 250 KB / 12.5 GB/s + 2 us = 22 us, and the all-reduce
// 6 x 22 = 132 us, as with one queue pair. Merged, the four are one variable of coefficient 4
// per step: the one simulated rank (one class of four) starts 6 transfers, 3 of whose 4 flows
// join the first's variable: 18.
TEST(QueuePairs, FourQueuePairsOnOnePathAreOneVariableAndTakeTheFormulasTime) {
  const Topology t = star(4, Bandwidth::gBps(50), Time::us(1));
  const Runs r = expect_same_merged_and_one_by_one(
      t, spec_of(CollectiveOp::AllReduce, Algorithm::Ring, 4, 1, 4'000'000, DataType::Float32), 4);
  EXPECT_EQ(r.merged.makespan, Time::us(132));
  EXPECT_EQ(r.merged_stats.class_size, 4u);
  EXPECT_EQ(r.merged_stats.bundled_flows, 18u);
  // Every up- and downlink carried the 6 chunks of 1 MB.
  for (const double bytes : r.merged.link_bytes) EXPECT_DOUBLE_EQ(bytes, 6e6);
}

// The same ring under a channel limit of 10 GB/s per (sender, channel) (EngineOptions::
// channel_send_bandwidth): a merged share crosses it once per queue pair, so the four flows of a
// step share it at 2.5 GB/s each, 250 KB take 100 us, a step 102 us and the all-reduce
// 6 x 102 = 612 us, as one queue pair's 1 MB at 10 GB/s.
TEST(QueuePairs, AMergedShareCrossesTheChannelLimitOncePerQueuePair) {
  const Topology t = star(4, Bandwidth::gBps(50), Time::us(1));
  EngineOptions capped;
  capped.channel_send_bandwidth = Bandwidth::gBps(10);
  const Runs r = expect_same_merged_and_one_by_one(
      t, spec_of(CollectiveOp::AllReduce, Algorithm::Ring, 4, 1, 4'000'000, DataType::Float32), 4,
      capped);
  EXPECT_EQ(r.merged.makespan, Time::us(612));
  EXPECT_EQ(r.merged_stats.bundled_flows, 18u);
}

// Under ECMP each queue pair hashes its own label: a connection across the spines spreads its
// queue pairs over them, and only the ones that land on the same spine are merged (one share of
// weight 2 or 3 beside shares of weight 1), while a connection inside a leaf has one path and
// one variable. Ring and alltoall, 4 and 3 queue pairs (3 does not divide the 4 spines evenly).
TEST(QueuePairs, LeafSpineWithEcmpMergesOnlyQueuePairsOnTheSameSpine) {
  const Topology t = leaf_spine(4, 4, Bandwidth::gBps(50), Time::us(1));
  const Rank n = static_cast<Rank>(t.gpus().size());
  for (const std::uint32_t qps : {3u, 4u}) {
    const Runs ring = expect_same_merged_and_one_by_one(
        t,
        spec_of(CollectiveOp::AllReduce, Algorithm::Ring, n, 4, n * 4 * 65'536, DataType::Float32),
        qps);
    EXPECT_GT(ring.merged_stats.bundled_flows, 0u) << qps;
    const Runs a2a = expect_same_merged_and_one_by_one(
        t,
        spec_of(CollectiveOp::AllToAll, Algorithm::Direct, n, 4, n * 4 * 65'536, DataType::Float32),
        qps);
    EXPECT_GT(a2a.merged_stats.bundled_flows, 0u) << qps;
  }
}

// Four HGX-H100 nodes, rail-optimised: NVLink transfers inside a node have one path (merged
// fully), the network ones hash their queue pairs over the rail's spines. Unequal blocks (one
// float more for some ranks) make the ring's slices finish at different instants. Without and
// with a channel limit (20 GB/s, below an NVLink share, above a NIC's).
TEST(QueuePairs, RailOptimisedRingWithUnequalBlocksKeepsEveryTime) {
  const Topology t = test::hgx_h100(4);
  CollectiveSpec ring = spec_of(CollectiveOp::AllReduce, Algorithm::Ring, 32, 4,
                                (32 * 4 * 16'384 + 7) * 4, DataType::Float32);
  ring.ranks_per_node = 8;
  EngineOptions capped;
  capped.channel_send_bandwidth = Bandwidth::gBps(20);
  for (const EngineOptions& options : {EngineOptions{}, capped}) {
    const Runs r = expect_same_merged_and_one_by_one(t, ring, 4, options);
    EXPECT_GT(r.merged_stats.bundled_flows, 0u);
  }
}

}  // namespace
}  // namespace lockstep
