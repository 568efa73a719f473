#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# main.sh - the main job, on a fresh Debian 12 machine as root: install the dependencies, build
# fbwire in build/, install it to build/install, start the Firebird test servers, show what
# fbwire negotiates with them and what a session costs on the wire (fbwire-sql --info on FB3 and
# FB4), then benchmark: the stock sysbench 1.0.20 runs oltp_read_write through the fbwire driver
# against a database on disk (prepare, run, cleanup) and prints its report, followed by the
# driver's Firebird wire statistics. It ends with what fbwire is for, at a glance: oltp_read_only
# through fbclient, fbwire and fbwire pipelined, directly and through fbwire-link at 1 ms RTT, as
# one small table of TPS and round trips per event (fbwire-compare --preset glance; about 45 s;
# the full reports stay in build/glance). Every step checks before it acts, so running it again
# only rebuilds what changed.
#
#   scripts/main.sh
#
# FBWIRE_JOBS=n   build parallelism (default 2)
# FBWIRE_STATE=d  state dir of the test servers (default /var/tmp/fbwire-state, see fb-servers.sh)
# The benchmark (defaults: the issue's shape, 4 tables x 10,000 rows, 4 threads, 10 s):
# FBWIRE_SB_SERVER=fb3|fb4  server (default fb3, the Debian 12 Firebird 3.0 package)
# FBWIRE_SB_TABLES, FBWIRE_SB_TABLE_SIZE, FBWIRE_SB_THREADS, FBWIRE_SB_TIME (seconds)
# FBWIRE_SB_QUICK=1         a short smoke run instead: 2 x 1,000 rows, 2 threads, 3 s
# FBWIRE_SB=0               skip the benchmark
# FBWIRE_GLANCE=0           skip the side-by-side at the end (it runs on FBWIRE_SB_SERVER too)
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
STATE=${FBWIRE_STATE:-/var/tmp/fbwire-state}

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

# ---- sysbench oltp_read_write through the fbwire driver (docs/sysbench.md) ----
if [ "${FBWIRE_SB:-1}" != 0 ]; then
  SB_SERVER=${FBWIRE_SB_SERVER:-fb3}
  if [ "${FBWIRE_SB_QUICK:-0}" = 1 ]; then
    sb_shape=(2 1000 2 3)
  else
    sb_shape=(4 10000 4 10)
  fi
  SB_TABLES=${FBWIRE_SB_TABLES:-${sb_shape[0]}}
  SB_TABLE_SIZE=${FBWIRE_SB_TABLE_SIZE:-${sb_shape[1]}}
  SB_THREADS=${FBWIRE_SB_THREADS:-${sb_shape[2]}}
  SB_TIME=${FBWIRE_SB_TIME:-${sb_shape[3]}}
  s=${SB_SERVER^^}
  host=FBW_${s}_HOST port=FBW_${s}_PORT dir=FBW_DBDIR_${s} ver=FBW_${s}_VERSION
  [ -n "${!port:-}" ] || { echo "main.sh: unknown FBWIRE_SB_SERVER=$SB_SERVER" >&2; exit 1; }
  SB_DSN="${!host}/${!port}:${!dir}/sysbench.fdb"
  export ISC_USER=$FBW_USER ISC_PASSWORD=$FBW_PASSWORD   # the driver's defaults for user/password

  sb() { # command [options]: oltp_read_write through the installed launcher and plug-in; the
    # driver creates the database on first use (--fbwire-create-db=on, as the README shows)
    local cmd=$1; shift
    "$PREFIX/bin/fbwire-sysbench" oltp_read_write --db-driver=fbwire --fbwire-db="$SB_DSN" --fbwire-create-db=on \
      --tables="$SB_TABLES" --table-size="$SB_TABLE_SIZE" --threads="$SB_THREADS" "$@" "$cmd"
  }
  sb_prepare() {
    sb cleanup >/dev/null
    local t0=${EPOCHREALTIME/./}
    sb prepare
    awk -v us=$((${EPOCHREALTIME/./} - t0)) -v t="$SB_TABLES" -v n="$SB_TABLE_SIZE" \
      'BEGIN { printf "prepare: %d x %d rows in %.2f s\n", t, n, us / 1e6 }'
  }
  echo
  echo "database $SB_DSN (Firebird ${!ver})"
  step sysbench-prepare sb_prepare
  step sysbench-run sb run --time="$SB_TIME"
  step sysbench-cleanup sb cleanup
fi

# ---- the side-by-side: what the round trips cost once the server is 1 ms away (docs/compare.md) ----
if [ "${FBWIRE_GLANCE:-1}" != 0 ]; then
  GLANCE_OUT=$BUILD/glance
  rm -rf "$GLANCE_OUT"   # its summary reads every run in the directory: only this one's
  echo
  step glance env FBWIRE_STATE="$STATE" "$PREFIX/bin/fbwire-compare" --preset glance "$GLANCE_OUT" \
    --server "${FBWIRE_SB_SERVER:-fb3}"
fi
echo
echo "=== main.sh: done in $((SECONDS - T0)) s"
