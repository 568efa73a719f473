#!/bin/sh
# SPDX-License-Identifier: MIT
# trace_replay.sh - issue 27 section 5: a sysbench oltp_read_write run on the stock FB3 instance
# (fb3s: the package's firebird.conf, WireCrypt = Required; the driver requires crypt too, so no
# capture of it could be read) recorded through Firebird's trace API, then replayed by
# `fbwire-pcap replay --trace` onto a copy on FB4 (and FB5 when registered): every step replayed,
# no failure, every SELECT's row count the same, and the same final table contents.
#
#   tests/sysbench/trace_replay.sh --lib libfbwire-sysbench.so --pcap fbwire-pcap --sql fbwire-sql
#       [--tracemgr fbtracemgr] [--keep DIR]
#
# The trace is recorded with Firebird's own fbtracemgr (the services API; until fbwire's services
# API records it, issue 27 section 4). 1 table of 1000 rows, 2 threads, 4 s, ids partitioned per
# thread (oltp_rw_partitioned.lua: results do not depend on how the connections interleave), both
# copies prepared with --rand-seed=1. Exits 77 without the servers, fbtracemgr or sysbench.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
lib= pcap= sql= tracemgr=fbtracemgr keep=
while [ $# -gt 0 ]; do
    case $1 in
    --lib) lib=$2; shift 2 ;;
    --pcap) pcap=$2; shift 2 ;;
    --sql) sql=$2; shift 2 ;;
    --tracemgr) tracemgr=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    *) echo "usage: $0 --lib SO --pcap BIN --sql BIN [--tracemgr BIN] [--keep DIR]" >&2; exit 2 ;;
    esac
done
state=${FBWIRE_STATE:-/var/tmp/fbwire-state}
[ -f "$state/servers.env" ] || { echo "skip: no $state/servers.env"; exit 77; }
command -v "$tracemgr" >/dev/null || { echo "skip: no $tracemgr"; exit 77; }
command -v sysbench >/dev/null || { echo "skip: no sysbench"; exit 77; }
set -a; . "$state/servers.env"; set +a
[ -n "${FBW_FB3S_PORT:-}" ] || { echo "skip: no fb3s in servers.env"; exit 77; }
ISC_USER=$FBW_USER ISC_PASSWORD=$FBW_PASSWORD
export ISC_USER ISC_PASSWORD FBWIRE_SYSBENCH_LIB=$lib
tmp=$(mktemp -d)
name=trace27_$$
dbs=
cleanup() {
    for f in $dbs; do rm -f "$f"; done
    if [ -n "$keep" ]; then mkdir -p "$keep" && cp "$tmp"/* "$keep"/ 2>/dev/null || true; fi
    rm -rf "$tmp"
}
trap cleanup EXIT

# fresh database NAME on server PREFIX (FB3S, FB4, FB5): its DSN on stdout
fresh() {
    eval "host=\$FBW_$1_HOST port=\$FBW_$1_PORT dir=\$FBW_DBDIR_$1 hdir=\${FBW_DBDIR_$1_HOST:-\$FBW_DBDIR_$1}"
    dsn="$host/$port:$dir/$name.fdb"
    dbs="$dbs $hdir/$name.fdb"
    "$sql" --create --page-size 8192 --wire-crypt enabled "$dsn" >/dev/null
    echo "$dsn"
}
sb() { # DSN COMMAND [options]
    dsn=$1 cmd=$2; shift 2
    "$repo/tools/fbwire-sysbench" "$@" --db-driver=fbwire --fbwire-db="$dsn" --tables=1 \
        --table-size=1000 "$cmd"
}
digest() { "$sql" --wire-crypt enabled --tsv "$1" "SELECT id, k, c, pad FROM sbtest1 ORDER BY id;"; }

src=$(fresh FB3S)
sb "$src" prepare oltp_read_write --fbwire-wire-crypt=required --threads=1 --rand-seed=1 >/dev/null
targets=FB4
[ -n "${FBW_FB5_PORT:-}" ] && targets="FB4 FB5"

conf=$tmp/trace.conf
cat >"$conf" <<CONF
database = %[\\\\/]$name.fdb
{
	enabled = true
	log_connections = true
	log_transactions = true
	log_statement_prepare = true
	log_statement_free = true
	log_statement_start = true
	log_statement_finish = true
	max_sql_length = 65000
	max_arg_length = 65000
	max_arg_count = 1000
	time_threshold = 0
}
CONF
# the login from ISC_USER / ISC_PASSWORD: never on a command line
svc="$FBW_FB3S_HOST/$FBW_FB3S_PORT:service_mgr"
"$tracemgr" -se "$svc" -start -name "$name" -config "$conf" >"$tmp/run.trace" 2>"$tmp/tracemgr.err" &
tm=$!
id=
for _ in $(seq 50); do
    id=$(sed -n 's/^Trace session ID \([0-9]*\) started$/\1/p' "$tmp/run.trace")
    [ -n "$id" ] && break
    sleep 0.2
done
[ -n "$id" ] || { echo "FAIL: the trace session did not start"; cat "$tmp/tracemgr.err"; exit 1; }
sb "$src" run "$here/oltp_rw_partitioned.lua" --fbwire-wire-crypt=required --threads=2 --time=4 \
    --rand-seed=7 >"$tmp/sysbench.out"
sleep 1
"$tracemgr" -se "$svc" -stop -id "$id" >/dev/null # the session ends: fbtracemgr flushes and exits
wait "$tm" || true
grep -q "EXECUTE_STATEMENT_FINISH" "$tmp/run.trace" || { echo "FAIL: the trace holds no statement"; cat "$tmp/tracemgr.err"; exit 1; }
digest "$src" >"$tmp/fb3s.tsv"

status=0
for t in $targets; do
    dst=$(fresh "$t")
    sb "$dst" prepare oltp_read_write --fbwire-wire-crypt=enabled --threads=1 --rand-seed=1 >/dev/null
    if ! "$pcap" replay --trace "$tmp/run.trace" --trace-db "$name.fdb" --db "$dst" \
        --wire-crypt enabled --pace none >"$tmp/replay-$t.txt" 2>&1; then
        echo "FAIL: the replay onto $t reports a failure:"; tail -40 "$tmp/replay-$t.txt"; status=1
    fi
    grep -E "^total|replayed" "$tmp/replay-$t.txt" | tail -3
    digest "$dst" >"$tmp/$t.tsv"
    if cmp -s "$tmp/fb3s.tsv" "$tmp/$t.tsv"; then
        echo "ok: $t holds the same $(wc -l <"$tmp/$t.tsv") rows as the traced FB3"
    else
        echo "FAIL: $t's table differs from the traced FB3's"; status=1
    fi
done
exit $status
