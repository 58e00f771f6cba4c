#!/usr/bin/env bash
# Everything that needs the GPU, in one run on a fresh GPU machine with this repository:
#   1. builds the CUDA parts (examples, GPU tests, benchmarks) for sm_90,
#   2. runs the GPU tests (ctest -L gpu) and the example drivers,
#   3. runs the benchmarks (bench/add_one_bench: add_one_n vs cudaMemcpyAsync, one launch),
#   4. dumps the SASS of the generated add_one kernels (16-byte LDG.E.128 / STG.E.128).
# Writes at most 8 files under $OUT (or bench/out) and prints a short summary last.
#
# tyloc: the GPU machine usually lacks the compiler's build dependencies (ANTLR, CLI11, fmt,
# nlohmann-json, Catch2) and cannot install them. So this script uses, in this order:
#   $TYLOC if set; build-gpu-kit/tyloc (made by bench/make-gpu-kit.sh and carried along);
#   build/tools/tyloc/tyloc if it runs there; otherwise it builds the whole project.
# Environment: OUT, TYLOC, BUILD_DIR (default build-gpu), JOBS (default: all cores),
#   CUDA_ARCHS (default 90-real).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
OUT_DIR=${OUT:-$ROOT/bench/out}
BUILD_DIR=${BUILD_DIR:-build-gpu}
JOBS=${JOBS:-$(nproc)}
CUDA_ARCHS=${CUDA_ARCHS:-90-real}
mkdir -p "$OUT_DIR"
LOG="$OUT_DIR/run-gpu.log"
: >"$LOG"
exec > >(tee -a "$LOG") 2>&1

STATUS=0
RESULTS=()
note() { RESULTS+=("$(printf '%-34s %s' "$1" "$2")"); }
step() { echo; echo "==== $* ($(date -u +%H:%M:%S))"; }

step "machine"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem --format=csv 2>&1 ||
  echo "nvidia-smi failed"
nvcc --version | tail -n 2
cmake --version | head -n 1
COMMIT=$(git rev-parse HEAD 2>/dev/null || cat build-gpu-kit/commit 2>/dev/null || echo unknown)
if git rev-parse HEAD >/dev/null 2>&1 && [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
  COMMIT="$COMMIT-dirty"
fi
echo "commit: $COMMIT"

step "tyloc"
runs() { [ -n "$1" ] && [ -x "$1" ] && "$1" --version >/dev/null 2>&1; }
TYLOC_EXE=""
for candidate in "${TYLOC:-}" "$ROOT/build-gpu-kit/tyloc" "$ROOT/build/tools/tyloc/tyloc"; do
  if runs "$candidate"; then
    TYLOC_EXE=$candidate
    break
  fi
done
CONFIGURE=(cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$CUDA_ARCHS")
if [ -n "$TYLOC_EXE" ]; then
  echo "using the prebuilt $TYLOC_EXE ($("$TYLOC_EXE" --version 2>&1 | head -n 1))"
  if [ "$TYLOC_EXE" = "$ROOT/build-gpu-kit/tyloc" ] && [ -f build-gpu-kit/sources.sha256 ]; then
    if [ "$(cat build-gpu-kit/sources.sha256)" != "$(bench/compiler-sources-hash.sh)" ]; then
      echo "WARNING: build-gpu-kit was made from other compiler sources than these: rerun bench/make-gpu-kit.sh"
      note "tyloc" "STALE kit: built from other sources than this checkout"
      STATUS=1
    else
      note "tyloc" "kit matches this checkout's compiler sources"
    fi
  fi
  CONFIGURE+=(-DTYLO_TYLOC_EXECUTABLE="$TYLOC_EXE")
  TARGETS=(add_one_example gpu_add_one_test add_one_bench)
else
  echo "no prebuilt tyloc runs here: building the whole project (needs its Debian packages)"
  CONFIGURE+=(-DTYLO_TYLOC_EXECUTABLE=)
  TARGETS=(tyloc add_one_example gpu_add_one_test add_one_bench)
fi

step "configure and build (${TARGETS[*]})"
# A build folder configured on another machine or from another path cannot be reused.
if [ -f "$BUILD_DIR/CMakeCache.txt" ] && ! grep -qx "CMAKE_HOME_DIRECTORY:INTERNAL=$ROOT" "$BUILD_DIR/CMakeCache.txt"; then
  echo "$BUILD_DIR was configured elsewhere: starting it afresh"
  rm -rf "$BUILD_DIR"
fi
if ! "${CONFIGURE[@]}"; then
  echo "configure failed. Without the compiler's dependencies on this machine, make a kit where tyloc"
  echo "builds (bench/make-gpu-kit.sh) and carry build-gpu-kit here."
  note "build" "FAILED (configure)"
  printf '%s\n' "${RESULTS[@]}" | tee "$OUT_DIR/summary.txt"
  exit 1
fi
if ! cmake --build "$BUILD_DIR" -j "$JOBS" --target "${TARGETS[@]}"; then
  note "build" "FAILED"
  printf '%s\n' "${RESULTS[@]}" | tee "$OUT_DIR/summary.txt"
  exit 1
fi
note "build" "ok (CUDA architectures $CUDA_ARCHS)"

step "example drivers"
"$BUILD_DIR/examples/add_one/add_one_example" 2>&1 | tee "$OUT_DIR/examples.txt"
rc=${PIPESTATUS[0]}
case $rc in
  0) note "examples/add_one" "ok: $(grep -E '^add_one' "$OUT_DIR/examples.txt" | paste -sd ';' -)" ;;
  77) note "examples/add_one" "SKIPPED: no CUDA device"; STATUS=1 ;;
  *) note "examples/add_one" "FAILED (exit $rc)"; STATUS=1 ;;
esac

step "GPU tests (ctest -L gpu)"
ctest --test-dir "$BUILD_DIR" -L gpu --output-on-failure --timeout 300 2>&1 | tee "$OUT_DIR/ctest-gpu.txt"
rc=${PIPESTATUS[0]}
summary=$(grep -E 'tests passed|tests failed' "$OUT_DIR/ctest-gpu.txt" | tail -n 1)
skipped=$(grep -c '\*\*\*Skipped' "$OUT_DIR/ctest-gpu.txt")
if [ "$rc" -eq 0 ] && [ "$skipped" -eq 0 ]; then
  note "ctest -L gpu" "ok: $summary"
else
  note "ctest -L gpu" "FAILED or skipped ($skipped skipped): $summary"
  STATUS=1
fi

step "benchmark: add_one_bench"
timeout 300 "$BUILD_DIR/bench/add_one_bench" --json "$OUT_DIR/add_one_bench.json" --commit "$COMMIT" 2>&1 | tee "$OUT_DIR/add_one_bench.txt"
rc=${PIPESTATUS[0]}
if [ "$rc" -eq 0 ]; then
  note "add_one_bench" "ok: $(grep -E 'reaches' "$OUT_DIR/add_one_bench.txt")"
else
  note "add_one_bench" "FAILED (exit $rc)"
  STATUS=1
fi

step "SASS of the generated add_one kernels"
OBJ=$(find "$BUILD_DIR/bench" -path '*tylo/add_one.cu.o' | head -n 1)
if command -v cuobjdump >/dev/null && [ -n "$OBJ" ]; then
  cuobjdump --dump-sass "$OBJ" >"$OUT_DIR/add_one.sass" 2>&1
  cuobjdump --dump-resource-usage "$OBJ" 2>&1 | grep -E 'Function|REG' | tee -a "$OUT_DIR/add_one.sass"
  # The add_one_n kernel's function only (up to the next one).
  awk '/Function : .*add_one_n_kernel/ { on = 1; print; next } /Function : / { on = 0 } on' \
    "$OUT_DIR/add_one.sass" >"$OUT_DIR/add_one_n.sass.tmp"
  ldg=$(grep -c 'LDG\.E\.128' "$OUT_DIR/add_one_n.sass.tmp")
  stg=$(grep -c 'STG\.E\.128' "$OUT_DIR/add_one_n.sass.tmp")
  scalar=$(grep -cE '(LDG|STG)\.E(\.CONSTANT)? ' "$OUT_DIR/add_one_n.sass.tmp")
  local_mem=$(grep -cE '\b(LDL|STL)\b' "$OUT_DIR/add_one_n.sass.tmp")
  rm -f "$OUT_DIR/add_one_n.sass.tmp"
  grep -E 'LDG|STG' "$OUT_DIR/add_one.sass" | sed 's/^ *//' | sort | uniq -c | sort -rn | head -n 12
  if [ "$ldg" -ge 1 ] && [ "$stg" -ge 1 ] && [ "$local_mem" -eq 0 ]; then
    note "SASS add_one_n_kernel" "ok: LDG.E.128 x$ldg, STG.E.128 x$stg, 32-bit (tail) x$scalar, LDL/STL x0"
  else
    note "SASS add_one_n_kernel" "UNEXPECTED: LDG.E.128 x$ldg, STG.E.128 x$stg, LDL/STL x$local_mem"
    STATUS=1
  fi
else
  note "SASS" "not dumped (cuobjdump: $(command -v cuobjdump || echo missing), object: ${OBJ:-missing})"
fi

step "summary"
{
  echo "run-gpu.sh on $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1)"
  printf '%s\n' "${RESULTS[@]}"
  echo
  # The benchmark's own table.
  sed -n '/^add-one on /,$p' "$OUT_DIR/add_one_bench.txt" 2>/dev/null
} | tee "$OUT_DIR/summary.txt"
exit $STATUS
