#!/usr/bin/env bash
# An interrupted run leaves no partial report: start `lockstep run`, send SIGINT while it is
# computing, and check that it exits with 130 saying that nothing was written, that the output
# directory holds no new or temporary file, and that a report from an earlier run is left
# exactly as it was. Also: temporaries of a killed run (its PID gone) are removed when the run
# starts, those of a live process are not, and a file of the user's is never touched.
# Usage: interrupt_test.sh LOCKSTEP SCENARIO OUTDIR [DELAY_SECONDS]
set -uo pipefail
lockstep=$1 scenario=$2 out=$3 delay=${4:-1}
rm -rf "$out"
mkdir -p "$out"
# What an earlier run leaves: its report and the manifest that lists it (report/output.hpp).
echo "report of an earlier run" >"$out/report.html"
printf '# lockstep output manifest: files lockstep wrote here\nreport.html\n' >"$out/.lockstep-manifest"
echo "the user's notes" >"$out/notes.txt"
before=$(sha256sum "$out/report.html" "$out/notes.txt")
# A PID that is surely gone: a finished child's. And one that is alive: this shell's.
dead=$(bash -c 'echo $$')
echo "half a report" >"$out/.report.html.tmp-$dead"
echo "another run's" >"$out/.results.json.tmp-$$"

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
if ! grep -q "interrupted; no output written" "$out.stderr"; then
  echo "FAIL: stderr does not say that no output was written: $(cat "$out.stderr")" >&2
  fail=1
fi
listing=$(ls -A "$out" | tr '\n' ' ')
expected=".lockstep-manifest .results.json.tmp-$$ notes.txt report.html "
if [[ "$listing" != "$expected" ]]; then
  echo "FAIL: output directory holds '$listing', expected '$expected' (the dead run's" \
    "temporary removed, the live one's kept)" >&2
  fail=1
fi
if [[ "$(sha256sum "$out/report.html" "$out/notes.txt")" != "$before" ]]; then
  echo "FAIL: the earlier report or the user's file was modified" >&2
  fail=1
fi
rm -f "$out.stderr"
if [[ $fail -ne 0 ]]; then exit 1; fi
echo "interrupt_test: SIGINT after ${delay}s: exit 130, no partial files, earlier report intact," \
  "orphan temporary removed"
