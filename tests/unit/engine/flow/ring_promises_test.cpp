// The flow engine trusts two promises of make_collective's ring (collective/program.hpp): its
// rotation symmetry (ProgramSet::symmetry_period) and its periodic regions
// (ProgramSet::periodic_region). Checked here op by op on small rings, in everything a timing
// engine reads.
#include <gtest/gtest.h>

#include "lockstep/collective/collective.hpp"

namespace lockstep {
namespace {

bool same_timing(const Op& a, const Op& b) {
  return a.kind == b.kind && a.channel == b.channel && a.bytes() == b.bytes() &&
         a.duration == b.duration && a.num_deps == b.num_deps;
}

CollectiveSpec ring_spec(CollectiveOp op, Rank ranks, std::uint32_t per_node, std::uint16_t ch) {
  CollectiveSpec spec;
  spec.op = op;
  spec.algorithm = Algorithm::Ring;
  spec.ranks = ranks;
  spec.ranks_per_node = per_node;
  spec.channels = ch;
  spec.bytes = Bytes(4 * 1024 * ranks);  // every block the same size
  spec.type = DataType::Float32;
  return spec;
}

TEST(RingPromises, RotationByTheDeclaredPeriodMapsProgramsOntoThemselves) {
  for (const CollectiveOp op :
       {CollectiveOp::AllReduce, CollectiveOp::AllGather, CollectiveOp::ReduceScatter}) {
    const auto ring = make_collective(ring_spec(op, 16, 4, 2));
    const Rank p = ring->symmetry_period();
    ASSERT_EQ(p, 8u) << to_string(op);  // two nodes of four GPUs
    const Rank n = ring->num_ranks();
    for (Rank r = 0; r < n; ++r) {
      const Rank q = (r + p) % n;
      ASSERT_EQ(ring->num_ops(q), ring->num_ops(r));
      for (OpIndex i = 0; i < ring->num_ops(r); ++i) {
        const Op a = ring->op(r, i), b = ring->op(q, i);
        ASSERT_TRUE(same_timing(a, b)) << r << " " << i;
        for (std::uint32_t k = 0; k < a.num_deps; ++k) ASSERT_EQ(a.deps[k], b.deps[k]);
        if (a.kind == OpKind::Send || a.kind == OpKind::Recv) {
          ASSERT_EQ((a.peer + p) % n, b.peer) << r << " " << i;
        }
      }
    }
  }
  // Uneven blocks or an odd node count promise nothing.
  CollectiveSpec uneven = ring_spec(CollectiveOp::AllReduce, 16, 4, 1);
  uneven.bytes = Bytes(4 * 1001);
  EXPECT_EQ(make_collective(uneven)->symmetry_period(), 0u);
  EXPECT_EQ(make_collective(ring_spec(CollectiveOp::AllReduce, 12, 4, 1))->symmetry_period(), 0u);
  EXPECT_EQ(make_collective(ring_spec(CollectiveOp::AllReduce, 8, 0, 1))->symmetry_period(), 1u);
}

// sigma rotates a rank inside its node of 4 and a channel inside its block of 4 (0..3, 4..7).
Rank sigma(Rank x) {
  return x - x % 4 + (x + 1) % 4;
}

// ProgramSet::local_symmetry: channel c + 1 enters every node one GPU further on than channel c,
// so rotating ranks inside their nodes and channels inside their blocks of 4 maps the ring onto
// itself, op index for op index (the ring rotates each rank's channel order within a step by its
// local index so that indices match). 4 nodes of 4 GPUs, 8 channels.
TEST(RingPromises, RotationInsideNodesMapsProgramsOntoThemselves) {
  for (const CollectiveOp op :
       {CollectiveOp::AllReduce, CollectiveOp::AllGather, CollectiveOp::ReduceScatter}) {
    CollectiveSpec spec = ring_spec(op, 16, 4, 8);
    spec.bytes = Bytes(4 * 8 * 16 * 3);  // every channel slice the same size (3 floats)
    const auto ring = make_collective(spec);
    ASSERT_EQ(ring->symmetry_period(), 8u) << to_string(op);
    ASSERT_EQ(ring->local_symmetry(), 4u) << to_string(op);
    for (Rank r = 0; r < 16; ++r) {
      const Rank q = sigma(r);
      ASSERT_EQ(ring->num_ops(q), ring->num_ops(r));
      for (OpIndex i = 0; i < ring->num_ops(r); ++i) {
        const Op a = ring->op(r, i), b = ring->op(q, i);
        ASSERT_TRUE(a.kind == b.kind && a.bytes() == b.bytes() && a.num_deps == b.num_deps)
            << to_string(op) << " " << r << " " << i;
        for (std::uint32_t k = 0; k < a.num_deps; ++k) ASSERT_EQ(a.deps[k], b.deps[k]);
        if (a.kind != OpKind::Send && a.kind != OpKind::Recv) continue;
        ASSERT_EQ(sigma(a.peer), b.peer) << to_string(op) << " " << r << " " << i;
        ASSERT_EQ(sigma(a.channel), b.channel) << to_string(op) << " " << r << " " << i;
      }
    }
  }
  // Unequal channel slices, channels not in blocks of the node size, a mesh, or a single node
  // promise nothing.
  CollectiveSpec uneven = ring_spec(CollectiveOp::AllReduce, 16, 4, 8);
  uneven.bytes = Bytes(4 * 16 * 9);  // 9 floats per block over 8 channels
  EXPECT_EQ(make_collective(uneven)->local_symmetry(), 0u);
  EXPECT_EQ(make_collective(ring_spec(CollectiveOp::AllReduce, 16, 4, 2))->local_symmetry(), 0u);
  CollectiveSpec mesh = ring_spec(CollectiveOp::AllReduce, 16, 4, 8);
  mesh.mesh_rings = true;
  EXPECT_EQ(make_collective(mesh)->local_symmetry(), 0u);
  EXPECT_EQ(make_collective(ring_spec(CollectiveOp::AllReduce, 4, 4, 8))->local_symmetry(), 0u);
}

TEST(RingPromises, EveryOpOfARegionRepeatsTheOnePeriodBefore) {
  for (const CollectiveOp op :
       {CollectiveOp::AllReduce, CollectiveOp::AllGather, CollectiveOp::ReduceScatter}) {
    const auto ring = make_collective(ring_spec(op, 12, 4, 2));
    std::uint32_t regions = 0;
    for (Rank r = 0; r < ring->num_ranks(); ++r) {
      for (OpIndex i = 0; i < ring->num_ops(r); ++i) {
        const PeriodicRegion g = ring->periodic_region(r, i);
        if (g.period_ops == 0) continue;
        ASSERT_TRUE(g.first_op <= i && i < g.end()) << r << " " << i;
        ASSERT_LE(g.end(), ring->num_ops(r));
        if (i == g.first_op && r == 0) ++regions;
        if (i + g.period_ops >= g.end()) continue;
        const Op a = ring->op(r, i), b = ring->op(r, i + g.period_ops);
        ASSERT_TRUE(same_timing(a, b)) << to_string(op) << " " << r << " " << i;
        ASSERT_EQ(a.peer, b.peer);
        for (std::uint32_t k = 0; k < a.num_deps; ++k)
          ASSERT_EQ(a.deps[k] + g.period_ops, b.deps[k]) << r << " " << i;
      }
    }
    // Both channels share their regions, as their steps are interleaved: one region (all-gather,
    // reduce-scatter) or two (all-reduce: reduce-scatter steps, all-gather steps).
    EXPECT_EQ(regions, op == CollectiveOp::AllReduce ? 2u : 1u) << to_string(op);
  }
}

// The ring lays out its ops step major, channel minor, so a small issue window holds every
// channel's current step. n = 12 ranks, 2 channels, one pipelining iteration: an all-reduce step
// of one channel is [send, recv], so op 4s + 2c + w is op w of step s of channel c, and a
// region's period is one step of both channels (2 x 2 = 4 ops); a reduce-scatter step is
// [send, recv, reduce] (period 6); the all-gather's ops start after its one Copy.
TEST(RingPromises, ChannelsAreInterleavedStepByStep) {
  struct Layout {
    CollectiveOp op;
    OpIndex prefix, per_step, steps;
  };
  for (const Layout l :
       {Layout{CollectiveOp::AllReduce, 0, 2, 22}, Layout{CollectiveOp::AllGather, 1, 2, 11},
        Layout{CollectiveOp::ReduceScatter, 0, 3, 11}}) {
    const auto ring = make_collective(ring_spec(l.op, 12, 4, 2));
    for (Rank r = 0; r < 12; ++r) {
      ASSERT_EQ(ring->num_ops(r), l.prefix + l.steps * 2 * l.per_step);
      for (OpIndex s = 0; s < l.steps; ++s) {
        for (std::uint16_t c = 0; c < 2; ++c) {
          const OpIndex i = l.prefix + (2 * s + c) * l.per_step;
          const Op send = ring->op(r, i), recv = ring->op(r, i + 1);
          ASSERT_EQ(send.kind, OpKind::Send) << r << " " << i;
          ASSERT_EQ(recv.kind, OpKind::Recv) << r << " " << i;
          ASSERT_EQ(send.channel, c);
          ASSERT_EQ(recv.channel, c);
          // A send after the first step forwards what its channel received one step earlier
          // (the recv of the step before, or the reduce after it in a reduce-scatter).
          if (s > 0) {
            const OpIndex forwarded = i + (l.per_step == 2 ? 1 : 2) - 2 * l.per_step;
            ASSERT_EQ(send.deps[0], forwarded) << r << " " << i;
          }
        }
      }
      // Step 0 is no region's member; step 1 starts the (first) region, period 2 x per_step.
      EXPECT_EQ(ring->periodic_region(r, l.prefix).period_ops, 0u);
      const PeriodicRegion g = ring->periodic_region(r, l.prefix + 2 * l.per_step);
      EXPECT_EQ(g.first_op, l.prefix + 2 * l.per_step);
      EXPECT_EQ(g.period_ops, 2 * l.per_step);
      EXPECT_EQ(g.repeats, 10u);  // steps 1..n-2
      if (l.op != CollectiveOp::AllReduce) continue;
      // The all-reduce's all-gather steps n-1..2n-3 (11..21) form the second region.
      const PeriodicRegion ag = ring->periodic_region(r, 4 * 11 + 3);
      EXPECT_EQ(ag.first_op, 4u * 11);
      EXPECT_EQ(ag.period_ops, 4u);
      EXPECT_EQ(ag.repeats, 11u);
    }
  }
}

}  // namespace
}  // namespace lockstep
