#!/bin/sh
# Usage: progress_within_run.sh LOCKSTEP PATTERN ARGS...
# Passes when LOCKSTEP ARGS, run on a pseudo-terminal (util-linux `script`), draws a bar frame
# matching the grep PATTERN (a share of one simulation, reported from inside it), and the same
# command piped writes nothing on stderr and byte for byte the terminal run's stdout.
lockstep=$1
pattern=$2
shift 2
dir=$(mktemp -d)
script -qec "$lockstep $* >$dir/tty.out" /dev/null >"$dir/bar" 2>&1
code=$?
if [ "$code" -ne 0 ] || ! tr '\r' '\n' <"$dir/bar" | grep -q -- "$pattern"; then
  echo "expected a bar frame matching '$pattern' on a terminal (exit $code):"
  tr '\r' '\n' <"$dir/bar" | tail -8
  rm -rf "$dir"
  exit 1
fi
"$lockstep" "$@" >"$dir/pipe.out" 2>"$dir/pipe.err"
if [ -s "$dir/pipe.err" ] || ! cmp -s "$dir/tty.out" "$dir/pipe.out"; then
  echo "piped: stderr not empty or stdout differs from the terminal run's"
  head -3 "$dir/pipe.err"
  rm -rf "$dir"
  exit 1
fi
rm -rf "$dir"
echo ok
