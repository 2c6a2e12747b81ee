// NCCL_PXN_DISABLE as a switch (`pxn: false`, `--pxn false`; docs/routing.md "PXN"): through the
// NCCL glue, on the analytical, flow and packet engines, an all-to-all between two rail-optimised
// H100 nodes keeps every byte on its rail's leaf with PXN and sends the cross-rail ones over the
// spine without it.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "lockstep/engine/registry/registry.hpp"
#include "lockstep/nccl/groups.hpp"
#include "lockstep/nccl/sweep.hpp"
#include "lockstep/nccl/tuner.hpp"
#include "two_rail_nodes.hpp"

namespace lockstep {
namespace {

using testing::nic_to_leaf;
using testing::spine_cable;
using testing::TwoRailNodes;

struct Outcome {
  double us = 0;
  std::vector<double> bytes;  // per directed link, payload
  std::vector<double> wire;   // what it took of the wire
};

// All-to-all of S = `bytes` through NcclGroups (the sweep's path) on `engine`, NCCL_PXN_DISABLE
// set when !pxn; the engine's bytes on every link.
Outcome alltoall(const TwoRailNodes& f, const char* engine, bool pxn, Bytes bytes) {
  NcclCluster c = nccl_cluster(f.preset);
  c.pxn = pxn;
  const NcclGroups groups(c, &f.topo());
  TunerRequest req;
  req.op = CollectiveOp::AllToAll;
  req.bytes = bytes;
  const Prediction p = predict(c, req);
  const auto e = make_engine(engine);
  Outcome r;
  r.us =
      groups.time(p, req.op, bytes, DataType::Float32, {groups.all()}, e.get(), {}).microseconds();
  r.bytes = e->link_counters().bytes;
  r.wire = e->link_counters().wire_bytes;
  return r;
}

// 16 ranks, S = 1 GiB: each rank sends B = S/16 = 64 MiB to each peer. With PXN the send to
// node n' GPU k leaves by NIC (n, k) whatever the sender's rail, so NIC (n, k) carries the 8
// blocks of node n's GPUs for node n' GPU k: 8 B = 512 MiB, and no spine cable carries any.
// Both engines price a network link by one rule (link_payload_efficiency, engine.hpp): payload
// at NCCL's network speed, 48 of the NDR link's 50 GB/s. The NIC's queue of 8 B then takes
// 536,870,912 / 48e9 s = 11,184.81 us; the messages pay NCCL's latency, 42.4 us
// (docs/nccl-model.md "alltoallv with a skew": alltoall 11,227.21 us), and the path's latency
// beyond the same-rail path it was measured on: the relay's NVLink hop (GPU -> NVSwitch -> GPU,
// 2 x 250 ns), 11,227.71 us.
// Without PXN GPU (n, l) sends its 8 B by its own NIC; 7 B of it goes to other rails, up leaf
// l's one cable to the spine, with the 7 B of the other node's GPU l: 14 B = 896 MiB per
// spine cable each way, 939,524,096 / 48e9 s = 19,573.42 us, plus the 42.4 us and the spine's
// two leaf-spine cables beyond the same-rail path (2 x 280 ns on NDR): 19,616.38 us, 1.75 x
// the NIC bound beyond the latencies.
TEST(PxnSwitch, OffSendsCrossRailBytesOverTheSpineOnEveryEngine) {
  const TwoRailNodes f;
  const Bytes s = Bytes::gib(1);
  const double b = s.as_double() / 16;
  const double with_us = 8 * b / 48e9 * 1e6 + 42.4 + 2 * 0.25;      // 11,227.71
  const double without_us = 14 * b / 48e9 * 1e6 + 42.4 + 2 * 0.28;  // 19,616.38
  // Until issue 20 the analytical engine ran network links at NVLink's 370.8 / 450 of line
  // rate, 1.164 x these times.
  const Outcome graph_on = alltoall(f, "analytical", true, s);
  const Outcome graph_off = alltoall(f, "analytical", false, s);
  EXPECT_NEAR(graph_on.us, with_us, 0.01);
  EXPECT_NEAR(graph_off.us, without_us, 0.01);
  const Outcome on = alltoall(f, "flow", true, s);
  const Outcome off = alltoall(f, "flow", false, s);
  EXPECT_NEAR(on.us, with_us, 0.01);
  EXPECT_NEAR(off.us, without_us, 0.01);
  for (const Outcome* o : {&graph_on, &graph_off, &on, &off}) {
    // Payload on the counters of both engines: 8 B on a NIC cable, 14 B on a spine cable
    // without PXN; on the wire 1 / 0.96 of it (NCCL's network efficiency), which keeps the
    // busiest NIC link under 100% busy.
    const bool with_pxn = o == &graph_on || o == &on;
    std::size_t nics = 0, spines = 0;
    for (DirLinkId d = 0; d < f.topo().num_directed_links(); ++d) {
      if (nic_to_leaf(f.topo(), d)) {
        ++nics;
        EXPECT_NEAR(o->bytes[d], 8 * b, 1) << d;  // the node's 8 blocks for rail l, or its GPU's
        EXPECT_NEAR(o->wire[d], 8 * b / 0.96, 1) << d;
      }
      if (spine_cable(f.topo(), d)) {
        ++spines;
        EXPECT_NEAR(o->bytes[d], with_pxn ? 0 : 14 * b, 1) << d;
      }
    }
    EXPECT_EQ(nics, 16u);
    EXPECT_EQ(spines, 16u);  // 8 leaves, one cable each, both directions
  }
}

// The same switch on the packet engine, at S = 64 MiB (B = 4 MiB) to keep its packet count
// small: with PXN no packet crosses the spine; without, each spine cable carries 14 B of payload
// plus headers, and the exchange takes longer by about 14 / 8 (the spine's bound against the
// NICs'; latencies, headers and credits are alike in both runs).
TEST(PxnSwitch, PacketEngineHonoursTheSwitch) {
  const TwoRailNodes f;
  const Bytes s = Bytes::mib(64);
  const double b = s.as_double() / 16;
  const Outcome on = alltoall(f, "packet", true, s);
  const Outcome off = alltoall(f, "packet", false, s);
  for (DirLinkId d = 0; d < f.topo().num_directed_links(); ++d) {
    if (!spine_cable(f.topo(), d)) continue;
    EXPECT_EQ(on.bytes[d], 0.0) << d;
    // Payload: each transfer's inflated bytes are rounded up to a whole byte, which the counter
    // reads back as under one byte of payload more per transfer (the 14 blocks cross in NCCL's
    // chunks: 23.5 B more in all here), never less.
    EXPECT_GE(off.bytes[d], 14 * b) << d;
    EXPECT_LE(off.bytes[d], 14 * b + 64) << d;
    EXPECT_GE(off.wire[d], 14 * b / 0.96) << d;  // and the headers
    EXPECT_LE(off.wire[d], 14 * b / 0.96 * 1.1) << d;
  }
  EXPECT_NEAR(off.us / on.us, 14.0 / 8, 0.15);
}

// The sweep's key: `pxn: false` gives the runs above (the flow engine's time), `pxn: true` the
// default.
TEST(PxnSwitch, SweepKeyReachesTheEngines) {
  const TwoRailNodes f;
  CollectiveSweep s;
  s.op = CollectiveOp::AllToAll;
  s.min_bytes = s.max_bytes = Bytes::gib(1);
  s.engine = "flow";
  const NcclCluster c = nccl_cluster(f.preset);
  const double on = run_collective_sweep(s, c, &f.topo()).at(0).time.microseconds();
  s.pxn = false;
  const double off = run_collective_sweep(s, c, &f.topo()).at(0).time.microseconds();
  EXPECT_DOUBLE_EQ(on, alltoall(f, "flow", true, s.min_bytes).us);
  EXPECT_DOUBLE_EQ(off, alltoall(f, "flow", false, s.min_bytes).us);
  EXPECT_GT(off / on, 1.7);
}

}  // namespace
}  // namespace lockstep
