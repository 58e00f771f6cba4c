#!/usr/bin/env bash
# What can be measured of the generated GEMM kernels without a GPU: for every gemm*.cu that the
# build generated for gemm_bench (the examples and the tile variants of bench/CMakeLists.txt),
# compiles it for sm_90a (what gemm_bench is built for) with ptxas -v and disassembles it
# (nvdisasm: from the toolkit, or
# `pip install nvidia-cuda-nvdisasm`), then prints per kernel its registers, spill bytes,
# shared memory per block and the instruction mix of its main loop (sass-loop-mix.py).
#   bench/tuning/static-figures.sh [BUILD_DIR] [KERNEL_SUBSTRING]     (default build, every kernel)
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD_DIR=${1:-build}
FILTER=${2:-}
GEN="$BUILD_DIR/bench/tylo"
[ -d "$GEN" ] || { echo "no $GEN: build gemm_bench first (cmake --build $BUILD_DIR --target gemm_bench)" >&2; exit 2; }
NVDISASM=$(command -v nvdisasm || python3 -c 'import nvidia, os; print(os.path.join(nvidia.__path__[0], "cu13/bin/nvdisasm"))' 2>/dev/null || true)
[ -x "$NVDISASM" ] || { echo "no nvdisasm: pip install nvidia-cuda-nvdisasm" >&2; exit 2; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

pids=()
for cu in "$GEN"/gemm*.cu; do
  stem=$(basename "$cu" .cu)
  ( nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -I runtime -I "$GEN" -Xptxas -v -cubin \
      -o "$WORK/$stem.cubin" "$cu" >"$WORK/$stem.ptxas" 2>&1 &&
    "$NVDISASM" -c "$WORK/$stem.cubin" >"$WORK/$stem.sass" ) &
  pids+=($!)
  # Two at a time.
  if [ ${#pids[@]} -ge 2 ]; then wait "${pids[0]}"; pids=("${pids[@]:1}"); fi
done
wait

printf '%-32s %5s %6s %8s  %s\n' kernel regs spill shared "main loop"
for cu in "$GEN"/gemm*.cu; do
  stem=$(basename "$cu" .cu)
  # ptxas -v: per entry "Compiling entry function '...name...'", then its frame and registers.
  awk '
    /Compiling entry function/ { match($0, /tylo_kernel_[a-z0-9_]*/); name = substr($0, RSTART + 12, RLENGTH - 12) }
    /spill stores/ { split($0, f, " "); spill = f[5] + f[9] }
    /Used [0-9]+ registers/ { r = $0; sub(/.*Used /, "", r); sub(/ registers.*/, "", r); print name, r, spill }
  ' "$WORK/$stem.ptxas" | while read -r name regs spill; do
    [ -z "$FILTER" ] || [[ "$name" == *"$FILTER"* ]] || continue
    shared=$(grep -m 1 "tylo_kernel_$name<<<" "$cu" | sed -E 's/.*, ([0-9]+), stream>>>.*/\1/' || true)
    mix=$(python3 bench/tuning/sass-loop-mix.py "$WORK/$stem.sass" "tylo_kernel_${name}E" | sed -n '1s/^[^:]*: //p')
    printf '%-32s %5s %6s %8s  %s\n' "$name" "$regs" "$spill" "$shared" "$mix"
  done
done
