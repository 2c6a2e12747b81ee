// p2p traffic (all-to-all) leaves every GPU through its own NIC: a node's NICs all carry it,
// however many there are, where NCCL's ring search stops at MAXCHANNELS / 2 = 16 rings. An
// NVL72 rack has 72 NICs (4 per tray); counting 16 of them priced the GB200 all-to-all across
// racks 4x too slow (OCI's 2- and 3-rack logs: -73% and -71%).
#include <gtest/gtest.h>

#include <string>

#include "lockstep/nccl/sweep.hpp"
#include "lockstep/topology/builder.hpp"
#include "preset_request.hpp"

namespace lockstep {
namespace {

// 32 GB200 trays in two racks of 16 (64 GPUs, 64 NICs of 400G each), alltoall of S = 1 GiB:
// every GPU sends S / 128 to each of the 64 GPUs of the other rack, S / 2 through its own NIC,
// which NCCL's search runs at 48 GB/s (Blackwell's inter-node speed under 50): 536,870,912 B /
// 48 GB/s = 11,184.81 us, plus the step latencies (under 100 us).
TEST(P2pNics, AnNvl72RacksAllToAllLeavesThroughAllItsNics) {
  PresetRequest r;
  r.system = "gb200-nvl72";
  r.fabric = "roce-400g";
  r.nodes = 32;
  r.domain_nodes = 16;
  const PresetCluster preset = resolve_preset(r);
  const NcclCluster c = nccl_cluster(preset);
  ASSERT_EQ(c.nodes, 2u);
  ASSERT_EQ(c.nics_per_node, 64u);
  EXPECT_DOUBLE_EQ(c.node_nics_GBps(), 64 * 48.0);
  EXPECT_EQ(c.net_rings(), 16u);  // the rings' cap, which p2p does not have
  CollectiveSweep s;
  s.op = CollectiveOp::AllToAll;
  s.min_bytes = s.max_bytes = Bytes::gib(1);
  const CollectiveRow row = run_collective_sweep(s, c).at(0);
  EXPECT_EQ(row.algorithm, "direct");
  EXPECT_GE(row.time.microseconds(), 11184.81);
  EXPECT_LT(row.time.microseconds(), 11184.81 + 100);
}

}  // namespace
}  // namespace lockstep
