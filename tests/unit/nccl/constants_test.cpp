// NCCL's constants (src/nccl/constants.cpp) against the figures their sources quote.
#include "lockstep/nccl/constants.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace lockstep {
namespace {

TEST(NcclConstants, SearchSpeedsMatchTheQuotedPerNicBusBandwidth) {
  // nccl-tests #267/#290: ~46-49 GB/s per NDR NIC; nccl #1576: 192 GB/s for 8 x HDR.
  EXPECT_DOUBLE_EQ(nccl::net_search_speed(nccl::Generation::Hopper, 50.0), 48.0);
  EXPECT_DOUBLE_EQ(nccl::net_search_speed(nccl::Generation::Ampere, 25.0), 24.0);
  EXPECT_DOUBLE_EQ(nccl::net_search_speed(nccl::Generation::Blackwell, 100.0), 96.0);
  EXPECT_DOUBLE_EQ(nccl::hw_latency_us(nccl::Path::Network, Algorithm::Ring, nccl::Proto::LL), 2.7);
  EXPECT_DOUBLE_EQ(nccl::ll_max_bw(nccl::Generation::Hopper, 3), 35.0);
}

TEST(NcclConstants, TablesAreIndexedByTheOneAlgorithmEnum) {
  // tuning.cc: baseLat Tree {6.8, 14, 8.4}, Ring {6.6, 14, 8.4}, PAT 8, NVLS 0; hwLat NVLS over
  // NVLink 25 us, CollNetDirect 3.7 and CollNetChain 2.8 us, network 31 and 30 us.
  EXPECT_DOUBLE_EQ(nccl::base_latency_us(Algorithm::Tree, nccl::Proto::LL), 6.8);
  EXPECT_DOUBLE_EQ(nccl::base_latency_us(Algorithm::Ring, nccl::Proto::Simple), 8.4);
  EXPECT_DOUBLE_EQ(nccl::base_latency_us(Algorithm::Pat, nccl::Proto::Simple), 8.0);
  EXPECT_DOUBLE_EQ(nccl::base_latency_us(Algorithm::NetReduce, nccl::Proto::Simple), 0.0);
  EXPECT_DOUBLE_EQ(
      nccl::hw_latency_us(nccl::Path::NvLink, Algorithm::NetReduce, nccl::Proto::Simple), 25.0);
  EXPECT_DOUBLE_EQ(nccl::hw_latency_us(nccl::Path::NvLink, Algorithm::CollNet, nccl::Proto::Simple),
                   3.7);
  EXPECT_DOUBLE_EQ(nccl::collnet_chain_hw_latency_us(nccl::Path::NvLink), 2.8);
  EXPECT_DOUBLE_EQ(nccl::collnet_chain_hw_latency_us(nccl::Path::Network), 30.0);
  // halving_doubling and direct, which NCCL lacks, take the ring's rows and thresholds.
  for (const Algorithm a : {Algorithm::HalvingDoubling, Algorithm::Direct}) {
    EXPECT_DOUBLE_EQ(nccl::base_latency_us(a, nccl::Proto::LL128), 14.0);
    EXPECT_DOUBLE_EQ(nccl::hw_latency_us(nccl::Path::Pcie, a, nccl::Proto::Simple), 5.7);
    EXPECT_EQ(nccl::thread_threshold(a, nccl::Proto::LL, 8), 64u);
  }
  EXPECT_EQ(nccl::thread_threshold(Algorithm::Tree, nccl::Proto::LL, 8), 8u);
  // Algorithms NCCL has no row for are a programming error, not a zero.
  EXPECT_THROW(nccl::base_latency_us(Algorithm::Chain, nccl::Proto::Simple), std::logic_error);
}

// NCCL's p2p channels per peer (graph/paths.cc, NCCL >= 2.19): 2 per network peer, halved while
// per_peer x ranks > 4 x p2p channels, at least the GPU's NICs, a power of two. 32 channels:
// 16 ranks: 2 x 16 = 32 <= 128, 2; 64 ranks: 128 <= 128, 2; 65 ranks: 130 > 128, so 1; 192 ranks
// (48 GB200 trays): 1. A p5 GPU behind 4 EFA NICs keeps 4. One node: every channel.
TEST(NcclConstants, P2pChannelsPerPeer) {
  EXPECT_EQ(nccl::p2p_channels_per_peer(16, 32, 2, 1), 2u);
  EXPECT_EQ(nccl::p2p_channels_per_peer(64, 32, 8, 1), 2u);
  EXPECT_EQ(nccl::p2p_channels_per_peer(65, 32, 65, 1), 1u);
  EXPECT_EQ(nccl::p2p_channels_per_peer(192, 32, 48, 1), 1u);
  EXPECT_EQ(nccl::p2p_channels_per_peer(256, 32, 32, 4), 4u);
  EXPECT_EQ(nccl::p2p_channels_per_peer(256, 32, 32, 3), 4u);  // a power of two
  EXPECT_EQ(nccl::p2p_channels_per_peer(8, 32, 1, 1), 32u);
  EXPECT_EQ(nccl::p2p_channels_per_peer(16, 2, 2, 4), 2u);  // never more than the channels
}

}  // namespace
}  // namespace lockstep
