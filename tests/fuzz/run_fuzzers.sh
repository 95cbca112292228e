#!/usr/bin/env bash
# Runs every libFuzzer reader target of a CHOLSIM_FUZZ build for a bounded time each, starting
# from the seed corpus tests/fuzz/corpus/<target> (never written to: new inputs go to the build
# folder), as many targets at a time as there are cores (each fuzzer is one process on one core,
# so the wall time is the targets' total over the cores). Exits non-zero when a target found a
# crash, leak, sanitizer report, timeout or allocation over the limit — every target still runs
# its time — and prints that target's whole log; the input that caused it is left as
# <build>/fuzz-artifacts/<target>-*.
#   tests/fuzz/run_fuzzers.sh BUILD_DIR [SECONDS_PER_TARGET=30] [PARALLEL=nproc]
set -euo pipefail
build="$1"
seconds="${2:-30}"
source_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mkdir -p "$build/fuzz-artifacts"
shopt -s nullglob
fuzzers=("$build"/tests/fuzz/fuzz_*)
if [ ${#fuzzers[@]} -eq 0 ]; then
  echo "run_fuzzers: no fuzz_* programs in $build/tests/fuzz (configure with -DCHOLSIM_FUZZ=ON)" >&2
  exit 2
fi
parallel="${3:-$(nproc)}"
logs="$build/fuzz-logs"
mkdir -p "$logs"

fuzz_one() {
  local fuzzer="$1" target="$2"
  local work_corpus="$build/fuzz-corpus/$target"
  mkdir -p "$work_corpus"
  # 2 GB is both the RSS and the single-allocation limit: a reader that sizes memory by a count
  # the file announces, instead of by the bytes it holds, fails here. -timeout: inputs are at most
  # 4 KB and run in milliseconds; 5 s leaves room for a loaded CI machine and still catches a hang.
  local status=0
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$fuzzer" -max_total_time="$seconds" -rss_limit_mb=2048 -malloc_limit_mb=2048 -timeout=5 \
    -max_len=4096 -print_final_stats=1 -artifact_prefix="$build/fuzz-artifacts/$target-" \
    "$work_corpus" "$source_dir/corpus/$target" >"$logs/$target.log" 2>&1 || status=$?
  echo "$status" >"$logs/$target.status"
}

targets=()
for fuzzer in "${fuzzers[@]}"; do
  target="${fuzzer##*/fuzz_}"
  targets+=("$target")
  rm -f "$logs/$target.status"
  while [ "$(jobs -rp | wc -l)" -ge "$parallel" ]; do wait -n || true; done
  echo "=== fuzz_$target: $seconds s ==="
  fuzz_one "$fuzzer" "$target" &
done
wait

failed=0
for target in "${targets[@]}"; do
  status="$(cat "$logs/$target.status" 2>/dev/null || echo "no status")"
  if [ "$status" = 0 ]; then
    # The closing statistics: runs, coverage, corpus size.
    echo "fuzz_$target: ok ($(grep '^Done' "$logs/$target.log"))"
  else
    failed=1
    echo "fuzz_$target: FAILED (exit $status); its log:"
    cat "$logs/$target.log"
  fi
done
exit "$failed"
