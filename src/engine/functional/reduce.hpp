#pragma once
// Element-wise dst += src for every DataType the functional executor supports. Integer sums wrap
// modulo 2^bits (computed in the unsigned type, so signed overflow is well defined); bfloat16 is
// widened to float, added and rounded to nearest-even.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "lockstep/collective/program.hpp"

namespace lockstep::functional_detail {

inline float bf16_to_float(std::uint16_t v) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(v) << 16);
}
inline std::uint16_t float_to_bf16(float f) {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((u >> 16) | 0x40);  // NaN
  const std::uint32_t rounding = 0x7fffu + ((u >> 16) & 1u);
  return static_cast<std::uint16_t>((u + rounding) >> 16);
}

template <typename Storage, typename Add>
void reduce_loop(std::byte* dst, const std::byte* src, std::uint64_t bytes, Add add) {
  const std::uint64_t n = bytes / sizeof(Storage);
  for (std::uint64_t i = 0; i < n; ++i) {
    Storage a, b;
    std::memcpy(&a, dst + i * sizeof(Storage), sizeof(Storage));
    std::memcpy(&b, src + i * sizeof(Storage), sizeof(Storage));
    const Storage c = add(a, b);
    std::memcpy(dst + i * sizeof(Storage), &c, sizeof(Storage));
  }
}

inline void reduce_into(std::byte* dst, const std::byte* src, std::uint64_t bytes, DataType t) {
  const auto wrap = [](auto a, auto b) { return static_cast<decltype(a)>(a + b); };
  switch (t) {
    case DataType::Int8:
    case DataType::Uint8: {
      // Eight byte lanes per 64-bit word (SWAR): add the low 7 bits of each lane, then put back
      // the top bit without carrying into the next lane. Exact modulo 256 per lane.
      constexpr std::uint64_t kLow = 0x7f7f7f7f7f7f7f7full, kHigh = ~kLow;
      std::uint64_t i = 0;
      for (; i + 8 <= bytes; i += 8) {
        std::uint64_t a, b;
        std::memcpy(&a, dst + i, 8);
        std::memcpy(&b, src + i, 8);
        const std::uint64_t c = ((a & kLow) + (b & kLow)) ^ ((a ^ b) & kHigh);
        std::memcpy(dst + i, &c, 8);
      }
      for (; i < bytes; ++i)
        dst[i] =
            static_cast<std::byte>(static_cast<unsigned>(dst[i]) + static_cast<unsigned>(src[i]));
      return;
    }
    case DataType::Int32:
    case DataType::Uint32:
      return reduce_loop<std::uint32_t>(dst, src, bytes, wrap);
    case DataType::Int64:
      return reduce_loop<std::uint64_t>(dst, src, bytes, wrap);
    case DataType::Float32:
      return reduce_loop<float>(dst, src, bytes, [](float a, float b) { return a + b; });
    case DataType::Float64:
      return reduce_loop<double>(dst, src, bytes, [](double a, double b) { return a + b; });
    case DataType::Bf16:
      return reduce_loop<std::uint16_t>(dst, src, bytes, [](std::uint16_t a, std::uint16_t b) {
        return float_to_bf16(bf16_to_float(a) + bf16_to_float(b));
      });
  }
}

}  // namespace lockstep::functional_detail
