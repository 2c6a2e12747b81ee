#!/bin/sh
# Usage: expect_lines.sh LOCKSTEP REGEX COUNT ARGS...
# Passes when LOCKSTEP ARGS exits 0 and exactly COUNT lines of its stdout match REGEX (an
# extended regular expression, one line).
lockstep=$1
regex=$2
count=$3
shift 3
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$lockstep" "$@" >"$out" || { echo "exit code $?"; exit 1; }
found=$(grep -Ec -- "$regex" "$out")
if [ "$found" -ne "$count" ]; then
  echo "expected $count lines matching '$regex', found $found:"
  head -40 "$out"
  exit 1
fi
echo "ok: $found lines"
