// nccl-tests sweeps: their sizes, rows, and the flow engine's agreement with the model.
#include "lockstep/nccl/sweep.hpp"

#include <gtest/gtest.h>

#include "lockstep/topology/builder.hpp"
#include "lockstep/topology/presets.hpp"

namespace lockstep {
namespace {

TEST(CollectiveSweep, SizesFollowNcclTests) {
  CollectiveSweep s;
  s.min_bytes = Bytes(8);
  s.max_bytes = Bytes(64);
  EXPECT_EQ(s.sizes(8).size(), 4u);  // 8 16 32 64
  s.op = CollectiveOp::AllGather;    // whole float elements per rank: multiples of 32 B
  const auto g = s.sizes(8);
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0].count(), 32u);
  EXPECT_EQ(g[1].count(), 64u);
}

TEST(CollectiveSweep, FlowEngineTellsTheSameStoryOnOneNode) {
  // 8 x H100 ring all-reduce of 256 MiB: the flow engine runs the ring's programs over the
  // preset's NVLink graph with NCCL's per-step latency and efficiency; the NCCL model and the
  // run agree within a few percent (the model's latency uses NCCL's per-step table, the run
  // the same per-message overhead plus the graph's link latencies).
  const PresetCluster p = resolve_preset({.system = "hgx-h100"});
  const BuildResult built = build_topology(rail_optimized_args(p));
  ASSERT_TRUE(built.graph.has_value());
  CollectiveSweep s;
  s.min_bytes = s.max_bytes = Bytes::mib(256);
  s.algo = Algorithm::Ring;
  const auto model = run_collective_sweep(s, nccl_cluster(p), &*built.graph);
  s.engine = "flow";
  const auto flow = run_collective_sweep(s, nccl_cluster(p), &*built.graph);
  ASSERT_EQ(model.size(), 1u);
  ASSERT_EQ(flow.size(), 1u);
  EXPECT_EQ(flow[0].protocol, "Simple");
  EXPECT_NEAR(flow[0].busbw_GBps / model[0].busbw_GBps, 1.0, 0.03)
      << model[0].busbw_GBps << " vs " << flow[0].busbw_GBps;
}

}  // namespace
}  // namespace lockstep
