#!/usr/bin/env bash
# scripts/install-deps.sh runs apt-get directly as root, through sudo as a user, and refuses with
# a message as a user without sudo. It runs with stub `id`, `apt-get` and `sudo` executables that
# log their arguments, on a PATH that holds only them and links to the few tools the script uses,
# so no real sudo or apt-get is reachable. Everything it writes is in a temporary folder.
#
#   tests/e2e/install_deps_test.sh [scripts/install-deps.sh]
set -euo pipefail
SCRIPT=${1:-$(dirname "$0")/../../scripts/install-deps.sh}
SCRIPT=$(cd "$(dirname "$SCRIPT")" && pwd)/$(basename "$SCRIPT")
PACKAGES=$(dirname "$SCRIPT")/../.ci/packages.txt
BASH_BIN=$BASH
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
failures=0

# The system tools the script needs, and no others.
mkdir "$TMP/tools"
for tool in bash cat dirname env; do
  ln -s "$(command -v "$tool")" "$TMP/tools/$tool"
done

fail() {
  echo "FAIL ($CASE): $*"
  failures=$((failures + 1))
}

# shellcheck disable=SC2016  # the stubs expand their own variables
# setup UID WITH_SUDO: a fresh stub folder for one case. apt-get logs its arguments, whether it
# came through the stub sudo and its DEBIAN_FRONTEND; sudo logs its arguments and runs them with
# the environment reset, as sudo does by default.
setup() {
  local uid=$1 with_sudo=$2
  rm -rf "$TMP/stubs" "$TMP/log"
  mkdir "$TMP/stubs"
  : >"$TMP/log"
  printf '#!%s\n[ "$*" = -u ] || exit 64\necho %s\n' "$BASH_BIN" "$uid" >"$TMP/stubs/id"
  printf '#!%s\necho "apt-get $* [via-sudo=${VIA_SUDO:-no} frontend=${DEBIAN_FRONTEND:-unset}]" >>"%s"\n' \
    "$BASH_BIN" "$TMP/log" >"$TMP/stubs/apt-get"
  if [ "$with_sudo" = yes ]; then
    printf '#!%s\necho "sudo $*" >>"%s"\nexec env -i PATH="$PATH" VIA_SUDO=yes "$@"\n' "$BASH_BIN" "$TMP/log" >"$TMP/stubs/sudo"
  fi
  chmod +x "$TMP"/stubs/*
}

# run [ARGS...]: runs the script as command 1 of the README does; sets RC and OUT.
run() {
  set +e
  OUT=$(PATH="$TMP/stubs:$TMP/tools" "$SCRIPT" "$@" 2>&1)
  RC=$?
  set -e
}

# expect_apt VIA [EXTRA...]: the script succeeded and the log holds exactly an update, then an
# install of every package of .ci/packages.txt and of EXTRA, each with via-sudo=VIA and
# DEBIAN_FRONTEND=noninteractive.
expect_apt() {
  local via=$1
  shift
  local apt
  apt=$(grep '^apt-get ' "$TMP/log" || true)
  [ "$RC" -eq 0 ] || fail "exit code $RC: $OUT"
  [ "$(echo "$apt" | wc -l)" -eq 2 ] || fail "expected two apt-get calls, got: $apt"
  echo "$apt" | sed -n 1p | grep -q "^apt-get update .*\[via-sudo=$via frontend=noninteractive\]$" ||
    fail "first call is not apt-get update with via-sudo=$via: $apt"
  local install
  install=$(echo "$apt" | sed -n 2p)
  echo "$install" | grep -q "^apt-get install -y .*--no-install-recommends .*\[via-sudo=$via frontend=noninteractive\]$" ||
    fail "second call is not apt-get install -y --no-install-recommends with via-sudo=$via: $install"
  for pkg in $(cat "$PACKAGES") "$@"; do
    echo "$install" | grep -q " $pkg " || fail "package $pkg is not installed: $install"
  done
}

CASE="root, no sudo on PATH"
setup 0 no
run
expect_apt no

CASE="root, sudo on PATH (not used)"
setup 0 yes
run
expect_apt no
! grep -q '^sudo ' "$TMP/log" || fail "sudo was called as root: $(cat "$TMP/log")"

CASE="user with sudo"
setup 1000 yes
run
expect_apt yes
[ "$(grep -c '^sudo .*apt-get ' "$TMP/log")" -eq 2 ] || fail "expected two sudo calls: $(cat "$TMP/log")"

CASE="user with sudo, an extra package"
setup 1000 yes
run python3-pip
expect_apt yes python3-pip

CASE="user without sudo"
setup 1000 no
run
[ "$RC" -eq 1 ] || fail "exit code $RC without root or sudo, expected 1"
echo "$OUT" | grep -q 'install-deps.sh: .*sudo.*' || fail "no message naming sudo: $OUT"
[ "$(echo "$OUT" | wc -l)" -eq 1 ] || fail "the message is not one line: $OUT"
[ ! -s "$TMP/log" ] || fail "apt-get or sudo was called: $(cat "$TMP/log")"

if [ "$failures" -ne 0 ]; then
  echo "$failures failures"
  exit 1
fi
echo "install-deps.sh: all cases passed"
