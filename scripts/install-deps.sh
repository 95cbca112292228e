#!/usr/bin/env bash
# Installs every Debian 12 package cholsim needs to build, test and benchmark.
# Idempotent: packages already installed are skipped, and nothing runs apt when all are present.
# Works as root (no sudo needed) or as a user with sudo.
set -euo pipefail

packages=(
  build-essential cmake pkg-config ninja-build
  libopenblas-dev liblapack-dev liblapacke-dev
  libmetis-dev
  libtbb-dev
  libvtk9-dev
  libgtest-dev libgmock-dev
  libbenchmark-dev
  libcli11-dev
  nlohmann-json3-dev
  libsuitesparse-dev
  libmumps-seq-dev
  libhypre-dev  # BoomerAMG: the algebraic multigrid baseline of bench_octree (bench/ only)
  coinor-libipopt-dev  # Ipopt: the QP reference of the tests (solvers/qp)
  tetgen
  clang libclang-rt-14-dev  # libFuzzer + ASan/UBSan runtimes for the reader fuzzers (tests/fuzz)
)

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages already installed"
  exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1; then
  as_root=(sudo)
else
  echo "install-deps: missing packages (${missing[*]}) and neither root nor sudo available" >&2
  exit 1
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
