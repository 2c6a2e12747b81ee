// The algorithms NCCL does not have, timed as `lockstep collective` times them (docs/nccl-model.md
// "Algorithms NCCL does not have"): torus_ring on a torus, hierarchical on HGX H100 and MI300X
// nodes, and a skewed alltoallv. Every expected figure is derived by hand below.
#include <gtest/gtest.h>

#include <cmath>

#include "lockstep/collective/collective.hpp"
#include "lockstep/config/yaml_reader.hpp"
#include "lockstep/engine/registry/registry.hpp"
#include "lockstep/nccl/sweep.hpp"
#include "lockstep/routing/router.hpp"
#include "lockstep/topology/builder.hpp"
#include "lockstep/topology/presets.hpp"

namespace lockstep {
namespace {

constexpr double kGiB = 1073741824.0;

Topology torus(const char* dims) {
  const std::string yaml = std::string("builder: torus\ndims: ") + dims +
                           "\ngpu: h100\nlink_bandwidth: 400Gbps\nlink_m: 1\n";
  return *build_topology(parse_yaml_args(yaml, "torus.yaml", "cluster")).graph;
}

CollectiveRow one_row(const CollectiveSweep& base, const NcclCluster& c, const Topology& topo,
                      const char* engine) {
  CollectiveSweep s = base;
  s.engine = engine;
  return run_collective_sweep(s, c, &topo).at(0);
}

// 4x4x4 torus of 400 Gb/s (50 GB/s) links of 1 m (5 ns), 1 GiB all-reduce. Six colours of S/6;
// colour (i, +-) reduce-scatters along dimensions i, i+1, i+2 (rings of 4, one direction), then
// all-gathers back. A phase on a ring of 4 moves 3/4 of the colour's range over each directed
// link: 3/4 x S/6 x (1 + 1/4 + 1/16) per half, twice that in all = 21/64 S = 352,321,536 B on
// every one of the 384 directed links, and at every step each directed link carries exactly one
// colour. So the flow engine, without NCCL's options, takes 21/64 S / 50 GB/s = 7,046.43 us plus
// 18 steps x 5 ns of cable.
TEST(TorusRing, FourCubedAllReduceLinkBytesAndFlowTime) {
  const Topology topo = torus("4x4x4");
  CollectiveSpec s;
  s.op = CollectiveOp::AllReduce;
  s.algorithm = Algorithm::TorusRing;
  s.ranks = 64;
  s.torus_dims = {4, 4, 4};
  s.bytes = Bytes::gib(1);
  s.type = DataType::Float32;
  const auto programs = make_collective(s);
  const auto router = make_router(topo, RouterOptions{});
  // Default options: raw link speeds, no software overhead.
  const RunResult r =
      make_engine("flow")->run({&topo, programs.get(), topo.gpus(), router.get(), {}});
  ASSERT_EQ(r.link_bytes.size(), 2 * topo.num_links());
  ASSERT_EQ(topo.num_links(), 192u);
  const double per_link = 21.0 / 64 * kGiB;
  for (double b : r.link_bytes) EXPECT_NEAR(b, per_link, 256.0);  // S/6 rounds per message
  const double expected_us = per_link / 50e3 + 18 * 0.005;
  EXPECT_NEAR(r.makespan.microseconds(), expected_us, 1e-4 * expected_us);
}

// A 1 GiB torus_ring sweep on a torus: the model's time and the flow run's (us).
struct Times {
  double model = 0, flow = 0;
};
Times torus_times(const char* dims, CollectiveOp op) {
  const Topology topo = torus(dims);
  CollectiveSweep s;
  s.op = op;
  s.algo = Algorithm::TorusRing;
  s.min_bytes = s.max_bytes = Bytes::gib(1);
  const NcclCluster c = nccl_cluster(topo);
  const CollectiveRow model = one_row(s, c, topo, "analytical");
  EXPECT_EQ(model.algorithm, "torus_ring");
  return {model.time.microseconds(), one_row(s, c, topo, "flow").time.microseconds()};
}

// The same through the NCCL model: 48 GB/s per link (NCCL's search speed for a 400G link), NCCL's
// network step latency with one GPU per node (the tree's row, 14 us, Simple) per step, base 8.4
// us, launch 20 us. All-reduce: 28.4 + 18 x 14 + 352,321,536 B / 48 GB/s = 7,620.43 us.
// All-gather: one order (innermost first), half of every part each way; the phases move 3, 12,
// 48 blocks of S/64 per rank, 1.5, 6, 24 per directed link: 31.5/64 S at 48 GB/s after 9 steps.
// The flow runs of the same programs with those options agree.
TEST(TorusRing, ModelAndFlowOnTheFourCubedTorus) {
  const struct {
    CollectiveOp op;
    double steps, link_share;
  } cases[] = {{CollectiveOp::AllReduce, 18, 21.0 / 64}, {CollectiveOp::AllGather, 9, 31.5 / 64}};
  for (const auto& k : cases) {
    const double hand = 28.4 + k.steps * 14 + k.link_share * kGiB / 48e3;
    const Times t = torus_times("4x4x4", k.op);
    EXPECT_NEAR(t.model, hand, 0.01) << to_string(k.op);
    EXPECT_NEAR(t.flow, hand, 1e-4 * hand) << to_string(k.op);
  }
}

// The packet engine runs the same programs with the same options, and its packets on the cables
// (network links between one-GPU servers) carry InfiniBand's 26 B of header per 4096 B of
// payload inside NCCL's 48 of 50 GB/s (the payload inflated by 0.96 x 4122 / 4096 only,
// docs/packet-engine.md "Payload efficiency and headers"): 64 MiB all-reduce, 28.4 + 18 x 14 +
// 21/64 S / 48 GB/s = 739.15 us, and a header more for each transfer's short last packet.
// (Before the headers were taken out of the 0.96, x 4122 / 4096 of that: 742.06 us.)
TEST(TorusRing, PacketAddsTheCablesHeaders) {
  const Topology topo = torus("4x4x4");
  CollectiveSweep s;
  s.algo = Algorithm::TorusRing;
  s.min_bytes = s.max_bytes = Bytes::mib(64);
  const double hand = 28.4 + 18 * 14 + 21.0 / 64 * 64 * 1048576 / 48e3;
  EXPECT_NEAR(one_row(s, nccl_cluster(topo), topo, "packet").time.microseconds(), hand,
              1e-4 * hand);
}

// NCCL's flat ring over the 64 GPUs uses one link each way per GPU (2 x 63/64 S / 48 GB/s > 44
// ms); the torus's six links work at once. auto never picks torus_ring (not NCCL's): the ring.
TEST(TorusRing, NamedOnlyAndFasterThanTheRing) {
  const Topology topo = torus("4x4x4");
  const NcclCluster c = nccl_cluster(topo);
  ASSERT_EQ(c.torus_dims, (std::vector<std::uint32_t>{4, 4, 4}));
  CollectiveSweep s;
  s.min_bytes = s.max_bytes = Bytes::gib(1);
  s.algo = Algorithm::Ring;
  EXPECT_GT(one_row(s, c, topo, "analytical").time.microseconds(), 2 * 63.0 / 64 * kGiB / 48e3);
  s.algo.reset();
  EXPECT_EQ(one_row(s, c, topo, "analytical").algorithm, "ring");
}

// Unequal sizes: on 2x3x4 the colours' phases drift apart and meet; the model follows them (each
// sharing its links equally) and flow, where a colour waiting out a step latency lends its link
// to the one it meets, runs up to a few percent faster.
TEST(TorusRing, UnequalSizesWithinAFewPercent) {
  const Times t = torus_times("2x3x4", CollectiveOp::AllReduce);
  EXPECT_LT(t.flow, t.model * 1.001);
  EXPECT_GT(t.flow, t.model * 0.95);
}

// Two nodes of a preset on its rail-optimised fabric, and a 1 GiB hierarchical all-reduce.
struct TwoNodes {
  TwoNodes(const char* system, const char* fabric)
      : preset(resolve_preset(request(system, fabric))),
        topo(*build_topology(rail_optimized_args(preset)).graph),
        cluster(nccl_cluster(preset)) {}
  static PresetRequest request(const char* system, const char* fabric) {
    PresetRequest req;
    req.system = system;
    req.fabric = fabric;
    req.nodes = 2;
    return req;
  }
  static CollectiveSweep hierarchical_1gib() {
    CollectiveSweep s;
    s.op = CollectiveOp::AllReduce;
    s.algo = Algorithm::Hierarchical;
    s.min_bytes = s.max_bytes = Bytes::gib(1);
    return s;
  }
  PresetCluster preset;
  Topology topo;
  NcclCluster cluster;
};

// Hierarchical all-reduce on 2 x 8 H100 (NDR): reduce-scatter over NVLink (7/8 S at NCCL's 18 x
// 20.6 = 370.8 GB/s), all-reduce per rail (2 x 1/2 x S/8 per GPU, 8 NICs at 48 GB/s: S / 384
// GB/s), all-gather over NVLink (7/8 S): 1.75 S / 370.8 + S / 384 = 7,863.75 us; latency 20
// launch + 8.4 base + 14 NVLink steps x 3.4 + 2 network steps x 14 = 104 us: 7,967.75 us. Flow
// runs the same programs at NCCL's link speeds and step latencies.
TEST(Hierarchical, TwoHgxH100NodesByHand) {
  const TwoNodes two("hgx-h100", "ib-ndr");
  const Topology& topo = two.topo;
  const NcclCluster& c = two.cluster;
  CollectiveSweep s = two.hierarchical_1gib();
  const double hand = 104 + 1.75 * kGiB / 370.8e3 + kGiB / 384e3;
  EXPECT_NEAR(one_row(s, c, topo, "analytical").time.microseconds(), hand, 0.01);
  EXPECT_NEAR(one_row(s, c, topo, "flow").time.microseconds(), hand, 1e-3 * hand);
  // Slower than NCCL's ring (5,447 us: its phases overlap on every channel), so auto keeps ring.
  s.algo.reset();
  EXPECT_NE(one_row(s, c, topo, "analytical").algorithm, "hierarchical");
}

// Hierarchical all-reduce on 2 x MI300X (xGMI mesh, RoCE 400G): the same sum with the node's
// rate RCCL's model gives MI300X, 7 links x 64 GB/s x 3/4 = 336 GB/s: 104 + 1.75 S / 336 GB/s +
// S / 384 GB/s = 8,492.61 us. The flow run reaches it only because each channel's node ring walks
// its own Hamiltonian cycle of the mesh, so 7 channels use all 7 xGMI links of a GPU (links scaled
// so their sum is 336); with rings in local order every channel took the same link and flow
// printed 38,531 us.
TEST(Hierarchical, TwoMi300xNodesUseEveryXgmiLink) {
  const TwoNodes two("mi300x", "roce-400g");
  const Topology& topo = two.topo;
  const NcclCluster& c = two.cluster;
  CollectiveSweep s = two.hierarchical_1gib();
  const double hand = 104 + 1.75 * kGiB / 336e3 + kGiB / 384e3;
  EXPECT_NEAR(one_row(s, c, topo, "analytical").time.microseconds(), hand, 0.01);
  EXPECT_NEAR(one_row(s, c, topo, "flow").time.microseconds(), hand, 1e-3 * hand);
}

CollectiveRow alltoall_row(CollectiveOp op, double skew, const char* engine) {
  PresetRequest req;
  req.system = "hgx-h100";
  req.fabric = "ib-ndr";
  req.nodes = 2;
  const PresetCluster preset = resolve_preset(req);
  static const Topology topo = *build_topology(rail_optimized_args(preset)).graph;
  CollectiveSweep s;
  s.op = op;
  s.skew = skew;
  s.min_bytes = s.max_bytes = Bytes::gib(1);
  return one_row(s, nccl_cluster(preset), topo, engine);
}

// Skew 0 is alltoall, on every engine.
TEST(Alltoallv, SkewZeroIsAlltoall) {
  for (const char* engine : {"analytical", "flow"}) {
    const CollectiveRow a = alltoall_row(CollectiveOp::AllToAll, 0, engine);
    const CollectiveRow v = alltoall_row(CollectiveOp::AllToAllV, 0, engine);
    EXPECT_EQ(a.time, v.time) << engine;
    EXPECT_EQ(a.count, v.count);
    EXPECT_EQ(v.algorithm, "direct");
  }
}

// Skew 1 on 2 x 8: rank 0 receives w_0 = 1 / H(16, 1) = 1 / 3.380729 of every sender's S; its
// 8 remote senders' shares, 8 x 0.295794 S = 2.366 S, arrive through its NIC at 48 GB/s:
// 52,934.4 us, plus 20 launch + 8.4 base + 14 network step = 52,976.8 us. Flow, which routes
// every remote share to that GPU's NIC, agrees. The analytical engine adds the one round's
// longest path beyond the same-rail one NCCL's step latency includes: a cross-rail send first
// crosses NVLink to the GPU on the receiver's rail (NCCL's PXN, docs/routing.md), GPU ->
// NVSwitch -> GPU, the HGX H100 board's 500 ns (catalog hgx_h100; flow pays it too, within its
// tolerance). Before PXN it climbed to a spine and back, 2 x 280 ns.
TEST(Alltoallv, SkewedTimeIsTheHotReceiversNic) {
  double h = 0;
  for (int k = 1; k <= 16; ++k) h += 1.0 / k;
  const double hand = 42.4 + 8 * kGiB / h / 48e3;
  EXPECT_NEAR(alltoall_row(CollectiveOp::AllToAllV, 1, "analytical").time.microseconds(),
              hand + 0.5, 0.01);
  EXPECT_NEAR(alltoall_row(CollectiveOp::AllToAllV, 1, "flow").time.microseconds(), hand,
              1e-3 * hand);
}

}  // namespace
}  // namespace lockstep
