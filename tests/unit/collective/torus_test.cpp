// torus_ring: every message goes to a torus neighbour, the bytes and steps derived by hand, and
// the promises the programs make to engines (translation symmetry, periodic regions) checked op
// by op.
#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

#include "lockstep/collective/collective.hpp"
#include "lockstep/core/error.hpp"

namespace lockstep {
namespace {

CollectiveSpec torus_spec(CollectiveOp op, std::vector<std::uint32_t> dims, std::uint64_t bytes,
                          std::uint16_t channels = 1) {
  CollectiveSpec s;
  s.op = op;
  s.algorithm = Algorithm::TorusRing;
  s.ranks = 1;
  for (auto d : dims) s.ranks *= d;
  s.torus_dims = std::move(dims);
  s.bytes = Bytes(bytes);
  s.channels = channels;
  return s;
}

struct Totals {
  std::uint64_t sent = 0, received = 0, sends = 0;
};
Totals totals(const ProgramSet& p, Rank r) {
  Totals t;
  for (OpIndex i = 0; i < p.num_ops(r); ++i) {
    const Op op = p.op(r, i);
    if (op.kind == OpKind::Send) t.sent += op.bytes(), ++t.sends;
    if (op.kind == OpKind::Recv) t.received += op.bytes();
  }
  return t;
}

// Coordinates of a rank (dims[0] fastest) and whether two ranks differ by one step along exactly
// one dimension, wrapping around.
std::vector<std::uint32_t> coords(Rank r, const std::vector<std::uint32_t>& dims) {
  std::vector<std::uint32_t> c;
  for (auto d : dims) c.push_back(r % d), r /= d;
  return c;
}
bool neighbours(Rank a, Rank b, const std::vector<std::uint32_t>& dims) {
  const auto ca = coords(a, dims), cb = coords(b, dims);
  int differing = 0;
  for (std::size_t k = 0; k < dims.size(); ++k) {
    if (ca[k] == cb[k]) continue;
    ++differing;
    const std::uint32_t diff = (cb[k] + dims[k] - ca[k]) % dims[k];
    if (diff != 1 && diff != dims[k] - 1) return false;
  }
  return differing == 1;
}

TEST(TorusRing, EveryMessageGoesToANeighbour) {
  for (CollectiveOp op :
       {CollectiveOp::AllReduce, CollectiveOp::AllGather, CollectiveOp::ReduceScatter}) {
    for (const std::vector<std::uint32_t>& dims :
         {std::vector<std::uint32_t>{8}, {4, 4}, {2, 3, 4}, {3, 1, 5}}) {
      const CollectiveSpec s = torus_spec(op, dims, 6000, 2);
      const auto p = make_collective(s);
      for (Rank r = 0; r < s.ranks; ++r)
        for (OpIndex i = 0; i < p->num_ops(r); ++i) {
          const Op o = p->op(r, i);
          if (o.kind == OpKind::Send || o.kind == OpKind::Recv) {
            ASSERT_TRUE(neighbours(r, o.peer, dims)) << p->label() << " rank " << r << " op " << i;
          }
        }
    }
  }
}

// 4x4x4, S = 1 GiB: the all-reduce moves 2 (n-1)/n S per rank like any bandwidth-optimal
// all-reduce (6 colours x 2 (3/4) (S/6) (1 + 1/4 + 1/16) = 63/32 S), in 2 x (3 + 3 + 3) = 18
// steps of 6 colours x [send, recv]: 216 ops, whatever the rank count (lazy, arithmetic).
TEST(TorusRing, AllReduceBytesAndOpsOn4x4x4) {
  const std::uint64_t S = std::uint64_t{1} << 30;
  const auto p = make_collective(torus_spec(CollectiveOp::AllReduce, {4, 4, 4}, S));
  for (Rank r : {0u, 21u, 63u}) {
    EXPECT_EQ(p->num_ops(r), 216u);
    const Totals t = totals(*p, r);
    EXPECT_EQ(t.sends, 108u);
    // S / 6 is not whole: each of the 108 messages may round by one byte.
    EXPECT_NEAR(static_cast<double>(t.sent), 63.0 / 32 * S, 108);
    EXPECT_NEAR(static_cast<double>(t.received), 63.0 / 32 * S, 108);
  }
  EXPECT_EQ(p->label(), "all_reduce/torus_ring");
  EXPECT_EQ(p->lookahead(), Lookahead::Step);
}

// All-gather and reduce-scatter: (n-1)/n S per rank in 3 + 3 + 3 = 9 steps; the phases move
// 3/64 S (own line), 12/64 S (plane), 48/64 S (everything), half each way.
TEST(TorusRing, GatherBytesPerPhaseOn4x4x4) {
  const std::uint64_t S = 64 * 4096;
  for (CollectiveOp op : {CollectiveOp::AllGather, CollectiveOp::ReduceScatter}) {
    const auto p = make_collective(torus_spec(op, {4, 4, 4}, S));
    const Totals t = totals(*p, 5);
    EXPECT_EQ(t.sent, 63 * S / 64);
    EXPECT_EQ(t.sends, 9u * 2);
    // Message sizes by phase (all-gather's order: line, plane, torus; reduce-scatter's reverse).
    std::vector<std::uint64_t> sizes;
    for (OpIndex i = 0; i < p->num_ops(5); ++i)
      if (p->op(5, i).kind == OpKind::Send) sizes.push_back(p->op(5, i).bytes());
    const std::uint64_t block = S / 64;
    const std::uint64_t first = op == CollectiveOp::AllGather ? block / 2 : 16 * block / 2;
    const std::uint64_t last = op == CollectiveOp::AllGather ? 16 * block / 2 : block / 2;
    EXPECT_EQ(sizes.front(), first);
    EXPECT_EQ(sizes.back(), last);
  }
}

TEST(TorusRing, ValidationNamesTheField) {
  CollectiveSpec s = torus_spec(CollectiveOp::AllReduce, {4, 4}, 64);
  s.torus_dims = {4, 5};
  try {
    make_collective(s);
    FAIL() << "4x5 accepted for 16 ranks";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "torus_dims");
  }
  s.torus_dims = {0, 4};
  EXPECT_THROW(make_collective(s), InputError);
  s.torus_dims = {};
  EXPECT_NO_THROW(make_collective(s));  // one ring of all ranks
  s.algorithm = Algorithm::Ring;
  s.torus_dims = {3, 3};  // ignored by other algorithms
  EXPECT_NO_THROW(make_collective(s));
  s.op = CollectiveOp::Broadcast;
  s.algorithm = Algorithm::TorusRing;
  EXPECT_THROW(make_collective(s), InputError);
}

bool same_but_offsets(const Op& a, const Op& b, Rank shift, Rank n) {
  if (a.kind != b.kind || a.channel != b.channel || a.num_deps != b.num_deps ||
      a.bytes() != b.bytes() || a.mode != b.mode)
    return false;
  for (std::size_t d = 0; d < a.num_deps; ++d)
    if (a.deps[d] != b.deps[d]) return false;
  if (a.kind == OpKind::Send || a.kind == OpKind::Recv) return (a.peer + shift) % n == b.peer;
  return true;
}

// ProgramSet::symmetry_period: rank r + p runs rank r's program with peers moved by p.
TEST(TorusRing, TranslationSymmetryHolds) {
  for (CollectiveOp op :
       {CollectiveOp::AllReduce, CollectiveOp::AllGather, CollectiveOp::ReduceScatter}) {
    const CollectiveSpec s = torus_spec(op, {4, 3, 2}, 24 * 12 * 8);
    const auto p = make_collective(s);
    const Rank period = p->symmetry_period();
    EXPECT_EQ(period, 12u) << p->label();
    for (Rank r = 0; r < s.ranks; ++r) {
      const Rank q = (r + period) % s.ranks;
      ASSERT_EQ(p->num_ops(r), p->num_ops(q));
      for (OpIndex i = 0; i < p->num_ops(r); ++i)
        ASSERT_TRUE(same_but_offsets(p->op(r, i), p->op(q, i), period, s.ranks))
            << p->label() << " rank " << r << " op " << i;
    }
    // Uneven blocks promise nothing.
    EXPECT_EQ(make_collective(torus_spec(op, {4, 3, 2}, 1001))->symmetry_period(), 0u);
  }
  EXPECT_EQ(make_collective(torus_spec(CollectiveOp::AllReduce, {8}, 64))->symmetry_period(), 1u);
}

// ProgramSet::periodic_region: inside a region op j + period repeats op j, dependencies moved by
// the period. The 4x4 all-reduce has regions (steps 1, 2 of each phase). On 5x3 its two colours
// start phases at steps 0, 2, 4, 6, 8, 10: no two steps in a row repeat, and none is claimed;
// all-gather and reduce-scatter (one order) repeat inside the phase along the 5.
TEST(TorusRing, PeriodicRegionsRepeat) {
  for (CollectiveOp op :
       {CollectiveOp::AllReduce, CollectiveOp::AllGather, CollectiveOp::ReduceScatter}) {
    for (const std::vector<std::uint32_t>& dims : {std::vector<std::uint32_t>{4, 4}, {5, 3}, {6}}) {
      const CollectiveSpec s = torus_spec(op, dims, 4 * 15 * 16 * 30);
      const auto p = make_collective(s);
      int regions = 0;
      for (OpIndex i = 0; i < p->num_ops(0); ++i) {
        const PeriodicRegion reg = p->periodic_region(0, i);
        if (reg.period_ops == 0) continue;
        ASSERT_LE(reg.first_op, i);
        ASSERT_LT(i, reg.end());
        ASSERT_GE(reg.repeats, 2u);
        regions += i == reg.first_op;
        if (i + reg.period_ops >= reg.end()) continue;
        const Op a = p->op(0, i), b = p->op(0, i + reg.period_ops);
        ASSERT_EQ(a.kind, b.kind) << p->label() << " op " << i;
        ASSERT_EQ(a.peer, b.peer);
        ASSERT_EQ(a.channel, b.channel);
        ASSERT_EQ(a.bytes(), b.bytes());
        ASSERT_EQ(a.num_deps, b.num_deps);
        for (std::size_t d = 0; d < a.num_deps; ++d)
          ASSERT_EQ(a.deps[d] + reg.period_ops, b.deps[d]) << p->label() << " op " << i;
      }
      const bool drifting = op == CollectiveOp::AllReduce && dims.size() == 2 && dims[0] != dims[1];
      if (drifting) {
        EXPECT_EQ(regions, 0) << p->label();
      } else {
        EXPECT_GT(regions, 0) << p->label();
      }
    }
  }
}

}  // namespace
}  // namespace lockstep
