#!/usr/bin/env bash
# Configures and builds one flavour of lockstep. Usage: scripts/build.sh release|asan [targets...]
# Environment: CXX names the compiler (default: CMake's choice, g++ on Debian; an existing build
# directory is reconfigured when it changes); LOCKSTEP_WERROR=ON makes warnings errors (CI sets
# it; the build directory keeps the last value given).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
flavour=${1:-release}
shift || true
"$root/scripts/install-deps.sh"
jobs=${LOCKSTEP_JOBS:-$(nproc)}
case "$flavour" in
  release) args=(-DCMAKE_BUILD_TYPE=Release) ;;
  # The benchmarks are built there too (never run) so that each compiler of CI sees every file.
  # The Python module is not: an instrumented extension needs the sanitizer runtime preloaded
  # into the interpreter.
  asan) args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DLOCKSTEP_SANITIZE=ON -DLOCKSTEP_BENCH=ON
    -DLOCKSTEP_PYTHON=OFF) ;;
  *) echo "build.sh: unknown flavour '$flavour' (release|asan)" >&2; exit 2 ;;
esac
if [[ -n ${CXX:-} ]]; then
  cxx=$(command -v "$CXX") || { echo "build.sh: compiler '$CXX' not found" >&2; exit 2; }
  args+=(-DCMAKE_CXX_COMPILER="$cxx")
fi
if [[ -n ${LOCKSTEP_WERROR:-} ]]; then args+=(-DLOCKSTEP_WERROR="$LOCKSTEP_WERROR"); fi
# ccache, where installed, lets several checkouts of the tree (git worktrees beside each other)
# share compiled objects; CI does not install it.
if command -v ccache >/dev/null 2>&1; then
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(dirname "$root")}
  args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
dir="$root/build/$flavour"
# Another compiler than the build directory's: configure afresh. (CMake would start a new cache
# itself but drop the -D settings above with the old one: an asan build without sanitizers.)
if [[ -n ${cxx:-} && -f $dir/CMakeCache.txt ]] &&
  ! grep -q "^CMAKE_CXX_COMPILER:[A-Z]*=$cxx\$" "$dir/CMakeCache.txt"; then
  rm -rf "$dir/CMakeCache.txt" "$dir/CMakeFiles"
fi
cmake -S "$root" -B "$dir" -G Ninja "${args[@]}" >/dev/null
if (($# > 0)); then
  cmake --build "$dir" -j "$jobs" --target "$@"
else
  cmake --build "$dir" -j "$jobs"
fi
