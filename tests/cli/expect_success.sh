#!/bin/sh
# Usage: expect_success.sh LOCKSTEP REGEX ARGS...
# Passes when LOCKSTEP ARGS exits 0 with nothing on stderr and its stdout matches REGEX
# (an extended regular expression; "." accepts any output).
lockstep=$1
regex=$2
shift 2
out=$(mktemp)
err=$(mktemp)
"$lockstep" "$@" >"$out" 2>"$err"
code=$?
if [ "$code" -ne 0 ] || [ -s "$err" ]; then
  echo "expected exit code 0 and no stderr, got $code:"
  cat "$err"
  rm -f "$out" "$err"
  exit 1
fi
if ! grep -Eq -- "$regex" "$out"; then
  echo "stdout does not match '$regex':"
  head -50 "$out"
  rm -f "$out" "$err"
  exit 1
fi
rm -f "$out" "$err"
echo ok
