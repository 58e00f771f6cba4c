#!/usr/bin/env bash
# Writes what tyloc makes of every .tyl file in the repository into one folder: the CUDA for
# sm_80 and sm_90 (with the header), the tile and thread IR, the diagnostics and the exit
# codes. Two snapshots taken before and after a change that should not change behaviour
# must be identical: `diff -r before after`.
#
#   scripts/codegen-snapshot.sh OUT_DIR [TYLOC]     (TYLOC defaults to build/tools/tyloc/tyloc)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: codegen-snapshot.sh OUT_DIR [TYLOC]}
tyloc=${2:-build/tools/tyloc/tyloc}
rm -rf "$out"
mkdir -p "$out"
git ls-files '*.tyl' | while read -r f; do
  d="$out/$f"
  mkdir -p "$d"
  for arch in sm_80 sm_90; do
    "$tyloc" "$f" --arch "$arch" -o "$d/$arch.cu" --header "$d/$arch.cuh" >"$d/$arch.out" 2>"$d/$arch.err"
    echo "exit $?" >>"$d/$arch.out"
  done
  for stage in tile-ir thread-ir; do
    "$tyloc" "$f" --emit "$stage" >"$d/$stage" 2>"$d/$stage.err"
    echo "exit $?" >>"$d/$stage.err"
  done
done
echo "snapshot of $(git ls-files '*.tyl' | wc -l) files in $out"
