#!/bin/sh
# Usage: emit_roundtrip.sh LOCKSTEP WORKDIR BUILDER-ARGS...
# Builds a design with --emit, reads the emitted graph back with the from_file builder, and
# passes when the bill of materials (every figure but the design line) is identical.
lockstep=$1
dir=$2
shift 2
mkdir -p "$dir"
"$lockstep" topo "$@" --format csv --emit "$dir/graph.json" | grep -v '^design,' >"$dir/original.csv" || exit 1
"$lockstep" topo --builder from_file --path "$dir/graph.json" --format csv | grep -v '^design,' >"$dir/reread.csv" || exit 1
if ! cmp -s "$dir/original.csv" "$dir/reread.csv"; then
  echo "the re-read graph differs:"
  diff "$dir/original.csv" "$dir/reread.csv" | head -30
  exit 1
fi
echo ok
