// The busiest links' utilisation over time in `collective` rows (LinkReport::series) on the flow
// and packet engines: each series integrates to the link's bytes / bandwidth, and its summary
// (peak, time at 90% or more) agrees with it.
#include <gtest/gtest.h>

#include "../topology/topology_test_util.hpp"
#include "lockstep/nccl/sweep.hpp"

namespace lockstep {
namespace {

TEST(CollectiveLinkSeries, SeriesIntegrateToTheLinksBytes) {
  const PresetCluster p = resolve_preset({.system = "hgx-h100", .fabric = "ib-ndr", .nodes = 2});
  const Topology t = test::hgx_h100(2);
  for (const char* engine : {"flow", "packet"}) {
    SCOPED_TRACE(engine);
    CollectiveSweep s;
    s.algo = Algorithm::Ring;
    s.engine = engine;
    s.min_bytes = Bytes::mib(4);
    s.max_bytes = Bytes::mib(4);
    const std::vector<CollectiveRow> rows = run_collective_sweep(s, nccl_cluster(p), &t);
    ASSERT_EQ(rows.size(), 1u);
    ASSERT_FALSE(rows[0].links.empty());
    for (const LinkReport& l : rows[0].links) {
      SCOPED_TRACE(l.name);
      ASSERT_FALSE(l.series.empty());
      EXPECT_LE(l.series.size(), LinkReport::kSeriesPoints);
      double integral_s = 0, peak = 0;
      for (float u : l.series) {
        EXPECT_GE(u, 0.0f);
        EXPECT_LE(u, 1.0f + 1e-6f);
        integral_s += u * l.series_period.seconds();
        peak = std::max<double>(peak, u);
      }
      // Sum of u x period = wire bytes / bandwidth (the series' float sums, to 1e-5): the series
      // counts what the link's line rate carried, payload / its efficiency (docs/telemetry.md).
      const double bps = t.link(Topology::link_of(l.link)).bandwidth.bytes_per_second();
      EXPECT_NEAR(integral_s, l.wire_bytes / bps, 1e-5 * l.wire_bytes / bps);
      // The peak of the fine periods is at least that of their means, and the time at 90% or
      // more is at most the run, and positive where a mean period reached 90%.
      EXPECT_GE(l.peak_utilisation, peak - 1e-6);
      EXPECT_LE(l.above_90, l.series_period * static_cast<std::int64_t>(l.series.size()));
      if (peak >= 0.9) {
        EXPECT_GT(l.above_90, Time::zero());
      }
    }
  }
}

// A network link whose fabric has its own transfer efficiency (RoCE) has its solver capacity
// scaled by network / GPU efficiency; the series divides by that capacity, not the raw
// bandwidth, or a saturated RoCE link read 117% busy (alltoall of 4 MiB on 4 nodes: 1.165).
TEST(CollectiveLinkSeries, SaturatedRoceLinksReadAtMostFull) {
  PresetRequest request;
  request.system = "hgx-h100";
  request.fabric = "roce-400g";
  request.nodes = 4;
  const PresetCluster p = resolve_preset(request);
  const Topology t = std::move(*build_topology(rail_optimized_args(p)).graph);
  CollectiveSweep s;
  s.op = CollectiveOp::AllToAll;
  s.engine = "flow";
  s.min_bytes = Bytes::mib(4);
  s.max_bytes = Bytes::mib(4);
  const std::vector<CollectiveRow> rows = run_collective_sweep(s, nccl_cluster(p), &t);
  ASSERT_EQ(rows.size(), 1u);
  ASSERT_FALSE(rows[0].links.empty());
  float peak = 0;
  for (const LinkReport& l : rows[0].links) {
    // The counters too: wire bytes are the payload over its rate's share of the line rate
    // (docs/telemetry.md "Payload and wire bytes"), never more than the line carries.
    EXPECT_LE(l.utilisation, 1.0 + 1e-9) << l.name;
    EXPECT_GT(l.wire_bytes, l.bytes) << l.name;
    for (float u : l.series) {
      EXPECT_LE(u, 1.0f + 1e-6f) << l.name;
      peak = std::max(peak, u);
    }
  }
  EXPECT_GT(peak, 0.99f);  // the busiest links are saturated in some period
}

}  // namespace
}  // namespace lockstep
