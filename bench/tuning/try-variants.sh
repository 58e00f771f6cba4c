#!/usr/bin/env bash
# Compiles variants of examples/gemm/gemm.tyl (sed edits given below) with the tyloc kit
# and times each at 8192^3 on the GPU: a quick way to compare tile shapes and stages.
#   bench/tuning/try-variants.sh            (run from the repository root on a GPU machine)
set -uo pipefail
cd "$(dirname "$0")/../.."
TYLOC=${TYLOC:-build-gpu-kit/tyloc}
[ -x "$TYLOC" ] || TYLOC=build/tools/tyloc/tyloc
WORK=$(mktemp -d)
OUT=${OUT:-$WORK}
ARCH=${ARCH:-90}

# name | sed script applied to gemm.tyl (the base: 128 x 128 x 32 tiles, 2 x 2 warps of 4 x 8
# atoms, three stages)
W24='s/warps = (2, 2), repeat = (4, 8)/warps = (2, 4), repeat = (4, 8)/g;s/block = 128/block = 256/g'
BN256='s/const BN = 128;/const BN = 256;/;s/ComposeLayout(3, 3, 4, S\[(BK, BN)/ComposeLayout(3, 3, 5, S[(BK, BN)/'
BK64='s/const BK = 32;/const BK = 64;/;s/ComposeLayout(3, 2, 3, S\[(BM, BK)/ComposeLayout(3, 3, 3, S[(BM, BK)/'
S4='s/const STAGES = 3;/const STAGES = 4;/'
VARIANTS=(
  "base|"
  "s4|$S4"
  "bk64|$BK64"
  "bk64_s4|$BK64;$S4"
  "w2x4_bn256|$W24;$BN256"
  "w2x4_bn256_s4|$W24;$BN256;$S4"
  "w2x4_bn256_bk64|$W24;$BN256;$BK64"
)

build() {
  local name=$1 script=$2 dir=$WORK/$1
  mkdir -p "$dir"
  sed "$script" examples/gemm/gemm.tyl > "$dir/variant.tyl"
  if ! "$TYLOC" "$dir/variant.tyl" -o "$dir/variant.cu" --header "$dir/variant.cuh" --instantiate gemm:bf16 --instantiate gemm_beta:bf16 \
       2> "$dir/tyloc.log"; then
    echo "$name: tyloc failed: $(head -3 "$dir/tyloc.log")"; return
  fi
  nvcc -std=c++17 -O3 -gencode=arch=compute_$ARCH,code=sm_$ARCH -Iruntime -I"$dir" -Xptxas -v \
       -o "$dir/run" "$dir/variant.cu" bench/tuning/gemm_variant.cu 2> "$dir/nvcc.log" ||
    { echo "$name: nvcc failed: $(grep -m3 error "$dir/nvcc.log")"; return; }
  echo "$name: $(grep -o 'Used [0-9]* registers' "$dir/nvcc.log" | head -1), $(grep -c 'spill' "$dir/nvcc.log" | head -1) spill lines"
}

for v in "${VARIANTS[@]}"; do build "${v%%|*}" "${v#*|}" & done
wait
for v in "${VARIANTS[@]}"; do
  name=${v%%|*}
  [ -x "$WORK/$name/run" ] && "$WORK/$name/run" "${SIZE:-8192}" "$name"
done
