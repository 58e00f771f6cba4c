#!/usr/bin/env bash
# Configures, builds (two jobs) and runs the whole test suite with ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$BUILD_DIR" -j2
ctest --test-dir "$BUILD_DIR" -j2 --output-on-failure "$@"
