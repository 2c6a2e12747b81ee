// Every supported (collective, algorithm) pair, executed on real data by the functional executor
// and compared with a direct reference computation (an all-reduce must really sum).
//
// Elements are uint8, so every byte count is legal and sizes like 7 or 1 MiB + 3 leave blocks of
// unequal length; sums wrap modulo 256, which keeps integer results exact whatever the order of
// additions. Each case runs with the Forward schedule; small cases also with Reverse, a different
// legal interleaving of independent ops that exposes missing dependencies.
// Cases whose functional run would move more than kBudget bytes (one-shot all-reduce over 64
// ranks moves 63 x 64 x 1 MiB) are skipped: the same code paths are covered at smaller n and S.
#include <gtest/gtest.h>

#include <iterator>
#include <string>
#include <tuple>

#include "lockstep/collective/collective.hpp"
#include "lockstep/engine/functional/executor.hpp"
#include "lockstep/engine/functional/verify.hpp"

namespace lockstep {
namespace {

constexpr std::uint64_t kBudget = 256ull << 20;
constexpr Rank kRanks[] = {1, 2, 3, 4, 5, 7, 8, 16, 24, 64};
constexpr std::uint64_t kSmallSizes[] = {0, 1, 7, 1000};
constexpr std::uint64_t kLargeSize = (1u << 20) + 3;

// alltoallv sizes: a deterministic mix of empty, small and large blocks per pair.
std::vector<std::vector<std::uint64_t>> alltoallv_sizes(Rank n, std::uint64_t bytes) {
  std::vector<std::vector<std::uint64_t>> v(n, std::vector<std::uint64_t>(n));
  for (Rank i = 0; i < n; ++i)
    for (Rank j = 0; j < n; ++j) v[i][j] = bytes * ((i * 5 + j * 3) % 4) / (2 * n) + (i == j);
  return v;
}

CollectiveSpec make_spec(CollectiveOp op, Algorithm a, Rank n, std::uint64_t bytes) {
  CollectiveSpec s;
  s.op = op;
  s.algorithm = a;
  s.ranks = n;
  s.bytes = Bytes(bytes);
  s.root = n > 2 ? n / 2 + 1 : n - 1;  // not rank 0, to catch root handling
  if (op == CollectiveOp::AllToAllV) s.alltoallv = alltoallv_sizes(n, bytes);
  // Hierarchical needs whole domains: 4 ranks per node when that divides n, else one node.
  if (a == Algorithm::Hierarchical) s.ranks_per_node = n % 4 == 0 && n > 4 ? 4 : n;
  return s;
}

std::uint64_t wire_bytes(const ProgramSet& p) {
  std::uint64_t total = 0;
  for (Rank r = 0; r < p.num_ranks(); ++r) {
    const RankStats s = summarize_rank(p, r);
    total += s.bytes_received + s.net_reduce_bytes + p.buffers(r).input;
  }
  return total;
}

using Param = std::tuple<std::pair<CollectiveOp, Algorithm>, Rank>;

class Correctness : public ::testing::TestWithParam<Param> {};
// The costlier checks run on the rank counts up to a bound only (the larger counts are covered by
// the cheaper checks above): separate suites, so no case is registered just to be skipped.
class CorrectnessUpTo16 : public Correctness {};
class CorrectnessUpTo24 : public Correctness {};

void expect_exact(CollectiveOp op, Algorithm algo, Rank n, std::uint64_t bytes) {
  const CollectiveSpec s = make_spec(op, algo, n, bytes);
  const auto p = make_collective(s);
  if (wire_bytes(*p) > kBudget) return;
  const VerifyReport v = verify_collective(s, *p);
  EXPECT_TRUE(v.ok) << "bytes=" << bytes << ": " << v.message;
  if (bytes <= 1000) {
    FunctionalOptions reverse;
    reverse.schedule = Schedule::Reverse;
    const VerifyReport r = verify_collective(s, *p, reverse, 7);
    EXPECT_TRUE(r.ok) << "reverse schedule, bytes=" << bytes << ": " << r.message;
  }
}

TEST_P(Correctness, ExactOnIntegers) {
  const auto [pair, n] = GetParam();
  for (std::uint64_t bytes : kSmallSizes) expect_exact(pair.first, pair.second, n, bytes);
}

TEST_P(Correctness, ExactOnIntegersLargeBuffer) {
  const auto [pair, n] = GetParam();
  expect_exact(pair.first, pair.second, n, kLargeSize);
}

// Several channels and small pipelining chunks exercise the slicing arithmetic.
TEST_P(CorrectnessUpTo16, ExactWithChannelsAndChunks) {
  const auto [pair, n] = GetParam();
  CollectiveSpec s = make_spec(pair.first, pair.second, n, 1000);
  s.channels = 3;
  s.chunk = Bytes(64);
  const auto p = make_collective(s);
  const VerifyReport v = verify_collective(s, *p);
  EXPECT_TRUE(v.ok) << v.message;
}

// Floating point: float, double and bfloat16 sums within the documented tolerance
// (n-1) x u x sum|x_i|, u the unit roundoff of the type.
TEST_P(CorrectnessUpTo24, WithinToleranceOnFloats) {
  const auto [pair, n] = GetParam();
  for (DataType t : {DataType::Float32, DataType::Float64, DataType::Bf16}) {
    CollectiveSpec s = make_spec(pair.first, pair.second, n, 0);
    s.type = t;
    s.bytes = Bytes(1000 * size_of(t));
    if (s.op == CollectiveOp::AllToAllV) {
      s.alltoallv = alltoallv_sizes(n, 1000);
      for (auto& row : s.alltoallv)
        for (auto& v : row) v *= size_of(t);
    }
    const auto p = make_collective(s);
    const VerifyReport v = verify_collective(s, *p);
    EXPECT_TRUE(v.ok) << to_string(t) << ": " << v.message;
  }
}

// Scale-up domains of several sizes (3 and 6 ranks per node included, and 1 = a flat ring of
// nodes) for the algorithms whose programs depend on ranks_per_node, and NVLink-first ring order
// with several channels.
TEST(Domains, AnyDomainSize) {
  struct Case {
    CollectiveOp op;
    Algorithm algo;
    Rank n;
    std::uint32_t g;
  };
  const Case cases[] = {
      {CollectiveOp::AllReduce, Algorithm::Hierarchical, 6, 3},
      {CollectiveOp::AllReduce, Algorithm::Hierarchical, 6, 1},
      {CollectiveOp::AllReduce, Algorithm::Hierarchical, 24, 3},
      {CollectiveOp::AllReduce, Algorithm::Hierarchical, 12, 6},
      {CollectiveOp::AllReduce, Algorithm::NetReduce, 8, 4},
      {CollectiveOp::AllReduce, Algorithm::NetReduce, 6, 2},
      {CollectiveOp::AllReduce, Algorithm::NetReduce, 6, 1},
      {CollectiveOp::AllReduce, Algorithm::Ring, 24, 8},
      {CollectiveOp::AllGather, Algorithm::Ring, 24, 3},
      {CollectiveOp::ReduceScatter, Algorithm::Ring, 12, 4},
      {CollectiveOp::Broadcast, Algorithm::Chain, 12, 4},
      {CollectiveOp::Reduce, Algorithm::Ring, 12, 6},
      {CollectiveOp::AllReduce, Algorithm::Tree, 24, 8},
      {CollectiveOp::AllReduce, Algorithm::Tree, 12, 3},
      {CollectiveOp::Broadcast, Algorithm::Tree, 12, 4},
      {CollectiveOp::Reduce, Algorithm::Tree, 12, 6},
  };
  for (const Case& c : cases) {
    for (std::uint16_t channels : {1, 4}) {
      CollectiveSpec s = make_spec(c.op, c.algo, c.n, 1003);
      s.ranks_per_node = c.g;
      s.channels = channels;
      const auto p = make_collective(s);
      const VerifyReport v = verify_collective(s, *p);
      EXPECT_TRUE(v.ok) << p->label() << " n=" << c.n << " g=" << c.g << " channels=" << channels
                        << ": " << v.message;
    }
  }
}

std::vector<Param> all_params(Rank max_ranks = kRanks[std::size(kRanks) - 1]) {
  std::vector<Param> out;
  for (const auto& pair : supported_collectives())
    for (Rank n : kRanks)
      if (n <= max_ranks) out.emplace_back(pair, n);
  return out;
}

std::string param_name(const ::testing::TestParamInfo<Param>& info) {
  const auto& pair = std::get<0>(info.param);
  return std::string(to_string(pair.first)) + "_" + to_string(pair.second) + "_n" +
         std::to_string(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(AllPairs, Correctness, ::testing::ValuesIn(all_params()), param_name);
INSTANTIATE_TEST_SUITE_P(AllPairs, CorrectnessUpTo16, ::testing::ValuesIn(all_params(16)),
                         param_name);
INSTANTIATE_TEST_SUITE_P(AllPairs, CorrectnessUpTo24, ::testing::ValuesIn(all_params(24)),
                         param_name);

}  // namespace
}  // namespace lockstep
