#!/usr/bin/env bash
# README command 1: install what is missing, build (Release), run the main job.
# Usage: scripts/run.sh [cholsim arguments]   (default: factor, on the built-in 107,811-DOF
# elasticity box). The build goes to build/ beside this script's folder.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$root/build"

"$root/scripts/install-deps.sh"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$build" --parallel "$(nproc)" --target cholsim
if [ $# -eq 0 ]; then
  set -- factor
fi
# The simulation commands find the bundled meshes (data/meshes) through this.
export CHOLSIM_DATA_DIR="${CHOLSIM_DATA_DIR:-$root}"
exec "$build/apps/cholsim" "$@"
