#!/usr/bin/env bash
# Installs a tylo build into a fresh prefix, then configures and builds tests/consumer/project
# against it with find_package(Tylo), as a user would, and checks that an edit to a file the
# kernel imports regenerates its code. The test "gpu.consumer" then runs
# <work dir>/build/consumer.
#   run-consumer-test.sh <tylo build dir> <work dir> <nvcc> <CUDA architectures, comma-separated>
set -euo pipefail
BUILD=$1
WORK=$2
NVCC=$3
ARCHS=${4:-80-real}
HERE=$(cd "$(dirname "$0")" && pwd)

rm -rf "$WORK"
mkdir -p "$WORK"
echo "== cmake --install $BUILD --prefix $WORK/prefix"
cmake --install "$BUILD" --prefix "$WORK/prefix" >"$WORK/install.log"
CONFIG_DIR=$(dirname "$(find "$WORK/prefix" -name TyloConfig.cmake -path '*/cmake/Tylo/*' | head -n 1)")
for f in bin/tyloc include/tylo/runtime.cuh "${CONFIG_DIR#$WORK/prefix/}"/{TyloConfig,TyloConfigVersion,TyloKernel,TyloTargets}.cmake; do
  [ -e "$WORK/prefix/$f" ] || { echo "not installed: $f"; cat "$WORK/install.log"; exit 1; }
done

echo "== configure and build the consumer against the installed package"
cmake -S "$HERE/project" -B "$WORK/build" -G Ninja -DCMAKE_PREFIX_PATH="$WORK/prefix" \
      -DCMAKE_CUDA_COMPILER="$NVCC" -DCMAKE_CUDA_ARCHITECTURES="${ARCHS//,/;}" -DCMAKE_BUILD_TYPE=Release
cmake --build "$WORK/build"

# The kernels came from the installed tyloc, not from the build tree.
grep -q "$WORK/prefix/bin/tyloc" "$WORK/build/build.ninja" ||
  { echo "the consumer did not run the installed tyloc"; exit 1; }
[ -x "$WORK/build/consumer" ] || { echo "no consumer executable"; exit 1; }
echo "the consumer builds against the installed package"

# INSTANTIATE with two files went to the one that declares the kernel.
HEADER="$WORK/build/tylo/widen.cuh"
grep -q "widen_bf16_f32(" "$HEADER" && [ "$(grep -c "^cudaError_t widen_" "$HEADER")" = 1 ] ||
  { echo "widen.cuh should declare widen_bf16_f32 alone:"; cat "$HEADER"; exit 1; }

# add_tylo_kernel's own misuse stops the configuration with a message that names it.
expect_configure_error() {  # <message> <add_tylo_kernel arguments>
  local message=$1 dir="$WORK/misuse"
  rm -rf "$dir"
  mkdir -p "$dir"
  cp "$HERE/project/scale.tyl" "$HERE/project/tile.tyl" "$HERE/project/widen.tyl" "$dir/"
  printf 'cmake_minimum_required(VERSION 3.25)\nproject(misuse LANGUAGES CXX CUDA)\nfind_package(Tylo REQUIRED)\nadd_library(k STATIC)\nadd_tylo_kernel(k %s)\n' "$2" >"$dir/CMakeLists.txt"
  if cmake -S "$dir" -B "$dir/build" -G Ninja -DCMAKE_PREFIX_PATH="$WORK/prefix" -DCMAKE_CUDA_COMPILER="$NVCC" \
       -DCMAKE_CUDA_ARCHITECTURES="${ARCHS//,/;}" >"$dir/log.txt" 2>&1; then
    echo "add_tylo_kernel(k $2) configured"; exit 1
  fi
  # CMake wraps a message's lines: compare with the whitespace collapsed.
  tr -s ' \n' '  ' <"$dir/log.txt" | grep -qF "$message" ||
    { echo "add_tylo_kernel(k $2): expected '$message'"; cat "$dir/log.txt"; exit 1; }
}
expect_configure_error "ARCH is given without a value" "scale.tyl ARCH"
expect_configure_error "INSTANTIATE is given without a value" "scale.tyl INSTANTIATE"
expect_configure_error "INSTANTIATE gemm:f16: none of the files declares a generic kernel 'gemm'" \
  "scale.tyl widen.tyl INSTANTIATE gemm:f16"
echo "add_tylo_kernel refuses its misuse"

# An edit to a file the kernel imports regenerates its code (tyloc's depfile names it). The
# project's own files are copied so that touching one leaves the source tree alone.
cp -r "$HERE/project" "$WORK/project"
cmake -S "$WORK/project" -B "$WORK/build-copy" -G Ninja -DCMAKE_PREFIX_PATH="$WORK/prefix" \
      -DCMAKE_CUDA_COMPILER="$NVCC" -DCMAKE_CUDA_ARCHITECTURES="${ARCHS//,/;}" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$WORK/build-copy" >/dev/null
ninja -C "$WORK/build-copy" -n >"$WORK/plan-unchanged.txt"
if grep -q "tyloc" "$WORK/plan-unchanged.txt"; then echo "tyloc would run again with nothing changed"; exit 1; fi
touch "$WORK/project/tile.tyl"
ninja -C "$WORK/build-copy" -n >"$WORK/plan-touched.txt"
grep -q "tyloc scale.tyl" "$WORK/plan-touched.txt" ||
  { echo "touching tile.tyl (imported by scale.tyl) does not regenerate scale.cu"; cat "$WORK/plan-touched.txt"; exit 1; }
echo "an edit to an imported file regenerates the code"
