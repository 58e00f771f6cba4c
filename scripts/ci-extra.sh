#!/usr/bin/env bash
# The CI job after the main tests (tests/fuzz/README.md):
#   1. builds the test suite with clang, AddressSanitizer and UndefinedBehaviorSanitizer
#      (-fno-sanitize-recover: the first report fails the test) and runs the unit, e2e and
#      file tests there, except those that only drive nvcc, the GPU or an installed package;
#   2. runs the fuzzer (same build) for FUZZ_SECONDS on the seed corpus.
# Environment: ASAN_BUILD_DIR (default build-asan), FUZZ_SECONDS (default 120), JOBS (2).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${ASAN_BUILD_DIR:-build-asan}
FUZZ_SECONDS=${FUZZ_SECONDS:-120}
JOBS=${JOBS:-2}
start=$(date +%s)
stamp() { echo "== ci-extra: $1 ($(( $(date +%s) - start )) s)"; }

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

stamp "configure $BUILD_DIR (clang, ASan + UBSan, libFuzzer)"
cmake -S . -B "$BUILD_DIR" -G Ninja -C tests/fuzz/sanitize.cmake >/dev/null
stamp "build"
cmake --build "$BUILD_DIR" -j"$JOBS"

stamp "unit and e2e tests under the sanitizers"
# nvcc, the GPU and the consumer project (an install plus a CUDA build) exercise no
# compiler code that the other tests do not. The e2e.robustness tests (every truncation and
# token mutation of the examples) take minutes under the sanitizers; the main build runs
# them, and the fuzzer below covers the same ground here. So do the emulator runs of the
# Hopper example (emu.gemm_sm90*, over two minutes here): the smaller TMA, wgmma, pipeline and
# cluster kernels of tests/emu/kernels go through the same code under the sanitizers.
ctest --test-dir "$BUILD_DIR" -j"$JOBS" --output-on-failure -L 'unit|e2e|file' \
  -E 'nvcc|^gpu\.|^consumer\.|robustness|^emu\.gemm_sm90'

stamp "fuzz for ${FUZZ_SECONDS} s"
FUZZ_DIR="$BUILD_DIR/fuzz"
rm -rf "$FUZZ_DIR/seeds" "$FUZZ_DIR/artifacts"
mkdir -p "$FUZZ_DIR/corpus" "$FUZZ_DIR/artifacts"
python3 tests/fuzz/make-seed-corpus.py --small "$FUZZ_DIR/seeds"
# Known-open bugs (tests/fuzz/regressions/KNOWN_OPEN.txt) do not fail the run: an exception
# or a broken contract whose message carries one of their signatures counts as handled.
TYLO_FUZZ_TOLERATE=$(sed -e 's/#.*//' tests/fuzz/regressions/KNOWN_OPEN.txt |
  awk 'NF > 1 { $1 = ""; sub(/^ +/, ""); printf "%s%s", sep, $0; sep = "|" }')
export TYLO_FUZZ_TOLERATE
# The fuzzer's own status, read before anything else runs (PIPESTATUS is the last pipeline's).
set +e
"$BUILD_DIR/tests/fuzz/fuzz_compile" -seed=1 -max_total_time="$FUZZ_SECONDS" -timeout=60 -rss_limit_mb=3072 \
  -max_len=8192 -dict=tests/fuzz/tylo.dict -print_final_stats=1 -artifact_prefix="$FUZZ_DIR/artifacts/" \
  "$FUZZ_DIR/corpus" "$FUZZ_DIR/seeds" 2>&1 | tee "$FUZZ_DIR/fuzz.log" | grep -E '^(INFO: (seed corpus|-max_len)|#[0-9]+ *(INITED|DONE)|stat::|==[0-9]+==|SUMMARY|tylo fuzz|  what)'
status=${PIPESTATUS[0]}
set -e
# Crashes, leaks, timeouts and memory blow-ups fail the run; a slow-unit-* note (an input that
# took long but finished) does not.
found=$(find "$FUZZ_DIR/artifacts" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' \
  -o -name 'oom-*' \) -print -quit)
if [ "$status" -ne 0 ] || [ -n "$found" ]; then
  echo "ci-extra: the fuzzer found a bug; the input is in $FUZZ_DIR/artifacts/, the log in $FUZZ_DIR/fuzz.log"
  tail -n 60 "$FUZZ_DIR/fuzz.log"
  exit 1
fi
stamp "done"
