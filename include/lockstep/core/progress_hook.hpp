#pragma once
// How far one long computation has got, for a progress bar drawn by a layer above (the report's
// Progress). An engine polls its own counters (ops run of the program's ops) only every
// kProgressPoll steps of its event loop and only when a hook is set: without one (stderr not a
// terminal, --quiet) the cost is one null test per loop turn and nothing else.
#include <algorithm>
#include <cstdint>

namespace lockstep {

/// Steps of an engine's event loop between two reports (a power of two).
inline constexpr std::uint64_t kProgressPoll = 4096;

class ProgressHook {
 public:
  virtual ~ProgressHook() = default;
  /// `done` of `total` units of the work that runs now (0 <= done <= total); called often, the
  /// implementation throttles its drawing.
  virtual void fraction(double done) = 0;
};

/// Reports a sub-range [lo, hi] of another hook's work: the k-th of n runs that make one step.
class ScaledProgress final : public ProgressHook {
 public:
  ScaledProgress(ProgressHook* outer, double lo, double hi) : outer_(outer), lo_(lo), hi_(hi) {}
  void fraction(double done) override {
    if (outer_) outer_->fraction(lo_ + (hi_ - lo_) * std::clamp(done, 0.0, 1.0));
  }

 private:
  ProgressHook* outer_;
  double lo_, hi_;
};

}  // namespace lockstep
