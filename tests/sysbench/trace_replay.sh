#!/bin/sh
# SPDX-License-Identifier: MIT
# trace_replay.sh - issue 27 section 5: a sysbench oltp_read_write run on the stock FB3 instance
# (fb3s: the package's firebird.conf, WireCrypt = Required; the driver requires crypt too, so no
# capture of it could be read) recorded through Firebird's trace API, then replayed by
# `fbwire-pcap replay --trace` onto a copy on FB4 (paced by the trace's timing) and FB5 when
# registered (as fast as possible): every step replayed,
# no failure, every SELECT's row count the same, and the same final table contents.
#
#   tests/sysbench/trace_replay.sh --lib libfbwire-sysbench.so --pcap fbwire-pcap --sql fbwire-sql
#       [--keep DIR]
#
# The trace is recorded by `fbwire-pcap trace-record` (fbwire's services API, the attachment
# encrypted) while sysbench runs. 1 table of 1000 rows, 2 threads, 4 s, ids partitioned per
# thread (oltp_rw_partitioned.lua: results do not depend on how the connections interleave), both
# copies prepared with --rand-seed=1. Exits 77 without the servers or sysbench.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
lib= pcap= sql= keep=
while [ $# -gt 0 ]; do
    case $1 in
    --lib) lib=$2; shift 2 ;;
    --pcap) pcap=$2; shift 2 ;;
    --sql) sql=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    *) echo "usage: $0 --lib SO --pcap BIN --sql BIN [--keep DIR]" >&2; exit 2 ;;
    esac
done
state=${FBWIRE_STATE:-/var/tmp/fbwire-state}
[ -f "$state/servers.env" ] || { echo "skip: no $state/servers.env"; exit 77; }
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

# a fresh database on server PREFIX (FB3S, FB4, FB5), named $name or $2: its DSN in $dsn (not
# in a subshell: the cleanup list must see it)
fresh() {
    eval "host=\$FBW_$1_HOST port=\$FBW_$1_PORT dir=\$FBW_DBDIR_$1 hdir=\${FBW_DBDIR_$1_HOST:-\$FBW_DBDIR_$1}"
    db=${2:-$name}
    dsn="$host/$port:$dir/$db.fdb"
    dbs="$dbs $hdir/$db.fdb"
    "$sql" --create --page-size 8192 --wire-crypt enabled "$dsn" >/dev/null
}
sb() { # DSN COMMAND [options]
    sbdsn=$1 cmd=$2; shift 2
    "$repo/tools/fbwire-sysbench" "$@" --db-driver=fbwire --fbwire-db="$sbdsn" --tables=1 \
        --table-size=1000 "$cmd"
}
digest() { "$sql" --wire-crypt enabled --tsv "$1" "SELECT id, k, c, pad FROM sbtest1 ORDER BY id;"; }

fresh FB3S
src=$dsn
sb "$src" prepare oltp_read_write --fbwire-wire-crypt=required --threads=1 --rand-seed=1 >/dev/null
targets=FB4
[ -n "${FBW_FB5_PORT:-}" ] && targets="FB4 FB5"

# recorded through fbwire's services API on an encrypted service attachment (the login from
# ISC_USER / ISC_PASSWORD: never on a command line)
"$pcap" trace-record --server "$FBW_FB3S_HOST/$FBW_FB3S_PORT" --database "$name.fdb" \
    --out "$tmp/run.trace" --wire-crypt required --time 9 2>"$tmp/record.err" &
rec=$!
sleep 2
sb "$src" run "$here/oltp_rw_partitioned.lua" --fbwire-wire-crypt=required --threads=2 --time=4 \
    --rand-seed=7 >"$tmp/sysbench.out"
if ! wait "$rec"; then echo "FAIL: trace-record:"; cat "$tmp/record.err"; exit 1; fi
cat "$tmp/record.err"
grep -q "EXECUTE_STATEMENT_FINISH" "$tmp/run.trace" || { echo "FAIL: the trace holds no statement"; exit 1; }
digest "$src" >"$tmp/fb3s.tsv"

# Ctrl-C (SIGINT) ends a recording without --time: the session is stopped on the server and read
# to its end, exit status 0
"$pcap" trace-record --server "$FBW_FB3S_HOST/$FBW_FB3S_PORT" --database "$name.fdb" \
    --out "$tmp/int.trace" --wire-crypt required 2>"$tmp/int.err" &
rec=$!
sleep 2
"$sql" --wire-crypt required "$src" "SELECT COUNT(*) FROM sbtest1;" >/dev/null
sleep 1
kill -INT "$rec"
if ! wait "$rec"; then echo "FAIL: trace-record after Ctrl-C:"; cat "$tmp/int.err"; exit 1; fi
grep -q "SELECT COUNT" "$tmp/int.trace" || { echo "FAIL: the interrupted recording lacks the query"; exit 1; }
echo "ok: Ctrl-C ended the recording cleanly"

status=0
for t in $targets; do
    fresh "$t"
    dst=$dsn
    sb "$dst" prepare oltp_read_write --fbwire-wire-crypt=enabled --threads=1 --rand-seed=1 >/dev/null
    # FB4 paced by the trace's timestamps, FB5 as fast as it goes
    pace=original
    [ "$t" = FB4 ] || pace=none
    if ! "$pcap" replay --trace "$tmp/run.trace" --trace-db "$name.fdb" --db "$dst" \
        --wire-crypt enabled --pace "$pace" >"$tmp/replay-$t.txt" 2>&1; then
        echo "FAIL: the replay onto $t reports a failure:"; tail -40 "$tmp/replay-$t.txt"; status=1
    fi
    grep -E "^total|^results|^wall time" "$tmp/replay-$t.txt"
    # every statement the trace saw executed was executed by the replay
    traced=$(grep -c ") EXECUTE_STATEMENT_START$" "$tmp/run.trace")
    replayed=$(awk '/^total:/ {t = 1} t && $1 == "execute" {print $2; exit}' "$tmp/replay-$t.txt")
    if [ "$traced" != "$replayed" ]; then
        echo "FAIL: $traced executions traced, $replayed replayed on $t"; status=1
    else
        echo "ok: all $traced traced executions replayed on $t"
    fi
    digest "$dst" >"$tmp/$t.tsv"
    if cmp -s "$tmp/fb3s.tsv" "$tmp/$t.tsv"; then
        echo "ok: $t holds the same $(wc -l <"$tmp/$t.tsv") rows as the traced FB3"
    else
        echo "FAIL: $t's table differs from the traced FB3's"; status=1
    fi
done
# the JSON report of a trace's replay follows the replay schema, the trace's figures null (never 0)
fresh FB4 "${name}_json"
dst=$dsn
sb "$dst" prepare oltp_read_write --fbwire-wire-crypt=enabled --threads=1 --rand-seed=1 >/dev/null
"$pcap" replay --trace "$tmp/run.trace" --trace-db "$name.fdb" --db "$dst" --wire-crypt enabled \
    --pace none --json >"$tmp/replay.json" 2>"$tmp/replay-json.err" || status=1
python3 - "$tmp/replay.json" "$repo/docs/fbwire-pcap-replay.schema.json" <<'PY' || status=1
import json, sys
import jsonschema  # Debian's python3-jsonschema, as xreplay.py uses
doc = json.load(open(sys.argv[1]))
jsonschema.validate(doc, json.load(open(sys.argv[2])))
assert all(c["capture"] is None and c["ratio"] is None for c in doc["connections"]), \
    "a trace's figures must be null"
assert doc["total"]["capture"] is None and doc["total"]["failed"] == 0
assert all(s["capture"]["round_trips"] is None for s in doc["load"]["statements"])
print("ok: the --json report of the trace's replay follows the schema")
PY
exit $status
