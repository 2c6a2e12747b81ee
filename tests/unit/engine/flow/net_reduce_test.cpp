// In-network reduction in the flow engine (docs/flow-engine.md 1.5 and C6): the switches of the
// reduction tree add what their children send and copy the result down, so a link of the tree
// carries one stream however many members lie below it; CollNet and NVLS programs across nodes
// run as one class per rail (translation by nodes) and give the every-rank run's results.
#include <gtest/gtest.h>

#include "fixtures.hpp"
#include "lockstep/collective/collective.hpp"
#include "lockstep/topology/builder.hpp"

namespace lockstep {
namespace {

using flow_test::input_for;

const Bandwidth kB = Bandwidth::gBps(50);  // 1 MB takes exactly 20 us
const Time kLat = Time::us(1);

// GPUs 0, 1 on leaf A and 2, 3 on leaf B, one spine; every link 50 GB/s and 1 us. The group of
// all four reduces at the spine. Up: each member's leg crosses its own link and its leaf's uplink,
// which carries the two legs of its leaf as one stream: every leg at 50 GB/s, 20 us + 2 us of
// latency = 22 us. Down from 2 us (the first bytes at the spine): 2 + 20 + 2 = 24 us. Each
// uplink and downlink carries 1 MB. (Counting each leg on the uplink, as if the spine received
// every member's data, halved the rate: 44 us and 2 MB.)
TEST(FlowNetReduce, ATreeLinkCarriesOneStreamForTheMembersBelowIt) {
  const Topology t = flow_test::leaf_spine(2, 1, kB, kLat);
  auto router = make_router(t, {});
  MaterializedProgramSet p(4);
  const auto g = p.add_group({0, 1, 2, 3});
  for (Rank r = 0; r < 4; ++r)
    p.add(r, make_net_reduce(g, {Buffer::Input, 0, 1'000'000}, {Buffer::Output, 0, 1'000'000}));
  auto engine = make_flow_engine();
  const RunResult r = engine->run(input_for(t, p, *router));
  for (Rank k = 0; k < 4; ++k) EXPECT_EQ(r.rank_finish[k], Time::us(24)) << k;
  // Links 0-3 join the GPUs to their leaves, link 4 leaf A to the spine, link 5 leaf B.
  for (const DirLinkId d : {8u, 9u, 10u, 11u}) EXPECT_DOUBLE_EQ(r.link_bytes[d], 1e6) << d;
  for (const DirLinkId d : {0u, 1u, 6u, 7u}) EXPECT_DOUBLE_EQ(r.link_bytes[d], 1e6) << d;
}

// 4 HGX-H100-like nodes (8 GPUs, NVSwitch) in two scalable units of 2 nodes: a rail's group
// spans both rail leaves and reduces at a spine.
BuildResult two_scalable_units() {
  ArgNode m = ArgNode::map("cluster");
  for (const auto& [k, v] : {std::pair{"builder", "rail_optimized"},
                             {"gpu", "h100"},
                             {"nodes", "4"},
                             {"nodes_per_su", "2"}})
    m.set(k, ArgNode::scalar(v, std::string("cluster.") + k));
  return build_topology(m);
}

CollectiveSpec across_nodes(Algorithm a) {
  CollectiveSpec s;
  s.op = CollectiveOp::AllReduce;
  s.algorithm = a;
  s.ranks = 32;
  s.ranks_per_node = 8;
  s.channels = 2;
  s.bytes = Bytes::mib(4);
  s.type = DataType::Float32;
  return s;
}

// CollNet (reduce-scatter over NVLink, SHARP per rail, all-gather) and NVLS with SHARP (the
// node's NVLS group, then the rail's SHARP group): translation by one node makes each rail's
// ranks one class, whose op stands for the rail's group; a node's NVLS group is then one
// representative of every class, standing for every node's group. 8 classes of 4, every rank's
// finish and every link's bytes as in the every-rank run.
TEST(FlowNetReduce, CollNetAndNvlsAcrossScalableUnitsRunOneClassPerRail) {
  const BuildResult built = two_scalable_units();
  const Topology& t = *built.graph;
  auto router = make_router(t, {});
  for (const Algorithm a : {Algorithm::CollNet, Algorithm::NetReduce}) {
    const auto programs = make_collective(across_nodes(a));
    FlowEngine aggregated({});
    FlowEngine individual({.aggregate = false, .fast_forward = false});
    const RunResult x = aggregated.run(input_for(t, *programs, *router));
    const RunResult y = individual.run(input_for(t, *programs, *router));
    EXPECT_EQ(aggregated.last_stats().simulated_ranks, 8u) << to_string(a);
    EXPECT_EQ(aggregated.last_stats().attempts, 1u) << to_string(a);
    EXPECT_EQ(x.makespan, y.makespan) << to_string(a);
    EXPECT_EQ(x.rank_finish, y.rank_finish) << to_string(a);
    ASSERT_EQ(x.link_bytes.size(), y.link_bytes.size());
    double spine_bytes = 0;
    for (std::size_t l = 0; l < x.link_bytes.size(); ++l) {
      EXPECT_NEAR(x.link_bytes[l], y.link_bytes[l], 1e-9 * y.link_bytes[l] + 1e-6) << l;
      const Link& link = t.link(Topology::link_of(static_cast<DirLinkId>(l)));
      if (t.device(link.a).kind == DeviceKind::Switch &&
          t.device(link.b).kind == DeviceKind::Switch)
        spine_bytes += y.link_bytes[l];
    }
    EXPECT_GT(spine_bytes, 0.0) << to_string(a);  // the rails' trees do reach the spines
  }
}

}  // namespace
}  // namespace lockstep
