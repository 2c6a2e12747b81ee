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
  total = std::max<std::uint64_t>(total, 1);
  done = std::min(done, total);
  const double fraction = static_cast<double>(done) / static_cast<double>(total);
  const int filled = static_cast<int>(std::floor(fraction * bar_width));
  std::string bar(static_cast<std::size_t>(filled), '#');
  bar.append(static_cast<std::size_t>(bar_width - filled), '-');
  std::string eta = "--:--";
  if (done > 0 && done < total) {
    const double remaining =
        elapsed_s / static_cast<double>(done) * static_cast<double>(total - done);
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
  draw();
}

void Progress::advance() {
  ++done_;
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
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::string line = render_progress(done_, total_, elapsed, label_);
  if (line.size() > 110) line.resize(110);  // one terminal line, no wrap
  std::fprintf(stderr, "\r\x1b[2K%s", line.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

}  // namespace lockstep::report
