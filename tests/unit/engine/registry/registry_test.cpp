// Engines by name, collective sweeps, and the agreement of the analytical and flow engines where
// nothing contends.
#include "lockstep/engine/registry/registry.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "lockstep/collective/collective.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/engine/registry/collective_sweep.hpp"
#include "lockstep/topology/builder.hpp"
#include "lockstep/topology/presets.hpp"

namespace lockstep {
namespace {

TEST(EngineRegistry, MakesEveryEngineByName) {
  for (const std::string& name : engine_names()) EXPECT_EQ(make_engine(name)->name(), name);
  EXPECT_EQ(engine_names().front(), "analytical");
}

TEST(EngineRegistry, UnknownNameListsTheKnownOnes) {
  try {
    make_engine("quantum");
    FAIL() << "unknown engine accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "engine");
    const std::string m = e.what();
    for (const char* n : {"analytical", "flow", "packet"})
      EXPECT_NE(m.find(n), std::string::npos) << m;
  }
}

Topology star(std::uint32_t n, Bandwidth bw, Time latency) {
  TopologyBuilder b("star");
  const DeviceId sw = b.add_device(Device{DeviceKind::ScaleUpSwitch, 0, 0, 0, 0});
  for (std::uint32_t i = 0; i < n; ++i) {
    const DeviceId g = b.add_device(Device{DeviceKind::Gpu, 0, 0, 0, i});
    b.add_link(Link{g, sw, bw, latency, LinkMedium::NvLink});
  }
  return std::move(b).build();
}

TEST(EngineAgreement, AnalyticalAndFlowAgreeWithoutContention) {
  // A one-channel ring over a non-blocking switch: every link direction carries one transfer
  // at a time, so the flow engine's fair sharing never bites and both engines must tell the
  // same time: 2(n-1) steps of overhead + path latency + S / (n B eff)
  //   = 14 x (1 us + 1 us + 8 MiB / (400 GB/s x 0.92)) = 14 x 24.795 us = 347.1 us.
  const Topology topo = star(8, Bandwidth::gBps(400), Time::us(0.5));
  CollectiveSpec spec;
  spec.ranks = 8;
  spec.bytes = Bytes::mib(64);
  const auto programs = make_collective(spec);
  const auto router = make_router(topo, RouterOptions{});
  EngineInput in;
  in.topology = &topo;
  in.programs = programs.get();
  in.placement = topo.gpus();
  in.router = router.get();
  in.options.per_message_overhead = Time::us(1);
  in.options.transfer_efficiency = 0.92;
  const Time a = make_engine("analytical")->run(in).makespan;
  const Time f = make_engine("flow")->run(in).makespan;
  EXPECT_NEAR(a.microseconds(), 14 * (2 + 8388608 / (400e9 * 0.92) * 1e6), 1e-3);
  EXPECT_NEAR(f.seconds() / a.seconds(), 1.0, 0.01)
      << a.microseconds() << " vs " << f.microseconds();
}

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

TEST(CollectiveSweep, ParsesAndRejectsWithTheKey) {
  ArgNode m = ArgNode::map("collectives", SourceLocation{"s.yaml", 5, 3});
  m.set("op", ArgNode::scalar("all_gather", "collectives.op", {"s.yaml", 6, 7}));
  m.set("max_bytes", ArgNode::scalar("1GiB", "collectives.max_bytes", {"s.yaml", 7, 14}));
  const CollectiveSweep s = parse_collective_sweep(m);
  EXPECT_EQ(s.op, CollectiveOp::AllGather);
  EXPECT_EQ(s.max_bytes, Bytes::gib(1));
  ArgNode bad = ArgNode::map("collectives", SourceLocation{"s.yaml", 5, 3});
  bad.set("algo", ArgNode::scalar("spiral", "collectives.algo", {"s.yaml", 8, 9}));
  try {
    parse_collective_sweep(bad);
    FAIL() << "unknown algorithm accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().line, 8);
  }
  ArgNode typo = ArgNode::map("collectives", SourceLocation{"s.yaml", 5, 3});
  typo.set("max_byte", ArgNode::scalar("1GiB", "collectives.max_byte", {"s.yaml", 9, 3}));
  EXPECT_THROW(parse_collective_sweep(typo), InputError);
}

TEST(CollectiveSweep, CsvHeaderIsExact) {
  CollectiveSweep s;
  s.min_bytes = Bytes::mib(1);
  s.max_bytes = Bytes::mib(2);
  const NcclCluster c = nccl_cluster(resolve_preset({.system = "hgx-h100"}));
  const auto rows = run_collective_sweep(s, c);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].count, 262144u);  // 1 MiB of floats
  const std::string csv = format_collective_rows(rows, "csv");
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "bytes,count,type,algorithm,protocol,time_us,algbw_GBps,busbw_GBps");
  EXPECT_EQ(csv.substr(csv.find('\n') + 1, 21), "1048576,262144,float,");
  EXPECT_THROW(format_collective_rows(rows, "xml"), InputError);
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
  s.algo = TunerAlgo::Ring;
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
