// The channels NCCL builds on a partial NVLink mesh, derived as its search does (search.cc
// ncclTopoCompute): the speeds of speedArrayIntra from the widest path down (40, 30, 20, 18, 15,
// 12, 10, 9, ... on Volta), NVLink alone then through a GPU at each speed, the largest rings x
// speed kept (a lower speed only while it is above 0.49 of the best's, and not past the GPU's
// whole NVLink bandwidth), rings of 25 GB/s or more duplicated (ncclTopoDupChannels), and every
// channel doubled again by connect.cc. DGX-1 V100 wiring (catalog mesh_wiring), NVLinks per pair:
//   0: 1(1) 2(1) 3(2) 4(2)   1: 0(1) 2(2) 3(1) 5(2)   2: 0(1) 1(2) 3(2) 6(1)
//   3: 0(2) 1(1) 2(2) 7(1)   4: 0(2) 5(1) 6(1) 7(2)   5: 1(2) 4(1) 6(2) 7(1)
//   6: 2(1) 4(1) 5(2) 7(2)   7: 3(1) 4(2) 5(1) 6(2)
// at SM70's 20 GB/s per link (topo.h), so a pair's merged link is 20 or 40 GB/s per direction.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <vector>

#include "lockstep/nccl/cluster.hpp"
#include "lockstep/topology/catalog.hpp"
#include "preset_views.hpp"

namespace lockstep {
namespace {

using test::from_preset;

// Every ring visits each GPU once and no directed link carries more rings than its links at
// 20 GB/s each (1 per link per direction).
void expect_rings_fit(const std::vector<std::vector<std::uint32_t>>& rings, std::uint32_t g) {
  const auto& links = mesh_wiring("dgx1_cube_mesh");
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> used;
  for (const auto& r : rings) {
    ASSERT_EQ(r.size(), g);
    EXPECT_EQ(std::set<std::uint32_t>(r.begin(), r.end()).size(), g);
    for (std::size_t k = 0; k < r.size(); ++k) ++used[{r[k], r[(k + 1) % r.size()]}];
  }
  for (const auto& [hop, n] : used) EXPECT_LE(n, links[hop.first][hop.second]) << hop.first;
}

// By hand, GPUs 0 .. g-1 (every count settles at 20 GB/s per ring, below 25: no duplication by
// the search, so channels = 2 x rings and bandwidth = 20 x rings):
//  2: the one link 0-1 (maxBw 20): 1 ring at 20 = 20 = GPU 0's whole NVLink bandwidth: stop.
//  3: 0-1, 0-2 single, 1-2 double; at 40/30 no ring (0's links are single). At 20 the rings
//     0-1-2 and 0-2-1 take each single link once per direction: 2 (40 GB/s); GPU 1 has 60, so
//     the search goes on: 18, 15, 12 still fit 2 (36, 30, 24); 10 fits 4 = 40, not more: 2.
//  4: the quad; doubles 0-3, 1-2, 2-3 form no cycle: none at 40/30. At 20 GPU 0's 4 links bound
//     it to 4 rings and 0-1-2-3, 0-2-1-3, 0-3-1-2, 0-3-2-1 fit: 80 (GPU 2 has 100: go on; 12
//     fits at most 5 = 60, 10 at most 8 = 80, not more): 4.
//  5: GPU 4's only peer is 0; no ring of NVLink alone, through GPU 0 every ring crosses 0 <-> 4
//     once each way: at 40 the relayed hops' single legs (0-1, 0-2) or the closing hop fail; at
//     20 two rings fit (2 links per direction): 40 (Dgx1Relay.FiveGpusRingThroughGpuZero).
//  6: GPUs 4 and 5 have 2 peers each in use (4: 0, 5; 5: 1, 4), so every ring is 0-4-5-1-..-0
//     and takes the single link 4-5: no ring at 40/30 (through a GPU neither: 4's and 5's other
//     hops need single legs), 1 per direction at 20: 2 rings; 10 carries 4 = 40, not more: 2.
//  7: no ring at 40/30 (the doubles form the path 4-0-3-2-1-5-6, closed by the single 6-4);
//     at 20 GPU 4's 4 links bound it and 4 rings fit (0-1-3-2-6-5-4, 0-3-2-1-5-6-4,
//     0-4-5-6-2-3-1, 0-4-6-5-1-2-3): 80; 10 carries at most GPU 4's 8 = 80, not more: 4.
//  8: 2 rings at 40 (the doubles' cycle 0-3-2-1-5-6-7-4 each way, 80), 2 at 30 (60), 6 at 20
//     (120, every link of a GPU: stop): 6 rings, 12 channels.
TEST(MeshChannels, Dgx1CountsAsNcclSearches) {
  const std::map<std::uint32_t, std::uint32_t> rings = {{2, 1}, {3, 2}, {4, 4}, {5, 2},
                                                        {6, 2}, {7, 4}, {8, 6}};
  for (const auto& [g, want] : rings) {
    SCOPED_TRACE(g);
    const MeshSearch s = nccl_mesh_search("v100", g);
    EXPECT_EQ(s.found, want);
    EXPECT_EQ(s.duplicated, want);  // 20 GB/s: below ncclTopoDupChannels' 25
    EXPECT_DOUBLE_EQ(s.speed, 20.0);
    EXPECT_EQ(s.channels(), 2 * want);
    if (g != 5) expect_rings_fit(s.rings, g);
    const NcclCluster c = from_preset("dgx1-v100", 1, g);
    EXPECT_EQ(c.max_channels(), 2 * want);
    EXPECT_DOUBLE_EQ(c.intra_GBps, 20.0 * want);  // channels x per-channel bandwidth
  }
}

// Per channel: 5 GPUs run 4 channels at 10 GB/s each (2 rings x 20 over 4 channels), so a
// 1 GiB ring Simple all-reduce still moves 40 GB/s: 2 x 4/5 x 2^30 B / 40 GB/s = 42,949.67 us of
// transfer.
TEST(MeshChannels, FiveGpusBandwidthIsChannelsTimesTheirSpeed) {
  const NcclCluster c = from_preset("dgx1-v100", 1, 5);
  const Prediction all = test::ring_simple_all_reduce(c, test::kGiB);
  EXPECT_EQ(all.channels, 4u);
  EXPECT_DOUBLE_EQ(all.bus_GBps, 40.0);
  EXPECT_NEAR(all.transfer.microseconds(), 2.0 * 4 / 5 * test::kGiB / 40e3, 1e-6);
}

// H100 PCIe bridge pair (2 GPUs in use): one merged link of 12 NVLink 4 links x 20.6 = 247.2
// GB/s per direction. sm90SpeedArrayIntra from 60: the ring 0-1-0 fits floor(247.2 / 60) = 4
// at 60 = 240; 50: 4 = 200; 40: 6 = 240 (not more); 30: 8 = 240 (not more); 24 / 60 = 0.4 stops.
// 60 >= 50: duplicated (ncclTopoDupChannels) to 8 rings at 30; connect.cc: 16 channels, 240 GB/s.
// A100 PCIe pair (Ampere, 12 x 20.0 = 240, speedArrayIntra): 6 rings at 40 = 240 = the GPU's
// whole NVLink bandwidth; duplicated to 12 at 20; 24 channels, 240 GB/s.
TEST(MeshChannels, BridgedPairAsNcclSearches) {
  const NcclCluster h100 = from_preset("h100-pcie", 1, 2);
  EXPECT_EQ(h100.max_channels(), 16u);
  EXPECT_DOUBLE_EQ(h100.intra_GBps, 240.0);
  const NcclCluster a100 = from_preset("a100-pcie", 1, 2);
  EXPECT_EQ(a100.max_channels(), 24u);
  EXPECT_DOUBLE_EQ(a100.intra_GBps, 240.0);
}

}  // namespace
}  // namespace lockstep
