// Classes that also rotate inside nodes (ProgramSet::local_symmetry; src/engine/flow/
// class_map.hpp): a multi-channel ring simulated once per class of (node position, all local
// GPUs) gives the individual run's results, and a member that differs splits the classes.
#include <gtest/gtest.h>

#include "fixtures.hpp"
#include "lockstep/collective/collective.hpp"
#include "lockstep/topology/builder.hpp"
#include "lockstep/topology/presets.hpp"

namespace lockstep {
namespace {

using flow_test::input_for;
using flow_test::star;

CollectiveSpec ring(Rank ranks, std::uint32_t per_node, std::uint16_t channels, Bytes bytes) {
  CollectiveSpec spec;
  spec.op = CollectiveOp::AllReduce;
  spec.algorithm = Algorithm::Ring;
  spec.ranks = ranks;
  spec.ranks_per_node = per_node;
  spec.channels = channels;
  spec.bytes = bytes;
  spec.type = DataType::Float32;
  return spec;
}

// 4 HGX-H100 nodes on the NDR rail-optimised preset (one leaf per rail).
BuildResult four_hgx_h100_nodes() {
  PresetRequest request;
  request.system = "hgx-h100";
  request.fabric = "ib-ndr";
  request.nodes = 4;
  return build_topology(rail_optimized_args(resolve_preset(request)));
}

// 8 GPUs on one switch (50 GB/s, 1 us per link), "nodes" of 2, 2 channels, S = 8 MB. Every step
// each GPU sends one chunk per channel (S / (n C) = 0.5 MB), and each GPU's uplink and downlink
// carry two flows (one per channel) at B / 2 each: 2 us + 0.5 MB / 25 GB/s = 22 us per step,
// 2 (n - 1) = 14 steps: 308 us exactly. The ring rotates by two nodes (period 4) and inside
// nodes (2): 2 classes of 4 ranks.
TEST(FlowLocalRotation, TwoChannelRingOnAStarMatchesTheFormulaWithTwoClasses) {
  const Topology t = star(8, Bandwidth::gBps(50), Time::us(1));
  auto router = make_router(t, {});
  const auto programs = make_collective(ring(8, 2, 2, Bytes(8'000'000)));
  ASSERT_EQ(programs->local_symmetry(), 2u);
  FlowEngine aggregated({});
  FlowEngine individual({.aggregate = false, .fast_forward = false});
  const RunResult a = aggregated.run(input_for(t, *programs, *router));
  const RunResult b = individual.run(input_for(t, *programs, *router));
  EXPECT_EQ(a.makespan, Time::us(308));
  EXPECT_EQ(b.makespan, Time::us(308));
  EXPECT_EQ(aggregated.last_stats().simulated_ranks, 2u);
  EXPECT_EQ(aggregated.last_stats().local_rotation, 2u);
  EXPECT_EQ(a.rank_finish, b.rank_finish);
  EXPECT_EQ(a.link_bytes, b.link_bytes);
}

// One slow GPU makes its class's members distinguishable: every class splits, down to each rank
// on its own, and the results are the individual run's.
TEST(FlowLocalRotation, ASlowGpuSplitsTheClasses) {
  const Topology t = star(8, Bandwidth::gBps(50), Time::us(1), /*slow_gpu=*/3);
  auto router = make_router(t, {});
  const auto programs = make_collective(ring(8, 2, 2, Bytes(8'000'000)));
  FlowEngine aggregated({});
  FlowEngine individual({.aggregate = false, .fast_forward = false});
  const RunResult a = aggregated.run(input_for(t, *programs, *router));
  const RunResult b = individual.run(input_for(t, *programs, *router));
  EXPECT_EQ(aggregated.last_stats().simulated_ranks, 8u);
  EXPECT_GT(a.makespan, Time::us(308));
  EXPECT_EQ(a.makespan, b.makespan);
  EXPECT_EQ(a.rank_finish, b.rank_finish);
}

// "Nodes" of 4 GPUs on one switch where odd local indices have half the bandwidth: rotating by
// one GPU inside nodes maps fast GPUs onto slow ones, rotating by two does not, so the engine
// settles on the subgroup: 16 ranks, period 8 (two nodes), 2 rotations of 2 GPUs per class, 4
// classes of 4; every figure equals the individual run's.
TEST(FlowLocalRotation, ASubgroupHoldsWhereTheFullRotationDoesNot) {
  TopologyBuilder b("alternating_star");
  for (std::uint32_t i = 0; i < 16; ++i) b.add_device(flow_test::gpu(i / 4, i % 4));
  const DeviceId s = b.add_device(flow_test::sw());
  for (std::uint32_t i = 0; i < 16; ++i)
    b.add_link(Link{i, s, Bandwidth::gBps(i % 2 == 0 ? 50 : 25), Time::us(1)});
  const Topology t = std::move(b).build();
  auto router = make_router(t, {});
  const auto programs = make_collective(ring(16, 4, 4, Bytes(16 * 4 * 4096)));
  ASSERT_EQ(programs->local_symmetry(), 4u);
  FlowEngine aggregated({});
  FlowEngine individual({.aggregate = false, .fast_forward = false});
  const RunResult a = aggregated.run(input_for(t, *programs, *router));
  const RunResult c = individual.run(input_for(t, *programs, *router));
  EXPECT_EQ(aggregated.last_stats().simulated_ranks, 4u);
  EXPECT_EQ(aggregated.last_stats().local_rotation, 2u);
  EXPECT_EQ(a.makespan, c.makespan);
  EXPECT_EQ(a.rank_finish, c.rank_finish);
  EXPECT_EQ(a.link_bytes, c.link_bytes);
}

// HGX-H100 nodes on the NDR rail-optimised preset (4 nodes of 8 GPUs), 16 channels as NCCL runs
// them across nodes, with NCCL-like options (efficiency, per-message overhead, channel cap): the
// classes rotate by two nodes and inside nodes (2 classes of 16), and every figure equals the
// individual run's.
TEST(FlowLocalRotation, SixteenChannelRingOnRailOptimisedNodesMatchesTheIndividualRun) {
  const BuildResult built = four_hgx_h100_nodes();
  const Topology& t = *built.graph;
  auto router = make_router(t, {});
  const auto programs = make_collective(ring(32, 8, 16, Bytes::mib(4)));
  EngineOptions options;
  options.transfer_efficiency = 0.824;
  options.network_transfer_efficiency = 0.96;
  options.per_message_overhead = Time::ns(3400);
  options.channel_send_bandwidth = Bandwidth::gBps(24 / 0.824);
  FlowEngine aggregated({});
  FlowEngine individual({.aggregate = false, .fast_forward = false});
  const RunResult a = aggregated.run(input_for(t, *programs, *router, options));
  const RunResult b = individual.run(input_for(t, *programs, *router, options));
  EXPECT_EQ(aggregated.last_stats().simulated_ranks, 2u);
  EXPECT_EQ(aggregated.last_stats().local_rotation, 8u);
  EXPECT_EQ(a.makespan, b.makespan);
  EXPECT_EQ(a.rank_finish, b.rank_finish);
  ASSERT_EQ(a.link_bytes.size(), b.link_bytes.size());
  for (std::size_t l = 0; l < a.link_bytes.size(); ++l)
    EXPECT_NEAR(a.link_bytes[l], b.link_bytes[l], 1e-9 * b.link_bytes[l] + 1e-6) << l;
}

// NCCL-like options for the trees (efficiencies, per-message overhead charged as latency).
EngineOptions overhead_as_latency_options() {
  EngineOptions options;
  options.transfer_efficiency = 0.7725;
  options.network_transfer_efficiency = 0.9;
  options.per_message_overhead = Time::ns(5400);
  options.overhead_as_latency = true;
  return options;
}

// Runs `programs` on 4 HGX-H100 nodes with NCCL-like options (overhead as latency), aggregated
// and every rank on its own, and checks that the aggregated run uses one class per node
// rotating all 8 GPUs and gives every figure of the individual run.
void expect_node_classes_match_the_individual_run(const ProgramSet& programs) {
  const BuildResult built = four_hgx_h100_nodes();
  const Topology& t = *built.graph;
  auto router = make_router(t, {});
  const EngineOptions options = overhead_as_latency_options();
  const FlowEngineConfig whole{.issue_window = programs.num_ops(0), .split_channels = false};
  FlowEngineConfig every_rank = whole;
  every_rank.aggregate = false;
  FlowEngine aggregated(whole);
  FlowEngine individual(every_rank);
  const RunResult a = aggregated.run(input_for(t, programs, *router, options));
  const RunResult b = individual.run(input_for(t, programs, *router, options));
  EXPECT_EQ(aggregated.last_stats().simulated_ranks, 4u);
  EXPECT_EQ(aggregated.last_stats().local_rotation, 8u);
  EXPECT_GT(a.makespan, Time::zero());
  EXPECT_EQ(a.makespan, b.makespan);
  EXPECT_EQ(a.rank_finish, b.rank_finish);
  ASSERT_EQ(a.link_bytes.size(), b.link_bytes.size());
  for (std::size_t l = 0; l < a.link_bytes.size(); ++l)
    EXPECT_NEAR(a.link_bytes[l], b.link_bytes[l], 1e-9 * b.link_bytes[l] + 1e-6) << l;
}

// NCCL's tree (chain in each node headed at GPU c mod 8, double binary tree between nodes) has
// no translation symmetry, but rotating every node's GPUs maps channel c onto c + 1: one class
// per node (4 of 8 ranks), and every figure equals the individual run's. 4 nodes of HGX-H100
// under one leaf per rail, 16 channels, 8 MiB.
TEST(FlowLocalRotation, TreeRotatesInsideNodesAndMatchesTheIndividualRun) {
  CollectiveSpec spec = ring(32, 8, 16, Bytes::mib(8));
  spec.algorithm = Algorithm::Tree;
  const auto programs = make_collective(spec);
  ASSERT_EQ(programs->symmetry_period(), 0u);
  ASSERT_EQ(programs->local_symmetry(), 8u);
  expect_node_classes_match_the_individual_run(*programs);
}

CollectiveSpec alltoall(Rank ranks, std::uint32_t per_node, std::uint16_t channels, Bytes bytes) {
  CollectiveSpec spec = ring(ranks, per_node, channels, bytes);
  spec.op = CollectiveOp::AllToAll;
  spec.algorithm = Algorithm::Direct;
  return spec;
}

// The direct alltoall visits peers node by node (collective/direct.cpp), so translating by a node
// and rotating its GPUs both map it onto itself: 8 GPUs on one switch (50 GB/s, 1 us) in nodes
// of 2 are one class of 8. By hand: every uplink and downlink carries 7 blocks at 50 / 7 GB/s, so
// the 7 MB blocks take 2 us + 7 MB x 7 / 50 GB/s = 982 us, aggregated or not.
TEST(FlowLocalRotation, DirectAlltoallIsOneClassWhereNodesAreAlike) {
  const Topology t = star(8, Bandwidth::gBps(50), Time::us(1));
  auto router = make_router(t, {});
  const auto programs = make_collective(alltoall(8, 2, 2, Bytes(8 * 7'000'000)));
  ASSERT_EQ(programs->symmetry_period(), 2u);
  ASSERT_EQ(programs->local_symmetry(), 2u);
  FlowEngine aggregated({});
  FlowEngine individual({.aggregate = false, .fast_forward = false});
  const RunResult a = aggregated.run(input_for(t, *programs, *router));
  const RunResult b = individual.run(input_for(t, *programs, *router));
  EXPECT_EQ(a.makespan, Time::us(982));
  EXPECT_EQ(b.makespan, Time::us(982));
  EXPECT_EQ(aggregated.last_stats().simulated_ranks, 1u);
  EXPECT_EQ(a.rank_finish, b.rank_finish);
  EXPECT_EQ(a.link_bytes, b.link_bytes);
}

// Three nodes of 2 GPUs, nodes 0 and 1 under leaf A, node 2 under leaf B, one spine, every link
// 50 GB/s and 1 us. No translation holds (rank 0's first peer off its node, rank 2, shares its
// leaf; rank 2's, rank 4, does not), but rotating each node's pair does: the engine falls back
// to the rotation alone, 3 classes of 2. By hand: each spine link carries the 8 flows between
// the leaves (4 GPUs x 2 peers), 6.25 GB/s each, and nothing else limits them (GPU 0's uplink:
// 2 x 6.25 + 3 flows in leaf A at 12.5 = 50); so the 6.25 MB blocks between leaves take
// 4 x 1 us + 6.25 MB / 6.25 GB/s = 1,004 us, the makespan.
TEST(FlowLocalRotation, RotationAloneHoldsWhereNoTranslationDoes) {
  TopologyBuilder b("uneven_leaves");
  for (std::uint32_t i = 0; i < 6; ++i) b.add_device(flow_test::gpu(i / 2, i % 2));
  const DeviceId leaf_a = b.add_device(flow_test::sw(0)), leaf_b = b.add_device(flow_test::sw(0));
  const DeviceId spine = b.add_device(flow_test::sw(1));
  const Bandwidth bw = Bandwidth::gBps(50);
  for (std::uint32_t i = 0; i < 6; ++i)
    b.add_link(Link{i, i < 4 ? leaf_a : leaf_b, bw, Time::us(1)});
  b.add_link(Link{leaf_a, spine, bw, Time::us(1)});
  b.add_link(Link{leaf_b, spine, bw, Time::us(1)});
  const Topology t = std::move(b).build();
  auto router = make_router(t, {});
  const auto programs = make_collective(alltoall(6, 2, 1, Bytes(6 * 6'250'000)));
  FlowEngine aggregated({});
  FlowEngine individual({.aggregate = false, .fast_forward = false});
  const RunResult a = aggregated.run(input_for(t, *programs, *router));
  const RunResult c = individual.run(input_for(t, *programs, *router));
  EXPECT_EQ(a.makespan, Time::us(1004));
  EXPECT_EQ(c.makespan, Time::us(1004));
  EXPECT_EQ(aggregated.last_stats().simulated_ranks, 3u);
  EXPECT_EQ(aggregated.last_stats().local_rotation, 2u);
  EXPECT_EQ(a.rank_finish, c.rank_finish);
  EXPECT_EQ(a.link_bytes, c.link_bytes);
}

// NVLS tree: each node reduces in its NVSwitch (one NetReduce group per node) and GPU l runs the
// trees between nodes on rail l. Rotating the GPUs of every node keeps channels and groups, so a
// node is one class whose NetReduce stands for its whole group: 4 classes of 8, and every figure
// equals the individual run's. 16 channels, 8 MiB.
TEST(FlowLocalRotation, NvlsTreeRotatesInsideNodesAndMatchesTheIndividualRun) {
  CollectiveSpec spec = ring(32, 8, 16, Bytes::mib(8));
  spec.algorithm = Algorithm::NvlsTree;
  const auto programs = make_collective(spec);
  ASSERT_EQ(programs->local_symmetry(), 8u);
  expect_node_classes_match_the_individual_run(*programs);
}

// The same NVLS tree with its channels split (CollectiveSpec::split_channels: rank c x 32 + r
// runs channel c of GPU r): moving 32 ranks on is the next channel, so with the rotation inside
// nodes a node's 8 GPUs x 16 channels are one class (4 classes of 128), each simulating one
// channel. Every figure equals the whole program's individual run: the makespan, each GPU's
// finish (the latest of its channels') and every link's bytes.
TEST(FlowLocalRotation, SplitNvlsTreeIsOneClassPerNodeForAllChannels) {
  const BuildResult built = four_hgx_h100_nodes();
  const Topology& t = *built.graph;
  auto router = make_router(t, {});
  const EngineOptions options = overhead_as_latency_options();
  CollectiveSpec spec = ring(32, 8, 16, Bytes::mib(8));
  spec.algorithm = Algorithm::NvlsTree;
  const auto whole = make_collective(spec);
  spec.split_channels = true;
  const auto split = make_collective(spec);
  ASSERT_EQ(split->num_ranks(), 32u * 16u);
  ASSERT_EQ(split->symmetry_period(), 32u);
  ASSERT_EQ(split->symmetry_channel_shift(), 2u);
  std::vector<DeviceId> placement;
  for (Rank v = 0; v < split->num_ranks(); ++v) placement.push_back(t.gpus()[v % 32]);
  EngineInput split_input = input_for(t, *whole, *router, options);
  split_input.programs = split.get();
  split_input.placement = placement;

  FlowEngine aggregated(FlowEngineConfig{.issue_window = split->num_ops(0)});
  FlowEngine individual(FlowEngineConfig{.aggregate = false, .issue_window = whole->num_ops(0)});
  const RunResult a = aggregated.run(split_input);
  const RunResult b = individual.run(input_for(t, *whole, *router, options));
  EXPECT_EQ(aggregated.last_stats().simulated_ranks, 4u);
  EXPECT_EQ(aggregated.last_stats().class_size, 128u);
  EXPECT_EQ(aggregated.last_stats().local_rotation, 8u);
  EXPECT_GT(a.makespan, Time::zero());
  EXPECT_EQ(a.makespan, b.makespan);
  ASSERT_EQ(a.rank_finish.size(), 32u * 16u);
  for (Rank r = 0; r < 32; ++r) {
    Time latest = Time::zero();
    for (Rank c = 0; c < 16; ++c) latest = std::max(latest, a.rank_finish[c * 32 + r]);
    EXPECT_EQ(latest, b.rank_finish[r]) << r;
  }
  ASSERT_EQ(a.link_bytes.size(), b.link_bytes.size());
  for (std::size_t l = 0; l < a.link_bytes.size(); ++l)
    EXPECT_NEAR(a.link_bytes[l], b.link_bytes[l], 1e-9 * b.link_bytes[l] + 1e-6) << l;
}

// Across scalable units (34 HGX-H100 nodes: two SUs of leaves joined by spines) ECMP hashes each
// channel's flows onto its own spine, so the split run must route member channel c with channel
// c's label (the class map moves channels with the translation): the makespan and every link's
// bytes, the spine links' included, equal the unsplit program's (aggregated over its 34 node
// classes, as the CLI ran it before). 16 channels, 4 MiB.
TEST(FlowLocalRotation, SplitNvlsTreeHashesEachChannelOntoItsOwnSpine) {
  PresetRequest request;
  request.system = "hgx-h100";
  request.fabric = "ib-ndr";
  request.nodes = 34;
  const BuildResult built = build_topology(rail_optimized_args(resolve_preset(request)));
  const Topology& t = *built.graph;
  auto router = make_router(t, {});
  const EngineOptions options = overhead_as_latency_options();
  CollectiveSpec spec = ring(34 * 8, 8, 16, Bytes::mib(4));
  spec.algorithm = Algorithm::NvlsTree;
  const auto whole = make_collective(spec);
  spec.split_channels = true;
  const auto split = make_collective(spec);
  std::vector<DeviceId> placement;
  for (Rank v = 0; v < split->num_ranks(); ++v) placement.push_back(t.gpus()[v % (34 * 8)]);
  EngineInput split_input = input_for(t, *whole, *router, options);
  split_input.programs = split.get();
  split_input.placement = placement;
  FlowEngine by_channel(FlowEngineConfig{.issue_window = split->num_ops(0)});
  FlowEngine by_node(FlowEngineConfig{.issue_window = whole->num_ops(0), .split_channels = false});
  const RunResult a = by_channel.run(split_input);
  const RunResult b = by_node.run(input_for(t, *whole, *router, options));
  EXPECT_EQ(by_channel.last_stats().simulated_ranks, 34u);
  EXPECT_EQ(by_node.last_stats().simulated_ranks, 34u);
  EXPECT_EQ(a.makespan, b.makespan);
  double spine_bytes = 0;
  ASSERT_EQ(a.link_bytes.size(), b.link_bytes.size());
  for (std::size_t l = 0; l < a.link_bytes.size(); ++l) {
    EXPECT_NEAR(a.link_bytes[l], b.link_bytes[l], 1e-9 * b.link_bytes[l] + 1e-6) << l;
    const Link& link = t.link(Topology::link_of(static_cast<DirLinkId>(l)));
    if (t.device(link.a).kind == DeviceKind::Switch && t.device(link.b).kind == DeviceKind::Switch)
      spine_bytes += b.link_bytes[l];
  }
  EXPECT_GT(spine_bytes, 0.0);
}

}  // namespace
}  // namespace lockstep
