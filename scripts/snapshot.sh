#!/usr/bin/env bash
# Behaviour snapshot for refactors: runs a fixed set of lockstep commands (collective sweeps on
# every engine, training steps, bills of materials, plans, every bundled scenario) and writes
# each output to DIR/<name>.txt. Two snapshots taken before and after a change must be
# byte-identical (`diff -r before/ after/`); a difference is a behaviour change.
# Usage: scripts/snapshot.sh DIR [LOCKSTEP]   (LOCKSTEP defaults to build/release/lockstep)
# Takes about 5 minutes on 2 cores. Set SNAPSHOT_QUICK=1 to skip the packet engine and the
# large flow runs (about 1 minute).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: snapshot.sh DIR [LOCKSTEP]}
bin=${2:-$root/build/release/lockstep}
mkdir -p "$out"
out=$(cd "$out" && pwd)
quick=${SNAPSHOT_QUICK:-0}
cd "$root"

# snap NAME ARGS...: stdout, then stderr and the exit code, into NAME.txt.
snap() {
  local name=$1
  shift
  {
    "$bin" "$@" 2>"$out/.stderr"
    echo "# exit $?"
    cat "$out/.stderr"
  } >"$out/$name.txt"
}

sweep="--min-bytes 8 --max-bytes 1GiB --step-factor 4 --format csv"
h100="--system hgx-h100 --fabric ib-ndr"
engines=(analytical flow)
((quick)) || engines+=(packet)

for engine in "${engines[@]}"; do
  big=(2 4 16 64)
  [[ $engine == packet ]] && big=(2 4)
  small="--min-bytes 8 --max-bytes 64MiB --step-factor 16 --format csv"
  [[ $engine == packet ]] && s=$small || s=$sweep
  for n in "${big[@]}"; do
    for algo in ring tree nvls_tree auto; do
      snap "coll.$engine.h100.n$n.$algo" collective $h100 --nodes "$n" --algo "$algo" --engine "$engine" $s
    done
    snap "coll.$engine.h100.n$n.collnet" collective $h100 --nodes "$n" --algo collnet --sharp --engine "$engine" $s
    for op in all_gather reduce_scatter broadcast; do
      snap "coll.$engine.h100.n$n.$op" collective $h100 --nodes "$n" --op "$op" --engine "$engine" $s
    done
  done
  snap "coll.$engine.h100.n4.alltoall" collective $h100 --nodes 4 --op alltoall --engine "$engine" $small
  snap "coll.$engine.h100.n1.nvls" collective $h100 --nodes 1 --algo nvls --engine "$engine" $s
  snap "coll.$engine.h100.n1.auto" collective $h100 --nodes 1 --engine "$engine" $s
  snap "coll.$engine.a100.n4.tree" collective --system dgx-a100 --fabric ib-hdr --nodes 4 --algo tree --engine "$engine" $s
  snap "coll.$engine.b200.n4.nvls_tree" collective --system hgx-b200 --fabric ib-xdr --nodes 4 --algo nvls_tree --engine "$engine" $s
  snap "coll.$engine.mi300x.n2.ring" collective --system mi300x --fabric roce-400g --nodes 2 --algo ring --engine "$engine" $s
  snap "coll.$engine.mi300x.n1.auto" collective --system mi300x --nodes 1 --engine "$engine" $s
  snap "coll.$engine.gb200.n18.auto" collective --system gb200-nvl72 --fabric ib-ndr --nodes 18 --engine "$engine" $s
  snap "coll.$engine.roce.n2g1.tree" collective --system hgx-h100 --fabric roce-400g --nodes 2 --gpus-per-node 1 --algo tree --engine "$engine" $s
  snap "coll.$engine.roce.n16.tree" collective --system hgx-h100 --fabric roce-400g --nodes 16 --algo tree --engine "$engine" $s
  snap "coll.$engine.tcp.n4.auto" collective --system hgx-h100 --fabric tcp --nodes 4 --engine "$engine" $s
  snap "coll.$engine.efa.n4.auto" collective --system hgx-h100 --fabric efa --nodes 4 --engine "$engine" $s
  for sc in two_sites_50km torus_4x4x4 gb200_nvl72_pair; do
    snap "coll.$engine.scenario.$sc" collective --scenario "scenarios/$sc.yaml" --engine "$engine" $small
  done
done
if ((!quick)); then
  snap coll.flow.h100.n128.ring1g collective $h100 --nodes 128 --op all_reduce --algo ring --proto simple --min-bytes 1GiB --max-bytes 1GiB --engine flow
  snap coll.flow.h100.n128.auto1g collective $h100 --nodes 128 --op all_reduce --min-bytes 1GiB --max-bytes 1GiB --engine flow
  snap coll.flow.h100.n128.tree1g collective $h100 --nodes 128 --op all_reduce --algo tree --min-bytes 1GiB --max-bytes 1GiB --engine flow
fi
for fmt in table json; do
  snap "coll.analytical.h100.n8.$fmt" collective $h100 --nodes 8 --format "$fmt"
done

# Training steps, text and JSON, on both engines.
train_70b="--model llama3-70b --system hgx-h100 --fabric ib-ndr --nodes 4 --tp 8 --pp 4 --dp 1 --global-batch 32 --seq 8192"
train_8b="--model llama3-8b --system hgx-h100 --fabric ib-ndr --nodes 2 --tp 2 --pp 2 --dp 4 --global-batch 64 --seq 4096"
train_moe="--model mixtral-8x7b --system hgx-h100 --fabric roce-400g --nodes 4 --tp 2 --pp 2 --dp 8 --ep 4 --global-batch 128 --zero 1 --recompute true"
for engine in analytical flow; do
  for fmt in text json; do
    snap "train.$engine.70b.$fmt" train $train_70b --engine "$engine" --format "$fmt"
    snap "train.$engine.8b.$fmt" train $train_8b --engine "$engine" --format "$fmt" --trials 8 --jitter normal:5% --zero 1
    snap "train.$engine.moe.$fmt" train $train_moe --engine "$engine" --format "$fmt"
  done
done
snap train.flow.8b.interleave train $train_8b --interleave 2 --micro-batch 2 --fault slow-gpu:rank=3,x=1.5
snap train.flow.8b.fsdp train $train_8b --fsdp true --recompute true --trials 4 --jitter straggler:p=0.1,x=1.5
snap train.scenario train scenarios/train_llama3_70b.yaml
snap train.scenario.json train scenarios/train_llama3_70b.yaml --format json

# Bills of materials.
for fmt in table json csv; do
  snap "topo.default.$fmt" topo scenarios/default.yaml --format "$fmt"
  snap "topo.fat_tree.$fmt" topo --builder fat_tree --k 16 --format "$fmt"
done
for sc in scenarios/*.yaml; do snap "topo.$(basename "$sc" .yaml)" topo "$sc"; done
snap topo.rail3 topo --builder rail_optimized --gpus 4096 --tiers 3
snap topo.dragonfly topo --builder dragonfly --nodes_per_router 4 --routers_per_group 4 --global_links_per_router 2 --groups 9

# Plans.
snap plan.ring plan --op all_reduce --algo ring --ranks 8 --bytes 1MiB --verify
snap plan.tree plan --op all_reduce --algo tree --ranks 16 --bytes 1MiB --channels 2 --verify
snap plan.alltoall plan --op alltoall --ranks 8 --bytes 64KiB --verify

# Every bundled scenario through `lockstep run` (fat_tree_16k only outside quick mode).
for sc in scenarios/*.yaml; do
  name=$(basename "$sc" .yaml)
  [[ $name == fat_tree_16k ]] && ((quick)) && continue
  rm -rf "$out/run.$name"
  snap "run.$name" run "$sc" --quiet --out "$out/run.$name"
  # The report page is rebuilt from results.json; keep the machine-readable outputs.
  rm -f "$out/run.$name/report.html"
done
# The calibration benchmark's rows (deterministic; no timings), where it is built.
cal=$(dirname "$bin")/bench/bench_calibration
if [[ -x $cal ]]; then
  for engine in "${engines[@]}"; do
    for csv in nccl_tests_public nccl_tests_public_more; do
      # The packet engine on the 112 larger rows takes over half an hour.
      [[ $engine == packet && $csv == nccl_tests_public_more ]] && continue
      f=$root/../shared/calibration/$csv.csv
      [[ -f $f ]] && "$cal" --csv "$f" --engine "$engine" --no-usage >"$out/bench.calibration.$engine.$csv.txt" 2>&1
    done
  done
fi
sed -i "s#$out#OUT#g" "$out"/run.*.txt
rm -f "$out/.stderr"
echo "snapshot: $(ls "$out" | wc -l) entries in $out"
