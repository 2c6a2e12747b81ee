// DeepEP's published low-latency figures against the bytes a call moves (docs/moe-dispatch.md,
// "DeepEP's per-call cost"): the README's table (H800, ConnectX-7 400 Gb/s, 128 tokens a rank,
// hidden 7,168, top 8 of 256 experts, FP8 dispatch, BF16 combine; as docs/moe-dispatch.md quotes
// it, not re-read here) gives each call's latency and bandwidth. Their product is the bytes of
// every (token, expert) message, so the time a call spends beyond its off-node bytes at the
// NIC's line rate comes from the table alone; lockstep's engines price exactly that line-rate
// part, which the last test checks.
#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "lockstep/collective/moe.hpp"
#include "lockstep/topology/builder.hpp"
#include "lockstep/topology/presets.hpp"
#include "lockstep/workload/moe_comm.hpp"

namespace lockstep {
namespace {

struct PublishedRow {
  double ep, us, gb_per_s;
};
// DeepEP README, "Low-latency kernels with pure RDMA" (its current table; EP 8 over NVLink).
constexpr std::array<PublishedRow, 6> kDispatch = {
    {{8, 77, 98}, {16, 118, 63}, {32, 155, 48}, {64, 173, 43}, {128, 192, 39}, {256, 194, 39}}};
constexpr std::array<PublishedRow, 6> kCombine = {
    {{8, 114, 127}, {16, 195, 74}, {32, 273, 53}, {64, 314, 46}, {128, 369, 39}, {256, 360, 40}}};

// Bytes of one call on a rank: 128 tokens x 8 experts, a message each: FP8 dispatch 7,168 + 4 x
// 7,168 / 128 = 7,392 B (a scale per 128 values), BF16 combine 2 x 7,168 = 14,336 B.
constexpr double kDispatchBytes = 128.0 * 8 * 7392;  // 7,569,408
constexpr double kCombineBytes = 128.0 * 8 * 14336;  // 14,680,064
constexpr double kLineRate = 50e9;                   // ConnectX-7, 400 Gb/s

// Latency x bandwidth is the hand-counted bytes of every message, local ones included (within
// 2.5%: the bandwidths are rounded to whole GB/s): the README's bandwidth is bytes / latency.
TEST(DeepEpPublished, BandwidthTimesLatencyIsEveryMessagesBytes) {
  for (const auto& [table, bytes] :
       {std::pair{kDispatch, kDispatchBytes}, std::pair{kCombine, kCombineBytes}}) {
    for (const PublishedRow& r : table) {
      EXPECT_NEAR(r.us * 1e-6 * r.gb_per_s * 1e9 / bytes, 1, 0.025) << r.ep;
    }
  }
}

// A rank sends (R - 8) / R of its messages off its node (8 GPUs a node). The time beyond those
// bytes at line rate, per call:
//   dispatch EP 16: 118 - 3,784,704 / 50e9 = 118 - 75.69 = 42.3 us; EP 32 41.5; EP 64 40.5;
//            EP 128 50.1; EP 256 47.3;
//   combine  EP 16: 195 - 146.80 = 48.2 us; EP 32 52.8; EP 64 57.1; EP 128 93.7; EP 256 75.6.
// Dispatch pays 40-50 us whatever it sends: messages off the node grow from 512 to 992 a rank
// (EP 16 to 256) and the residual by under 10 us, so at most about 10 ns a message; a cost per
// call, not per message.
TEST(DeepEpPublished, EachCallPaysAboutFortyMicrosecondsBeyondItsBytes) {
  auto residual = [](const PublishedRow& r, double bytes) {
    const double remote = bytes * (r.ep - 8) / r.ep;
    return r.us - remote / kLineRate * 1e6;
  };
  const std::array<double, 5> dispatch = {42.3, 41.5, 40.5, 50.1, 47.3};
  const std::array<double, 5> combine = {48.2, 52.8, 57.1, 93.7, 75.6};
  for (std::size_t i = 1; i < kDispatch.size(); ++i) {
    EXPECT_NEAR(residual(kDispatch[i], kDispatchBytes), dispatch[i - 1], 0.05) << kDispatch[i].ep;
    EXPECT_NEAR(residual(kCombine[i], kCombineBytes), combine[i - 1], 0.05) << kCombine[i].ep;
  }
  // Per message off the node, EP 16 -> 256: (47.3 - 42.3) us over 992 - 512 messages.
  const double per_message = (dispatch[4] - dispatch[0]) * 1e-6 / (992 - 512);
  EXPECT_LT(per_message, 11e-9);
}

// Lockstep's engines price the line-rate part and no per-call cost: DeepEP's low-latency
// dispatch at EP 16 (2 HGX H800 nodes, NDR) on the analytical engine takes the off-node bytes
// over one NIC, 3,784,704 B / 50 GB/s = 75.69 us, plus the path's latency (a few us), and adding
// the table's 42.3 us per call gives its published 118 us.
TEST(DeepEpPublished, EnginesPriceTheLineRatePart) {
  PresetRequest request;
  request.system = "hgx-h800";
  request.fabric = "ib-ndr";
  request.nodes = 2;
  const Topology topo = *build_topology(rail_optimized_args(resolve_preset(request))).graph;
  MoeSpec s;
  s.tokens = 128;
  s.kernel = MoeKernel::LowLatency;
  std::vector<std::uint32_t> gpus;
  for (std::uint32_t g = 0; g < 16; ++g) gpus.push_back(g);
  const CommRun d = run_moe_group(s, MoePhase::Dispatch, gpus, topo, "analytical");
  EXPECT_DOUBLE_EQ(d.network_bytes, 16 * kDispatchBytes / 2);
  const double us = d.time.seconds() * 1e6;
  EXPECT_GE(us, 75.69);
  EXPECT_LT(us, 75.69 + 5);
  EXPECT_NEAR(us + 42.3, 118, 5);
}

}  // namespace
}  // namespace lockstep
