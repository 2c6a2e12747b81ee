#!/usr/bin/env bash
# The whole test suite, as CI runs it (.ci/run): formatting check, then two builds with warnings
# as errors (LOCKSTEP_WERROR), one per compiler:
#   - Release with GCC 12, every test (unit, CLI, report). GCC builds what users run
#     (scripts/run.sh; Debian 12's c++), the outputs the golden files and the README's figures
#     come from; and GCC's flow-based warnings (-Wmaybe-uninitialized, -Warray-bounds, ...) are
#     made for optimised code: its manual says sanitizers raise their false positives and
#     advises against -Werror with them.
#   - ASan + UBSan with clang 14, the unit tests again, and the libFuzzer targets (tests/fuzz:
#     every past finding replayed, 10 s of mutation each; docs/fuzzing.md). clang's warnings come from its front end,
#     so instrumentation does not change them; its UBSan also checks calls through a function
#     pointer of the wrong type (-fsanitize=function); and its sanitized build took 8.7 CPU
#     minutes where GCC 12's took 15.6.
# 7.5 minutes on 2 cores from a clean clone without ccache (12 beside other builds). Exits
# non-zero if anything fails.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
"$root/scripts/install-deps.sh" --test
"$root/scripts/check-format.sh"
export LOCKSTEP_WERROR=ON

CXX=g++-12 "$root/scripts/build.sh" release
(cd build/release && ctest --output-on-failure -j "$(nproc)" --timeout 600)

CXX=clang++-14 "$root/scripts/build.sh" asan
# allow_addr2line: symbolised stacks without installing llvm-symbolizer (binutils has addr2line).
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allow_addr2line=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:allow_addr2line=1
(cd build/asan && ctest --output-on-failure -j "$(nproc)" --timeout 900 -L unit)
