#pragma once
// A small, fast, seedable generator with a fixed algorithm (SplitMix64 seeding xoshiro256**), so
// that the same seed gives the same stream on every platform and standard library; std::
// distributions are not portable across libraries, so the draws we need are implemented here.
#include <array>
#include <cstdint>

namespace lockstep {

class Rng {
 public:
  explicit Rng(std::uint64_t seed);
  std::uint64_t next_u64();
  /// Uniform in [0, 1).
  double uniform();
  /// Uniform integer in [0, n), n > 0.
  std::uint64_t below(std::uint64_t n);
  /// Standard normal (Box-Muller, one value per call).
  double normal();
  /// A child generator whose stream is independent of this one's (for per-rank or per-trial use).
  Rng split(std::uint64_t stream) const;

 private:
  std::array<std::uint64_t, 4> s_{};
};

/// Deterministic 64-bit hash mixing (for ECMP-like hashing of flow identifiers).
std::uint64_t mix64(std::uint64_t x);

}  // namespace lockstep
