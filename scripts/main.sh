#!/usr/bin/env bash
# main.sh - the main job, on a fresh Debian 12 machine as root: install the dependencies, build
# fbwire in build/, install it to build/install, start the Firebird test servers and show what
# fbwire negotiates with them and what a session costs on the wire (fbwire-sql --info on FB3 and
# FB4). Every step checks before it acts, so running it again only rebuilds what changed.
#
#   scripts/main.sh
#
# FBWIRE_JOBS=n   build parallelism (default 2)
# FBWIRE_STATE=d  state dir of the test servers (default <repo>/.fbwire, see fb-servers.sh)
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
BUILD=$REPO/build
PREFIX=$BUILD/install
T0=$SECONDS

step() { # name command...
  local name=$1 t0=$SECONDS; shift
  echo "=== main.sh: $name"
  "$@"
  echo "=== main.sh: $name done in $((SECONDS - t0)) s"
}

if [ "$(id -u)" -ne 0 ]; then
  echo "main.sh: run as root (it installs packages and starts the Firebird servers)" >&2
  exit 1
fi

step install-deps scripts/install-deps.sh
# The FB3 servers run as user firebird and keep their files in the state dir; a checkout in a
# private directory (e.g. /root, mode 0700) is out of their reach, so use a public one then.
if [ -z "${FBWIRE_STATE:-}" ] && ! runuser -u firebird -- test -x "$REPO"; then
  export FBWIRE_STATE=/var/tmp/fbwire-state
  echo "=== main.sh: $REPO is not reachable by user firebird; FBWIRE_STATE=$FBWIRE_STATE"
fi
STATE=${FBWIRE_STATE:-$REPO/.fbwire}

step configure cmake -S "$REPO" -B "$BUILD"
step build cmake --build "$BUILD" -j"${FBWIRE_JOBS:-2}"
step install cmake --install "$BUILD" --prefix "$PREFIX"
step servers scripts/fb-servers.sh start

set -a
# shellcheck disable=SC1091
. "$STATE/servers.env"
set +a

# The password goes through ISC_PASSWORD, not the command line (where ps would show it).
info() { # label host port db
  echo
  echo "--- fbwire-sql --info on $1 ($2/$3:$4)"
  ISC_USER=$FBW_USER ISC_PASSWORD=$FBW_PASSWORD "$PREFIX/bin/fbwire-sql" --info --connect-timeout 10 \
    "$2/$3:$4"
}
info "Firebird $FBW_FB3_VERSION" "$FBW_FB3_HOST" "$FBW_FB3_PORT" "$FBW_FB3_DB"
info "Firebird $FBW_FB4_VERSION" "$FBW_FB4_HOST" "$FBW_FB4_PORT" "$FBW_FB4_DB"
echo
echo "=== main.sh: done in $((SECONDS - T0)) s"
