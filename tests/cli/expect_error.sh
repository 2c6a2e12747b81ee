#!/bin/sh
# Usage: expect_error.sh LOCKSTEP REGEX ARGS...
# Runs LOCKSTEP ARGS and passes when it exits with code 2 (bad input), prints exactly one line on
# stderr, and that line matches the extended regular expression REGEX.
lockstep=$1
regex=$2
shift 2
err=$(mktemp)
"$lockstep" "$@" >/dev/null 2>"$err"
code=$?
lines=$(wc -l <"$err")
message=$(cat "$err")
rm -f "$err"
if [ "$code" -ne 2 ]; then
  echo "expected exit code 2, got $code; stderr: $message"
  exit 1
fi
if [ "$lines" -ne 1 ]; then
  echo "expected exactly one line on stderr, got $lines: $message"
  exit 1
fi
if ! printf '%s\n' "$message" | grep -Eq -- "$regex"; then
  echo "stderr does not match '$regex': $message"
  exit 1
fi
echo "ok: $message"
