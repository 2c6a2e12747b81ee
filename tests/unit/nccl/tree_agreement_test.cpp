// NCCL's tree all-reduce (collective layer, src/collective/tree.cpp) timed by the flow engine on
// an ideal switch, against times derived by hand, and its agreement with the analytical (NCCL
// model) engine where docs/collectives.md's audit found the two within 1%.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <ostream>
#include <string>

#include "lockstep/collective/collective.hpp"
#include "lockstep/engine/flow/flow_engine.hpp"
#include "lockstep/engine/registry/registry.hpp"
#include "lockstep/nccl/sweep.hpp"
#include "lockstep/nccl/tuner.hpp"
#include "lockstep/routing/router.hpp"
#include "lockstep/topology/builder.hpp"
#include "lockstep/topology/presets.hpp"

namespace lockstep {
namespace {

constexpr double kB = 1e11;  // bytes/s per GPU link direction
const Time kLinkLatency = Time::us(0.5);
const Time kOverhead = Time::us(1);

// n GPUs on one non-blocking switch, every link kB each way with kLinkLatency: a GPU-to-GPU
// path is two links, 1 us of latency.
Topology ideal_switch(std::uint32_t n) {
  TopologyBuilder b("ideal");
  const DeviceId sw = b.add_device(Device{DeviceKind::ScaleUpSwitch, 0, 0, 0, 0});
  for (std::uint32_t i = 0; i < n; ++i) {
    const DeviceId g = b.add_device(Device{DeviceKind::Gpu, 0, i / 2, 0, i % 2});
    b.add_link(Link{g, sw, Bandwidth::bytes_per_second(kB), kLinkLatency, LinkMedium::NvLink});
  }
  return std::move(b).build();
}

Time run_flow(const CollectiveSpec& spec, std::uint32_t issue_window = 0,
              bool overhead_as_latency = false) {
  const Topology topo = ideal_switch(spec.ranks);
  const auto programs = make_collective(spec);
  const auto router = make_router(topo, RouterOptions{});
  EngineInput in;
  in.topology = &topo;
  in.programs = programs.get();
  in.placement = topo.gpus();
  in.router = router.get();
  in.options.per_message_overhead = kOverhead;
  in.options.overhead_as_latency = overhead_as_latency;
  FlowEngineConfig config;
  config.issue_window = issue_window;
  return make_flow_engine(config)->run(in).makespan;
}

CollectiveSpec tree_spec(Rank ranks, std::uint32_t per_node, std::uint64_t bytes,
                         std::uint64_t chunk, std::uint16_t channels = 1) {
  CollectiveSpec s;
  s.op = CollectiveOp::AllReduce;
  s.algorithm = Algorithm::Tree;
  s.ranks = ranks;
  s.ranks_per_node = per_node;
  s.bytes = Bytes(bytes);
  s.type = DataType::Float32;
  s.chunk = Bytes(chunk);
  s.channels = channels;
  return s;
}

// One node of two GPUs, a chain 1 -> 0 (head) -> 1. Each of the two trees carries S/2 in K
// chunks of c = S/(2K); both trees use the same chain, so two transfers share every busy link
// and each chunk streams in 2c/B. Let P = o + 2c/B (o: per-message overhead). Going up, GPU 1's
// connection sends chunk k right after chunk k-1: it arrives at the head at (k+1)P + 2l (l: link
// latency, two links per path). The head returns chunk k as soon as it has it and its down
// connection is free, which by induction is the same moment, so the last chunk is back at
// GPU 1 at (K+1)P + 4l: the fill is one chunk time, the rest is K chunk times.
// S = 4 MB, K = 4: c = 0.5 MB, 2c/B = 10 us, P = 11 us: 5 x 11 + 2 = 57 us.
TEST(TreeTiming, PipelinedChainOnOneNode) {
  EXPECT_EQ(run_flow(tree_spec(2, 2, 4'000'000, 500'000)), Time::us(57));
  // Unpipelined (K = 1, c = 2 MB, 2c/B = 40 us): 2 x 41 + 2 = 84 us.
  EXPECT_EQ(run_flow(tree_spec(2, 2, 4'000'000, 2'000'000)), Time::us(84));
}

// Two nodes of two GPUs (ranks 0,1 and 2,3), one chunk per tree (c = S/2), heads 0 and 2.
// Tree 0: rank 2's node is the root, so 1 -> 0 -> 2 <- 3 up and back down; tree 1 mirrors it
// with rank 0's node at the root. Stages (each o + 2l plus its bytes term):
//   1. the chain tails send up: GPUs 1 and 3 each push both trees' c at B/2: 2c/B
//   2. the heads exchange: 0 -> 2 (tree 0) and 2 -> 0 (tree 1), alone on their links: c/B
//   3. each root sends down to its chain tail and to the other head, sharing its uplink: 2c/B
//   4. the non-root heads forward the other tree to their tails, alone on the link: c/B
// Total 4(o + 2l) + 6c/B = 4 x 2 us + 3S/B; S = 4 MB: 8 + 120 = 128 us.
TEST(TreeTiming, ChainPlusTreeAcrossTwoNodes) {
  EXPECT_EQ(run_flow(tree_spec(4, 2, 4'000'000, 2'000'000)), Time::us(128));
}

// Four flat ranks, two channels split between the trees as NCCL's (channel 0: tree 0, rank r at
// node r + 1, root rank 3 -> rank 1 -> ranks 0, 2; channel 1: tree 1, mirrored, root rank 0 ->
// rank 2 -> ranks 3, 1), one chunk c = S/2 per channel. Stages (each o + 2l plus its bytes):
//   1. the leaves send up: ranks 0, 2 -> 1 and 3, 1 -> 2; two flows share each of the in-links
//      of ranks 1 and 2: 2c/B
//   2. ranks 1 -> 3 and 2 -> 0 send up to the roots, alone on their links: c/B
//   3. the roots send back down, 3 -> 1 and 0 -> 2: c/B
//   4. ranks 1 and 2 send down to their two leaves, two flows on each out-link: 2c/B
// Total 4(o + 2l) + 6c/B = 8 us + 3S/B; S = 4 MB: 128 us.
TEST(TreeTiming, ChannelsSplitBetweenTheTrees) {
  EXPECT_EQ(run_flow(tree_spec(4, 0, 4'000'000, 2'000'000, 2)), Time::us(128));
}

// Every rank's program is as long as the longest, and the tree says it needs all of it in view
// (Lookahead::Program): the flow engine's default window is then the longest program, and the
// run equals one with an unbounded window. Before the programs were padded to a common length,
// rank 0 (a leaf of tree 0), whose length then sized the window, had the shortest program and
// inner nodes could not issue their later chunks until their first chunks had come back down:
// with 8 one-GPU nodes and 1 MiB the tree ran 89% slower than the NCCL model.
TEST(TreeTiming, TheLongestProgramIsAWideEnoughWindow) {
  const CollectiveSpec s = tree_spec(8, 0, 4'000'000, 100'000, 2);
  const auto programs = make_collective(s);
  EXPECT_EQ(programs->lookahead(), Lookahead::Program);
  OpIndex longest = 0;
  for (Rank r = 0; r < s.ranks; ++r) longest = std::max(longest, programs->num_ops(r));
  EXPECT_EQ(programs->longest_program(), longest);
  const Time whole = run_flow(s, 0, true);
  EXPECT_EQ(whole, run_flow(s, longest, true));
  EXPECT_EQ(whole, run_flow(s, 1u << 20, true));
  // A window of one block per lane is not: the comparison can fail.
  EXPECT_GT(run_flow(s, 32, true), whole);
}

// analytical (the NCCL model) and flow (the algorithm's programs on the preset's graph) agree
// within 1% where nothing contends and the programs move what the model prices: the audit of
// docs/collectives.md ("Analytical vs flow"), fixed cases only, protocol Simple, large sizes
// (where the per-step latency terms, which the two engines book differently, are small); the
// tree's flow run lies between the model less its pipeline fill and the model instead.
struct AgreementCase {
  const char* name;
  std::uint32_t nodes;
  std::uint32_t gpus_per_node;
  CollectiveOp op;
  Algorithm algo;
  std::uint64_t mib;
};

void PrintTo(const AgreementCase& c, std::ostream* os) {
  *os << c.name;
}

class Agreement : public ::testing::TestWithParam<AgreementCase> {};

TEST_P(Agreement, AnalyticalAndFlowWithinOnePercent) {
  const AgreementCase& c = GetParam();
  PresetRequest req;
  req.system = "hgx-h100";
  req.fabric = "ib-ndr";
  req.nodes = c.nodes;
  req.gpus_per_node = c.gpus_per_node;
  const PresetCluster preset = resolve_preset(req);
  const BuildResult built = build_topology(rail_optimized_args(preset));
  ASSERT_TRUE(built.graph.has_value());
  CollectiveSweep s;
  s.op = c.op;
  s.algo = c.algo;
  s.proto = nccl::Proto::Simple;
  s.min_bytes = s.max_bytes = Bytes::mib(c.mib);
  const auto model = run_collective_sweep(s, nccl_cluster(preset), &*built.graph);
  s.engine = "flow";
  const auto flow = run_collective_sweep(s, nccl_cluster(preset), &*built.graph);
  ASSERT_EQ(model.size(), 1u);
  ASSERT_EQ(flow.size(), 1u);
  // The model's tree pays the fill of NCCL's Simple chunks (docs/nccl-model.md "Transports"),
  // and flow's first chunks pay theirs at the channel's share: flow lies between the model less
  // its fill and the model (8 one-GPU nodes at 64 MiB: 3,204.73 us, 1.017 of the 3,151.75 us
  // without the 83.58 us fill and 0.991 of the model's 3,235.33).
  TunerRequest tr;
  tr.op = c.op;
  tr.bytes = Bytes::mib(c.mib);
  tr.algo = c.algo;
  tr.proto = nccl::Proto::Simple;
  const Time fill = predict(nccl_cluster(preset), tr).fill;
  EXPECT_EQ(fill > Time::zero(), c.algo == Algorithm::Tree);
  const std::string figures = std::to_string(model[0].time.microseconds()) + " us (fill " +
                              std::to_string(fill.microseconds()) + ") vs " +
                              std::to_string(flow[0].time.microseconds()) + " us";
  if (c.algo == Algorithm::Tree) {
    // Each tree channel runs at its share of the model's bus (engine_run.cpp
    // tree_channel_share_GBps): the busiest rank of a lane moves its 2 S / lanes at 2 bus / lanes,
    // the model's S / bus, and no channel streams ahead while another waits out a step latency,
    // so flow pays the model's latency and bandwidth terms (its time less the fill) and, as its
    // first chunks climb and come back at the same share, some of the fill: never more.
    EXPECT_GE(flow[0].time.seconds(), (model[0].time - fill).seconds() * (1 - 1e-9)) << figures;
    EXPECT_LE(flow[0].time.seconds(), model[0].time.seconds() * (1 + 1e-9)) << figures;
  } else {
    EXPECT_NEAR(flow[0].time.seconds() / model[0].time.seconds(), 1.0, 0.01) << figures;
  }
}

// Tree across 4, 8 and 16 one-GPU nodes from 64 MiB: the double binary tree puts 2 x S/2 per
// direction on an inner node's NIC, as the model's bw / 2; a channel capped at its share
// cannot stream past the model's latency, so flow lies within the model's fill of it. Direct
// all-reduce is two-shot in both. Halving-doubling in one node moves 2(n-1)/n S per GPU over NVLink
// like the ring. PAT's Bruck all-gather moves (n-1)/n S per GPU through its NIC at 0.75 of the
// ring's bandwidth in both.
INSTANTIATE_TEST_SUITE_P(
    Fixed, Agreement,
    ::testing::Values(
        AgreementCase{"tree_4x1_256MiB", 4, 1, CollectiveOp::AllReduce, Algorithm::Tree, 256},
        AgreementCase{"tree_4x1_64MiB", 4, 1, CollectiveOp::AllReduce, Algorithm::Tree, 64},
        AgreementCase{"tree_8x1_64MiB", 8, 1, CollectiveOp::AllReduce, Algorithm::Tree, 64},
        AgreementCase{"tree_8x1_256MiB", 8, 1, CollectiveOp::AllReduce, Algorithm::Tree, 256},
        AgreementCase{"tree_16x1_256MiB", 16, 1, CollectiveOp::AllReduce, Algorithm::Tree, 256},
        AgreementCase{"direct_allreduce_1x8_64MiB", 1, 8, CollectiveOp::AllReduce,
                      Algorithm::Direct, 64},
        AgreementCase{"halving_doubling_1x8_64MiB", 1, 8, CollectiveOp::AllReduce,
                      Algorithm::HalvingDoubling, 64},
        AgreementCase{"direct_alltoall_1x8_64MiB", 1, 8, CollectiveOp::AllToAll, Algorithm::Direct,
                      64},
        AgreementCase{"pat_allgather_2x1_64MiB", 2, 1, CollectiveOp::AllGather, Algorithm::Pat, 64},
        AgreementCase{"pat_allgather_8x1_256MiB", 8, 1, CollectiveOp::AllGather, Algorithm::Pat,
                      256},
        // Per-medium glue (docs/nccl-model.md "Flow runs"): NCCL's step latency less the path's
        // (was +8.7% at 1 MiB in one node), NICs at NCCL's search speed while NVLink runs at
        // its own (multi-node direct was +16%), network steps at NCCL's network latency
        // (multi-node halving-doubling was -31% at 1 MiB), NVLS moving S (1 + 1/g) at 0.85 (was
        // -25%) and paying its step latency once (was -50% at 1 MiB).
        AgreementCase{"ring_allreduce_1x8_1MiB", 1, 8, CollectiveOp::AllReduce, Algorithm::Ring, 1},
        AgreementCase{"ring_allgather_1x8_16MiB", 1, 8, CollectiveOp::AllGather, Algorithm::Ring,
                      16},
        AgreementCase{"halving_doubling_4x8_1MiB", 4, 8, CollectiveOp::AllReduce,
                      Algorithm::HalvingDoubling, 1},
        AgreementCase{"halving_doubling_2x8_64MiB", 2, 8, CollectiveOp::AllReduce,
                      Algorithm::HalvingDoubling, 64},
        AgreementCase{"direct_alltoall_2x8_64MiB", 2, 8, CollectiveOp::AllToAll, Algorithm::Direct,
                      64},
        AgreementCase{"pat_allgather_8x1_1MiB", 8, 1, CollectiveOp::AllGather, Algorithm::Pat, 1},
        AgreementCase{"ring_allreduce_2x1_256MiB", 2, 1, CollectiveOp::AllReduce, Algorithm::Ring,
                      256},
        AgreementCase{"nvls_allreduce_1x8_1MiB", 1, 8, CollectiveOp::AllReduce,
                      Algorithm::NetReduce, 1},
        AgreementCase{"nvls_allreduce_1x8_256MiB", 1, 8, CollectiveOp::AllReduce,
                      Algorithm::NetReduce, 256}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace lockstep
