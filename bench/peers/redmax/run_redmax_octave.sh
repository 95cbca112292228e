#!/usr/bin/env bash
# Runs REDMAX's own MATLAB reference code (Sueda et al., github.com/sueda/redmax, MIT licence,
# theirs) under GNU Octave for one of its test scenes, to compare with our fem/articulated/
# rebuild (bench_joints --experiment redmax). Their code is exported from a fetched snapshot into
# the git-ignored build folder on every run and never enters our tree; only our shims
# (quadprog.m, optimoptions.m, colormap.m) and octave_compatible.py do.
#
# usage: run_redmax_octave.sh [SCENE] [SOURCE] [BUILD_DIR]
#   SCENE      testRedMaxScenes.m's scene number (default 33), run with REDMAX_EULER
#   SOURCE     their repository: a bare git directory (HEAD + objects/) or a checkout; default
#              $REDMAX_SOURCE, else the mirror snapshot /work/.mirror/sueda+redmax/repo
#   BUILD_DIR  default <repo>/build; the export goes to BUILD_DIR/peers/redmax
# Prints REDMAX's PASS/FAIL line with its final H and writes BUILD_DIR/peers/redmax/matlab/
# h<SCENE>.txt: per step t, T, V and the state y. Needs `octave` (Debian package octave; not in
# install-deps.sh — a reference check, not a dependency). Scene 33 takes about 9 minutes here.
# Our quadprog.m solves each QP exactly with Octave's active-set __qp__ where REDMAX used
# MATLAB's interior-point quadprog: frictional scenes end elsewhere (docs/benchmarks.md, issue 21).
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$script_dir/../../.." && pwd)
if [[ $# -gt 3 || ${1:-} == -h || ${1:-} == --help ]]; then
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | grep '^#' | sed 's/^# \{0,1\}//'
  [[ $# -gt 3 ]] && exit 2 || exit 0
fi
scene=${1:-33}
source_dir=${2:-${REDMAX_SOURCE:-/work/.mirror/sueda+redmax/repo}}
build_dir=${3:-$repo_root/build}
[[ $scene =~ ^-?[0-9]+$ ]] || { echo "run_redmax_octave.sh: SCENE must be an integer, not '$scene'" >&2; exit 2; }
command -v octave > /dev/null || { echo "redmax peer skipped: octave is not installed (apt-get install octave)" >&2; exit 0; }
[[ -e $source_dir ]] || { echo "redmax peer skipped: no snapshot at $source_dir" >&2; exit 0; }

export_dir=$build_dir/peers/redmax
rm -rf "$export_dir"
mkdir -p "$export_dir"
if [[ -f $source_dir/HEAD && -d $source_dir/objects ]]; then
  git --git-dir="$source_dir" archive HEAD matlab | tar -x -C "$export_dir"
else
  cp -r "$source_dir/matlab" "$export_dir/"
fi
cp "$source_dir/LICENSE" "$export_dir/" 2> /dev/null || git --git-dir="$source_dir" show HEAD:LICENSE > "$export_dir/LICENSE"
python3 "$script_dir/octave_compatible.py" "$export_dir/matlab"
cp "$script_dir"/quadprog.m "$script_dir"/optimoptions.m "$script_dir"/colormap.m "$export_dir/matlab/"
cd "$export_dir/matlab"
octave --no-gui --quiet --eval "testRedMax(3, $scene, false, true);" 2>&1 | grep -v '^warning: quadprog shim\|^    \|^$\|ignoring const execution_exception' || true
echo "per-step energies and states: $export_dir/matlab/h$scene.txt"
