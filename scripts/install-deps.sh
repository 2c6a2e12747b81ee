#!/usr/bin/env bash
# Installs the Debian packages lockstep needs, only those missing. Safe to run any number of times.
# Usage: scripts/install-deps.sh [--test|--bench]
#   --test   adds what the test suite needs: chromium, clang 14 for the sanitizer build, pytest and
#            pandas for tests/python
#   --bench  adds GNU time, with which scripts/bench.sh reads CPU time and peak memory
set -euo pipefail
# pybind11-dev and python3-dev: the Python module (python/, docs/python.md).
packages=(cmake ninja-build g++ libfmt-dev libyaml-cpp-dev nlohmann-json3-dev libcli11-dev
  libgtest-dev libgmock-dev libbenchmark-dev clang-format pybind11-dev python3-dev
  protobuf-compiler libprotobuf-dev)
# `lockstep sweep` under mpirun (docs/sweeps.md): OpenMPI's library to build with, mpirun to run
# (the test suite runs a sweep on two ranks).
packages+=(libopenmpi-dev openmpi-bin)
if [[ "${1:-}" == "--test" ]]; then
  # clang-14's sanitizer runtimes are only a recommend (of libclang-common-14-dev), and
  # recommends are not installed below.
  packages+=(chromium clang-14 libclang-rt-14-dev python3-pytest python3-pandas)
elif [[ "${1:-}" == "--bench" ]]; then
  packages+=(time)
fi
# The report embeds a charting library from npm at build time. Only install Debian's nodejs/npm
# when no npm is on PATH: Debian's npm conflicts with a NodeSource nodejs that already has one.
if ! command -v npm >/dev/null 2>&1; then
  packages+=(nodejs npm)
fi
missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if ((${#missing[@]} == 0)); then
  exit 0
fi
echo "install-deps: installing ${missing[*]}" >&2
sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
