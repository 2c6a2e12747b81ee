// GPUs that share NICs (AWS p4d / p4de: 4 EFA NICs of 100G for 8 A100s, GPU l on NIC l / 2):
// NCCL's search hands its tree channels NICs in turn, so every NIC carries the same share
// (collective/tree.cpp head_order). Measured on 2 x p4de (aws-samples nccl-tests, 2 GiB):
// 41.78 GB/s algbw, 84% of the node's 50 GB/s, which only all four NICs can carry.
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "lockstep/nccl/sweep.hpp"
#include "lockstep/topology/builder.hpp"
#include "preset_request.hpp"

namespace lockstep {
namespace {

CollectiveRow tree_256mib(std::uint32_t nics, double gbps, const char* engine) {
  const PresetCluster preset = test::preset_of("dgx-a100", "efa", 2, 0, nics, gbps);
  const BuildResult built = build_topology(rail_optimized_args(preset));
  CollectiveSweep s;
  s.algo = Algorithm::Tree;
  s.proto = nccl::Proto::Simple;
  s.min_bytes = s.max_bytes = Bytes::mib(256);
  s.engine = engine;
  return run_collective_sweep(s, nccl_cluster(preset), &*built.graph).at(0);
}

// Two nodes: each node's NICs send S and receive S (one tree edge between the nodes per
// channel, S / channels up and down each way), so 4 x 100G and 8 x 50G (the same 50 GB/s per
// node) take the same time, no less than S / 50 GB/s = 268,435,456 B / 50 GB/s = 5,368.7 us.
// Before the heads were spread, 4 NICs ran at half that rate (heads 0-3 on NICs 0 and 1:
// 12,359.83 us on flow against 6,265.90 with 8 NICs).
TEST(SharedNicTree, FourSharedNicsCarryAsMuchAsEightOfHalfTheSpeed) {
  for (const char* engine : {"analytical", "flow"}) {
    const CollectiveRow shared = tree_256mib(4, 100, engine);
    const CollectiveRow own = tree_256mib(8, 50, engine);
    EXPECT_GE(shared.time.microseconds(), 5368.7) << engine;
    // Within 3%: flow caps each tree channel at its share of the model's bus, and 4 NICs get 8
    // channels where 8 NICs get 16 (6,855.96 us on flow for both).
    EXPECT_NEAR(shared.time.microseconds() / own.time.microseconds(), 1.0, 0.03) << engine;
  }
  // The model: NCCL's tree efficiency on the node's 48 GB/s (4 x 12 or 8 x 6 at NCCL's search
  // speeds), bus 0.92 x 48 = 44.16 GB/s: S / bus = 6,078.70 us, plus launch (20), latency
  // (120.40) and the fill of 524,288 B Simple chunks (324.45) = 6,543.55 us for both, under 6,600
  // where heads on two NICs take twice the bound.
  const double model_us = tree_256mib(4, 100, "analytical").time.microseconds();
  EXPECT_NEAR(model_us, 6543.55, 0.01);
  EXPECT_NEAR(tree_256mib(8, 50, "analytical").time.microseconds(), model_us, 0.01);
  // Flow: a chain GPU's channel is capped at its share, 2 x 44.16 / 8 = 11.04 GB/s with 8
  // channels (2 x 44.16 / 16 = 5.52 with 16), where the model's fill lets the first chunk cross
  // each of the 2 (8 - 1) = 14 NVLink stages at NVLink's share, 240 / 8 = 30 GB/s (240 / 16 =
  // 15). Simple forwards whole chunks: 524,288 B with 8 channels (32 MiB per channel, 64 chunks,
  // NCCL's 8 x depth 8), 262,144 B with 16: 14 x 524,288 B x (1 / 11.04 - 1 / 30) GB/s^-1 =
  // 14 x 262,144 B x (1 / 5.52 - 1 / 15) GB/s^-1 = 420.19 us more at most: 6,963.74 us.
  const double first_chunk_us = 14 * 524288 * (1 / 11.04 - 1 / 30.0) / 1e3;
  EXPECT_NEAR(first_chunk_us, 14 * 262144 * (1 / 5.52 - 1 / 15.0) / 1e3, 1e-9);
  EXPECT_NEAR(first_chunk_us, 420.19, 0.005);
  for (const auto& [nics, gbps] : {std::pair{4u, 100.0}, std::pair{8u, 50.0}}) {
    const double flow_us = tree_256mib(nics, gbps, "flow").time.microseconds();
    EXPECT_LE(flow_us, model_us + first_chunk_us) << nics << " NICs";
    EXPECT_GE(flow_us, model_us - 324.45) << nics << " NICs";  // latency + S / bus at least
  }
  EXPECT_LT(model_us, 6600.0);
}

}  // namespace
}  // namespace lockstep
