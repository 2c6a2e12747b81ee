#!/bin/sh
# Usage: same_stdout.sh LOCKSTEP "ARGS A" "ARGS B"
# Passes when `LOCKSTEP ARGS A` and `LOCKSTEP ARGS B` (each split on spaces) both exit 0 with
# byte-identical stdout: two spellings of one request.
lockstep=$1
first=$(mktemp)
second=$(mktemp)
trap 'rm -f "$first" "$second"' EXIT
# shellcheck disable=SC2086
"$lockstep" $2 >"$first" && "$lockstep" $3 >"$second" || { echo "a command failed"; exit 1; }
if ! cmp -s "$first" "$second"; then
  echo "outputs differ:"
  diff "$first" "$second" | head -20
  exit 1
fi
echo "ok: $(wc -l <"$first") identical lines"
