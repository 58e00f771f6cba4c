#!/usr/bin/env bash
# Draws the pictures in docs/pictures/ (see docs/pictures.md) with `tyloc layout --svg`.
#
#   scripts/make-layout-pictures.sh [TYLOC [OUT_DIR]]
#
# TYLOC defaults to the tyloc of $BUILD_DIR (default build/), built first; OUT_DIR defaults
# to docs/pictures. The test suite runs this into a temporary directory and compares the
# result with the committed pictures, so rerun it whenever a picture's layout or the
# renderer changes.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
if [ $# -ge 1 ]; then
  TYLOC=$1
else
  cmake --build "$BUILD_DIR" --target tyloc >/dev/null
  TYLOC="$BUILD_DIR/tools/tyloc/tyloc"
fi
OUT_DIR=${2:-docs/pictures}
mkdir -p "$OUT_DIR"

# picture NAME LAYOUT [OPTIONS...]: writes OUT_DIR/NAME.svg.
picture() {
  local name=$1
  shift
  echo "$OUT_DIR/$name.svg"
  "$TYLOC" layout "$@" --svg "$OUT_DIR/$name.svg"
}

# The seed's fragments: lane i owns row i of a 32x4 tile; a copy in warp 1; slots shifted by 4.
picture lane-fragment 'S[(32, 4) : (1@laneid, 1)]'
picture replicated-fragment 'S[(32, 4) : (1@laneid, 1)] + R[2 : 1@warpid]'
picture offset-fragment 'S[(32, 4) : (1@laneid, 1)] + 4'
picture replicated-offset-fragment 'S[(32, 4) : (1@laneid, 1)] + R[2 : 1@warpid] + 4'
# The worked example of docs/layouts.md: two warps, replicated four warps up, offset by 5.
picture warps-and-lanes 'S[(8, 2, 4, 2) : (4@laneid, 1@warpid, 1@laneid, 1)] + R[2 : 4@warpid] + 5@warpid' \
  --shape 8,16
# The accumulator of mma.sync.m16n8k16: lane 4 (i % 8) + j / 2, slot 2 (i / 8) + j % 2.
picture mma-c-fragment 'S[(2, 8, 4, 2) : (2, 4@laneid, 1@laneid, 1)]' --shape 16,8
# An (8, 64) f16 tile in shared memory, with and without the 128-byte swizzle, and one
# ldmatrix 8x8 matrix (columns 8..15 of rows 0..7) marked.
picture swizzle-128b-f16 \
  'ComposeLayout(per_element=3, swizzle_len=3, atom_len=3, tile_layout=S[(8, 64) : (64, 1)])' \
  --dtype f16 --highlight ldmatrix:0,8
picture row-major-f16 'S[(8, 64) : (64, 1)]' --dtype f16 --highlight ldmatrix:0,8
# A 32x32 f32 tile read down a column: 32 lanes in one bank, and the swizzle that spreads them.
picture row-major-f32-column 'S[(32, 32) : (32, 1)]' --dtype f32 --highlight col:0
picture swizzle-f32-column 'Swizzle(bits = 5, base = 0, shift = 5)(S[(32, 32) : (32, 1)])' --dtype f32 --highlight col:0
# Hopper: a 16 x 64 bf16 box as TMA writes it with the 128-byte swizzle (two periods of 8 rows
# of 128 bytes; the layout wgmma reads through a K-major descriptor), the 8 rows of one 16-byte
# chunk column marked; and the accumulator of wgmma m64n16k16 over a warpgroup: warp w holds rows
# 16w..16w+15, lane l row l/4 (+8), register r column 8 (r >> 2) + 2 (l % 4) + (r & 1).
picture tma-swizzle-128b-bf16 'ComposeLayout(per_element = 3, swizzle_len = 3, atom_len = 3, tile_layout = S[(16, 64) : (64, 1)])' --dtype bf16 --highlight ldmatrix:0,0
picture wgmma-d-fragment 'S[(4, 2, 8, 2, 4, 2) : (1@wid_in_wg, 2, 4@laneid, 4, 1@laneid, 1)]' --shape 64,16
