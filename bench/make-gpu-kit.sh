#!/usr/bin/env bash
# Packs a prebuilt tyloc for a GPU machine that cannot build it (no ANTLR, CLI11, fmt, ... and
# no package registry there): the stripped binary, the shared libraries it needs beyond the C
# library, and a wrapper that finds them. bench/run-gpu.sh uses the kit when it finds one.
#   bench/make-gpu-kit.sh [KIT_DIR]     (default build-gpu-kit, ignored by git like build*/)
# Then carry the kit to the GPU machine (device tool: carry ["build-gpu-kit"]).
set -euo pipefail
cd "$(dirname "$0")/.."
KIT=${1:-build-gpu-kit}
BUILD_DIR=${BUILD_DIR:-build}

if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build "$BUILD_DIR" --target tyloc
TYLOC="$BUILD_DIR/tools/tyloc/tyloc"

rm -rf "$KIT"
mkdir -p "$KIT/bin" "$KIT/lib"
strip -o "$KIT/bin/tyloc" "$TYLOC"
# Everything ldd resolves except the C library itself (which must come from the machine).
ldd "$TYLOC" | awk '/=> \// { print $3 }' | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so.*|libm.so.*|libpthread.so.*|libdl.so.*|librt.so.*|ld-linux*) ;;
    *) cp -L "$lib" "$KIT/lib/" ;;
  esac
done
cat > "$KIT/tyloc" <<'WRAPPER'
#!/bin/sh
# tyloc with the shared libraries it was built against (see bench/make-gpu-kit.sh).
here=$(dirname "$(readlink -f "$0")")
LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "$here/bin/tyloc" "$@"
WRAPPER
chmod +x "$KIT/tyloc"
"$KIT/tyloc" --version >/dev/null
echo "$KIT: $(du -sh "$KIT" | cut -f1) ($(ls "$KIT/lib" | tr '\n' ' '))"
git rev-parse --verify -q HEAD >"$KIT/commit" 2>/dev/null || true
# What tyloc was built from, so that run-gpu.sh can tell a kit made from other sources.
bench/compiler-sources-hash.sh >"$KIT/sources.sha256"
