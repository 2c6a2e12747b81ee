#!/usr/bin/env bash
# Reproduces the README's benchmark table: installs what is missing, builds lockstep and the
# benchmarks (Release), runs every command the table quotes with the same arguments and prints
# the table again with the figures measured now.
# Usage: scripts/bench.sh [--quick]
#   --quick   the rows that take seconds, with the size lists cut to their small sizes (about a
#             minute on 2 cores; the whole table takes about 15 minutes and 3 GB of memory)
# Timings depend on the machine and on what else runs on it: on a shared machine compare CPU
# seconds, not wall time. Each command's whole output is kept in build/release/bench-out/.
# shellcheck disable=SC2016  # the figures below are awk programs, in single quotes
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
quick=0
case "${1:-}" in
  --quick) quick=1 ;;
  "") ;;
  *) echo "usage: scripts/bench.sh [--quick]" >&2; exit 2 ;;
esac
"$root/scripts/install-deps.sh" --bench
"$root/scripts/build.sh" release lockstep bench_calibration bench_topology_scale \
  bench_flow_allreduce bench_flow_nvls_tree bench_flow_cases bench_packet_permutation \
  bench_collective_memory bench_train_405b bench_analytical_scale bench_zoo bench_training
bin=$root/build/release
out=$bin/bench-out
mkdir -p "$out"
cd "$root"

# --- figures: each reads one command's output (P.txt) and GNU time's line (P.time: wall s,
# user s, system s, peak KiB) and prints what the README's figure column says.
# awk helpers: n(x) with thousands separators, mem(MiB) in MiB or GiB.
fmt_awk='
function n(x, s) {
  s = sprintf("%d", x)
  while (s ~ /[0-9][0-9][0-9][0-9]/) sub(/[0-9][0-9][0-9]([,.]|$)/, ",&", s)
  return s
}
function mem(mib) {
  return mib >= 1024 ? sprintf("%.1f GiB", mib / 1024) : sprintf("%.0f MiB", mib)
}
'
figure() { awk "$fmt_awk$1" "$2"; }
process_figure() {  # CPU, wall and peak of the whole command
  figure '{ printf "%.2f s CPU, %.1f s wall, %s peak", $2 + $3, $1, mem($4 / 1024) }' "$1.time"
}
calibration_figure() {  # rows N of M  median |error| X%  p90 |error| P%  max |error| Y%  rows over 25%: Z
  figure '/^rows [0-9]+ of [0-9]+ +median/ {
    printf "median busbw error %s, p90 %s, worst %s, %s of %s rows over 25%%", $7, $10, $13, $17, $2 }' "$1.txt"
  figure '{ printf " (%.1f s wall)", $1 }' "$1.time"
}
training_figure() {  # rows expressible N of M  median |error| X%  p90 ...  rows over 25%: Z
  figure '/^rows expressible/ {
      printf "%s of %s rows expressible", $3, $5
      if (NF > 5) printf ", median MFU error %s, p90 %s, %s over 25%%", $8, $11, $NF }
    /^not expressible by reason:/ { sub(/^not expressible by reason: */, ""); sub(/;$/, "")
      printf "; not expressible: %s", $0 }' "$1.txt"
}
topology_figure() {  # Google Benchmark's line: name, time, unit, CPU, unit, iterations, counters
  figure '$1 == "BM_RailOptimized/graph/sus:512" {
    for (i = 7; i <= NF; ++i) if ($i ~ /^peak_MiB=/) peak = substr($i, 10) + 0
    printf "%s %s per build (%s %s CPU), %s peak", $2, $3, $4, $5, mem(peak) }' "$1.txt"
}
memory_figure() {
  figure '$1 == "enumerate/all_reduce/ring/ranks:131072/per_node:0" {
    for (i = 7; i <= NF; ++i) if ($i ~ /^held_B=/) printf "%s bytes held", substr($i, 8) }' "$1.txt"
}
allreduce_figure() {  # "N GPUs default ... (cpu X s) peak Y MiB ..." per size
  figure '$2 == "GPUs" && $3 == "default" {
    for (i = 4; i < NF; ++i) { if ($i == "(cpu") cpu = $(i + 1); if ($i == "peak") peak = $(i + 1) }
    out = out sep n($1) " GPUs " cpu " s CPU"; sep = "; " }
    END { printf "%s, %s peak", out, mem(peak) }' "$1.txt"
}
nvls_figure() {  # columns: nodes gpus algo MiB chan model_us flow_us diff wall_s cpu_s peak_MiB
  figure '$1 ~ /^[0-9]+$/ && NF == 11 { out = out sep $10 " at " n($2); sep = ", "; peak = $11 }
    END { printf "%s GPUs; %s peak at the largest", out, mem(peak) }' "$1.txt"
}
cases_figure() {  # "NAME ... | run X s wall Y s cpu, peak Z MiB ..." per case
  figure '/[|] run / {
    for (i = 1; i < NF; ++i) {
      if ($(i + 1) == "s" && $(i + 2) == "cpu,") c = $i + 0
      if ($i == "peak") p = $(i + 1) + 0
    }
    ++k; if (c >= mc) { mc = c; name = $1 } if (p > mp) mp = p }
    END { printf "%d cases, slowest %s %.2f s CPU, largest peak %s", k, name, mc, mem(mp) }' "$1.txt"
}
packet_figure() {  # "N hosts ... cpu X s ... peak Y MiB ... Z Mev/cpu-s ..." per size
  figure '$2 == "hosts" {
    cpu = ""; peak = ""
    for (i = 3; i < NF; ++i) {
      if ($i == "cpu" && cpu == "") cpu = $(i + 1)
      if ($i == "peak" && peak == "") peak = $(i + 1)
      if ($(i + 1) == "Mev/cpu-s") rate = $i
    }
    out = out sep n($1) " hosts " cpu " s CPU"; sep = "; " }
    END { printf "%s, %s peak, %s M events/CPU-s", out, mem(peak), rate }' "$1.txt"
}
cli_figure() {  # the command's CPU, wall and peak; the time column of the (one) size it prints
  process_figure "$1"
  figure '$1 ~ /^[0-9]+$/ { t = $8 } END { printf "; collective time %s us", t }' "$1.txt"
}
analytical_figure() {  # "N GPUs graph: ..." then per algorithm "algo proto T us (model M us) C s CPU peak P MiB"
  figure '$2 == "GPUs" { gpus = $1 }
    $NF == "MiB" && $(NF - 2) == "peak" {
      cpu[gpus] += $(NF - 5); peak = $(NF - 1); if (!(gpus in seen)) { order[++k] = gpus; seen[gpus] = 1 } }
    END { for (i = 1; i <= k; ++i) { g = order[i]; out = out sep n(g) " GPUs " cpu[g] " s CPU"; sep = "; " }
      printf "%s (auto, ring and tree together), %s peak", out, mem(peak) }' "$1.txt"
}
zoo_figure() {  # columns: fabric op bytes engine algo proto time bound binds t/bound t/anal cpu
  figure '$7 ~ /^[0-9.]+$/ { ++k; if ($10 < lo || k == 1) lo = $10; cpu += $12 }
    $5 == "error:" { ++bad }
    END { printf "%d runs, %d errors, lowest time / hand-derived bound %.3f, %.0f s CPU",
      k, bad, lo, cpu }' "$1.txt"
  figure '/^peak memory/ { printf ", %s MiB peak", $3 }' "$1.txt"
}
train_figure() {
  figure '/^simulation/ { printf "%s s wall (simulation); process: ", $2 }' "$1.txt"
  process_figure "$1"
}

table=()
# row ID TITLE FIGURE_FN FULL_ARGS QUICK_ARGS: runs build/release/FULL_ARGS (QUICK_ARGS with
# --quick; an empty QUICK_ARGS skips the row) under GNU time, output in bench-out/ID.txt, and
# adds a table row whose figure FIGURE_FN reads from that output.
row() {
  local id=$1 title=$2 figure=$3 args=$4
  ((quick)) && args=$5
  [[ -z $args ]] && return 0
  local shown=${args/#bench\//build/release/bench/}  # as the README writes it
  echo "bench.sh: $shown" >&2
  # shellcheck disable=SC2086  # the arguments are words
  if ! /usr/bin/time -f '%e %U %S %M' -o "$out/$id.time" "$bin"/$args >"$out/$id.txt" 2>&1; then
    table+=("| $title | \`$shown\` | failed: see $out/$id.txt |")
    return 0
  fi
  table+=("| $title | \`$shown\` | $("$figure" "$out/$id") |")
}

cal="bench/bench_calibration --csv nccl_tests_public.csv"
row cal.analytical "NCCL accuracy vs \`../shared/calibration/nccl_tests_public.csv\`" \
  calibration_figure "$cal" "$cal"
row cal.flow "the same rows on the flow engine" calibration_figure "$cal --engine flow" \
  "$cal --engine flow"
row cal.packet "the same rows on the packet engine" calibration_figure "$cal --engine packet" ""
more="bench/bench_calibration --csv nccl_tests_public_more.csv"
row cal.more "NCCL accuracy vs \`../shared/calibration/nccl_tests_public_more.csv\` (other clusters)" \
  calibration_figure "$more" "$more"
row cal.more.flow "the same rows on the flow engine" calibration_figure "$more --engine flow" ""
row training "MFU accuracy vs \`../shared/calibration/training_public.csv\` (how rows are read: docs/training-calibration.md)" \
  training_figure "bench/bench_training --csv training_public.csv" \
  "bench/bench_training --csv training_public.csv"
row topology "131,072-GPU rail-optimised 3-tier fabric: graph + BOM" topology_figure \
  bench/bench_topology_scale bench/bench_topology_scale
ar=bench/bench_flow_allreduce
row allreduce "1 GiB ring all-reduce, flow engine, rail-optimised NDR" allreduce_figure \
  "$ar 1024 4096 16384 65536 131072" "$ar 1024 4096 16384"
# The CLI runs, written as the README writes them.
coll="lockstep collective --system hgx-h100 --fabric ib-ndr"
gib="--min-bytes 1GiB --max-bytes 1GiB --engine flow"
ring() { echo "$coll --nodes $1 --op all_reduce --algo ring --proto simple $gib"; }
auto() { echo "$coll --nodes $1 --op all_reduce $gib"; }
tree() { echo "$coll --nodes $1 --op all_reduce --algo tree $gib"; }
row cli.ring.128 "1 GiB ring all-reduce through the CLI (NCCL channels, protocol, \
per-channel rate caps), 1,024 GPUs" cli_figure "$(ring 128)" "$(ring 128)"
row cli.ring.2048 "the same, 16,384 GPUs" cli_figure "$(ring 2048)" ""
row allreduce.nccl "the same 16-channel run as a bench" allreduce_figure \
  "$ar --nccl 1024 4096 8192 16384 65536 131072" "$ar --nccl 1024 4096"
row cli.auto.128 \
  "1 GiB all-reduce through the CLI with \`--algo auto\` (NVLS tree), flow engine, 1,024 GPUs" \
  cli_figure "$(auto 128)" "$(auto 128)"
row cli.auto.2048 "the same, 16,384 GPUs" cli_figure "$(auto 2048)" ""
row cli.auto.16384 "the same, 131,072 GPUs" cli_figure "$(auto 16384)" ""
nvls=bench/bench_flow_nvls_tree
row nvls "the NVLS tree engine runs alone (CPU s)" nvls_figure \
  "$nvls 16 64 128 256 512 1024 2048 4096 8192 16384" "$nvls 16 64 128 256 512"
an=bench/bench_analytical_scale
row analytical "1 GiB all-reduce on the analytical engine (the NCCL model priced on the graph)" \
  analytical_figure "$an" "$an 1024 16384"
row cli.tree.128 "1 GiB all-reduce through the CLI with \`--algo tree\`, 1,024 GPUs" cli_figure \
  "$(tree 128)" "$(tree 128)"
row cli.tree.256 "the same, 2,048 GPUs" cli_figure "$(tree 256)" ""
row cli.tree.512 "the same, 4,096 GPUs" cli_figure "$(tree 512)" ""
row cases "1 GiB CollNet, NVLS and NVLS tree all-reduce on 2-64 HGX-H100 and B200 nodes, flow \
engine, each as \`lockstep collective\` runs it" cases_figure "bench/bench_flow_cases collnet nvls" \
  "bench/bench_flow_cases n2 n8"
row zoo "the topology zoo: 11 fabrics x 4 ops x 64 KiB, 16 MiB, 1 GiB x 3 engines, against \
hand-derived bounds (docs/collectives.md, \"The topology zoo\")" zoo_figure bench/bench_zoo \
  "bench/bench_zoo full-mesh-4 torus-8 --max-bytes 16MiB"
pp=bench/bench_packet_permutation
row packet "packet engine, permutation of 2 MB flows, 3-tier fat-tree" packet_figure \
  "$pp 8 16 32" "$pp 8 16"
row memory "131,072-rank ring all-reduce program set" memory_figure \
  bench/bench_collective_memory bench/bench_collective_memory
row train "llama3-405b, 16,384 GPUs, one iteration, flow engine" train_figure \
  "bench/bench_train_405b flow 2048" "bench/bench_train_405b flow 2048"

echo "| benchmark | command | figure measured now |"
echo "|---|---|---|"
printf '%s\n' "${table[@]}"
