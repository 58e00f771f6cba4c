#!/usr/bin/env bash
# Installs the Debian packages that building and testing tyloc needs (.ci/packages.txt), and
# any further package names given as arguments, with apt-get: directly when run as root, through
# sudo otherwise. The CUDA Toolkit is not among them (nvcc on PATH is the user's to provide).
#
#   scripts/install-deps.sh [PACKAGE...]
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# As root (a container), apt-get runs as it is; as a user, through sudo, which resets the
# environment, hence `env` to pass DEBIAN_FRONTEND on.
as_root=()
if [ "$(id -u)" -ne 0 ]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "install-deps.sh: not root and sudo is not installed: run it as root, or install sudo first" >&2
    exit 1
  fi
  as_root=(sudo env DEBIAN_FRONTEND=noninteractive)
fi

# One package a line: split on purpose.
# shellcheck disable=SC2207
packages=($(cat "$root/.ci/packages.txt") "$@")
echo "install-deps.sh: installing ${#packages[@]} Debian packages with apt-get${as_root:+ through sudo}"
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
