// torus_ring on real data: all-reduce, all-gather and reduce-scatter on tori of one, two and
// three dimensions (powers of two and not, sizes 1 and 2 included), odd sizes that leave parts
// of unequal length, several channels, both schedules of the functional executor (the Reverse
// one exposes a missing dependency), and floating-point types within the documented tolerance.
// A skewed alltoallv is checked the same way.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "lockstep/collective/collective.hpp"
#include "lockstep/engine/functional/executor.hpp"
#include "lockstep/engine/functional/verify.hpp"

namespace lockstep {
namespace {

const std::vector<std::vector<std::uint32_t>> kShapes = {
    {8}, {4, 4}, {2, 3, 4}, {3, 5}, {4, 4, 4}, {2, 2}, {1, 5}, {3, 1, 2}, {5, 3, 3}, {7}};

std::string shape_name(const std::vector<std::uint32_t>& dims) {
  std::string out;
  for (auto d : dims) out += (out.empty() ? "" : "x") + std::to_string(d);
  return out;
}

CollectiveSpec torus_spec(CollectiveOp op, const std::vector<std::uint32_t>& dims,
                          std::uint64_t bytes) {
  CollectiveSpec s;
  s.op = op;
  s.algorithm = Algorithm::TorusRing;
  s.ranks = 1;
  for (auto d : dims) s.ranks *= d;
  s.torus_dims = dims;
  s.bytes = Bytes(bytes);
  return s;
}

constexpr CollectiveOp kOps[] = {CollectiveOp::AllReduce, CollectiveOp::AllGather,
                                 CollectiveOp::ReduceScatter};

TEST(TorusCorrectness, ExactOnIntegersBothSchedules) {
  for (CollectiveOp op : kOps)
    for (const auto& dims : kShapes)
      for (std::uint64_t bytes : {0ull, 1ull, 7ull, 1003ull, (1ull << 20) + 3})
        for (std::uint16_t channels : {1, 3}) {
          CollectiveSpec s = torus_spec(op, dims, bytes);
          s.channels = channels;
          const auto p = make_collective(s);
          const std::string what = p->label() + " " + shape_name(dims) + " bytes " +
                                   std::to_string(bytes) + " channels " + std::to_string(channels);
          const VerifyReport v = verify_collective(s, *p);
          EXPECT_TRUE(v.ok) << what << ": " << v.message;
          if (bytes > 1003) continue;
          FunctionalOptions reverse;
          reverse.schedule = Schedule::Reverse;
          const VerifyReport r = verify_collective(s, *p, reverse, 7);
          EXPECT_TRUE(r.ok) << what << ", reverse: " << r.message;
        }
}

TEST(TorusCorrectness, WithinToleranceOnFloats) {
  for (CollectiveOp op : kOps)
    for (const auto& dims : kShapes)
      for (DataType t : {DataType::Float32, DataType::Float64, DataType::Bf16}) {
        CollectiveSpec s = torus_spec(op, dims, 1000 * size_of(t));
        s.type = t;
        const auto p = make_collective(s);
        const VerifyReport v = verify_collective(s, *p);
        EXPECT_TRUE(v.ok) << p->label() << " " << shape_name(dims) << " " << to_string(t) << ": "
                          << v.message;
      }
}

// The all-reduce takes 2 sum(size - 1) message steps (the ring over all 64 ranks takes 126), the
// others sum(size - 1).
TEST(TorusCorrectness, StepsOnTheCriticalPath) {
  for (CollectiveOp op : kOps) {
    const CollectiveSpec s = torus_spec(op, {4, 4, 4}, 64 * 64);
    const auto p = make_collective(s);
    std::vector<RankBuffers> none;
    FunctionalOptions o;
    o.move_data = false;
    EXPECT_EQ(execute(*p, none, o).steps, op == CollectiveOp::AllReduce ? 18u : 9u) << p->label();
  }
}

TEST(SkewedAlltoallv, CorrectOnRealData) {
  for (Rank n : {1u, 2u, 5u, 16u})
    for (double skew : {0.0, 0.5, 1.0, 3.0}) {
      CollectiveSpec s;
      s.op = CollectiveOp::AllToAllV;
      s.algorithm = Algorithm::Direct;
      s.ranks = n;
      s.type = DataType::Int32;
      s.bytes = Bytes(4 * 1001);
      s.alltoallv = skewed_alltoallv(n, s.bytes, s.type, skew);
      const auto p = make_collective(s);
      const VerifyReport v = verify_collective(s, *p);
      EXPECT_TRUE(v.ok) << "n " << n << " skew " << skew << ": " << v.message;
    }
}

}  // namespace
}  // namespace lockstep
