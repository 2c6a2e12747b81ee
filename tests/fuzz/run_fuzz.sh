#!/usr/bin/env bash
# One fuzz target, two ways (tests/fuzz/fuzz.cmake registers both with ctest):
#   run_fuzz.sh replay  BINARY DIR...  runs every file of the corpus directories once (the seeds
#                                      and every input a past run found: issue 22's regressions)
#   run_fuzz.sh explore BINARY SECONDS DIR...  mutates the corpus for SECONDS with a fixed seed,
#                                      new inputs going to a scratch directory that is removed;
#                                      a finding is kept in ./fuzz-findings/ (add it to regress/)
# Limits (per input): 10 s under ASan on a loaded CI machine (a hang is a finding; the CLI is
# held to 2 s without sanitizers by tests/cli/malformed) and 1 GiB resident under ASan (unbounded
# allocation is a finding); the CLI's budget is 200 MB without sanitizers.
set -euo pipefail
mode=$1 binary=$2
shift 2
limits=(-timeout=10 -rss_limit_mb=1024 -print_final_stats=0)
case "$mode" in
  replay)
    files=()
    for dir in "$@"; do
      while IFS= read -r -d '' f; do files+=("$f"); done < <(find "$dir" -type f -print0 | sort -z)
    done
    ((${#files[@]} > 0)) || { echo "run_fuzz.sh: no corpus files in $*" >&2; exit 1; }
    exec "$binary" "${limits[@]}" "${files[@]}"
    ;;
  explore)
    seconds=$1
    shift
    scratch=$(mktemp -d)
    trap 'rm -rf "$scratch"' EXIT
    # The scratch directory comes first: libFuzzer writes what it finds to the first one only.
    "$binary" "${limits[@]}" -seed=1 -max_total_time="$seconds" -artifact_prefix="$scratch/" \
      "$scratch" "$@" || {
      status=$?
      for crash in "$scratch"/crash-* "$scratch"/timeout-* "$scratch"/oom-* "$scratch"/leak-*; do
        [[ -e $crash ]] || continue
        mkdir -p fuzz-findings && cp "$crash" fuzz-findings/
        echo "run_fuzz.sh: finding fuzz-findings/$(basename "$crash"), as hex:" >&2
        od -An -tx1 "$crash" | head -20 >&2
      done
      exit "$status"
    }
    ;;
  *) echo "run_fuzz.sh: unknown mode '$mode' (replay|explore)" >&2; exit 2 ;;
esac
