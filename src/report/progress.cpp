// Progress bar on stderr. Redraws in place with a carriage return and "erase line", which every
// terminal lockstep targets understands; nothing is drawn when stderr is not a terminal.
#include "lockstep/report/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace lockstep::report {

std::string render_progress(std::uint64_t done, std::uint64_t total, double elapsed_s,
                            std::string_view label, int bar_width) {
  return render_progress_within(done, 0, total, elapsed_s, label, bar_width);
}

std::string render_progress_within(std::uint64_t done, double within, std::uint64_t total,
                                   double elapsed_s, std::string_view label, int bar_width) {
  total = std::max<std::uint64_t>(total, 1);
  done = std::min(done, total);
  if (done == total) within = 0;
  const double position = static_cast<double>(done) + std::clamp(within, 0.0, 1.0);
  const double fraction = position / static_cast<double>(total);
  const int filled = static_cast<int>(std::floor(fraction * bar_width));
  std::string bar(static_cast<std::size_t>(filled), '#');
  bar.append(static_cast<std::size_t>(bar_width - filled), '-');
  std::string eta = "--:--";
  if (position > 0 && done < total) {
    const double remaining = elapsed_s / position * (static_cast<double>(total) - position);
    const auto seconds = static_cast<long long>(std::ceil(remaining));
    eta = fmt::format("{}:{:02}", seconds / 60, seconds % 60);
  } else if (done == total) {
    eta = "0:00";
  }
  return fmt::format("[{}] {:3.0f}%  {}/{}  ETA {}  {}", bar, fraction * 100, done, total, eta,
                     label);
}

Progress::Progress(bool enabled, std::uint64_t total_steps)
    : enabled_(enabled), total_(total_steps), start_(std::chrono::steady_clock::now()) {}

Progress::~Progress() {
  finish();
}

bool Progress::stderr_is_terminal() {
  return ::isatty(STDERR_FILENO) == 1;
}

void Progress::begin(std::string_view label) {
  label_ = label;
  within_ = 0;
  draw();
}

void Progress::advance() {
  ++done_;
  within_ = 0;
  draw();
}

void Progress::fraction(double done) {
  if (!enabled_ || done <= within_) return;
  // The first report of a step shows at once (the run has got far enough to be polled), later
  // ones at most ten times a second.
  const bool first = within_ == 0;
  within_ = std::min(done, 1.0);
  if (first || std::chrono::steady_clock::now() - last_draw_ >= std::chrono::milliseconds(100))
    draw();
}

void Progress::finish() {
  if (enabled_ && drawn_) {
    std::fputs("\r\x1b[2K", stderr);
    std::fflush(stderr);
  }
  drawn_ = false;
}

void Progress::draw() {
  if (!enabled_) return;
  last_draw_ = std::chrono::steady_clock::now();
  const double elapsed = std::chrono::duration<double>(last_draw_ - start_).count();
  std::string line = render_progress_within(done_, within_, total_, elapsed, label_);
  if (line.size() > 110) line.resize(110);  // one terminal line, no wrap
  std::fprintf(stderr, "\r\x1b[2K%s", line.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

}  // namespace lockstep::report
