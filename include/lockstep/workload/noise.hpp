#pragma once
// Noise models for training iterations: per-rank compute jitter, stragglers, per-link latency
// jitter and named faults. Texts are what users type on the command line or in a scenario:
//   normal:5%                  compute time x (1 + 0.05 N(0,1)), per compute kernel
//   lognormal:0.1              compute time x exp(0.1 N(0,1) - 0.1^2/2) (mean 1), per kernel
//   straggler:p=0.01,x=1.5     each rank, each iteration, with probability p runs x times slower
// Faults (slow-gpu, degraded-link, failed-link) are topology/faults.hpp's.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/core/rng.hpp"
#include "lockstep/topology/faults.hpp"

namespace lockstep {

struct JitterSpec {
  enum class Kind : std::uint8_t { Normal, LogNormal, Straggler };
  Kind kind = Kind::Normal;
  double sigma = 0;        // Normal: relative standard deviation; LogNormal: sigma of ln
  double probability = 0;  // Straggler
  double slowdown = 1;     // Straggler: factor >= 1
  std::string text;        // as given, for reports
};

/// Parses one jitter text; InputError naming `field` on anything malformed.
JitterSpec parse_jitter(std::string_view text, std::string_view field);

/// Per-iteration draw of every rank's compute noise.
class ComputeNoise {
 public:
  ComputeNoise(std::vector<JitterSpec> jitter, std::vector<FaultSpec> faults)
      : jitter_(std::move(jitter)), faults_(std::move(faults)) {}
  bool empty() const;
  /// Per-rank factors fixed for one iteration (stragglers and slow GPUs), drawn from `rng`.
  std::vector<double> draw_rank_factors(std::uint32_t ranks, Rng& rng) const;
  /// Per-kernel factor (normal / log-normal jitter), drawn from `rng`; never below 0.05.
  double draw_kernel_factor(Rng& rng) const;
  bool has_kernel_jitter() const;

 private:
  std::vector<JitterSpec> jitter_;
  std::vector<FaultSpec> faults_;
};

}  // namespace lockstep
