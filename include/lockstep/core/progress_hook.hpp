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

/// One of `total` equal sub-steps under way, `done` finished before it: a share f of the current
/// one reports (done + f) / total to the outer hook (the rows of a sweep, a training step's
/// simulations, each one step of `run`'s bar).
class StepShare final : public ProgressHook {
 public:
  explicit StepShare(ProgressHook* outer) : outer_(outer) {}
  void at(std::uint64_t done, std::uint64_t total) {
    done_ = done;
    total_ = std::max<std::uint64_t>(total, 1);
    fraction(0);
  }
  void fraction(double done) override {
    if (outer_)
      outer_->fraction((static_cast<double>(done_) + std::clamp(done, 0.0, 1.0)) /
                       static_cast<double>(total_));
  }
  /// This share as a hook for an engine, null without an outer one (nothing polled).
  ProgressHook* hook() { return outer_ ? this : nullptr; }

 private:
  ProgressHook* outer_;
  std::uint64_t done_ = 0, total_ = 1;
};

}  // namespace lockstep
