#!/usr/bin/env bash
# The main job: install what is missing, build lockstep (Release) and run the bundled default
# scenario (a DGX SuperPOD H100 scalable unit). Extra arguments go to 'lockstep run'.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build.sh" release lockstep
exec "$root/build/release/lockstep" run "$root/scenarios/default.yaml" "$@"
