#!/bin/sh
# Usage: nccl_tests_roundtrip.sh LOCKSTEP OP CLUSTER_FLAGS...
# `lockstep collective OP -b 8 -e 128M -f 2 --format nccl-tests` printed, then read back by
# `lockstep calibrate --from` on the same cluster: every size must be there with no error.
lockstep=$1
op=$2
shift 2
log=$(mktemp)
csv=$(mktemp)
trap 'rm -f "$log" "$csv"' EXIT
"$lockstep" collective "$op" -b 8 -e 128M -f 2 --format nccl-tests -q "$@" >"$log" || exit 1
printed=$(grep -c '^ *[0-9]' "$log")
"$lockstep" calibrate --from "$log" --format csv "$@" >"$csv" || exit 1
read_back=$(($(wc -l <"$csv") - 1))
if [ "$printed" -lt 10 ] || [ "$read_back" -ne "$printed" ]; then
  echo "printed $printed rows, read back $read_back"
  exit 1
fi
# error_pct is the 9th column; every row must read 0.000 (or -0.000).
if awk -F, 'NR > 1 && $9 != "0.000" && $9 != "-0.000" { bad = 1; print } END { exit bad }' "$csv"
then
  echo "ok: $printed rows, no error"
else
  echo "rows with an error above"
  exit 1
fi
