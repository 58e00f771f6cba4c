#!/usr/bin/env bash
# Fails when docs/pictures/ is not what scripts/make-layout-pictures.sh draws with this
# tyloc: the pictures in the docs must come from the documented command.
#   check-layout-pictures.sh TYLOC
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
"$ROOT/scripts/make-layout-pictures.sh" "$1" "$OUT" >/dev/null
if ! diff -r -q "$OUT" "$ROOT/docs/pictures"; then
  echo "docs/pictures is out of date: run scripts/make-layout-pictures.sh and commit the result" >&2
  exit 1
fi
