// Checked arithmetic of Time, Bytes and Bandwidth: each case worked out by hand at the edges of
// the ranges (docs/units.md). Time's finite range is +/-(2^63 - 2) ps; 2^63 - 1 is infinite().
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>

#include "lockstep/core/error.hpp"
#include "lockstep/core/units.hpp"

namespace lockstep {
namespace {

constexpr std::int64_t k62 = std::int64_t{1} << 62;
constexpr std::int64_t kMaxFinite = std::numeric_limits<std::int64_t>::max() - 1;

TEST(CheckedTime, AdditionSaturatesInsteadOfWrapping) {
  // 2^62 + 2^62 = 2^63, one past INT64_MAX: wrapped it would be -2^63.
  EXPECT_EQ(Time::ps(k62) + Time::ps(k62), Time::infinite());
  // 2^62 + (2^62 - 2) = 2^63 - 2, the largest finite time.
  EXPECT_EQ((Time::ps(k62) + Time::ps(k62 - 2)).picoseconds(), kMaxFinite);
  EXPECT_TRUE((Time::ps(k62) + Time::ps(k62 - 2)).is_finite());
  // One more picosecond lands on 2^63 - 1: infinite.
  EXPECT_FALSE((Time::ps(kMaxFinite) + Time::ps(1)).is_finite());
  EXPECT_EQ(-Time::ps(k62) - Time::ps(k62), -Time::infinite());
  Time t = Time::ps(kMaxFinite);
  t += Time::ps(kMaxFinite);
  EXPECT_EQ(t, Time::infinite());
}

TEST(CheckedTime, InfinityAbsorbsFiniteTimes) {
  // Plain saturation at INT64_MAX would give back a finite 2^63 - 1 - 10^12 here.
  EXPECT_EQ(Time::infinite() - Time::s(1), Time::infinite());
  EXPECT_EQ(Time::s(1) - Time::infinite(), -Time::infinite());
  EXPECT_EQ(Time::infinite() / 2, Time::infinite());
  EXPECT_EQ(Time::infinite() * -3, -Time::infinite());
  EXPECT_EQ(Time::infinite() * 0, Time::zero());  // no repetition of it at all
  EXPECT_THROW(Time::infinite() - Time::infinite(), std::domain_error);
  EXPECT_THROW(Time::infinite() + -Time::infinite(), std::domain_error);
  EXPECT_EQ(Time::infinite() + Time::infinite(), Time::infinite());
  // INT64_MIN is not a time of its own: it is negative infinity.
  EXPECT_EQ(Time::ps(std::numeric_limits<std::int64_t>::min()), -Time::infinite());
}

TEST(CheckedTime, MultiplicationSaturates) {
  // 2^62 x 2 = 2^63 overflows; (2^62 - 1) x 2 = 2^63 - 2 does not.
  EXPECT_EQ(Time::ps(k62) * 2, Time::infinite());
  EXPECT_EQ((Time::ps(k62 - 1) * 2).picoseconds(), kMaxFinite);
  EXPECT_EQ(Time::ps(k62) * -2, -Time::infinite());
  // 10^7 s = 10^19 ps > 9.22 x 10^18 ps.
  EXPECT_EQ(Time::s(1) * 10'000'000, Time::infinite());
  EXPECT_EQ((Time::s(1) * 9'000'000).picoseconds(), 9'000'000'000'000'000'000);
  EXPECT_THROW((void)(Time::s(1) / 0), std::domain_error);
}

TEST(CheckedTime, ConversionsFromDoubleSaturate) {
  // 9 x 10^6 s fits (9 x 10^18 ps); 10^7 s and the 10^15 s do not.
  EXPECT_EQ(Time::s(9e6).picoseconds(), 9'000'000'000'000'000'000);
  EXPECT_EQ(Time::s(1e7), Time::infinite());
  EXPECT_EQ(Time::s(1e15), Time::infinite());
  EXPECT_EQ(Time::us(-1e15), -Time::infinite());
  EXPECT_EQ(Time::s(std::numeric_limits<double>::infinity()), Time::infinite());
  EXPECT_THROW(Time::s(std::nan("")), std::domain_error);
  // 2^63 is the first double past the range; the double below it (2^63 - 1024) is finite.
  EXPECT_EQ(Time::from_ps(0x1p63), Time::infinite());
  EXPECT_EQ(Time::from_ps(0x1p63 - 1024).picoseconds(), std::int64_t{0x7FFFFFFFFFFFFC00});
  // Nearest picosecond, halves away from zero.
  EXPECT_EQ(Time::from_ps(2.5).picoseconds(), 3);
  EXPECT_EQ(Time::from_ps(-2.5).picoseconds(), -3);
  EXPECT_EQ(Time::from_ps(2.4999).picoseconds(), 2);
  EXPECT_EQ(Time::ns(1.0005).picoseconds(), 1001);
  // Above 2^52 doubles are whole numbers and are taken as they are: 2^52 + 1 stays odd.
  EXPECT_EQ(Time::from_ps(0x1p52 + 1).picoseconds(), (std::int64_t{1} << 52) + 1);
}

TEST(CheckedTime, ScalingSaturates) {
  EXPECT_EQ(Time::us(2).scaled(1.5), Time::us(3));
  EXPECT_EQ(Time::ps(k62).scaled(2.0), Time::infinite());
  EXPECT_EQ(Time::infinite().scaled(0.5), Time::infinite());
  EXPECT_EQ(Time::infinite().scaled(0), Time::zero());
  EXPECT_THROW((void)Time::us(1).scaled(-1), std::domain_error);
}

TEST(CheckedTime, InfiniteConvertsToInfiniteDoublesAndPrintsSo) {
  EXPECT_EQ(Time::infinite().seconds(), std::numeric_limits<double>::infinity());
  EXPECT_EQ((-Time::infinite()).microseconds(), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(to_string(Time::infinite()), "infinite");
  // The largest finite time: 9,223,372.037 s.
  EXPECT_EQ(to_string(Time::ps(kMaxFinite)), "9223372.037 s");
}

TEST(CheckedTransferTime, PastTheRangeIsInfinite) {
  // 1 EiB at 1 b/s: 2^60 B x 8 s/B = 2^63 s = 9.2 x 10^30 ps.
  EXPECT_EQ(transfer_time(Bytes(std::uint64_t{1} << 60), Bandwidth::bytes_per_second(1.0 / 8)),
            Time::infinite());
  // 1 GiB at 1 Kb/s (125 B/s): 2^30 / 125 s = 8,589,934.592 s, just inside the range.
  EXPECT_EQ(transfer_time(Bytes::gib(1), Bandwidth::bytes_per_second(125)).picoseconds(),
            8'589'934'592'000'000'000);
  // 2 GiB at 1 Kb/s is twice that, 17.2 x 10^18 ps: past it.
  EXPECT_EQ(transfer_time(Bytes::gib(2), Bandwidth::bytes_per_second(125)), Time::infinite());
  // No rate: the data never arrives.
  EXPECT_EQ(transfer_time(Bytes(1), Bandwidth()), Time::infinite());
  EXPECT_EQ(transfer_time(Bytes(0), Bandwidth()), Time::zero());
  // The largest 64-bit size at the largest parseable rate (1e16 B/s): 1,844.6744073709551615 s,
  // to a double's precision (the quotient's last bit is worth 0.25 ps here).
  EXPECT_NEAR(static_cast<double>(transfer_time(Bytes(std::numeric_limits<std::uint64_t>::max()),
                                                Bandwidth::bytes_per_second(1e16))
                                      .picoseconds()),
              1'844'674'407'370'955.1615, 1.0);
}

TEST(CheckedTransferTime, TheSlowestRateMovesTheLargestMemoryInHalfTheRange) {
  // kMinBandwidth = 10^12 / 2^22 B/s = 5^12 / 2^10 B/s exactly; 2^40 B at 2^-22 B/ps = 2^62 ps.
  EXPECT_DOUBLE_EQ(kMinBandwidth.bytes_per_second(), 238'418.5791015625);
  EXPECT_EQ(transfer_time(kMaxGpuMemory, kMinBandwidth).picoseconds(), k62);
  EXPECT_EQ(to_string(kMinBandwidth), "1.907 Mb/s");
}

TEST(CheckedBytes, OverflowAndUnderflowThrow) {
  const Bytes half(std::uint64_t{1} << 63);
  EXPECT_THROW(half + half, std::overflow_error);
  EXPECT_EQ((half + Bytes(half.count() - 1)).count(), std::numeric_limits<std::uint64_t>::max());
  EXPECT_THROW(half * 2, std::overflow_error);
  EXPECT_EQ((Bytes(3) * 5).count(), 15u);
  EXPECT_THROW(Bytes(1) - Bytes(2), std::underflow_error);
  EXPECT_EQ((Bytes(2) - Bytes(2)).count(), 0u);
  // 2^34 GiB = 2^64 B.
  EXPECT_THROW(Bytes::gib(std::uint64_t{1} << 34), std::overflow_error);
  EXPECT_EQ(Bytes::gib((std::uint64_t{1} << 34) - 1).count(), 0xFFFFFFFFC0000000u);
  EXPECT_THROW(Bytes(1) / 0, std::domain_error);
  Bytes b(std::numeric_limits<std::uint64_t>::max());
  EXPECT_THROW(b += Bytes(1), std::overflow_error);
}

TEST(CheckedBandwidth, OnlyFiniteNonNegativeRates) {
  EXPECT_THROW(Bandwidth::bytes_per_second(-1), std::domain_error);
  EXPECT_THROW(Bandwidth::bytes_per_second(std::nan("")), std::domain_error);
  EXPECT_THROW(Bandwidth::bytes_per_second(std::numeric_limits<double>::infinity()),
               std::domain_error);
  EXPECT_THROW(Bandwidth::gBps(1) * -0.5, std::domain_error);
  EXPECT_THROW(Bandwidth::gBps(1) / 0.0, std::domain_error);  // +inf
  EXPECT_THROW(Bandwidth::bytes_per_second(1e308) * 10, std::domain_error);
  EXPECT_DOUBLE_EQ((Bandwidth::gbps(400) * 0.5).bytes_per_second(), 25e9);
  EXPECT_EQ(Bandwidth().bytes_per_second(), 0);
}

TEST(CheckedUnits, ParsedTimesPastTheRangeAreInputErrors) {
  // 10^7 s is 10^19 ps; 106 days (9,158,400 s) fits.
  EXPECT_THROW(parse_time("10000000s", "link.latency"), InputError);
  EXPECT_EQ(parse_time("152640min").picoseconds(), 9'158'400'000'000'000'000);
}

}  // namespace
}  // namespace lockstep
