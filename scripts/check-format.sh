#!/usr/bin/env bash
# Fails when any C++ file differs from what clang-format (.clang-format) would write.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
mapfile -t files < <(git ls-files --cached --others --exclude-standard -- '*.cpp' '*.hpp' | while read -r f; do [[ -f "$f" ]] && echo "$f"; done)
if ((${#files[@]} == 0)); then exit 0; fi
if ! clang-format --dry-run --Werror "${files[@]}" 2>/tmp/lockstep-format.$$; then
  echo "clang-format: these files need formatting (run: clang-format -i FILE):" >&2
  grep -o '^[^:]*\.[ch]pp' /tmp/lockstep-format.$$ | sort -u >&2
  rm -f /tmp/lockstep-format.$$
  exit 1
fi
rm -f /tmp/lockstep-format.$$
echo "clang-format: ${#files[@]} files clean"
