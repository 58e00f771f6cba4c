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

# name | sed script applied to gemm.tyl
VARIANTS=(
  "base|"
  "w2x2_r4x8_s3|s/warps = (2, 4), repeat = (4, 4)/warps = (2, 2), repeat = (4, 8)/;s/block = 256/block = 128/"
  "w2x2_r4x8_s4|s/warps = (2, 4), repeat = (4, 4)/warps = (2, 2), repeat = (4, 8)/;s/block = 256/block = 128/;s/const STAGES = 3;/const STAGES = 4;/"
  "w2x2_r4x8_s3_g16|s/warps = (2, 4), repeat = (4, 4)/warps = (2, 2), repeat = (4, 8)/;s/block = 256/block = 128/;s/const GROUP = 8;/const GROUP = 16;/"
  "w2x2_r4x8_s3_g4|s/warps = (2, 4), repeat = (4, 4)/warps = (2, 2), repeat = (4, 8)/;s/block = 256/block = 128/;s/const GROUP = 8;/const GROUP = 4;/"
  "w2x4_r4x8_bn256_g8|s/const BN = 128;/const BN = 256;/;s/repeat = (4, 4)/repeat = (4, 8)/;s/ComposeLayout(3, 3, 4, S\[(BK, BN)/ComposeLayout(3, 3, 5, S[(BK, BN)/"
  "w2x2_r4x8_bk64_s3|s/warps = (2, 4), repeat = (4, 4)/warps = (2, 2), repeat = (4, 8)/;s/block = 256/block = 128/;s/const BK = 32;/const BK = 64;/;s/ComposeLayout(3, 2, 3, S\[(BM, BK)/ComposeLayout(3, 3, 3, S[(BM, BK)/"
)

build() {
  local name=$1 script=$2 dir=$WORK/$1
  mkdir -p "$dir"
  sed "$script" examples/gemm/gemm.tyl > "$dir/variant.tyl"
  if ! "$TYLOC" "$dir/variant.tyl" -o "$dir/variant.cu" --header "$dir/variant.cuh" --instantiate gemm:bf16 \
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
