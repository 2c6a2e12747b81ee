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

}  // namespace
}  // namespace lockstep
