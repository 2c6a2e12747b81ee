#!/bin/sh
# Usage: chakra_roundtrip.sh LOCKSTEP WORKDIR ENGINE
# `lockstep train --chakra-out` writes a data-parallel step on 2 H100s as Chakra traces, then
# `lockstep chakra run` reads them back on the same cluster: the step times agree to 1e-6 (the
# same kernels and the same NCCL collectives; docs/chakra.md "Round trip").
lockstep=$1
dir=$2
engine=$3
rm -rf "$dir"
mkdir -p "$dir"
set -- --nodes 1 --gpus-per-node 2
"$lockstep" train --model preset=llama3-8b,layers=2 "$@" --dp 2 --global-batch 4 \
  --engine "$engine" --format json --chakra-out "$dir/traces" >"$dir/train.json" || exit 1
"$lockstep" chakra run "$dir/traces" "$@" --engine "$engine" --format json >"$dir/chakra.json" ||
  exit 1
train=$(sed -n 's/^  "iteration_time_us": \([0-9.]*\),$/\1/p' "$dir/train.json")
step=$(sed -n 's/^  "step_us": \([0-9.]*\),$/\1/p' "$dir/chakra.json")
ranks=$(sed -n 's/^  "ranks": \([0-9]*\),$/\1/p' "$dir/chakra.json")
if [ -z "$train" ] || [ -z "$step" ] || [ "$ranks" != 2 ]; then
  echo "missing figures: train '$train' us, chakra '$step' us, ranks '$ranks'"
  exit 1
fi
if ! awk -v a="$train" -v b="$step" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-6 * a) }'; then
  echo "train $train us, chakra run $step us: differ by more than 1e-6"
  exit 1
fi
# The export names its groups by dimension: the breakdown reads them back as train's DP.
if ! grep -q '"name": "exposed_dp"' "$dir/chakra.json"; then
  echo "chakra run's breakdown has no exposed_dp record"
  exit 1
fi
echo "ok: train $train us, chakra run $step us"
