#!/usr/bin/env bash
# Installs the Debian packages lockstep needs, only those missing. Safe to run any number of times.
# Usage: scripts/install-deps.sh [--test|--bench]
#   --test   adds what the test suite needs: chromium, and clang 14 for the sanitizer build
#   --bench  adds GNU time, with which scripts/bench.sh reads CPU time and peak memory
set -euo pipefail
packages=(cmake ninja-build g++ libfmt-dev libyaml-cpp-dev nlohmann-json3-dev libcli11-dev
  libgtest-dev libgmock-dev libbenchmark-dev clang-format protobuf-compiler libprotobuf-dev)
if [[ "${1:-}" == "--test" ]]; then
  # clang-14's sanitizer runtimes are only a recommend (of libclang-common-14-dev), and
  # recommends are not installed below.
  packages+=(chromium clang-14 libclang-rt-14-dev)
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
