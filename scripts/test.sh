#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test.sh - configure, build, start the Firebird test servers and run ctest.
#
#   scripts/test.sh [ctest args...]        e.g. scripts/test.sh -L unit
#
# FBWIRE_SANITIZE=1    ASan/UBSan build (-DFBWIRE_SANITIZE=ON) in build-asan/ instead of build/
# FBWIRE_BUILD_DIR=d   build directory override
# FBWIRE_NO_SERVERS=1  do not start the servers (unit tests need none)
# FBWIRE_JOBS=n        build parallelism (default 2)
# Warnings are errors here (-DFBWIRE_WERROR=ON), as in CI; a plain cmake build only warns.
# Servers need root to start; without root an existing servers.env is used as is.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STATE=${FBWIRE_STATE:-/var/tmp/fbwire-state}

cmake_args=(-DFBWIRE_WERROR=ON)
if [ "${FBWIRE_SANITIZE:-0}" = 1 ]; then
  BUILD=${FBWIRE_BUILD_DIR:-$REPO/build-asan}
  cmake_args+=(-DFBWIRE_SANITIZE=ON)
else
  BUILD=${FBWIRE_BUILD_DIR:-$REPO/build}
fi

step() { # name command...
  local name=$1 t0=$SECONDS; shift
  echo "--- test.sh: $name"
  "$@"
  echo "--- test.sh: $name done in $((SECONDS - t0)) s"
}

servers() {
  if [ "$(id -u)" -eq 0 ]; then
    "$REPO/scripts/fb-servers.sh" start
  elif [ ! -f "$STATE/servers.env" ]; then
    echo "test.sh: not root and no $STATE/servers.env; integration tests will skip or fail" >&2
  fi
}

step configure cmake -S "$REPO" -B "$BUILD" "${cmake_args[@]}"
step build cmake --build "$BUILD" -j"${FBWIRE_JOBS:-2}"
if [ "${FBWIRE_NO_SERVERS:-0}" != 1 ]; then
  step servers servers
fi
if [ -r "$STATE/servers.env" ]; then
  set -a
  # shellcheck disable=SC1091
  . "$STATE/servers.env"
  set +a
fi
step ctest ctest --test-dir "$BUILD" --output-on-failure -j1 "$@"
# ctest names skipped tests without the reason; the <test>@<server> twins print theirs (an
# unregistered server, tests/support/on-server.sh) into its log: one line per reason.
if [ -r "$BUILD/Testing/Temporary/LastTest.log" ]; then
  grep -h '^SKIP: ' "$BUILD/Testing/Temporary/LastTest.log" | sort | uniq -c | sed 's/^ */test.sh: skipped tests: /' || true
fi
