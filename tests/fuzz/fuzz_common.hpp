#pragma once
// What every fuzz target accepts: an InputError (the one-line, exit-2 answer to bad input) is the
// right outcome for malformed text; any other exception, a crash, a hang (libFuzzer -timeout) or
// unbounded memory (-rss_limit_mb) is a finding. The message is also checked to be one line, as
// the CLI promises.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "lockstep/core/error.hpp"

namespace lockstep::fuzz {

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

template <class Fn>
void expect_input_error_or_success(Fn&& fn) {
  try {
    fn();
  } catch (const InputError& e) {
    const std::string_view message = e.what();
    if (message.find('\n') != std::string_view::npos || message.empty()) {
      std::fprintf(stderr, "fuzz: an InputError that is not one line: %s\n", e.what());
      std::abort();
    }
  }
}

}  // namespace lockstep::fuzz
