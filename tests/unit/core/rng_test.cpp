#include "lockstep/core/rng.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace lockstep {
namespace {

TEST(Rng, SameSeedSameStream) {
  Rng a(42), b(42), c(43);
  for (int i = 0; i < 100; ++i) {
    const auto x = a.next_u64();
    EXPECT_EQ(x, b.next_u64());
    EXPECT_NE(x, c.next_u64());
  }
}

TEST(Rng, UniformMomentsMatchTheory) {
  // U(0,1): mean 1/2, variance 1/12. With 200,000 draws the standard error of the mean is
  // sqrt(1/12/2e5) = 6.5e-4, so 0.005 is more than 7 standard errors.
  Rng r(7);
  double sum = 0, sum2 = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    const double u = r.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
    sum2 += u * u;
  }
  const double mean = sum / n;
  EXPECT_NEAR(mean, 0.5, 0.005);
  EXPECT_NEAR(sum2 / n - mean * mean, 1.0 / 12, 0.002);
}

TEST(Rng, NormalMomentsMatchTheory) {
  Rng r(11);
  double sum = 0, sum2 = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    const double z = r.normal();
    sum += z;
    sum2 += z * z;
  }
  EXPECT_NEAR(sum / n, 0.0, 0.01);
  EXPECT_NEAR(sum2 / n, 1.0, 0.01);
}

TEST(Rng, BelowStaysInRangeAndHitsEveryValue) {
  Rng r(3);
  int seen[7] = {};
  for (int i = 0; i < 7000; ++i) {
    const auto v = r.below(7);
    ASSERT_LT(v, 7u);
    ++seen[v];
  }
  for (int count : seen) EXPECT_GT(count, 800);  // expected 1000 each
}

TEST(Rng, SplitStreamsDifferAndAreReproducible) {
  Rng base(5);
  Rng s1 = base.split(1), s1b = base.split(1), s2 = base.split(2);
  const auto x = s1.next_u64();
  EXPECT_EQ(x, s1b.next_u64());
  EXPECT_NE(x, s2.next_u64());
}

}  // namespace
}  // namespace lockstep
