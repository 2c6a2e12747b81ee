#!/usr/bin/env bash
# A file lockstep did not write is never replaced without --force (issue 22): `run --out` into a
# directory holding the user's report.html and `train --trace` onto the user's file both exit 2
# before simulating and leave the file as it was; with --force both replace it; a second run
# into lockstep's own output needs no --force (the manifest lists its files); `topo --emit`
# likewise.
# Usage: no_clobber.sh LOCKSTEP SCENARIO WORKDIR
set -uo pipefail
lockstep=$1 scenario=$2 work=$3
rm -rf "$work"
mkdir -p "$work/out"
echo "the user's page" >"$work/out/report.html"
echo "the user's notes" >"$work/notes.json"
fail=0
check() {  # check WHAT EXPECTED_RC ACTUAL_RC
  if [[ $2 -ne $3 ]]; then
    echo "FAIL: $1: exit $3, expected $2" >&2
    fail=1
  fi
}
"$lockstep" run "$scenario" --out "$work/out" -q >/dev/null 2>"$work/err"
check "run into the user's report.html" 2 $?
grep -q "report.html' exists and lockstep did not write it" "$work/err" || { cat "$work/err"; fail=1; }
[[ "$(cat "$work/out/report.html")" == "the user's page" ]] || { echo "FAIL: report replaced" >&2; fail=1; }
train=(train --system hgx-h100 --fabric ib-ndr --nodes 2 --model llama3-8b --tp 8 --dp 2
  --global-batch 16)
"$lockstep" "${train[@]}" --trace "$work/notes.json" >/dev/null 2>"$work/err"
check "train --trace onto the user's file" 2 $?
grep -q "is not a trace lockstep wrote" "$work/err" || { cat "$work/err"; fail=1; }
[[ "$(cat "$work/notes.json")" == "the user's notes" ]] || { echo "FAIL: notes replaced" >&2; fail=1; }
"$lockstep" run "$scenario" --out "$work/out" -q --force >/dev/null 2>&1
check "run --force" 0 $?
"$lockstep" run "$scenario" --out "$work/out" -q >/dev/null 2>&1
check "a second run into lockstep's own output" 0 $?
"$lockstep" "${train[@]}" --trace "$work/notes.json" --force >/dev/null 2>&1
check "train --trace --force" 0 $?
"$lockstep" "${train[@]}" --trace "$work/notes.json" >/dev/null 2>&1
check "train --trace onto its own trace" 0 $?
"$lockstep" topo --builder fat_tree --k 4 --emit "$work/notes.json" >/dev/null 2>"$work/err"
check "topo --emit onto the user's file" 2 $?
grep -q "is not a graph lockstep wrote" "$work/err" || { cat "$work/err"; fail=1; }
"$lockstep" topo --builder fat_tree --k 4 --emit "$work/graph.json" >/dev/null 2>&1
check "topo --emit" 0 $?
"$lockstep" topo --builder fat_tree --k 4 --emit "$work/graph.json" >/dev/null 2>&1
check "topo --emit onto its own graph" 0 $?
rm -rf "$work"
if [[ $fail -ne 0 ]]; then exit 1; fi
echo "no_clobber: the user's files refused without --force, replaced with it"
