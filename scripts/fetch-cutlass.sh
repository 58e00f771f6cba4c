#!/usr/bin/env bash
# Fetches the CUTLASS headers (cute/ and cutlass/) that the CuTe cross-check of the wgmma
# descriptors includes (tests/cute), from the nvidia-cutlass wheel on PyPI, into DEST:
#
#   scripts/fetch-cutlass.sh DEST
#   cmake -S . -B build -DTYLO_CUTLASS_INCLUDE_DIR=DEST    (or: export TYLO_CUTLASS_INCLUDE_DIR=DEST)
#
# The headers are a test-only dependency: nothing tyloc builds or installs includes them. A DEST
# that already holds the headers of the same version is left as it is. Needs python3 with pip and
# network access. Environment: CUTLASS_VERSION (default 4.2.0.0).
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: $0 DEST" >&2
  exit 2
fi
DEST=$1
VERSION=${CUTLASS_VERSION:-4.2.0.0}
STAMP="$DEST/.nvidia-cutlass-version"
if [ -f "$DEST/cute/arch/mma_sm90_desc.hpp" ] && [ "$(cat "$STAMP" 2>/dev/null)" = "$VERSION" ]; then
  echo "fetch-cutlass: $DEST already holds the headers of nvidia-cutlass $VERSION"
  exit 0
fi

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
  -d "$TMP" "nvidia-cutlass==$VERSION"
# Headers of another version that this script fetched are replaced; others are overwritten.
if [ -f "$STAMP" ]; then rm -rf "$DEST/cute" "$DEST/cutlass" "$STAMP"; fi
mkdir -p "$DEST"
# Only the headers: the wheel's cutlass_library/source/include/ becomes DEST.
python3 - "$TMP" "$DEST" <<'EOF'
import glob, os, sys, zipfile

tmp, dest = sys.argv[1], sys.argv[2]
wheels = glob.glob(os.path.join(tmp, "nvidia_cutlass-*.whl"))
if len(wheels) != 1:
    sys.exit(f"fetch-cutlass: expected one nvidia_cutlass wheel in {tmp}, found {wheels}")
prefix = "cutlass_library/source/include/"
count = 0
with zipfile.ZipFile(wheels[0]) as wheel:
    for info in wheel.infolist():
        if not info.filename.startswith(prefix) or info.is_dir():
            continue
        relative = info.filename[len(prefix):]
        if relative.startswith("/") or ".." in relative.split("/"):
            sys.exit(f"fetch-cutlass: refusing the path {info.filename}")
        target = os.path.join(dest, relative)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with wheel.open(info) as src, open(target, "wb") as out:
            out.write(src.read())
        count += 1
if not os.path.isfile(os.path.join(dest, "cute", "arch", "mma_sm90_desc.hpp")):
    sys.exit(f"fetch-cutlass: the wheel {os.path.basename(wheels[0])} holds no cute/arch/mma_sm90_desc.hpp")
print(f"fetch-cutlass: {count} headers from {os.path.basename(wheels[0])} in {dest}")
EOF
echo "$VERSION" >"$STAMP"
