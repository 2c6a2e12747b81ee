#!/usr/bin/env bash
# The whole test suite, as CI runs it (.ci/run): formatting check, then two builds with warnings
# as errors, one per compiler:
#   - Release with GCC 12 (the compiler scripts/run.sh builds with on Debian 12, the one the
#     golden outputs and benchmark figures come from): every test (unit, CLI, report).
#   - ASan + UBSan with clang 14: the unit tests again under AddressSanitizer and
#     UndefinedBehaviorSanitizer (clang's UBSan also checks calls through mismatched function
#     pointer types, and its sanitized build is quicker than GCC's).
# Exits non-zero if anything fails.
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
