#!/bin/sh
# Usage: sweep.sh LOCKSTEP SRC WORK local|mpi|resume|equals_run
# `lockstep sweep` end to end on tests/cli/sweep/tp_fabric.yaml (12 points, job.tp x fabric):
#   local       --jobs 1 and --jobs 2 give byte-identical sweep.csv and results.json; sweep.csv
#               has a header and 12 rows with the point, its keys and the summary's columns
#   mpi         `mpirun -n 2` gives the same files as --jobs 1 (exit 77, skipped, without mpirun)
#   resume      a rerun runs none of the 12; after one point's value changes, it runs that one
#   equals_run  a point's summary equals `lockstep run` of the base with its values written in
#   grid        grid.yaml: 3 fabrics x 2 batches = 6 points, the first key varying slowest; both
#               batches on one fabric cost the same (the bill of materials ignores the job)
#   variants    `lockstep run` of a scenario whose variants set job.tp and job.dp trains each at
#               its own degrees
set -u
lockstep=$1
src=$2
work=$3
mode=$4
rm -rf "$work"
mkdir -p "$work"
cp "$src"/*.yaml "$work"/
cd "$work" || exit 1
fail() {
  echo "FAIL: $*"
  exit 1
}
sweep() { # OUT ARGS...: runs the sweep into OUT, stderr in OUT.err
  out=$1
  shift
  "$lockstep" sweep tp_fabric.yaml --out "$out" "$@" 2>"$out.err" >/dev/null ||
    fail "sweep $* exited $?: $(cat "$out.err")"
}
same() { # A B: identical sweep.csv and results.json
  for f in sweep.csv results.json; do
    cmp -s "$1/$f" "$2/$f" || fail "$1/$f and $2/$f differ: $(diff "$1/$f" "$2/$f" | head -5)"
  done
}
case $mode in
  local)
    sweep one --jobs 1
    sweep two --jobs 2
    same one two
    rows=$(($(wc -l <one/sweep.csv) - 1))
    [ "$rows" -eq 12 ] || fail "sweep.csv has $rows rows, expected 12"
    header=$(head -1 one/sweep.csv)
    case $header in
      point,job.tp,job.dp,cluster.fabric,gpus,cost_usd,*iteration_time_us*,mfu,*) ;;
      *) fail "sweep.csv header: $header" ;;
    esac
    # Row 6 is the sixth point: TP 2, DP 8 on RoCE, 16 GPUs (2 nodes x 8).
    row=$(sed -n 7p one/sweep.csv)
    case $row in
      '"job.tp=2, job.dp=8, cluster.fabric=roce-400g",2,8,roce-400g,16,'*) ;;
      *) fail "row 6: $row" ;;
    esac
    [ "$(ls one/points/*.json | wc -l)" -eq 12 ] || fail "expected 12 point files"
    grep -q '"variant_keys"' one/results.json || fail "results.json lacks variant_keys"
    grep -q 'job.tp=8, job.dp=2, cluster.fabric=tcp' one/report.html || fail "report lacks a point"
    echo "ok: --jobs 1 and --jobs 2 identical, 12 rows"
    ;;
  mpi)
    if ! command -v mpirun >/dev/null 2>&1; then
      echo "skipped: mpirun is not installed (Debian: openmpi-bin)"
      exit 77
    fi
    sweep one --jobs 1
    # Containers run as root; OpenMPI refuses root without these two.
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
      mpirun -n 2 "$lockstep" sweep tp_fabric.yaml --out mpi >/dev/null 2>mpi.err ||
      fail "mpirun exited $?: $(cat mpi.err)"
    grep -q '12 run (2 ranks x 1 job)' mpi.err || fail "not run on 2 ranks: $(cat mpi.err)"
    same one mpi
    echo "ok: mpirun -n 2 identical to --jobs 1"
    ;;
  resume)
    sweep one --jobs 2
    sweep one --jobs 2
    grep -q '12 points: 0 run .*12 finished before' one.err || fail "rerun: $(cat one.err)"
    sed 's/{job.tp: 4, job.dp: 4, cluster.fabric: tcp}/{job.tp: 4, job.dp: 4, cluster.fabric: roce-400g, job.seq: 2048}/' \
      tp_fabric.yaml >changed.yaml && mv changed.yaml tp_fabric.yaml
    sweep one --jobs 2
    grep -q '12 points: 1 run .*11 finished before' one.err || fail "after a change: $(cat one.err)"
    grep -q 'job.seq=2048' one/sweep.csv || fail "the changed point is not in sweep.csv"
    # A changed base reruns every point.
    sed 's/seed: 3/seed: 4/' base.yaml >changed.yaml && mv changed.yaml base.yaml
    sweep one --jobs 2
    grep -q '12 points: 12 run' one.err || fail "after the base changed: $(cat one.err)"
    echo "ok: 12 skipped, then 1 rerun, then 12"
    ;;
  equals_run)
    sweep one --jobs 2
    # The ninth point (TP 1, DP 16 on tcp) as a scenario of its own.
    sed -e 's/fabric: ib-ndr/fabric: tcp/' -e 's/  tp: 8/  tp: 1/' -e 's/  dp: 2/  dp: 16/' \
      base.yaml >point9.yaml
    "$lockstep" run -q point9.yaml --out run9 >/dev/null 2>run9.err || fail "run: $(cat run9.err)"
    a=$(sed -n 10p one/sweep.csv | cut -d, -f7-)
    b=$(sed -n 2p run9/summary.csv | cut -d, -f2-)
    [ -n "$a" ] && [ "$a" = "$b" ] || fail "point 9: $a; run: $b"
    echo "ok: point 9 = lockstep run: $a"
    ;;
  grid)
    "$lockstep" sweep grid.yaml --out grid --jobs 2 >/dev/null 2>grid.err || fail "$(cat grid.err)"
    [ "$(($(wc -l <grid/sweep.csv) - 1))" -eq 6 ] || fail "expected 6 rows: $(cat grid/sweep.csv)"
    # Fields 1-2 are the point's name (it holds a comma), 3-4 its values, 6 the cost.
    order=$(sed 1d grid/sweep.csv | cut -d, -f3,4 | tr '\n' ' ')
    [ "$order" = "ib-ndr,16 ib-ndr,32 roce-400g,16 roce-400g,32 tcp,16 tcp,32 " ] ||
      fail "order: $order"
    [ "$(sed 1d grid/sweep.csv | cut -d, -f3,6 | sort -u | wc -l)" -eq 3 ] ||
      fail "a fabric's cost depends on the batch: $(cut -d, -f3,6 grid/sweep.csv)"
    grep -q '"title": "fabric and batch"' grid/results.json || fail "title"
    echo "ok: 6 points in grid order"
    ;;
  variants)
    "$lockstep" run -q variants_job.yaml --out run >/dev/null 2>run.err || fail "$(cat run.err)"
    grep -q '^"job.tp=8, job.dp=2",llama3-8b,TP8 PP1 DP2 ZeRO-1,16,' run/training.csv ||
      fail "variant 1: $(cat run/training.csv)"
    grep -q '^"job.tp=4, job.dp=4, fabric=roce-400g",llama3-8b,TP4 PP1 DP4 ZeRO-1,16,' run/training.csv ||
      fail "variant 2: $(cat run/training.csv)"
    echo "ok: each variant at its own degrees"
    ;;
  *) fail "unknown mode $mode" ;;
esac
