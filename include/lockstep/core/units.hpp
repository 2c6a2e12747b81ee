#pragma once
// Units are types: Time (integer picoseconds), Bytes (integer bytes) and Bandwidth (bytes per
// second, as a double because link rates like 400 Gb/s = 5e10 B/s are exact in binary floating
// point while per-picosecond rates are not). Parsing accepts what people write: "400Gbps",
// "50GB/s", "1.5us", "250ns", "8GiB", "64KB". SI prefixes are powers of 1000 and binary prefixes
// (Ki, Mi, Gi, ...) powers of 1024, exactly as written; "b" is bits and "B" is bytes.
#include <compare>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace lockstep {

/// A duration or a point in simulated time, in integer picoseconds. Example: Time::us(1.5).
class Time {
 public:
  constexpr Time() = default;
  static constexpr Time ps(std::int64_t v) { return Time(v); }
  static constexpr Time ns(double v) { return Time(round(v * 1e3)); }
  static constexpr Time us(double v) { return Time(round(v * 1e6)); }
  static constexpr Time ms(double v) { return Time(round(v * 1e9)); }
  static constexpr Time s(double v) { return Time(round(v * 1e12)); }
  static constexpr Time zero() { return Time(0); }
  static constexpr Time max() { return Time(std::numeric_limits<std::int64_t>::max()); }

  constexpr std::int64_t picoseconds() const { return ps_; }
  constexpr double nanoseconds() const { return static_cast<double>(ps_) * 1e-3; }
  constexpr double microseconds() const { return static_cast<double>(ps_) * 1e-6; }
  constexpr double milliseconds() const { return static_cast<double>(ps_) * 1e-9; }
  constexpr double seconds() const { return static_cast<double>(ps_) * 1e-12; }

  constexpr Time operator+(Time o) const { return Time(ps_ + o.ps_); }
  constexpr Time operator-(Time o) const { return Time(ps_ - o.ps_); }
  constexpr Time& operator+=(Time o) {
    ps_ += o.ps_;
    return *this;
  }
  constexpr Time& operator-=(Time o) {
    ps_ -= o.ps_;
    return *this;
  }
  constexpr Time operator*(std::int64_t k) const { return Time(ps_ * k); }
  constexpr Time operator/(std::int64_t k) const { return Time(ps_ / k); }
  constexpr auto operator<=>(const Time&) const = default;

 private:
  constexpr explicit Time(std::int64_t v) : ps_(v) {}
  static constexpr std::int64_t round(double v) {
    return static_cast<std::int64_t>(v < 0 ? v - 0.5 : v + 0.5);
  }
  std::int64_t ps_ = 0;
};

/// A size in bytes. Example: Bytes::gib(1) == Bytes(1073741824).
class Bytes {
 public:
  constexpr Bytes() = default;
  constexpr explicit Bytes(std::uint64_t v) : v_(v) {}
  static constexpr Bytes kib(std::uint64_t v) { return Bytes(v << 10); }
  static constexpr Bytes mib(std::uint64_t v) { return Bytes(v << 20); }
  static constexpr Bytes gib(std::uint64_t v) { return Bytes(v << 30); }
  constexpr std::uint64_t count() const { return v_; }
  constexpr double as_double() const { return static_cast<double>(v_); }
  constexpr Bytes operator+(Bytes o) const { return Bytes(v_ + o.v_); }
  constexpr Bytes operator-(Bytes o) const { return Bytes(v_ - o.v_); }
  constexpr Bytes& operator+=(Bytes o) {
    v_ += o.v_;
    return *this;
  }
  constexpr Bytes operator*(std::uint64_t k) const { return Bytes(v_ * k); }
  constexpr Bytes operator/(std::uint64_t k) const { return Bytes(v_ / k); }
  constexpr auto operator<=>(const Bytes&) const = default;

 private:
  std::uint64_t v_ = 0;
};

/// A data rate in bytes per second (one direction). Example: Bandwidth::gbps(400) is 50 GB/s.
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
  constexpr explicit Bandwidth(double v) : v_(v) {}
  double v_ = 0;
};

/// Time to push `bytes` through `bw`, rounded up to the next picosecond (never zero for data).
Time transfer_time(Bytes bytes, Bandwidth bw);

// Parsing: throws InputError naming `field` on anything that is not a well-formed quantity.
Time parse_time(std::string_view text, std::string_view field = "time");
Bytes parse_bytes(std::string_view text, std::string_view field = "size");
Bandwidth parse_bandwidth(std::string_view text, std::string_view field = "bandwidth");

// Printing with the largest unit that keeps the number >= 1: "1.5 us", "8 GiB", "400 Gb/s".
std::string to_string(Time t);
std::string to_string(Bytes b);
std::string to_string(Bandwidth bw);

}  // namespace lockstep
