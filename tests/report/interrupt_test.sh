#!/usr/bin/env bash
# An interrupted run leaves no partial report: start `lockstep run`, send SIGINT while it is
# computing, and check that it exits with 130, that the output directory holds no new or
# temporary file, and that a report from an earlier run is left exactly as it was.
# Usage: interrupt_test.sh LOCKSTEP SCENARIO OUTDIR [DELAY_SECONDS]
set -uo pipefail
lockstep=$1 scenario=$2 out=$3 delay=${4:-1}
rm -rf "$out"
mkdir -p "$out"
echo "report of an earlier run" >"$out/report.html"
before=$(sha256sum "$out/report.html")

"$lockstep" run "$scenario" --out "$out" --quiet >/dev/null 2>"$out.stderr" &
pid=$!
sleep "$delay"
if ! kill -0 "$pid" 2>/dev/null; then
  wait "$pid"
  echo "FAIL: the run ended (exit $?) before SIGINT after ${delay}s; use a longer scenario" >&2
  exit 1
fi
kill -INT "$pid"
wait "$pid"
rc=$?
fail=0
if [[ $rc -ne 130 ]]; then
  echo "FAIL: exit code $rc after SIGINT, expected 130" >&2
  fail=1
fi
if ! grep -q "interrupted" "$out.stderr"; then
  echo "FAIL: no 'interrupted' message on stderr" >&2
  fail=1
fi
listing=$(ls -A "$out")
if [[ "$listing" != "report.html" ]]; then
  echo "FAIL: output directory holds more than the earlier report: $listing" >&2
  fail=1
fi
if [[ "$(sha256sum "$out/report.html")" != "$before" ]]; then
  echo "FAIL: the earlier report was modified" >&2
  fail=1
fi
rm -f "$out.stderr"
if [[ $fail -ne 0 ]]; then exit 1; fi
echo "interrupt_test: SIGINT after ${delay}s: exit 130, no partial files, earlier report intact"
