#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# on-server.sh - run one server test against a registered Firebird (fb5, fb6, ...) instead of FB4.
#
#   tests/support/on-server.sh NAME COMMAND [ARG...]
#
# The ctest entries <test>@<NAME> (tests/servers.cmake) run their test through this script. The
# tests address two servers, fb3 and fb4 (FBW_FB3_*, FBW_FB4_*); fb4 stands for "the current
# protocol" in them (batch API, time zones, INT128, ChaCha), so a newer server takes its place:
# COMMAND sees a servers.env whose FBW_FB4_* and FBW_DBDIR_FB4* name server NAME (and, for a
# server registered with its own login, FBW_USER / FBW_PASSWORD that login), and FBW_TARGET=NAME.
# fb3 stays fb3. When NAME is not registered it prints why and exits 77, which ctest reports as
# skipped (SKIP_RETURN_CODE 77): a version nobody registered is never counted as passed.
#
# As root the command runs in a private mount namespace where the copy is bind-mounted over the
# real servers.env: every path stays the same, so a test that starts servers itself (test_pcap_ports
# runs scripts/peer-servers.sh start) finds their configuration unchanged and does not restart
# them. Without root, the copy lives in a private state dir whose other entries link to the real
# one. Either way tests that read $FBWIRE_STATE/servers.env, $FBW_SERVERS_ENV or the environment
# all see the same servers.
set -euo pipefail

[ $# -ge 2 ] || { echo "usage: $0 NAME COMMAND [ARG...]" >&2; exit 2; }
name=$1; shift
up=${name^^}
state=${FBWIRE_STATE:-/var/tmp/fbwire-state}   # scripts/fb-servers.sh's default
env_file=${FBW_SERVERS_ENV:-$state/servers.env}

value() { # KEY -> its value in the env file (first line wins, as tests/support/servers.c reads it)
  awk -v k="$1" 'index($0, k "=") == 1 { sub(/^[^=]*=/, ""); print; exit }' "$env_file"
}

if [ ! -r "$env_file" ]; then
  echo "SKIP: $name: no $env_file (scripts/fb-servers.sh start, then start-install or register $name)"
  exit 77
fi
if [ -z "$(value "FBW_${up}_PORT")" ]; then
  echo "SKIP: $name is not registered in $env_file (scripts/fb-servers.sh start-install $name DIR, or register $name HOST/PORT DBDIR USER PASSWORD-FILE)"
  exit 77
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fbwire-on-$name.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# The keys that change: the fb4 slot, its database dir, the login when the server has its own.
declare -A over=(
  [FBW_FB4_HOST]=$(value "FBW_${up}_HOST") [FBW_FB4_PORT]=$(value "FBW_${up}_PORT")
  [FBW_FB4_DB]=$(value "FBW_${up}_DB") [FBW_FB4_VERSION]=$(value "FBW_${up}_VERSION")
  [FBW_DBDIR_FB4]=$(value "FBW_DBDIR_${up}")
  [FBW_DBDIR_FB4_HOST]=$(value "FBW_DBDIR_${up}_HOST")
  [FBW_FB4_CHROOT]="" [FBW_TARGET]=$name)
[ -n "${over[FBW_DBDIR_FB4_HOST]}" ] || over[FBW_DBDIR_FB4_HOST]=${over[FBW_DBDIR_FB4]}
if [ -n "$(value "FBW_${up}_USER")" ]; then
  over[FBW_USER]=$(value "FBW_${up}_USER")
  over[FBW_PASSWORD]=$(value "FBW_${up}_PASSWORD")
fi
(umask 077
 pattern=$(printf '%s=|' "${!over[@]}")
 grep -Ev "^(${pattern%|})" "$env_file" >"$tmp/servers.env" || true
 for key in "${!over[@]}"; do printf '%s=%s\n' "$key" "${over[$key]}"; done >>"$tmp/servers.env")

echo "on-server: fb4 slot = $name (Firebird ${over[FBW_FB4_VERSION]:-?} at ${over[FBW_FB4_HOST]}/${over[FBW_FB4_PORT]})"
set -a
# shellcheck disable=SC1091
. "$tmp/servers.env"
set +a
if [ "$(id -u)" = 0 ] && unshare --mount --propagation private true 2>/dev/null; then
  export FBWIRE_STATE=$state FBW_SERVERS_ENV=$env_file
  # this shell stays in the machine's namespace: a test that must restart a server (tests/integ/
  # ledger.sh) runs fb-servers.sh there, where servers.env is the real file it rewrites
  export FBW_HOST_MOUNT_NS=/proc/$$/ns/mnt
  also=$env_file   # $FBW_SERVERS_ENV elsewhere: the state dir's file is covered too
  [ ! -f "$state/servers.env" ] || also=$state/servers.env
  # shellcheck disable=SC2016
  unshare --mount --propagation private /bin/sh -c \
    'mount --bind "$1" "$2" && mount --bind "$1" "$3" && shift 3 && exec "$@"' \
    sh "$tmp/servers.env" "$env_file" "$also" "$@"
else
  for entry in "$state"/* "$state"/.[!.]*; do
    [ -e "$entry" ] && [ "${entry##*/}" != servers.env ] && ln -s "$entry" "$tmp/${entry##*/}"
  done
  export FBWIRE_STATE=$tmp FBW_SERVERS_ENV=$tmp/servers.env
  "$@"
fi
