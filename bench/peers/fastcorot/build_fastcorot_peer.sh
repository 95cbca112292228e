#!/usr/bin/env bash
# Builds the FastCorotatedFEM benchmark peer (seed 003, Kugelstadt et al. 2018; MIT licence,
# theirs) from a fetched snapshot into the git-ignored build folder. Their code is exported
# there fresh on every run and never enters our tree; only our driver fastcorot_peer.cpp does.
#
# usage: build_fastcorot_peer.sh [SOURCE] [BUILD_DIR]
#   SOURCE     their repository: a bare git directory (HEAD + objects/) or a plain checkout;
#              default $FASTCOROT_SOURCE, else the mirror snapshot below.
#   BUILD_DIR  default <repo>/build. Produces BUILD_DIR/peers/fastcorot_peer and the export
#              BUILD_DIR/peers/FastCorotatedFEM (with their meshes/armadillo_4k.{node,ele}).
# Environment: FASTCOROT_CXX   compiler (default g++)
#              FASTCOROT_UNPATCHED=1   build their FastCorotFEM.cpp exactly as fetched (see the
#              one-line padding fix below, applied to the export otherwise)
# A missing SOURCE is not an error: the bench programs treat a missing binary as "peer skipped".
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$script_dir/../../.." && pwd)
default_source=/work/.mirror/InteractiveComputerGraphics+FastCorotatedFEM/repo

if [[ $# -gt 2 || ${1:-} == -h || ${1:-} == --help ]]; then
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | grep '^#' | sed 's/^# \{0,1\}//'
  [[ $# -gt 2 ]] && exit 2 || exit 0
fi
source_dir=${1:-${FASTCOROT_SOURCE:-$default_source}}
build_dir=${2:-$repo_root/build}
cxx=${FASTCOROT_CXX:-g++}

if [[ ! -e $source_dir ]]; then
  echo "fastcorot peer skipped: no snapshot at $source_dir" >&2
  exit 0
fi

peers_dir=$build_dir/peers
export_dir=$peers_dir/FastCorotatedFEM
object_dir=$peers_dir/fastcorot_objects
binary=$peers_dir/fastcorot_peer
mkdir -p "$peers_dir"
rm -rf "$export_dir" "$object_dir"
mkdir -p "$export_dir" "$object_dir"

if [[ -f $source_dir/HEAD && -d $source_dir/objects ]]; then
  # Bare snapshot. Some blobs may be absent (the mirror lacks teaser.png) and `git archive`
  # trips over them, so HEAD's tree goes into a scratch index (GIT_INDEX_FILE in our build
  # folder; the snapshot itself is only read), entries whose blob is missing are dropped, and
  # checkout-index writes the rest into the export.
  git_snapshot() { git --git-dir="$source_dir" "$@"; }
  declare -A missing_objects=()
  while read -r object state; do
    [[ $state == missing ]] && missing_objects[$object]=1
  done < <(git_snapshot ls-tree -r HEAD | awk '$2 == "blob" {print $3}' |
           git_snapshot cat-file --batch-check='%(objectname) %(objecttype)')
  scratch_index=$object_dir/export.index
  GIT_INDEX_FILE=$scratch_index git_snapshot read-tree HEAD
  while IFS= read -r -d '' entry; do  # "mode type object<TAB>path", NUL-terminated
    meta=${entry%%$'\t'*}
    object=${meta##* }
    if [[ -n ${missing_objects[$object]:-} ]]; then
      path=${entry#*$'\t'}
      echo "note: $path is missing from the snapshot; not exported" >&2
      GIT_INDEX_FILE=$scratch_index git_snapshot update-index --force-remove -- "$path"
    fi
  done < <(git_snapshot ls-tree -r -z HEAD)
  GIT_INDEX_FILE=$scratch_index git_snapshot checkout-index --all --prefix="$export_dir/"
  rm -f "$scratch_index"
  revision=$(git_snapshot rev-parse HEAD)
elif [[ -f $source_dir/FastCorotFEM.cpp ]]; then
  tar -C "$source_dir" --exclude=.git -cf - . | tar -x -C "$export_dir"
  revision="plain folder $source_dir"
else
  echo "build_fastcorot_peer.sh: $source_dir is neither a bare git repository nor a FastCorotatedFEM checkout" >&2
  exit 1
fi

for needed in FastCorotFEM.cpp FastCorotFEM.h AVX_math.h Common.h extern/eigen/Eigen/Sparse \
              meshes/armadillo_4k.node meshes/armadillo_4k.ele; do
  if [[ ! -e $export_dir/$needed ]]; then
    echo "build_fastcorot_peer.sh: $needed not found in the export of $source_dir" >&2
    exit 1
  fi
done

# The one change we make to their code, in the export only: initializeVolumeConstraints fills
# the padding lanes of a constraint block (a colour phase whose size is not a multiple of 8)
# from `ind[c8[k]]` with c8[k] never set, i.e. it reads an uninitialized stack index. The
# padding lanes are never written back, so zeroing c8 changes no result (checked bit for bit on
# armadillo_4k). Unpatched, the slot usually still holds the previous block's indices, but a
# mesh whose first block is partial (e.g. a single tet) segfaults in initialize(), and any
# other outcome is the compiler's choice (undefined behaviour).
# FASTCOROT_UNPATCHED=1 builds their file exactly as fetched.
if [[ ${FASTCOROT_UNPATCHED:-0} == 1 ]]; then
  echo "note: FASTCOROT_UNPATCHED=1: their uninitialized c8[] padding read is left as is" >&2
elif grep -q 'int c8\[8\];' "$export_dir/FastCorotFEM.cpp"; then
  sed -i 's/int c8\[8\];/int c8[8] = {0, 0, 0, 0, 0, 0, 0, 0};/' "$export_dir/FastCorotFEM.cpp"
  echo "note: patched the export: c8[8] zero-initialized in FastCorotFEM.cpp (uninitialized padding index)" >&2
else
  echo "note: 'int c8[8];' not found in FastCorotFEM.cpp; no patch applied" >&2
fi

# Their kernels are hand-written AVX (8 floats per register); -march=native must provide it.
native_macros=$("$cxx" -march=native -dM -E - </dev/null)
if ! grep -q '^#define __AVX__ ' <<<"$native_macros"; then
  echo "build_fastcorot_peer.sh: this CPU/compiler has no AVX; their code needs at least -mavx" >&2
  exit 1
fi

flags=(-std=c++17 -O3 -march=native -DNDEBUG)
# Their translation unit: -w, because their 2016-era bundled Eigen 3.2.10 warns under modern
# g++ (std::unary_negate/binary_negate deprecated in C++17); we leave their code as it is.
"$cxx" "${flags[@]}" -w -I"$export_dir" -I"$export_dir/extern/eigen" \
  -c "$export_dir/FastCorotFEM.cpp" -o "$object_dir/FastCorotFEM.o"
# Ours: full warnings; their headers come in through -isystem so only our lines can warn.
"$cxx" "${flags[@]}" -Wall -Wextra -isystem "$export_dir" -isystem "$export_dir/extern/eigen" \
  -c "$script_dir/fastcorot_peer.cpp" -o "$object_dir/fastcorot_peer.o"
"$cxx" "${flags[@]}" "$object_dir/fastcorot_peer.o" "$object_dir/FastCorotFEM.o" -o "$binary.tmp"
mv -f "$binary.tmp" "$binary"

echo "built from $revision" >&2
echo "$binary"
