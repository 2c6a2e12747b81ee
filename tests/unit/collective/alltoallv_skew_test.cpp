// skewed_alltoallv_row: Zipf shares of the receivers, whole elements, rows summing to S.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "lockstep/collective/collective.hpp"
#include "lockstep/core/error.hpp"

namespace lockstep {
namespace {

std::uint64_t sum(const std::vector<std::uint64_t>& v) {
  return std::accumulate(v.begin(), v.end(), std::uint64_t{0});
}

// Skew 0 is alltoall's blocks: 1003 floats over 8 ranks = 126 x 3, then 125 x 5.
TEST(SkewedAlltoallv, SkewZeroIsAlltoallsBlocks) {
  const auto row = skewed_alltoallv_row(8, Bytes(4 * 1003), DataType::Float32, 0);
  for (Rank j = 0; j < 8; ++j) EXPECT_EQ(row[j], 4 * block_size(1003, 8, j)) << j;
}

// Skew s: receiver j gets (j + 1)^-s / H(n, s) of each sender's S, within one element. With
// s = 1 and n = 16, H = 3.380729: the most loaded receiver takes 29.58% of every row, 4.73x the
// mean share, and receives 16 x 0.29579 S over the whole matrix.
TEST(SkewedAlltoallv, SharesFollowZipf) {
  const std::uint64_t S = std::uint64_t{4} << 20;
  for (double s : {0.5, 1.0, 2.0}) {
    const auto row = skewed_alltoallv_row(16, Bytes(S), DataType::Float32, s);
    EXPECT_EQ(sum(row), S);
    double h = 0;
    for (int k = 1; k <= 16; ++k) h += std::pow(k, -s);
    for (Rank j = 0; j < 16; ++j) {
      EXPECT_NEAR(static_cast<double>(row[j]), S * std::pow(j + 1, -s) / h, 4.0) << s << " " << j;
      EXPECT_EQ(row[j] % 4, 0u);
      if (j > 0) {
        EXPECT_LE(row[j], row[j - 1]);
      }
    }
  }
  const auto m = skewed_alltoallv(16, Bytes(S), DataType::Float32, 1.0);
  std::uint64_t hot = 0;
  for (Rank i = 0; i < 16; ++i) hot += m[i][0];
  EXPECT_NEAR(static_cast<double>(hot) / S, 16 / 3.380729, 1e-5);
}

TEST(SkewedAlltoallv, RejectsNegativeSkew) {
  EXPECT_THROW(skewed_alltoallv_row(4, Bytes(64), DataType::Float32, -1), InputError);
  EXPECT_THROW(skewed_alltoallv_row(4, Bytes(64), DataType::Float32, std::nan("")), InputError);
}

}  // namespace
}  // namespace lockstep
