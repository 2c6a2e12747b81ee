#!/bin/sh
# Usage: progress_on_terminal.sh LOCKSTEP ARGS...
# Passes when LOCKSTEP ARGS, run on a pseudo-terminal (util-linux `script`), draws a progress bar
# that reaches 100% with an ETA, and draws none with --quiet. (Piped runs stay silent on stderr:
# expect_success.sh checks that for every other CLI test.)
lockstep=$1
shift
out=$(mktemp)
script -qec "$lockstep $* >/dev/null" /dev/null >"$out" 2>&1
code=$?
if [ "$code" -ne 0 ] || ! grep -q 'ETA' "$out" || ! grep -q '100%' "$out"; then
  echo "expected a progress bar reaching 100% on a terminal (exit $code):"
  tr '\r' '\n' <"$out" | tail -5
  rm -f "$out"
  exit 1
fi
script -qec "$lockstep $* --quiet >/dev/null" /dev/null >"$out" 2>&1
if grep -q 'ETA' "$out"; then
  echo "--quiet still drew a progress bar"
  rm -f "$out"
  exit 1
fi
rm -f "$out"
echo ok
