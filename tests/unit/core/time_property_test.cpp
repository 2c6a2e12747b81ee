// Properties of the checked units over random and boundary values: sums and products of times
// are exact or infinite (checked against 128-bit integers), never negative or wrapped; transfer
// times of any size at any rate are exact to a double's precision or infinite, and grow with the
// size and shrink with the rate. Fixed seeds: every run draws the same values.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "lockstep/core/units.hpp"

namespace lockstep {
namespace {

__extension__ typedef __int128 i128;  // exact products of two 64-bit values
constexpr std::int64_t kInf = std::numeric_limits<std::int64_t>::max();

// Finite times in picoseconds spread over every order of magnitude, and the values next to the
// edges.
std::vector<std::int64_t> sample_times(std::mt19937_64& rng, int n) {
  std::vector<std::int64_t> out = {
      0, 1, 2, 1'000'000, (kInf >> 1) - 1, kInf >> 1, (kInf >> 1) + 1, kInf - 2, kInf - 1};
  for (int i = 0; i < n; ++i) {
    const int bits = static_cast<int>(rng() % 63);
    out.push_back(std::min(static_cast<std::int64_t>(rng() >> (64 - bits - 1)), kInf - 1));
  }
  return out;
}

// The exact result of a time operation, or "infinite" where it is past the finite range.
void expect_exact_or_infinite(Time got, i128 exact) {
  ASSERT_GE(got, Time::zero());
  if (exact >= kInf) {
    EXPECT_EQ(got, Time::infinite());
  } else {
    EXPECT_EQ(static_cast<i128>(got.picoseconds()), exact);
  }
}

TEST(TimeProperty, SumsAreExactOrInfiniteNeverWrapped) {
  std::mt19937_64 rng(19);
  const std::vector<std::int64_t> v = sample_times(rng, 300);
  for (std::int64_t a : v) {
    for (std::int64_t b : v) {
      expect_exact_or_infinite(Time::ps(a) + Time::ps(b), i128{a} + b);
      // The difference of two non-negative times never wraps either.
      const Time d = Time::ps(a) - Time::ps(b);
      EXPECT_EQ(static_cast<i128>(d.picoseconds()), i128{a} - b);
    }
  }
}

TEST(TimeProperty, LongSumsSaturateAndStayThere) {
  std::mt19937_64 rng(20);
  const std::vector<std::int64_t> v = sample_times(rng, 2000);
  Time sum = Time::zero();
  i128 exact = 0;
  for (std::int64_t x : v) {
    sum += Time::ps(x);
    exact += x;
    expect_exact_or_infinite(sum, exact);
  }
  EXPECT_EQ(sum, Time::infinite());
  // Nothing finite brings it back.
  EXPECT_EQ(sum - Time::ps(kInf - 2), Time::infinite());
}

TEST(TimeProperty, ProductsAreExactOrInfiniteNeverWrapped) {
  std::mt19937_64 rng(21);
  const std::vector<std::int64_t> v = sample_times(rng, 300);
  const std::vector<std::int64_t> counts = {0, 1, 2, 3, 7, 1024, 131'072, 1'000'000'007, kInf};
  for (std::int64_t a : v) {
    for (std::int64_t k : counts) expect_exact_or_infinite(Time::ps(a) * k, i128{a} * k);
    for (std::int64_t b : v) {
      // Any count, including ones drawn like times.
      if (b != 0) expect_exact_or_infinite(Time::ps(a) * b, i128{a} * b);
    }
  }
}

// Sizes from 1 byte to 2^64 - 1 and rates from 1 b/s to 10^16 B/s, at every scale.
TEST(TimeProperty, TransferTimesAreExactOrInfiniteAndMonotone) {
  std::mt19937_64 rng(22);
  std::uniform_real_distribution<double> log_rate(std::log10(1.0 / 8), 16);
  std::vector<std::uint64_t> sizes = {1,
                                      2,
                                      4096,
                                      std::uint64_t{1} << 30,
                                      std::uint64_t{1} << 40,
                                      std::uint64_t{1} << 60,
                                      std::numeric_limits<std::uint64_t>::max()};
  for (int i = 0; i < 200; ++i) sizes.push_back(rng() >> (rng() % 64));
  std::vector<double> rates = {1.0 / 8, 125, kMinBandwidth.bytes_per_second(), 5e10, 1e16};
  for (int i = 0; i < 200; ++i) rates.push_back(std::pow(10.0, log_rate(rng)));
  for (std::uint64_t s : sizes) {
    if (s == 0) continue;
    Time previous_rate_time = Time::infinite();
    std::vector<double> sorted = rates;
    std::sort(sorted.begin(), sorted.end());
    for (double r : sorted) {
      const Time t = transfer_time(Bytes(s), Bandwidth::bytes_per_second(r));
      ASSERT_GT(t, Time::zero()) << s << " B at " << r << " B/s";
      const long double exact = static_cast<long double>(s) / r * 1e12L;
      if (exact >= 0x1p63L * (1 + 1e-15L)) {
        EXPECT_EQ(t, Time::infinite()) << s << " B at " << r << " B/s";
      } else if (exact < 0x1p63L * (1 - 1e-15L)) {
        ASSERT_TRUE(t.is_finite()) << s << " B at " << r << " B/s";
        EXPECT_NEAR(static_cast<long double>(t.picoseconds()), exact, 1 + exact * 1e-15L);
      }
      EXPECT_LE(t, previous_rate_time);  // faster never takes longer
      previous_rate_time = t;
    }
  }
  // More bytes never take less time.
  std::sort(sizes.begin(), sizes.end());
  for (double r : rates) {
    Time previous = Time::zero();
    for (std::uint64_t s : sizes) {
      const Time t = transfer_time(Bytes(s), Bandwidth::bytes_per_second(r));
      EXPECT_GE(t, previous);
      previous = t;
    }
  }
}

// A collective's time as the cost model builds it: latency + steps x (chunk / rate), summed over
// rounds. With extreme sizes and rates the result is past the range or exact, never below the
// latency it starts from.
TEST(TimeProperty, ComposedTimesNeverFallBelowTheirLatency) {
  std::mt19937_64 rng(23);
  for (int i = 0; i < 20'000; ++i) {
    const Time latency = Time::ps(static_cast<std::int64_t>(rng() % 1'000'000'000));
    const auto steps = static_cast<std::int64_t>(1 + rng() % 262'144);
    const Bytes chunk(rng() >> (rng() % 64));
    const Bandwidth rate = Bandwidth::bytes_per_second(std::pow(10.0, -1.0 + (rng() % 170) / 10.0));
    const Time t = latency + transfer_time(chunk, rate) * steps + Time::us(1.5) * steps;
    ASSERT_GE(t, latency);
    const long double exact =
        static_cast<long double>(latency.picoseconds()) +
        steps *
            (static_cast<long double>(chunk.count()) / rate.bytes_per_second() * 1e12L + 1.5e6L);
    if (exact < 0x1p63L * 0.999L) {
      EXPECT_TRUE(t.is_finite());
    } else if (exact > 0x1p63L * 1.001L) {
      EXPECT_FALSE(t.is_finite());
    }
  }
}

}  // namespace
}  // namespace lockstep
