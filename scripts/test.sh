#!/usr/bin/env bash
# The whole test suite: formatting check, Release build + all tests, then the unit tests again
# under AddressSanitizer + UndefinedBehaviorSanitizer. Exits non-zero if anything fails.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
"$root/scripts/install-deps.sh" --test
"$root/scripts/check-format.sh"

"$root/scripts/build.sh" release
(cd build/release && ctest --output-on-failure -j "$(nproc)" --timeout 600)

"$root/scripts/build.sh" asan
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
(cd build/asan && ctest --output-on-failure -j "$(nproc)" --timeout 900 -L unit)
