#!/usr/bin/env bash
# The main job: builds tyloc and shows where the elements of the seed layouts live.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$BUILD_DIR" -j2 --target tyloc
TYLOC="$BUILD_DIR/tools/tyloc/tyloc"

show() {
  echo "\$ tyloc layout '$1' ${*:2}"
  "$TYLOC" layout "$@"
  echo
}

show 'S[(32, 4) : (1@laneid, 1)]' --apply 3,2
show 'S[(32, 4) : (1@laneid, 1)] + R[2 : 1@warpid] + 4' --apply 3,2
show 'S[(8, 2, 4, 2) : (4@laneid, 1@warpid, 1@laneid, 1)] + R[2 : 4@warpid] + 5@warpid' --shape 8,16 --apply 1,3
show 'ComposeLayout(per_element=3, swizzle_len=3, atom_len=3, tile_layout=S[(8, 64) : (64, 1)])' --apply 1,0
show 'Swizzle(2, 3, 2)(S[(32, 32) : (32, 1)])' --apply 1,0
