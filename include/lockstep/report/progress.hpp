#pragma once
// A progress bar with an ETA on stderr, drawn only when stderr is a terminal (and not --quiet):
// piped or redirected runs stay silent so that logs and CI output hold diagnostics only.
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "lockstep/core/progress_hook.hpp"

namespace lockstep::report {

/// One frame of the bar, without the leading carriage return, e.g.
/// "[##########----------]  50%  3/6  ETA 0:12  fabric=tcp: training". `elapsed_s` is the time
/// spent on the `done` steps; the ETA assumes the remaining steps take as long on average.
std::string render_progress(std::uint64_t done, std::uint64_t total, double elapsed_s,
                            std::string_view label, int bar_width = 24);
/// The same with `within` (0..1) of step done + 1 under way: the bar, percentage and ETA count
/// done + within steps, the count shows `done` whole steps.
std::string render_progress_within(std::uint64_t done, double within, std::uint64_t total,
                                   double elapsed_s, std::string_view label, int bar_width = 24);

/// As a ProgressHook it hears how far the step under way has got (an engine's share of ops
/// done) and redraws at most ten times a second; the share only grows within a step.
class Progress final : public ProgressHook {
 public:
  /// Draws only if `enabled` (the caller passes: stderr is a terminal and not --quiet).
  Progress(bool enabled, std::uint64_t total_steps);
  ~Progress();
  static bool stderr_is_terminal();

  /// Shows what runs now (redraws without advancing).
  void begin(std::string_view label);
  /// Marks one step done.
  void advance();
  /// Clears the bar's line.
  void finish();
  /// The share of the step under way done (ProgressHook).
  void fraction(double done) override;
  /// This bar as a hook when it draws, else null (an engine then polls nothing).
  ProgressHook* hook() { return enabled_ ? this : nullptr; }

 private:
  void draw();
  bool enabled_;
  bool drawn_ = false;
  std::uint64_t total_;
  std::uint64_t done_ = 0;
  double within_ = 0;
  std::chrono::steady_clock::time_point last_draw_;
  std::string label_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace lockstep::report
