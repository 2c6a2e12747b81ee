#!/bin/sh
# Usage: same_output.sh LOCKSTEP ARGS...
# Determinism: runs LOCKSTEP ARGS twice and passes when both exit 0 with byte-identical stdout.
first=$(mktemp)
second=$(mktemp)
"$@" >"$first" && "$@" >"$second"
code=$?
if [ "$code" -ne 0 ]; then
  echo "command failed with exit code $code"
elif ! cmp -s "$first" "$second"; then
  echo "outputs differ:"
  diff "$first" "$second" | head -20
  code=1
fi
rm -f "$first" "$second"
exit $code
