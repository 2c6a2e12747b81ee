// MoE dispatch / combine and KV-cache transfers on engines: link bytes by medium against the
// hand count, transfer times against size / bandwidth + latency (docs/moe-dispatch.md).
#include "lockstep/workload/moe_comm.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "../collective/moe_fixture.hpp"
#include "lockstep/config/yaml_reader.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/nccl/engine_run.hpp"
#include "lockstep/workload/inference.hpp"
#include "test_cluster.hpp"

namespace lockstep {
namespace {

using testing::ndr_h100_nodes;
using testing::small_moe;

// collective/moe_test.cpp's case: 8 experts, top-2, 2 nodes of 2 GPUs, 28 tokens of H = 128.
// Per rank: normal dispatch sends 22 tokens x 132 B over the network (once to the other node)
// and 2 x 13 x 132 B over NVLink (its own 13 for the node peer, 13 forwarded); low latency
// 2 x 14 x 132 B over the network (one message per expert on each of the other node's GPUs)
// and 14 x 132 B over NVLink.
TEST(MoeComm, DispatchMovesTheHandCountedBytesByMedium) {
  const Topology topo = ndr_h100_nodes(2, 2);
  for (const char* engine : {"analytical", "flow"}) {
    MoeSpec s = small_moe();
    const CommRun normal = run_moe(s, MoePhase::Dispatch, topo, engine);
    EXPECT_DOUBLE_EQ(normal.network_bytes, 4.0 * 22 * 132) << engine;
    EXPECT_DOUBLE_EQ(normal.nvlink_bytes, 4.0 * 26 * 132) << engine;
    s.kernel = MoeKernel::LowLatency;
    const CommRun ll = run_moe(s, MoePhase::Dispatch, topo, engine);
    EXPECT_DOUBLE_EQ(ll.network_bytes, 4.0 * 28 * 132) << engine;
    EXPECT_DOUBLE_EQ(ll.nvlink_bytes, 4.0 * 14 * 132) << engine;
    // The forwarding factor: 28 / 22 = (K G / R) / P(node).
    EXPECT_DOUBLE_EQ(ll.network_bytes / normal.network_bytes, 28.0 / 22) << engine;
  }
  // The packet engine counts wire bytes: the payload plus its packets' headers (a few percent).
  const CommRun packet = run_moe(small_moe(), MoePhase::Dispatch, topo, "packet");
  EXPECT_GE(packet.network_bytes, 4.0 * 22 * 132);
  EXPECT_LT(packet.network_bytes, 1.1 * 4 * 22 * 132);
}

TEST(MoeComm, CombineMovesTheSameTokensInBf16) {
  const Topology topo = ndr_h100_nodes(2, 2);
  const CommRun c = run_moe(small_moe(), MoePhase::Combine, topo, "flow");
  EXPECT_DOUBLE_EQ(c.network_bytes, 4.0 * 22 * 256);
  EXPECT_DOUBLE_EQ(c.nvlink_bytes, 4.0 * 26 * 256);
  // Where bandwidth, not latency, sets the time (100 times the tokens), twice the bytes take
  // longer.
  MoeSpec big = small_moe();
  big.tokens = 2800;
  EXPECT_GT(run_moe(big, MoePhase::Combine, topo, "flow").time,
            run_moe(big, MoePhase::Dispatch, topo, "flow").time);
}

TEST(MoeComm, AHotRankSlowsTheExchange) {
  // Rank 0's experts take 3 times the mean: its NIC and NVLink links carry more, so the run
  // takes longer, moving the same bytes in all (the shares keep the total).
  const Topology topo = ndr_h100_nodes(2, 2);
  MoeSpec s = small_moe();
  s.tokens = 2800;
  for (MoeKernel k : {MoeKernel::Normal, MoeKernel::LowLatency}) {
    s.kernel = k;
    s.imbalance = 1;
    const CommRun even = run_moe(s, MoePhase::Dispatch, topo, "flow");
    s.imbalance = 3;
    const CommRun hot = run_moe(s, MoePhase::Dispatch, topo, "flow");
    EXPECT_GT(hot.time, even.time) << to_string(k);
    EXPECT_NEAR(hot.network_bytes, even.network_bytes, 8) << to_string(k);
  }
}

TEST(MoeComm, UnevenChunksForwardInAnyOrder) {
  // 4 nodes of 2 GPUs, 16 experts, top-2, 28 tokens: P(node) = 1 - C(12, 2) / C(16, 2) = 54/120,
  // 12.6 tokens x 132 B = 1663 B to each other node, in chunks of 832 and 831 B; P(GPU) =
  // 1 - C(14, 2) / C(16, 2) = 29/120, 893 B per forwarded message, 4 (N (G - 1)) per rank. The
  // forwarded chunks start as their inputs arrive, out of program order: still matched.
  MoeSpec s = small_moe();
  s.ranks = 8;
  s.experts = 16;
  const Topology topo = ndr_h100_nodes(4, 2);
  for (MoePhase phase : {MoePhase::Dispatch, MoePhase::Combine}) {
    const double b = phase == MoePhase::Dispatch ? 1.0 : 256.0 / 132;
    const CommRun r = run_moe(s, phase, topo, "flow");
    EXPECT_NEAR(r.network_bytes, 8 * 3 * std::round(1663.2 * b), 1e-9);
    EXPECT_NEAR(r.nvlink_bytes, 8 * 4 * std::round(893.2 * b), 1e-9);
  }
}

TEST(MoeComm, GroupsFindTheirNvlinkDomains) {
  // GPUs 0, 1 share node 0's NVSwitch, 2, 3 node 1's; a group listed out of order still runs as
  // 2 nodes of 2, moving the hand-counted bytes.
  const Topology topo = ndr_h100_nodes(2, 2);
  EXPECT_EQ(nvlink_domains(topo, {3, 0, 2, 1}), (std::vector<std::uint32_t>{0, 1, 0, 1}));
  MoeSpec s = small_moe();
  s.ranks = 1;  // set by the group
  s.ranks_per_node = 1;
  const CommRun r = run_moe_group(s, MoePhase::Dispatch, {3, 0, 2, 1}, topo, "flow");
  EXPECT_DOUBLE_EQ(r.network_bytes, 4.0 * 22 * 132);
  EXPECT_DOUBLE_EQ(r.nvlink_bytes, 4.0 * 26 * 132);
  // GPUs 0, 1, 2: domains of 2 and 1, so each GPU is a node of its own; 8 experts round up to
  // 9. P(node) = 1 - C(6, 2) / C(9, 2) = 21/36: 28 x 21/36 x 132 = 2156 B to each other GPU,
  // the four messages to or from GPU 2 over the network, 0 -> 1 and 1 -> 0 over NVLink.
  const CommRun uneven = run_moe_group(s, MoePhase::Dispatch, {0, 1, 2}, topo, "flow");
  EXPECT_DOUBLE_EQ(uneven.network_bytes, 4.0 * 2156);
  EXPECT_DOUBLE_EQ(uneven.nvlink_bytes, 2.0 * 2156);
  // No token: no time.
  s.tokens = 0;
  EXPECT_EQ(run_moe_group(s, MoePhase::Dispatch, {0, 1, 2}, topo, "flow").time, Time::zero());
}

// Llama-style cache: 1024 tokens x 2 (K, V) x 2 layers x 8 KV heads x 128 x 2 B = 8 MiB.
KvTransferSpec kv(std::vector<std::uint32_t> prefill, std::vector<std::uint32_t> decode) {
  KvTransferSpec s;
  s.prompt = 1024;
  s.layers = 2;
  s.kv_heads = 8;
  s.head_dim = 128;
  s.prefill_gpus = std::move(prefill);
  s.decode_gpus = std::move(decode);
  return s;
}

// 8 MiB over one NDR NIC (400 Gb/s = 50 GB/s, the narrowest link of the path): 167.77216 us.
constexpr std::int64_t kEightMiBPs = 167'772'160;

TEST(MoeComm, KvTransferTakesSizeOverPathBandwidthPlusLatency) {
  const Topology topo = ndr_h100_nodes(2, 2);
  EXPECT_EQ(kv_cache_bytes(kv({0}, {2})), 8u << 20);
  const Time latency = gpu_path_latency(topo, 0, 2);
  for (const char* engine : {"analytical", "flow"}) {
    // TP 1 to TP 1: the whole cache through one NIC pair.
    const CommRun one = run_kv_transfer(kv({0}, {2}), topo, engine);
    EXPECT_EQ(one.time, Time::ps(kEightMiBPs) + latency) << engine;
    EXPECT_DOUBLE_EQ(one.network_bytes, 8.0 * (1 << 20)) << engine;
    // TP 2 to TP 2: each shard's 4 heads on its own rail, at once: half the time.
    const CommRun two = run_kv_transfer(kv({0, 1}, {2, 3}), topo, engine);
    EXPECT_EQ(two.time, Time::ps(kEightMiBPs / 2) + latency) << engine;
    // TP 2 to TP 1: both shards into the one decode GPU's NIC, the whole cache through it; GPU
    // 1's half crosses rails (through a spine), the longer path.
    const CommRun in = run_kv_transfer(kv({0, 1}, {2}), topo, engine);
    EXPECT_NEAR(in.time.seconds(), (Time::ps(kEightMiBPs) + gpu_path_latency(topo, 1, 2)).seconds(),
                1e-9)
        << engine;
  }
}

TEST(MoeComm, KvBytesReCutForTheDecodeInstance) {
  // 8 MiB held by GPUs 0, 1 (TP 2) to GPU 2 (TP 1): as KvTransferTakesSize...'s TP 2 to TP 1.
  const Topology topo = ndr_h100_nodes(2, 2);
  const CommRun r = run_kv_bytes({0, 1}, {2}, Bytes(8u << 20), topo, "flow");
  EXPECT_NEAR(r.time.seconds(), (Time::ps(kEightMiBPs) + gpu_path_latency(topo, 1, 2)).seconds(),
              1e-9);
  EXPECT_DOUBLE_EQ(r.network_bytes, 8.0 * (1 << 20));
  // TP 1 to TP 2: GPU 0's NIC sends it all; 7 bytes split 4 + 3.
  EXPECT_EQ(run_kv_bytes({0}, {2, 3}, Bytes(8u << 20), topo, "analytical").time,
            Time::ps(kEightMiBPs) + gpu_path_latency(topo, 0, 3));
  EXPECT_DOUBLE_EQ(run_kv_bytes({0}, {2, 3}, Bytes(7), topo, "flow").network_bytes, 7.0);
}

TEST(MoeComm, LayerWiseTransferHidesBehindPrefill) {
  // Each layer computes 1 ms, then sends its 4 MiB (83.88608 us): only the last layer's transfer
  // shows, 2 ms + 83.88608 us + latency.
  const Topology topo = ndr_h100_nodes(2, 2);
  KvTransferSpec s = kv({0}, {2});
  s.layer_compute = Time::ms(1);
  const CommRun r = run_kv_transfer(s, topo, "flow");
  EXPECT_EQ(r.time, Time::ms(2) + Time::ps(kEightMiBPs / 2) + gpu_path_latency(topo, 0, 2));
}

TEST(MoeComm, KvHeadsFewerThanGpusAreReplicated) {
  // 2 KV heads on TP 4: GPUs 0, 1 hold head 0 and 2, 3 head 1; a TP 2 decode GPU j needs head
  // j, from one copy: 1024 x 2 x 2 x 128 x 2 B = 1 MiB each, 2 MiB in all.
  KvTransferSpec s = kv({0, 1, 2, 3}, {4, 5});
  s.kv_heads = 2;
  const auto p = make_kv_transfer_programs(s);
  std::uint64_t sent = 0;
  for (Rank r = 0; r < 4; ++r)
    for (OpIndex i = 0; i < p->num_ops(r); ++i)
      if (p->op(r, i).kind == OpKind::Send) sent += p->op(r, i).src.bytes;
  EXPECT_EQ(sent, 2u << 20);
  EXPECT_THROW(run_kv_transfer(kv({0}, {0}), ndr_h100_nodes(2, 2), "flow"), InputError);
}

}  // namespace
}  // namespace lockstep

namespace lockstep {
namespace {

// The inference job prices its MoE layers through DeepEpComm: Mixtral 8x7B (32 MoE layers,
// hidden 4096, top-2 of 8 experts) at TP 8 = EP 8 on one HGX node, a decode step of 8
// sequences: 1 token per rank, BF16, DeepEP's low-latency kernel: 1 x 2 / 8 tokens x 8192 B =
// 2048 B to each of the 7 other GPUs, over NVLink, in dispatch and again in combine.
TEST(MoeComm, InferenceDecodeDispatchesThroughTheEngines) {
  const Topology topo = ndr_h100_nodes(1, 8);
  const InferenceConfig c = parse_inference_config(parse_yaml_args(
      "type: inference\nmodel: mixtral-8x7b\ntp: 8\nep: 8\n"
      "requests: {prompt: 128, output: 2, concurrency: 8, count: 8}\nbatching: {max_batch: 8}\n",
      "s.yaml", "job"));
  InferenceStepModel m(topo, c);
  const StepCost d = m.decode(std::vector<std::uint64_t>(8, 128));
  MoeSpec s;
  s.tokens = 1;
  s.hidden = 4096;
  s.topk = 2;
  s.experts = 8;
  s.kernel = MoeKernel::LowLatency;
  s.fp8_dispatch = false;
  const std::vector<std::uint32_t> gpus = {0, 1, 2, 3, 4, 5, 6, 7};
  const CommRun one = run_moe_group(s, MoePhase::Dispatch, gpus, topo, "analytical");
  EXPECT_DOUBLE_EQ(one.nvlink_bytes, 8.0 * 7 * 2048);
  EXPECT_EQ(one.network_bytes, 0);
  const Time both = one.time + run_moe_group(s, MoePhase::Combine, gpus, topo, "analytical").time;
  EXPECT_NEAR(d.ep, 32 * both.seconds(), 1e-12);
  EXPECT_GT(d.ep, 0);
}

}  // namespace
}  // namespace lockstep
