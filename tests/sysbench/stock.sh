#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# stock.sh - the drivers with their default options against servers with the packaged
# firebird.conf (fb3s, fb4s: WireCrypt = Required, AuthServer Srp / Srp256), the options that
# create a missing database, the errors that name the option to change, and the fbclient report
# of an encrypted session (counted at the socket) on the test servers.
#
#   tests/sysbench/stock.sh --lib path/to/libfbwire-sysbench.so --sql path/to/fbwire-sql
#
# Per stock server: fbwire-sql --info with defaults negotiates a plugin; prepare of a missing
# database fails naming --fbwire-create-db=on; with it (and --fbwire-page-size) prepare creates
# the database; oltp_point_select and oltp_read_write prepare/run/cleanup with default options
# through fbwire (and oltp_point_select through fbclient); wire crypt disabled and an auth list
# the server refuses fail naming the option. On fb3 and fb4 (WireCrypt = Enabled):
# --fbclient-wire-crypt=enabled gives socket-level round trips (3 per point select, at least 6
# send/recv calls), never 0.
# Prints one line per step; exits non-zero on failure.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
LIB="" SQL=""
while [ $# -gt 0 ]; do
  case $1 in
    --lib) LIB=$2; shift 2 ;;
    --sql) SQL=$2; shift 2 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
[ -f "$LIB" ] && [ -x "$SQL" ] || { echo "usage: $0 --lib LIB.so --sql fbwire-sql" >&2; exit 2; }
export FBWIRE_SYSBENCH_LIB=$LIB
LAUNCHER=$REPO/tools/fbwire-sysbench
ENV_FILE=${FBWIRE_STATE:-/var/tmp/fbwire-state}/servers.env
. "$ENV_FILE" 2>/dev/null
if [ -z "${FBW_FB4S_PORT:-}" ] || ! (exec 3<>"/dev/tcp/127.0.0.1/$FBW_FB4S_PORT") 2>/dev/null ||
   ! (exec 3<>"/dev/tcp/127.0.0.1/$FBW_FB3S_PORT") 2>/dev/null; then
  "$REPO/scripts/fb-servers.sh" start >&2 || { echo "servers did not start" >&2; exit 1; }
fi
set -a; . "$ENV_FILE"; set +a
export ISC_USER=$FBW_USER ISC_PASSWORD=$FBW_PASSWORD
WORK=$(mktemp -d /tmp/fbwire-stock.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
FAILS=0
ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
expect() { # description log pattern: the log must contain the (extended) pattern
  if grep -Eq -- "$3" "$2"; then ok "$1"; else fail "$1 (no /$3/ in $2)"; tail -n 5 "$2" | sed 's/^/    /'; fi
}
sb() { # log script command options...: run through the launcher, keep the output
  local log=$1 script=$2 cmd=$3; shift 3
  "$LAUNCHER" "$script" "$@" "$cmd" >>"$log" 2>&1
}
run_ok() { # description log script command options...
  local what=$1 log=$2; shift 2
  if sb "$log" "$@"; then ok "$what"; else fail "$what (see below)"; tail -n 8 "$log" | sed 's/^/    /'; fi
}

for server in fb3s fb4s; do
  S=${server^^} host=FBW_${server^^}_HOST port=FBW_${server^^}_PORT
  dsn_of() { echo "${!host}/${!port}:$1"; }
  if [ "$server" = fb3s ]; then dir=$FBW_DBDIR_FB3S hostdir=$FBW_DBDIR_FB3S; else dir=$FBW_DBDIR_FB4S hostdir=$FBW_DBDIR_FB4S_HOST; fi
  log=$WORK/$server.log
  "$SQL" --info "$(dsn_of "$dir/fbwire_test.fdb")" >"$log" 2>&1
  expect "$server: fbwire-sql --info with defaults negotiates wire crypt" "$log" '^wire_crypt: (Arc4|ChaCha|ChaCha64)$'
  expect "$server: fbwire-sql --info names the auth plugin" "$log" '^auth_plugin: Srp(256)?$'

  for drv in fbwire fbclient; do
    db=$dir/stock_$drv.fdb
    rm -f "$hostdir/stock_$drv.fdb" # not attached: each run starts from no database
    dsn=$(dsn_of "$db")
    common=(--db-driver=$drv --$drv-db="$dsn" --tables=2 --table-size=1000 --threads=2)
    log=$WORK/$server-$drv-missing.log
    sb "$log" oltp_point_select prepare "${common[@]}" # sysbench 1.0.20 exits 0 after a FATAL here
    expect "$server $drv: a missing database names --$drv-create-db=on" "$log" "--$drv-create-db=on creates it"
    [ -f "$hostdir/stock_$drv.fdb" ] && fail "$server $drv: a database appeared without create-db"

    log=$WORK/$server-$drv.log
    scripts=(oltp_point_select)
    [ $drv = fbwire ] && scripts+=(oltp_read_write)
    for script in "${scripts[@]}"; do
      run_ok "$server $drv $script prepare (create-db)" "$log" $script prepare "${common[@]}" \
        --$drv-create-db=on --$drv-page-size=16384
      run_ok "$server $drv $script run" "$log" $script run "${common[@]}" --$drv-create-db=on --time=3
      expect "$server $drv $script: the report names the wire crypt plugin" "$log" 'wire crypt (Arc4|ChaCha|ChaCha64),'
      run_ok "$server $drv $script cleanup" "$log" $script cleanup "${common[@]}"
    done
    expect "$server $drv: the database was created once" "$log" "created database '$dsn'"
    [ "$(grep -c "created database" "$log")" = 1 ] || fail "$server $drv: created more than once"
    "$SQL" "$dsn" "select mon\$page_size from mon\$database" >"$WORK/page" 2>&1
    expect "$server $drv: page size as asked" "$WORK/page" '^16384$'

    log=$WORK/$server-$drv-crypt.log
    sb "$log" oltp_point_select prepare "${common[@]}" --$drv-wire-crypt=disabled
    expect "$server $drv: crypt refusal names --$drv-wire-crypt=enabled" "$log" "use --$drv-wire-crypt=enabled"
    log=$WORK/$server-$drv-auth.log
    sb "$log" oltp_point_select prepare "${common[@]}" --$drv-auth=Legacy_Auth
    expect "$server $drv: auth refusal names --$drv-auth" "$log" "--$drv-auth \\(now Legacy_Auth\\)"
  done
done

# fbclient with wire crypt on a WireCrypt = Enabled server: the tap sees ciphertext.
for server in fb3 fb4; do
  host=FBW_${server^^}_HOST port=FBW_${server^^}_PORT
  if [ $server = fb3 ]; then dir=$FBW_DBDIR_FB3; else dir=$FBW_DBDIR_FB4; fi
  dsn="${!host}/${!port}:$dir/stock_crypt.fdb"
  common=(--db-driver=fbclient --fbclient-db="$dsn" --fbclient-wire-crypt=enabled --tables=1 --table-size=100 --threads=1)
  log=$WORK/$server-fbclient-crypt.log
  run_ok "$server fbclient crypt prepare" "$log" oltp_point_select prepare "${common[@]}" --fbclient-create-db=on
  : >"$log.run"
  run_ok "$server fbclient crypt run" "$log.run" oltp_point_select run "${common[@]}" --events=300 --time=30
  expect "$server fbclient crypt: the report says it counts at the socket" "$log.run" 'counted at the socket'
  expect "$server fbclient crypt: 3 round trips per point select" "$log.run" '^ +round trips per event: +3\.000$'
  expect "$server fbclient crypt: transactions not available" "$log.run" 'round trips per transaction: +not available'
  expect "$server fbclient crypt: op codes not available" "$log.run" 'op codes: +not available'
  # At least a send and a recv per round trip; a reply may come in more than one recv.
  awk '$1 == "point" && $2 == "select" && $3 == 300 && $4 == "3.000" && $5 >= 6 { f = 1 } END { exit !f }' \
    "$log.run" && ok "$server fbclient crypt: 3 rt and >= 6 socket calls per point select" ||
    { fail "$server fbclient crypt: point select row"; grep -A4 'statement class' "$log.run"; }
  run_ok "$server fbclient crypt cleanup" "$log" oltp_point_select cleanup "${common[@]}"
done

if [ $FAILS -gt 0 ]; then
  echo "$FAILS failure(s); logs kept in $WORK"
  trap - EXIT
  exit 1
fi
echo "all stock-server checks passed"
