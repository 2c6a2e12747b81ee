// Per-transport costs and the tree's pipeline fill (docs/nccl-model.md "Transports") against
// numbers derived by hand from NCCL's tables (HARDWARE.md), its chunk rule (enqueue.cc) and the
// fabric presets' sourced per-step latencies (presets.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "lockstep/nccl/cluster.hpp"
#include "lockstep/nccl/tuner.hpp"
#include "lockstep/topology/presets.hpp"
#include "preset_request.hpp"

namespace lockstep {
namespace {

PresetCluster preset(const char* system, const char* fabric, std::uint32_t nodes,
                     std::uint32_t gpus = 0, std::uint32_t nics = 0, double gbps = 0) {
  return test::preset_of(system, fabric, nodes, gpus, nics, gbps);
}

Prediction all_reduce(const NcclCluster& c, Bytes bytes, std::optional<Algorithm> algo = {},
                      std::optional<nccl::Proto> proto = {}) {
  TunerRequest r;
  r.bytes = bytes;
  r.algo = algo;
  r.proto = proto;
  return predict(c, r);
}

TEST(TreeChunk, NcclsRuleByHand) {
  using nccl::Proto;
  // Simple, 2 x 8 GPUs, 16 channels, 64 MiB: 4 MiB per channel, depth 7 + 1 = 8. 512 KiB gives
  // 8 chunks < 8 x 8: 256 KiB (16), 128 KiB (32; the first rule stops at 128 KiB); 32 >= 4 x 8.
  EXPECT_DOUBLE_EQ(nccl::tree_chunk_bytes(Proto::Simple, 64.0 * (1 << 20), 16, 8, 2), 131072);
  // Simple, 2 x 1 GPU, 2 channels, 4 MiB: 2 MiB per channel, depth 1: 4 chunks < 8: 256 KiB
  // (8, not < 8); 8 >= 4 and >= 1.
  EXPECT_DOUBLE_EQ(nccl::tree_chunk_bytes(Proto::Simple, 4.0 * (1 << 20), 2, 1, 2), 262144);
  // LL128, 2 x 1 GPU, 2 channels, 2 MiB: 1 MiB per channel, (1 + 1 + 0.1) = 2.1 steps.
  // 614,400 B gives 1.7 chunks < 2.1 x 64: 307,200, 153,600, 76,800 (<= 128 KiB: stop); 13.65
  // < 2.1 x 16 = 33.6: 38,400, 19,200 (<= 32 KiB: stop); payload 15/16: 18,000 B.
  EXPECT_DOUBLE_EQ(nccl::tree_chunk_bytes(Proto::LL128, 2.0 * (1 << 20), 2, 1, 2), 18000);
  // LL keeps its 64 KiB step (32 KiB payload), and no chunk exceeds a channel's share.
  EXPECT_DOUBLE_EQ(nccl::tree_chunk_bytes(Proto::LL, 64.0 * (1 << 20), 16, 8, 2), 32768);
  EXPECT_DOUBLE_EQ(nccl::tree_chunk_bytes(Proto::LL, 65536, 16, 8, 2), 4096);
}

TEST(TreeFill, FourMiBSimpleTreeOverEfaByHand) {
  // 2 x 1 H100 on EFA: 32 devices per 8 GPUs, so 4 x 100G for one GPU, striped as one 400G NIC;
  // NCCL's search speed for 50 GB/s on Hopper is 48 GB/s; 2 channels (2 per NIC).
  const NcclCluster c = nccl_cluster(preset("hgx-h100", "efa", 2, 1));
  ASSERT_EQ(c.nics_per_node, 1u);
  EXPECT_DOUBLE_EQ(c.node_net_GBps(), 48);
  const Prediction p = all_reduce(c, Bytes::mib(4), Algorithm::Tree, nccl::Proto::Simple);
  //   bandwidth: min(0.92 x 48, 2 channels x 41.4) = 44.16 GB/s; two nodes: S each way.
  //   latency:   baseLat 8.4 + 2 x log2(2) x (hwLat[Net][Tree][Simple] 14 + EFA's 14) = 64.4 us
  //   fill:      2 MiB per channel, chunk 256 KiB (TreeChunk above), so 8 chunks; the first
  //              crosses 2 network stages (up, down) at the channel's share, 48 / 2 GB/s, and
  //              the other 7 follow one steady period apart, S / 8 at 44.16 GB/s: the fill is
  //              the passage less one period.
  const double chunk_us = 262144 / (48.0 / 2 * 1e3);
  const double period_us = 4194304 / 8 / 44.16e3;
  const double fill_us = 2 * chunk_us - period_us;  // 21.85 - 11.87 = 9.97 us
  EXPECT_NEAR(p.latency.microseconds(), 64.4, 1e-9);
  EXPECT_NEAR(p.transfer.microseconds(), 4194304 / 44.16e3, 1e-6);
  EXPECT_NEAR(p.fill.microseconds(), fill_us, 1e-6);
  EXPECT_NEAR(p.time.microseconds(), 20 + 64.4 + 4194304 / 44.16e3 + fill_us, 1e-5);
  // The same tree on InfiniBand: the same fill, 28 us less latency (2 steps x 14 us).
  const Prediction ib = all_reduce(nccl_cluster(preset("hgx-h100", "ib-ndr", 2, 1)), Bytes::mib(4),
                                   Algorithm::Tree, nccl::Proto::Simple);
  EXPECT_NEAR(ib.fill.microseconds(), fill_us, 1e-6);
  EXPECT_NEAR(p.time.microseconds() - ib.time.microseconds(), 28, 1e-5);
}

TEST(TreeFill, ChainStagesCountForSimpleOnly) {
  // 2 x 8 H100 on NDR, 64 MiB, 16 channels, chunk 128 KiB (TreeChunk above). The first chunk
  // crosses a stage at the channel's share of its link: NVLink 370.8 / 16 = 23.175 GB/s, the
  // NICs 384 / 16 = 24 GB/s. Steady, NVLink binds: min(0.92 x 370.8, 16 x 41.4) / 2 = 170.6
  // GB/s against the NICs' 353.3. Simple forwards whole chunks at every stage: the first chunk
  // crosses 14 chain stages + 2 network stages; the other 31 of the channel's 4 MiB follow one
  // steady period apart (S / 32 at 170.6 GB/s): the fill is the passage less one period.
  const NcclCluster c = nccl_cluster(preset("hgx-h100", "ib-ndr", 2));
  const double nv = 131072 / (370.8 / 16 * 1e3), net = 131072 / (384.0 / 16 * 1e3);
  const double steady = std::min(0.92 * 370.8, 16 * 41.4) / 2;
  const Prediction simple = all_reduce(c, Bytes::mib(64), Algorithm::Tree, nccl::Proto::Simple);
  EXPECT_NEAR(simple.fill.microseconds(), 14 * nv + 2 * net - 67108864.0 / 32 / (steady * 1e3),
              1e-6);
  // LL: lines are forwarded over NVLink as they land; only the 2 network stages hold whole
  // chunks (32 KiB at half of 24 GB/s). The bottleneck is NVLink (min(370.8 / 3.8, 45) / 2 =
  // 22.5 GB/s against the NICs' min(384 / 3.8, 45) = 45), not a store-and-forward stage: the
  // first chunk crosses it once at its unshared 45 GB/s (half a period), then 127 periods of
  // S / 128 at 22.5 GB/s follow. The fill is negative: the first chunk does not share its ports.
  const Prediction ll = all_reduce(c, Bytes::mib(64), Algorithm::Tree, nccl::Proto::LL);
  const double ll_period = 67108864.0 / 128 / 22.5e3;
  EXPECT_NEAR(ll.fill.microseconds(), 2 * 32768 / (0.5 * 24 * 1e3) - ll_period / 2, 1e-6);
}

TEST(NvlsTreeChunk, NcclsRuleByHand) {
  // 16 channels x 8 heads = 128 concurrent (channel, head) pairs. 16 MiB on 2 nodes: 128 KiB;
  // < 4 x 128 x 128 KiB (64 MiB): 64 KiB; not < 1 x 128 x 64 KiB (8 MiB): stays.
  EXPECT_EQ(nccl::nvls_heads(8), 8u);
  EXPECT_DOUBLE_EQ(nccl::nvls_tree_chunk_bytes(16.0 * (1 << 20), 16, 8, 2), 65536);
  // 64 MiB is not < 64 MiB: 128 KiB, and so is 4 GiB; from 4 nodes on, 64 KiB at most.
  EXPECT_DOUBLE_EQ(nccl::nvls_tree_chunk_bytes(64.0 * (1 << 20), 16, 8, 2), 131072);
  EXPECT_DOUBLE_EQ(nccl::nvls_tree_chunk_bytes(4.0 * (1 << 30), 16, 8, 2), 131072);
  EXPECT_DOUBLE_EQ(nccl::nvls_tree_chunk_bytes(4.0 * (1 << 30), 16, 8, 4), 65536);
  // 4 MiB: < 8 MiB, 32 KiB; 1 MiB: 32 KiB is more than a pair's 8 KiB share: the share.
  EXPECT_DOUBLE_EQ(nccl::nvls_tree_chunk_bytes(4.0 * (1 << 20), 16, 8, 2), 32768);
  EXPECT_DOUBLE_EQ(nccl::nvls_tree_chunk_bytes(1 << 20, 16, 8, 2), 8192);
  // NVL72's 72 GPUs: NCCL_MAX_NVLS_ARITY heads.
  EXPECT_EQ(nccl::nvls_heads(72), 32u);
}

TEST(NvlsTreeFill, SixteenMiBOnTwoP5ByHand) {
  // 2 x p5 (8 H100, 8 striped 400G EFA NICs at 48 GB/s: 384 GB/s), 16 MiB, NVLS tree: 16 NVLS
  // channels x 8 heads, chunk 64 KiB (NvlsTreeChunk above). A head's NVLink, 18 x 20.6 = 370.8
  // GB/s, serves its head index on 16 channels: 23.175 GB/s per pair; a pair's NIC share is
  // 384 / 128 = 3 GB/s. Steady, NVLink binds: 370.8 x 0.85 / (1 + 1/8) = 280.16 GB/s against
  // the NICs' 384 (two nodes: S each way). Stages: NVLS reduce, network up, down, multicast;
  // all but the bottleneck's (one NVLink stage): 2 network + 1 NVLink chunk times.
  const NcclCluster c = nccl_cluster(preset("hgx-h100", "efa", 2));
  const double nv = 65536 / (370.8 / 16 * 1e3), net = 65536 / (384.0 / 128 * 1e3);
  const Prediction p = all_reduce(c, Bytes::mib(16), Algorithm::NvlsTree);
  EXPECT_NEAR(p.fill.microseconds(), 2 * net + nv, 1e-6);  // 46.52 us
  EXPECT_NEAR(p.transfer.microseconds(), 16777216 / (370.8 * 0.85 / 1.125 * 1e3), 1e-6);
  // Four nodes: log2(4) = 2 network stages up, 2 down, the same chunk (64 KiB, now also the
  // cap); an inner node's NICs carry 2 S: 384 / 2 = 192 GB/s binds, so the bottleneck's stage
  // is a network one.
  // NCCL's tuner has no fill: on its formula NVLS tree (174.68 us) beats the tree with LL128,
  // so NCCL runs it, 46.52 us slower, although the tree with its own fill (199.55) is faster.
  const Prediction pick = all_reduce(c, Bytes::mib(16));
  const Prediction tree = all_reduce(c, Bytes::mib(16), Algorithm::Tree, nccl::Proto::LL128);
  EXPECT_EQ(pick.algo, Algorithm::NvlsTree);
  EXPECT_EQ(pick.time, p.time);
  EXPECT_LT(pick.time - pick.fill, tree.time - tree.fill);
  EXPECT_GT(pick.time, tree.time);
  const NcclCluster c4 = nccl_cluster(preset("hgx-h100", "efa", 4));
  const Prediction p4 = all_reduce(c4, Bytes::mib(16), Algorithm::NvlsTree);
  EXPECT_NEAR(p4.fill.microseconds(), 3 * net + 2 * nv, 1e-6);
}

TEST(NvlsFill, SharpAcrossNodesByHandNoneInOneNode) {
  // 2 x 8 H100 on NDR with SHARP, 16 MiB NVLS all-reduce: 16 channels x 8 heads. Steady, NVLink
  // binds: S (1 + 1/8) at 370.8 x 0.85 = 315.18 GB/s against S at 384 x 0.85 = 326.4; NVLS's
  // bandwidth, 315.18 GB/s, is over 150: chunk 128 KiB; 16 MiB < 64 x 128 x 128 KiB (1 GiB):
  // 64 KiB; < 8 x 128 x 64 KiB (64 MiB): 32 KiB; not < 2 x 128 x 32 KiB (8 MiB): stays.
  EXPECT_DOUBLE_EQ(nccl::nvls_chunk_bytes(16.0 * (1 << 20), 16, 8, 2, 315.18), 32768);
  EXPECT_DOUBLE_EQ(nccl::nvls_chunk_bytes(16.0 * (1 << 20), 16, 8, 2, 100), 32768);
  EXPECT_DOUBLE_EQ(nccl::nvls_chunk_bytes(4.0 * (1 << 30), 16, 8, 2, 315.18), 131072);
  EXPECT_DOUBLE_EQ(nccl::nvls_chunk_bytes(4.0 * (1 << 30), 16, 8, 2, 100), 32768);
  PresetRequest r;
  r.system = "hgx-h100";
  r.fabric = "ib-ndr";
  r.nodes = 2;
  r.sharp = true;
  const NcclCluster c = nccl_cluster(resolve_preset(r));
  // Stages: the head's NVLS reduce (NVLink, 370.8 / 16 per pair), the SHARP round trip (the
  // pair's 384 / 128 = 3 GB/s), the multicast (NVLink); all but the bottleneck's (NVLink).
  const double nv = 32768 / (370.8 / 16 * 1e3), net = 32768 / (384.0 / 128 * 1e3);
  const Prediction p = all_reduce(c, Bytes::mib(16), Algorithm::NetReduce);
  EXPECT_NEAR(p.fill.microseconds(), nv + net, 1e-6);  // 12.34 us
  // One node: the reduce and the multicast are one pass through the switch, no fill.
  const Prediction one = all_reduce(nccl_cluster(preset("hgx-h100", "ib-ndr", 1)), Bytes::mib(16),
                                    Algorithm::NetReduce);
  EXPECT_EQ(one.fill, Time::zero());
}

// 8 B all-reduce on 2 x 8 H100 (the floor nccl-tests prints), per transport by hand:
//   tree LL: 20 launch + baseLat 6.8 + 2 x (7 x 0.6 + (5.0 + extra)) = 45.2 + 2 x extra;
//   TCPX (ring, Simple only): 20 + 8.4 + 28 x max(3.4, 3 x 1 Intel) + 2 x (14 + 20) = 191.6.
TEST(TransportFloor, EightBytesPerTransport) {
  // (8 B of transfer and its fill, half a byte per channel, are below a nanosecond; times are
  // whole picoseconds.)
  const auto floor_us = [](const char* fabric) {
    const Prediction p = all_reduce(nccl_cluster(preset("hgx-h100", fabric, 2)), Bytes(8));
    EXPECT_LT((p.transfer + p.fill).microseconds(), 1e-3) << fabric;
    return (p.time - p.transfer - p.fill).microseconds();
  };
  EXPECT_NEAR(floor_us("ib-ndr"), 45.2, 1e-5);
  EXPECT_NEAR(floor_us("roce-400g"), 45.2, 1e-5);
  EXPECT_NEAR(floor_us("slingshot"), 45.2 + 2 * 1, 1e-5);
  EXPECT_NEAR(floor_us("efa"), 45.2 + 2 * 14, 1e-5);  // p5 measures 69.12 us
  EXPECT_NEAR(floor_us("tcp"), 45.2 + 2 * 30, 1e-5);
  EXPECT_NEAR(floor_us("tcpx"), 20 + 8.4 + 28 * 3.4 + 2 * (14 + 20), 1e-5);
}

// aws-ofi-nccl sets NCCL_PROTO=simple on the A100 EFA instances (p4d, p4de): 8 B on 2 x p4de
// is the tree with Simple, 20 + 8.4 + 2 x (7 x 4.0 + (14 + 14)) = 140.4 us (measured 164.3; LL's
// tree would be 73.2). p5 (H100) keeps NCCL's protocols: LL, 73.2 us (measured 69.12).
TEST(TransportProtocols, EfaOnA100RunsSimple) {
  const NcclCluster p4de = nccl_cluster(preset("dgx-a100", "efa", 2, 0, 4));
  for (const Bytes b : {Bytes(8), Bytes::mib(1), Bytes::mib(16), Bytes::gib(2)})
    EXPECT_EQ(all_reduce(p4de, b).proto, nccl::Proto::Simple) << b.count();
  const Prediction tiny = all_reduce(p4de, Bytes(8));
  EXPECT_EQ(tiny.algo, Algorithm::Tree);
  EXPECT_NEAR((tiny.time - tiny.transfer - tiny.fill).microseconds(),
              20 + 8.4 + 2 * (7 * 4.0 + (14 + 14)), 1e-5);
  // The plugin bounds the automatic choice; an explicit protocol still runs.
  EXPECT_EQ(all_reduce(p4de, Bytes(8), {}, nccl::Proto::LL).proto, nccl::Proto::LL);
  const Prediction p5 = all_reduce(nccl_cluster(preset("hgx-h100", "efa", 2)), Bytes(8));
  EXPECT_EQ(p5.proto, nccl::Proto::LL);
  EXPECT_NEAR((p5.time - p5.transfer - p5.fill).microseconds(), 45.2 + 2 * 14, 1e-5);
}

TEST(TransportOrder, SmallMessagesAtOneLineRate) {
  // Same nodes, 8 NICs of 400G each: IB <= RoCE <= EFA <= TCP sockets for small messages.
  for (const double bytes : {8.0, 1024.0, 65536.0}) {
    double last = 0;
    for (const char* fabric : {"ib-ndr", "roce-400g", "efa", "tcp"}) {
      const NcclCluster c = nccl_cluster(preset("hgx-h100", fabric, 4, 0, 8, 400));
      const double us = all_reduce(c, Bytes(static_cast<std::uint64_t>(bytes))).time.microseconds();
      EXPECT_GE(us, last) << fabric << " at " << bytes << " B";
      last = us;
    }
  }
}

TEST(TransportPresets, InstancesAsShipped) {
  // p5: 32 x 100G EFA = 3,200 Gb/s per node, striped 4 per GPU.
  const PresetCluster p5 = preset("hgx-h100", "efa", 2);
  EXPECT_EQ(p5.nics_per_node, 32u);
  EXPECT_DOUBLE_EQ(p5.nic_speed.gigabits_per_second() * p5.nics_per_node, 3200);
  const NcclCluster c5 = nccl_cluster(p5);
  EXPECT_EQ(c5.nics_per_node, 8u);
  EXPECT_DOUBLE_EQ(c5.nic_GBps, 50);
  // p4de: 4 x 100G for 8 A100s (the row gives the count): 4 x NCCL's 12 GB/s (Ampere).
  EXPECT_DOUBLE_EQ(nccl_cluster(preset("dgx-a100", "efa", 2, 0, 4)).node_net_GBps(), 48);
  // A3: 4 x 200G gVNIC, ring and Simple only (Google's TCPX profile).
  const NcclCluster a3 = nccl_cluster(preset("hgx-h100", "tcpx", 2));
  EXPECT_EQ(a3.nics_per_node, 4u);
  EXPECT_DOUBLE_EQ(a3.node_net_GBps(), 4 * 24);
  const Prediction big = all_reduce(a3, Bytes::gib(8));
  EXPECT_EQ(big.algo, Algorithm::Ring);
  EXPECT_EQ(big.proto, nccl::Proto::Simple);
  EXPECT_EQ(all_reduce(a3, Bytes(8)).proto, nccl::Proto::Simple);
  // An explicit request still runs what NCCL can run (the profile bounds the automatic choice).
  EXPECT_EQ(all_reduce(a3, Bytes::mib(1), Algorithm::Tree).algo, Algorithm::Tree);
  // A3 Mega: 8 x 200G, ring and tree, Simple and LL128 (LL128 over its GPUDirect TCP).
  const NcclCluster mega = nccl_cluster(preset("hgx-h100", "tcpxo", 2));
  EXPECT_EQ(mega.nics_per_node, 8u);
  EXPECT_TRUE(mega.ll128_network);
  EXPECT_NE(all_reduce(mega, Bytes(8)).proto, nccl::Proto::LL);
  // Plain sockets keep LL128 off.
  EXPECT_FALSE(nccl_cluster(preset("hgx-h100", "tcp", 2)).ll128_network);
  // Slingshot: Cassini-1 at 200G; Pollara: 400G RoCE.
  EXPECT_DOUBLE_EQ(preset("hgx-h100", "slingshot", 2).nic_speed.gigabits_per_second(), 200);
  EXPECT_EQ(preset("mi300x", "pollara-400g", 2).fabric.technology, "roce");
}

}  // namespace
}  // namespace lockstep
