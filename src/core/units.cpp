#include "lockstep/core/units.hpp"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

#include "lockstep/core/error.hpp"

namespace lockstep {
namespace {

struct Quantity {
  double value = 0;
  std::string_view unit;
};

// Splits "1.5 us" into 1.5 and "us". Rejects empty, non-finite and negative numbers.
Quantity split_quantity(std::string_view text, std::string_view field, std::string_view kind) {
  auto trimmed = text;
  while (!trimmed.empty() && std::isspace(static_cast<unsigned char>(trimmed.front())))
    trimmed.remove_prefix(1);
  while (!trimmed.empty() && std::isspace(static_cast<unsigned char>(trimmed.back())))
    trimmed.remove_suffix(1);
  Quantity q;
  const char* begin = trimmed.data();
  const char* end = begin + trimmed.size();
  auto [ptr, ec] = std::from_chars(begin, end, q.value);
  if (ec != std::errc() || ptr == begin) {
    throw InputError(
        std::string(field),
        fmt::format("'{}' is not a {} (expected a number and a unit, e.g. {})", text, kind,
                    kind == "time"   ? "1.5us"
                    : kind == "size" ? "64KiB"
                                     : "400Gbps"));
  }
  if (!std::isfinite(q.value)) {
    throw InputError(std::string(field), fmt::format("'{}' is not a finite {}", text, kind));
  }
  if (q.value < 0) {
    throw InputError(std::string(field), fmt::format("'{}' is negative", text));
  }
  std::string_view unit(ptr, static_cast<std::size_t>(end - ptr));
  while (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);
  q.unit = unit;
  return q;
}

struct UnitScale {
  std::string_view name;
  double scale;
};

[[noreturn]] void unknown_unit(std::string_view text, std::string_view field, std::string_view unit,
                               std::string_view allowed) {
  throw InputError(std::string(field),
                   fmt::format("unknown unit '{}' in '{}' (use one of {})", unit, text, allowed));
}

template <std::size_t N>
const UnitScale* find_unit(const std::array<UnitScale, N>& table, std::string_view unit) {
  for (const auto& u : table)
    if (u.name == unit) return &u;
  return nullptr;
}

constexpr double kKi = 1024.0, kMi = kKi * 1024, kGi = kMi * 1024, kTi = kGi * 1024,
                 kPi = kTi * 1024;

}  // namespace

Time transfer_time(Bytes bytes, Bandwidth bw) {
  if (bytes.count() == 0) return Time::zero();
  if (bw.bytes_per_second() == 0) return Time::infinite();
  // Past 2^63 ps the quotient saturates in from_ps; it stays finite as a double (at most
  // 2^64 B / 5e-324 B/s would overflow to +inf, which saturates the same way).
  return Time::from_ps(std::ceil(bytes.as_double() / bw.bytes_per_second() * 1e12));
}

Time parse_time(std::string_view text, std::string_view field) {
  static constexpr std::array<UnitScale, 7> units{{{"ps", 1},
                                                   {"ns", 1e3},
                                                   {"us", 1e6},
                                                   {"\xC2\xB5s", 1e6},
                                                   {"ms", 1e9},
                                                   {"s", 1e12},
                                                   {"min", 60e12}}};
  auto q = split_quantity(text, field, "time");
  const auto* u = find_unit(units, q.unit);
  if (u == nullptr) unknown_unit(text, field, q.unit, "ps, ns, us, ms, s, min");
  const Time t = Time::from_ps(q.value * u->scale);
  if (!t.is_finite()) {
    throw InputError(
        std::string(field),
        fmt::format("'{}' is longer than lockstep's time range ({})", text, kTimeRange));
  }
  return t;
}

Bytes parse_bytes(std::string_view text, std::string_view field) {
  // K/M/G/T without B follow nccl-tests (-b 8 -e 8G): binary multiples.
  static constexpr std::array<UnitScale, 17> units{{{"", 1},
                                                    {"B", 1},
                                                    {"KB", 1e3},
                                                    {"MB", 1e6},
                                                    {"GB", 1e9},
                                                    {"TB", 1e12},
                                                    {"PB", 1e15},
                                                    {"KiB", kKi},
                                                    {"MiB", kMi},
                                                    {"GiB", kGi},
                                                    {"TiB", kTi},
                                                    {"PiB", kPi},
                                                    {"K", kKi},
                                                    {"M", kMi},
                                                    {"G", kGi},
                                                    {"T", kTi},
                                                    {"kB", 1e3}}};
  auto q = split_quantity(text, field, "size");
  const auto* u = find_unit(units, q.unit);
  if (u == nullptr) unknown_unit(text, field, q.unit, "B, KB, MB, GB, TB, KiB, MiB, GiB, TiB");
  const double bytes = q.value * u->scale;
  if (bytes >= 9.2e18) throw InputError(std::string(field), fmt::format("'{}' is too large", text));
  if (bytes != std::floor(bytes)) {
    throw InputError(std::string(field), fmt::format("'{}' is not a whole number of bytes", text));
  }
  return Bytes(static_cast<std::uint64_t>(bytes));
}

Bandwidth parse_bandwidth(std::string_view text, std::string_view field) {
  static constexpr std::array<UnitScale, 20> units{
      {{"bps", 1.0 / 8},   {"Kbps", 1e3 / 8},  {"Mbps", 1e6 / 8}, {"Gbps", 1e9 / 8},
       {"Tbps", 1e12 / 8}, {"b/s", 1.0 / 8},   {"Kb/s", 1e3 / 8}, {"Mb/s", 1e6 / 8},
       {"Gb/s", 1e9 / 8},  {"Tb/s", 1e12 / 8}, {"B/s", 1},        {"KB/s", 1e3},
       {"MB/s", 1e6},      {"GB/s", 1e9},      {"TB/s", 1e12},    {"KiB/s", kKi},
       {"MiB/s", kMi},     {"GiB/s", kGi},     {"TiB/s", kTi},    {"GBps", 1e9}}};
  auto q = split_quantity(text, field, "bandwidth");
  const auto* u = find_unit(units, q.unit);
  if (u == nullptr) unknown_unit(text, field, q.unit, "Gbps, Tbps, GB/s, GiB/s, MB/s");
  if (q.value == 0) throw InputError(std::string(field), fmt::format("'{}' is zero", text));
  const double v = q.value * u->scale;
  if (v > 1e16) throw InputError(std::string(field), fmt::format("'{}' is absurdly large", text));
  return Bandwidth::bytes_per_second(v);
}

namespace {
std::string trim_number(double v) {
  auto s = fmt::format("{:.3f}", v);
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}
}  // namespace

std::string to_string(Time t) {
  if (!t.is_finite()) return t > Time::zero() ? "infinite" : "-infinite";
  const double ps = static_cast<double>(t.picoseconds());
  const double mag = std::fabs(ps);
  if (mag >= 1e12) return trim_number(ps / 1e12) + " s";
  if (mag >= 1e9) return trim_number(ps / 1e9) + " ms";
  if (mag >= 1e6) return trim_number(ps / 1e6) + " us";
  if (mag >= 1e3) return trim_number(ps / 1e3) + " ns";
  return trim_number(ps) + " ps";
}

std::string to_string(Bytes b) {
  const double v = b.as_double();
  if (v >= kPi * 1024) return trim_number(v / (kPi * 1024)) + " EiB";
  if (v >= kPi) return trim_number(v / kPi) + " PiB";
  if (v >= kTi) return trim_number(v / kTi) + " TiB";
  if (v >= kGi) return trim_number(v / kGi) + " GiB";
  if (v >= kMi) return trim_number(v / kMi) + " MiB";
  if (v >= kKi) return trim_number(v / kKi) + " KiB";
  return fmt::format("{} B", b.count());
}

std::string to_string(Bandwidth bw) {
  const double bits = bw.bytes_per_second() * 8;
  if (bits >= 1e12) return trim_number(bits / 1e12) + " Tb/s";
  if (bits >= 1e9) return trim_number(bits / 1e9) + " Gb/s";
  if (bits >= 1e6) return trim_number(bits / 1e6) + " Mb/s";
  return trim_number(bits) + " b/s";
}

}  // namespace lockstep
