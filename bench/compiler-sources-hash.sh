#!/usr/bin/env bash
# Prints one hash over the files tyloc is built from (used to tell whether a prebuilt tyloc,
# bench/make-gpu-kit.sh's, matches a checkout).
set -euo pipefail
cd "$(dirname "$0")/.."
find CMakeLists.txt cmake grammar frontend ir backend tools -type f -print0 | LC_ALL=C sort -z |
  xargs -0 sha256sum | sha256sum | cut -d' ' -f1
