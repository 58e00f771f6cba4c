#!/usr/bin/env bash
# Everything that needs the GPU, in one run of a few minutes on a fresh GPU machine with this
# repository:
#   1. builds the CUDA parts (examples, GPU tests, benchmarks) for sm_90,
#   2. runs the example drivers (add_one, gemm, gemm_sm90, softmax, attention), the GPU tests (ctest -L gpu) and the launchers'
#      checks of tests/gpu/launch_checks_test.cu with a device,
#   3. runs the benchmarks: bench/add_one_bench (add_one_n vs cudaMemcpyAsync, one launch),
#      bench/softmax_bench (softmax_v4 vs cudaMemcpyAsync of the same tensor),
#      bench/attention_bench (the fused attention, d = 128, seq 1k to 16k, vs an unfused cuBLAS
#      reference) and
#      bench/gemm_bench (the generated GEMM vs cublasGemmEx, bf16 and f16, 2048^3 to 8192^3),
#   4. dumps the SASS of the generated add_one kernels (16-byte LDG.E.128 / STG.E.128) and of the
#      GEMM kernels (HMMA, LDSM, LDGSTS counted per kernel), with nvcc -Xptxas -v's registers
#      and spills for the GEMM.
#   5. profiles a few GEMM kernels with Nsight Compute (ncu), when it is installed.
# Writes up to 11 files under $OUT (or bench/out): run-gpu.log (everything), summary.txt, examples.txt,
# ctest-gpu.txt, add_one_bench.json, softmax_bench.json, attention_bench.json, gemm_bench.json, add_one.sass, gemm.sass (ptxas -v, the
# instruction counts, then the SASS), ncu.txt; intermediate files go to a temporary folder.
#
# tyloc: the GPU machine usually lacks the compiler's build dependencies (ANTLR, CLI11, fmt,
# nlohmann-json, Catch2) and cannot install them. So this script uses, in this order:
#   $TYLOC if set; build-gpu-kit/tyloc (made by bench/make-gpu-kit.sh and carried along);
#   build/tools/tyloc/tyloc if it runs there; otherwise it builds the whole project.
# Environment: OUT, TYLOC, BUILD_DIR (default build-gpu), JOBS (default: all cores),
#   CUDA_ARCHS (default 90-real), PROFILE_KERNELS (gemm_bench kernels for ncu), PROFILE_SECONDS (150).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
OUT_DIR=${OUT:-$ROOT/bench/out}
BUILD_DIR=${BUILD_DIR:-build-gpu}
JOBS=${JOBS:-$(nproc)}
CUDA_ARCHS=${CUDA_ARCHS:-90-real}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/run-gpu.XXXXXX")  # intermediate files, not kept
trap 'rm -rf "$WORK"' EXIT
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
COMMIT=$(git rev-parse --verify -q HEAD 2>/dev/null || head -n 1 build-gpu-kit/commit 2>/dev/null || echo unknown)
if git rev-parse --verify -q HEAD >/dev/null 2>&1 && [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
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
  TARGETS=(add_one_example gemm_example gemm_sm90_example softmax_example attention_example gpu_hopper_test gpu_add_one_test gpu_gemm_test launch_checks_test int_semantics_test add_one_bench softmax_bench attention_bench gemm_bench)
else
  echo "no prebuilt tyloc runs here: building the whole project (needs its Debian packages)"
  CONFIGURE+=(-DTYLO_TYLOC_EXECUTABLE=)
  TARGETS=(tyloc add_one_example gemm_example gemm_sm90_example softmax_example attention_example gpu_hopper_test gpu_add_one_test gpu_gemm_test launch_checks_test int_semantics_test add_one_bench softmax_bench attention_bench gemm_bench)
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
: >"$OUT_DIR/examples.txt"
for example in add_one/add_one_example gemm/gemm_example gemm/gemm_sm90_example softmax/softmax_example attention/attention_example; do
  name=$(basename "$example")
  echo "\$ examples/$example" | tee -a "$OUT_DIR/examples.txt"
  "$BUILD_DIR/examples/$example" 2>&1 | tee "$WORK/$name.txt" | tee -a "$OUT_DIR/examples.txt"
  rc=${PIPESTATUS[0]}
  case $rc in
    0) note "examples/$example" "ok: $(grep -E "^(add_one|gemm|skipped)" "$WORK/$name.txt" | paste -sd ';' -)" ;;
    77) note "examples/$example" "SKIPPED: no CUDA device"; STATUS=1 ;;
    *) note "examples/$example" "FAILED (exit $rc)"; STATUS=1 ;;
  esac
done

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

step "launchers' checks of shared indices, with the accepted launches run (launch_checks_test)"
"$BUILD_DIR/tests/gpu/launch_checks_test" 2>&1 | tee "$WORK/launch_checks.txt"
if [ "${PIPESTATUS[0]}" -eq 0 ]; then
  note "launch_checks_test" "ok: $(grep -c 'accepted (ok)' "$WORK/launch_checks.txt") launches run, $(grep -c 'refused.*(ok)' "$WORK/launch_checks.txt") refused"
else
  note "launch_checks_test" "FAILED"
  STATUS=1
fi

# Runs bench/<name> (under a time limit of <seconds>) with its JSON beside the other outputs, and
# notes the line that the function <summary> prints from its output file, or its failure.
run_bench() {
  local name=$1 seconds=$2 summary=$3
  step "benchmark: $name"
  timeout "$seconds" "$BUILD_DIR/bench/$name" --json "$OUT_DIR/$name.json" --commit "$COMMIT" 2>&1 | tee "$WORK/$name.txt"
  local rc=${PIPESTATUS[0]}
  if [ "$rc" -eq 0 ]; then
    note "$name" "ok: $("$summary" "$WORK/$name.txt")"
  else
    note "$name" "FAILED (exit $rc)"
    STATUS=1
  fi
}
add_one_summary() { grep -E 'reaches' "$1"; }
softmax_summary() { echo "$(grep -c 'of the copy' "$1") sizes"; }
attention_summary() { grep -E 'N = +8192' "$1" | sed 's/;.*//' | paste -sd ';' -; }
gemm_summary() { grep -E 'reaches|^fastest' "$1" | paste -sd ';' -; }
run_bench add_one_bench 300 add_one_summary
run_bench softmax_bench 120 softmax_summary
run_bench attention_bench 240 attention_summary
run_bench gemm_bench 300 gemm_summary

step "SASS of the generated add_one kernels"
OBJ=$(find "$BUILD_DIR/bench" -path '*tylo/add_one.cu.o' | head -n 1)
if command -v cuobjdump >/dev/null && [ -n "$OBJ" ]; then
  cuobjdump --dump-sass "$OBJ" >"$OUT_DIR/add_one.sass" 2>&1
  cuobjdump --dump-resource-usage "$OBJ" 2>&1 | grep -E 'Function|REG' | tee -a "$OUT_DIR/add_one.sass"
  # The add_one_n kernel's function only (up to the next one).
  awk '/Function : .*tylo_kernel_add_one_n/ { on = 1; print; next } /Function : / { on = 0 } on' \
    "$OUT_DIR/add_one.sass" >"$OUT_DIR/add_one_n.sass.tmp"
  ldg=$(grep -c 'LDG\.E\.128' "$OUT_DIR/add_one_n.sass.tmp")
  stg=$(grep -c 'STG\.E\.128' "$OUT_DIR/add_one_n.sass.tmp")
  scalar=$(grep -cE '(LDG|STG)\.E(\.CONSTANT)? ' "$OUT_DIR/add_one_n.sass.tmp")
  local_mem=$(grep -cE '\b(LDL|STL)\b' "$OUT_DIR/add_one_n.sass.tmp")
  rm -f "$OUT_DIR/add_one_n.sass.tmp"
  grep -E 'LDG|STG' "$OUT_DIR/add_one.sass" | sed 's/^ *//' | sort | uniq -c | sort -rn | head -n 12
  if [ "$ldg" -ge 1 ] && [ "$stg" -ge 1 ] && [ "$local_mem" -eq 0 ]; then
    note "SASS tylo_kernel_add_one_n" "ok: LDG.E.128 x$ldg, STG.E.128 x$stg, 32-bit (tail) x$scalar, LDL/STL x0"
  else
    note "SASS tylo_kernel_add_one_n" "UNEXPECTED: LDG.E.128 x$ldg, STG.E.128 x$stg, LDL/STL x$local_mem"
    STATUS=1
  fi
else
  note "SASS" "not dumped (cuobjdump: $(command -v cuobjdump || echo missing), object: ${OBJ:-missing})"
fi

step "SASS and registers of the generated GEMM kernels"
# Per kernel: how many of each instruction of interest the SASS holds. HMMA: mma.sync on the
# tensor cores; LDSM: ldmatrix; LDGSTS: cp.async; LDGDEPBAR/DEPBAR: commit_copies/wait_copies;
# BAR: barrier(); LDG/STG: plain global loads/stores (the epilogue's stores); LDL/STL: local
# memory (spills).
sass_counts() {
  awk -v ops="HMMA LDSM LDGSTS LDGDEPBAR DEPBAR BAR LDG STG LDL STL" '
    BEGIN { nops = split(ops, op, " "); for (i = 1; i <= nops; ++i) want[op[i]] = 1 }
    /Function : / {
      name = ""
      if (match($NF, /tylo_kernel_gemm[a-z0-9_]*_b?f16/)) { name = substr($NF, RSTART + 12, RLENGTH - 12); order[++n] = name }
      next
    }
    name == "" { next }
    {
      line = $0
      sub(/^[ \t]*\/\*[0-9a-f]+\*\/[ \t]*/, "", line)
      sub(/^@!?U?P[T0-9]+[ \t]+/, "", line)
      split(line, w, /[ \t]+/)
      split(w[1], parts, ".")
      if (parts[1] in want) count[name, parts[1]]++
    }
    END {
      printf "%-30s", "kernel"
      for (i = 1; i <= nops; ++i) printf " %9s", op[i]
      printf "\n"
      for (k = 1; k <= n; ++k) {
        printf "%-30s", order[k]
        for (i = 1; i <= nops; ++i) printf " %9d", count[order[k], op[i]]
        printf "\n"
      }
    }' "$1"
}
# nvcc -Xptxas -v, one line per kernel: registers, spills, stack.
ptxas_summary() {
  awk '
    /Compiling entry function/ {
      name = "?"
      if (match($0, /tylo_kernel_gemm[a-z0-9_]*_b?f16/)) name = substr($0, RSTART + 12, RLENGTH - 12)
    }
    /spill stores/ { frame = $0; sub(/^[ \t]*/, "", frame) }
    /Used [0-9]+ registers/ {
      regs = $0; sub(/.*Used /, "", regs); sub(/ registers.*/, "", regs)
      printf "%-30s %4s registers; %s\n", name, regs, frame
    }' "$1"
}
GEN_DIR="$BUILD_DIR/bench/tylo"
GEMM_SASS="$OUT_DIR/gemm.sass"
: >"$GEMM_SASS"
if [ -f "$GEN_DIR/gemm.cu" ] && [ -f "$GEN_DIR/gemm_stages.cu" ]; then
  # Both at once; wait for these two only (a bare `wait` would also wait for the log's tee).
  pids=()
  for stem in gemm gemm_stages; do
    nvcc -std=c++17 -O3 -gencode arch=compute_90,code=sm_90 -Xptxas -v -I runtime -I "$GEN_DIR" \
      -c "$GEN_DIR/$stem.cu" -o "$WORK/$stem-ptxas.o" >"$WORK/$stem-ptxas.txt" 2>&1 &
    pids+=($!)
  done
  wait "${pids[@]}"
  {
    echo "==== nvcc -Xptxas -v (sm_90) of the generated gemm.cu and gemm_stages.cu"
    cat "$WORK/gemm-ptxas.txt" "$WORK/gemm_stages-ptxas.txt"
  } >>"$GEMM_SASS"
  cat "$WORK/gemm-ptxas.txt" "$WORK/gemm_stages-ptxas.txt" >"$WORK/ptxas.txt"
  ptxas_summary "$WORK/ptxas.txt" | tee "$WORK/ptxas-summary.txt"
  spills=$(grep -cE '[1-9][0-9]* bytes spill (stores|loads)' "$WORK/ptxas.txt")
  note "ptxas -v GEMM kernels" "$(awk '{ printf "%s%s %s regs", sep, $1, $2; sep = ", " }' "$WORK/ptxas-summary.txt"); spilling lines: $spills"
else
  note "ptxas -v GEMM kernels" "not run (no generated $GEN_DIR/gemm.cu)"
fi
GEMM_OBJS=$(find "$BUILD_DIR/bench" -path '*tylo/gemm*.cu.o' | sort | paste -sd ' ' -)
if command -v cuobjdump >/dev/null && [ -n "$GEMM_OBJS" ]; then
  for obj in $GEMM_OBJS; do
    cuobjdump --dump-sass "$obj" >>"$WORK/gemm-sass.txt" 2>&1
    cuobjdump --dump-resource-usage "$obj" 2>&1 | grep -E 'Function|REG' >>"$WORK/gemm-resources.txt"
  done
  sass_counts "$WORK/gemm-sass.txt" | tee "$WORK/gemm-counts.txt"
  {
    echo
    echo "==== instructions per kernel (cuobjdump --dump-sass of $GEMM_OBJS)"
    cat "$WORK/gemm-counts.txt"
    echo
    echo "==== the main loop of each kernel (bench/tuning/sass-loop-mix.py)"
    python3 bench/tuning/sass-loop-mix.py "$WORK/gemm-sass.txt" || echo "(sass-loop-mix.py failed)"
    echo
    echo "==== opcodes of tylo_kernel_gemm_bf16 (most frequent first)"
    awk '/Function : / { on = ($NF ~ /tylo_kernel_gemm_bf16/) ; next } on' "$WORK/gemm-sass.txt" |
      grep -oE '(HMMA|LDSM|LDGSTS|LDGDEPBAR|DEPBAR|BAR|LDG|STG|LDS|STS|LDL|STL|FFMA|FMUL|FMNMX|IMAD|ISETP)(\.[A-Z0-9_]+)*' |
      sort | uniq -c | sort -rn
    echo
    echo "==== cuobjdump --dump-resource-usage"
    cat "$WORK/gemm-resources.txt"
    echo
    echo "==== SASS"
    cat "$WORK/gemm-sass.txt"
  } >>"$GEMM_SASS"
  # Every GEMM kernel must use the tensor cores, ldmatrix and cp.async (but gemm_any, which stages
  # its tiles through registers), and not spill.
  bad=$(awk 'NR > 1 && ($2 == 0 || $3 == 0 || ($4 == 0 && $1 !~ /^gemm_any_/)) { print $1 }' "$WORK/gemm-counts.txt" |
    paste -sd ' ' -)
  local_mem=$(awk 'NR > 1 { s += $10 + $11 } END { print s + 0 }' "$WORK/gemm-counts.txt")
  kernels=$(awk 'NR > 1' "$WORK/gemm-counts.txt" | wc -l)
  line=$(awk 'NR > 1 { printf "%s%s HMMA x%d LDSM x%d LDGSTS x%d", sep, $1, $2, $3, $4; sep = "; " }' "$WORK/gemm-counts.txt")
  if [ "$kernels" -ge 6 ] && [ -z "$bad" ]; then
    note "SASS GEMM kernels" "ok ($kernels kernels, LDL/STL x$local_mem): $line"
  else
    note "SASS GEMM kernels" "UNEXPECTED ($kernels kernels; without HMMA, LDSM or LDGSTS: ${bad:-none}): $line"
    STATUS=1
  fi
else
  note "SASS GEMM" "not dumped (cuobjdump: $(command -v cuobjdump || echo missing), objects: ${GEMM_OBJS:-missing})"
fi

step "profile of a few GEMM kernels (Nsight Compute, when installed)"
# What limits each kernel, for the next round of changes: tensor-pipe and memory throughput,
# occupancy, warp stall reasons. One ncu run per kernel, each profiling one launch at 4096^3 (after
# two), last because it is the least needed, and capped at PROFILE_SECONDS in all.
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -n 1 || true)
PROFILE_KERNELS=${PROFILE_KERNELS:-gemm_bf16 gemm_no_prefetch_bf16 gemm_bn128_bf16 gemm_s5_bf16}
if [ -n "$NCU" ] && [ -x "$BUILD_DIR/bench/gemm_bench" ]; then
  : >"$OUT_DIR/ncu.txt"
  deadline=$((SECONDS + ${PROFILE_SECONDS:-150}))
  profiled=()
  for k in $PROFILE_KERNELS; do
    left=$((deadline - SECONDS))
    if [ "$left" -le 10 ]; then
      echo "profile: no time left for $k" | tee -a "$OUT_DIR/ncu.txt"
      break
    fi
    echo "==== ncu: $k" >>"$OUT_DIR/ncu.txt"
    if timeout "$left" "$NCU" -k "regex:^tylo_kernel_${k}\$" -s 2 -c 1 --section SpeedOfLight \
        --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section Occupancy \
        --section SchedulerStats --section WarpStateStats "$BUILD_DIR/bench/gemm_bench" --sizes 4096 \
        --stages-size 0 --variants-size 4096 --reps 1 >>"$OUT_DIR/ncu.txt" 2>&1; then
      profiled+=("$k")
    fi
  done
  grep -E '^==PROF==|ERR_|SM Busy|Compute \(SM\) Throughput|Memory Throughput|L2 Cache Throughput|Achieved Occupancy' \
    "$OUT_DIR/ncu.txt" | head -n 40
  note "ncu" "profiled: ${profiled[*]:-none} (ncu.txt)"
else
  note "ncu" "not run (ncu: ${NCU:-missing})"
fi

step "summary"
{
  echo "run-gpu.sh on $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1)"
  printf '%s\n' "${RESULTS[@]}"
  echo
  # The benchmarks' own tables.
  sed -n '/^add-one on /,$p' "$WORK/add_one_bench.txt" 2>/dev/null
  echo
  sed -n '/^GEMM on /,$p' "$WORK/gemm_bench.txt" 2>/dev/null
  echo
  cat "$WORK/gemm-counts.txt" 2>/dev/null
  cat "$WORK/ptxas-summary.txt" 2>/dev/null
} | tee "$OUT_DIR/summary.txt"
exit $STATUS
