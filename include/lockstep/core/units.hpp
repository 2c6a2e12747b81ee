#pragma once
// Units are types: Time (integer picoseconds), Bytes (integer bytes) and Bandwidth (bytes per
// second, as a double because link rates like 400 Gb/s = 5e10 B/s are exact in binary floating
// point while per-picosecond rates are not). Parsing accepts what people write: "400Gbps",
// "50GB/s", "1.5us", "250ns", "8GiB", "64KB". SI prefixes are powers of 1000 and binary prefixes
// (Ki, Mi, Gi, ...) powers of 1024, exactly as written; "b" is bits and "B" is bytes.
//
// No arithmetic on these types wraps (docs/units.md). A Time that would leave its range
// (2^63 - 1 ps, about 106.75 days) saturates to Time::infinite() (or its negative), which
// absorbs whatever is added to it, so an overflow can only make a result infinite, never short
// or negative; whoever turns a result into output checks is_finite() and names the input field
// to blame. Bytes overflow and Bandwidths that are negative or not finite are internal errors
// (std::overflow_error / std::domain_error): validated inputs cannot reach them.
#include <compare>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>

namespace lockstep {

/// A duration or a point in simulated time, in integer picoseconds. Example: Time::us(1.5).
/// Saturating: Time::ps(1) + Time::infinite() == Time::infinite(); Time::s(1e7) is infinite.
class Time {
 public:
  constexpr Time() = default;
  static constexpr Time ps(std::int64_t v) { return Time(v < -kInf ? -kInf : v); }
  /// From a count of picoseconds, to the nearest (halves away from zero); beyond the range it
  /// saturates; NaN throws std::domain_error.
  static constexpr Time from_ps(double v);
  static constexpr Time ns(double v) { return from_ps(v * 1e3); }
  static constexpr Time us(double v) { return from_ps(v * 1e6); }
  static constexpr Time ms(double v) { return from_ps(v * 1e9); }
  static constexpr Time s(double v) { return from_ps(v * 1e12); }
  static constexpr Time zero() { return Time(0); }
  /// Longer than any time lockstep represents: where results that overflow end up.
  static constexpr Time infinite() { return Time(kInf); }

  constexpr bool is_finite() const {
    // ps_ in [-(kInf - 1), kInf - 1], as one unsigned comparison (it is on hot paths).
    return static_cast<std::uint64_t>(ps_) + (kInf - 1) <= 2 * static_cast<std::uint64_t>(kInf - 1);
  }
  /// Picoseconds; +/-(2^63 - 1) for the infinities.
  constexpr std::int64_t picoseconds() const { return ps_; }
  // Conversions to double give +/-infinity for the infinities.
  constexpr double nanoseconds() const { return as_double() * 1e-3; }
  constexpr double microseconds() const { return as_double() * 1e-6; }
  constexpr double milliseconds() const { return as_double() * 1e-9; }
  constexpr double seconds() const { return as_double() * 1e-12; }

  constexpr Time operator+(Time o) const {
    std::int64_t r = 0;
    if (is_finite() && o.is_finite() && !__builtin_add_overflow(ps_, o.ps_, &r)) return ps(r);
    return add_slow(o);
  }
  constexpr Time operator-() const { return Time(-ps_); }
  constexpr Time operator-(Time o) const { return *this + -o; }
  constexpr Time& operator+=(Time o) { return *this = *this + o; }
  constexpr Time& operator-=(Time o) { return *this = *this - o; }
  /// k repetitions: infinite x 0 is zero (no repetition of it at all).
  constexpr Time operator*(std::int64_t k) const {
    std::int64_t r = 0;
    if (is_finite() && !__builtin_mul_overflow(ps_, k, &r)) return ps(r);
    if (k == 0) return zero();
    return (ps_ < 0) == (k < 0) ? infinite() : -infinite();
  }
  /// Truncates toward zero; the infinities stay infinite; k == 0 throws std::domain_error.
  constexpr Time operator/(std::int64_t k) const {
    if (k == 0) throw std::domain_error("Time divided by zero");
    if (!is_finite()) return (ps_ < 0) == (k < 0) ? infinite() : -infinite();
    return Time(ps_ / k);
  }
  /// This time stretched by `factor` (>= 0), to the nearest picosecond, saturating.
  constexpr Time scaled(double factor) const;
  constexpr auto operator<=>(const Time&) const = default;

 private:
  static constexpr std::int64_t kInf = std::numeric_limits<std::int64_t>::max();
  constexpr explicit Time(std::int64_t v) : ps_(v) {}
  constexpr double as_double() const {
    if (!is_finite()) return ps_ > 0 ? kDoubleInf : -kDoubleInf;
    return static_cast<double>(ps_);
  }
  // An infinity plus anything but the opposite infinity, or a sum past the range.
  constexpr Time add_slow(Time o) const {
    if (!is_finite() && !o.is_finite() && ps_ != o.ps_)
      throw std::domain_error("Time: infinite minus infinite");
    if (!is_finite()) return *this;
    if (!o.is_finite()) return o;
    return ps_ > 0 ? infinite() : -infinite();  // both the same sign: they overflowed
  }
  static constexpr double kDoubleInf = std::numeric_limits<double>::infinity();
  std::int64_t ps_ = 0;
};

constexpr Time Time::from_ps(double v) {
  if (v > -0x1p52 && v < 0x1p52) {              // the usual case (up to 75 minutes); false for NaN
    auto whole = static_cast<std::int64_t>(v);  // exact below 2^52, as is the fraction
    const double fraction = v - static_cast<double>(whole);
    if (fraction >= 0.5) ++whole;
    if (fraction <= -0.5) --whole;
    return Time(whole);
  }
  if (v != v) throw std::domain_error("Time from NaN picoseconds");
  // 2^63 is the first double past the finite range (its last finite double is 2^63 - 1024).
  if (v >= 0x1p63) return infinite();
  if (v <= -0x1p63) return -infinite();
  return Time(static_cast<std::int64_t>(v));  // a whole number from 2^52 on
}

constexpr Time Time::scaled(double factor) const {
  if (!(factor >= 0)) throw std::domain_error("Time scaled by a negative or NaN factor");
  if (!is_finite()) return factor == 0 ? zero() : *this;
  return from_ps(static_cast<double>(ps_) * factor);
}

/// A size in bytes. Example: Bytes::gib(1) == Bytes(1073741824). Overflow and subtraction past
/// zero throw std::overflow_error / std::underflow_error.
class Bytes {
 public:
  constexpr Bytes() = default;
  constexpr explicit Bytes(std::uint64_t v) : v_(v) {}
  static constexpr Bytes kib(std::uint64_t v) { return Bytes(v) * 1024; }
  static constexpr Bytes mib(std::uint64_t v) { return Bytes(v) * (1024 * 1024); }
  static constexpr Bytes gib(std::uint64_t v) { return Bytes(v) * (1024 * 1024 * 1024); }
  constexpr std::uint64_t count() const { return v_; }
  constexpr double as_double() const { return static_cast<double>(v_); }
  constexpr Bytes operator+(Bytes o) const {
    std::uint64_t r = 0;
    if (__builtin_add_overflow(v_, o.v_, &r)) throw std::overflow_error("Bytes overflow");
    return Bytes(r);
  }
  constexpr Bytes operator-(Bytes o) const {
    if (o.v_ > v_) throw std::underflow_error("Bytes below zero");
    return Bytes(v_ - o.v_);
  }
  constexpr Bytes& operator+=(Bytes o) { return *this = *this + o; }
  constexpr Bytes operator*(std::uint64_t k) const {
    std::uint64_t r = 0;
    if (__builtin_mul_overflow(v_, k, &r)) throw std::overflow_error("Bytes overflow");
    return Bytes(r);
  }
  constexpr Bytes operator/(std::uint64_t k) const {
    if (k == 0) throw std::domain_error("Bytes divided by zero");
    return Bytes(v_ / k);
  }
  constexpr auto operator<=>(const Bytes&) const = default;

 private:
  std::uint64_t v_ = 0;
};

/// A data rate in bytes per second (one direction). Example: Bandwidth::gbps(400) is 50 GB/s.
/// Always finite and >= 0 (zero: no rate); anything else throws std::domain_error.
class Bandwidth {
 public:
  constexpr Bandwidth() = default;
  static constexpr Bandwidth bytes_per_second(double v) { return Bandwidth(v); }
  static constexpr Bandwidth gbps(double gigabits) { return Bandwidth(gigabits * 1e9 / 8); }
  static constexpr Bandwidth gBps(double gigabytes) { return Bandwidth(gigabytes * 1e9); }
  constexpr double bytes_per_second() const { return v_; }
  constexpr double gigabits_per_second() const { return v_ * 8 / 1e9; }
  constexpr double gigabytes_per_second() const { return v_ / 1e9; }
  constexpr Bandwidth operator*(double k) const { return Bandwidth(v_ * k); }
  constexpr Bandwidth operator/(double k) const { return Bandwidth(v_ / k); }
  constexpr Bandwidth operator+(Bandwidth o) const { return Bandwidth(v_ + o.v_); }
  constexpr auto operator<=>(const Bandwidth&) const = default;

 private:
  constexpr explicit Bandwidth(double v) : v_(v) {
    if (!(v >= 0 && v <= std::numeric_limits<double>::max()))
      throw std::domain_error("Bandwidth must be finite and >= 0");
  }
  double v_ = 0;
};

/// Time's range as messages state it.
inline constexpr std::string_view kTimeRange = "106.75 days, 2^63 ps";

/// The most memory lockstep accepts for one GPU (a training job's `hbm`; the catalog's largest
/// is 192 GB): 1 TiB. No message is larger, since it sits in one GPU's memory.
inline constexpr Bytes kMaxGpuMemory = Bytes(std::uint64_t{1} << 40);
/// The slowest rate lockstep accepts (ArgNode::as_bandwidth): kMaxGpuMemory crosses it in half
/// of Time's range (2^62 ps, 53 days), the other half being left for latencies and the rest of
/// the work: 2^40 B / 2^62 ps = 2^-22 B/ps = 238,418.6 B/s, 1.907 Mb/s.
inline constexpr Bandwidth kMinBandwidth = Bandwidth::bytes_per_second(1e12 / 0x1p22);

/// Time to push `bytes` through `bw`, rounded up to the next picosecond (never zero for data);
/// infinite when it would leave Time's range or `bw` is zero.
Time transfer_time(Bytes bytes, Bandwidth bw);

// Parsing: throws InputError naming `field` on anything that is not a well-formed quantity.
Time parse_time(std::string_view text, std::string_view field = "time");
Bytes parse_bytes(std::string_view text, std::string_view field = "size");
Bandwidth parse_bandwidth(std::string_view text, std::string_view field = "bandwidth");

// Printing with the largest unit that keeps the number >= 1: "1.5 us", "8 GiB", "400 Gb/s";
// "infinite" for Time::infinite().
std::string to_string(Time t);
std::string to_string(Bytes b);
std::string to_string(Bandwidth bw);

}  // namespace lockstep
