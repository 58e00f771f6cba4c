#!/usr/bin/env bash
# The main job: builds tyloc and the examples, runs the examples on the GPU when there is one
# and on the CPU emulator otherwise (a verification line per kernel), and shows where the
# elements of the seed layouts live.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$BUILD_DIR" -j2 --target tyloc
TYLOC="$BUILD_DIR/tools/tyloc/tyloc"

# ---- The examples: kernels compiled by tyloc and nvcc, run and checked on the GPU ---------------
STATUS=0
gpu=no
EXAMPLES_LIST="$BUILD_DIR/examples/examples.txt"  # written by examples/CMakeLists.txt
if [ -f "$EXAMPLES_LIST" ]; then
  cmake --build "$BUILD_DIR" -j2 --target examples
  echo
  gpu=yes
  while read -r example; do
    [ -n "$example" ] || continue
    echo "\$ ${example#"$PWD"/}"
    set +e
    output=$("$example" 2>&1)
    rc=$?
    set -e
    echo "$output"
    if [ "$rc" -eq 77 ]; then
      gpu=no
      echo
      break
    fi
    if [ "$rc" -ne 0 ]; then
      echo "FAILED: $example exited with $rc"
      STATUS=1
    fi
    echo
  done <"$EXAMPLES_LIST"
else
  echo
  echo "No CUDA compiler found (nvcc on PATH): the examples were not built for the GPU."
fi

# ---- Without a GPU: the same kernels on the CPU emulator ------------------------------------------
if [ "$gpu" = no ]; then
  echo "No GPU: running the example kernels on the emulator (the thread IR the CUDA backend prints),"
  echo "each checked against a CPU reference."
  cmake --build "$BUILD_DIR" -j2 --target tylo_emulate_examples
  echo "\$ $BUILD_DIR/examples/emulate/tylo_emulate_examples"
  "$BUILD_DIR/examples/emulate/tylo_emulate_examples" || STATUS=1
  echo
fi

# ---- Where the elements of the seed layouts live ------------------------------------------------
show() {
  echo "\$ tyloc layout '$1' ${*:2}"
  "$TYLOC" layout "$@"
  echo
}

show 'S[(32, 4) : (1@laneid, 1)]' --apply 3,2
show 'S[(32, 4) : (1@laneid, 1)] + R[2 : 1@warpid] + 4' --apply 3,2
show 'S[(8, 2, 4, 2) : (4@laneid, 1@warpid, 1@laneid, 1)] + R[2 : 4@warpid] + 5@warpid' --shape 8,16 --apply 1,3
show 'ComposeLayout(per_element=3, swizzle_len=3, atom_len=3, tile_layout=S[(8, 64) : (64, 1)])' --apply 1,0
show 'Swizzle(bits = 2, base = 3, shift = 2)(S[(32, 32) : (32, 1)])' --apply 1,0
exit $STATUS
