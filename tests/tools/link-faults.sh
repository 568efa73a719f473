#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# link-faults.sh - the sysbench driver and fbwire-sql through fbwire-link faults, FB3 and FB4
# (the library's cases, placed byte by byte, are tests/integ/test_link_faults.c).
#
#   tests/tools/link-faults.sh --link fbwire-link --lib libfbwire-sysbench.so --sql fbwire-sql
#
# sysbench (fbwire driver), oltp_insert (autocommit INSERTs sent as text), 1 thread, its connection
#   reset at its 150th client write: the run ends, naming the INSERT, with "outcome is unknown".
# sysbench (fbwire driver), --fbwire-pipeline=off and =transaction, oltp_read_write, 2 threads:
#   - every connection reset at its 150th client write: the run ends (exit non-zero) within 20 s,
#     the log says "connection lost during '<statement>'", the fault log holds the resets;
#   - 1-byte slices both ways (--slice 1): the run works (exit 0, no error, transactions done);
#   - 1 Mbit/s (--rate 1mbit): works, fewer transactions per second than a direct run.
# fbwire-sql, a 100-row query: the reply cut in the middle of the rows (the byte placed between a
#   fault-free run of a 1-row query and of the 100-row one, checked in the fault log): exit 1 within
#   the bound, "lost the connection", part of the rows printed; the same reply held (stall=hold)
#   past --timeout 2: exit 1 within 3 s naming the wait.
# Every client runs under `timeout` (no hang); prints one line per case, exits non-zero on failure.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
LINK="" LIB="" SQL=""
while [ $# -gt 0 ]; do
  case $1 in
    --link) LINK=$2; shift 2 ;;
    --lib) LIB=$2; shift 2 ;;
    --sql) SQL=$2; shift 2 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
[ -x "$LINK" ] && [ -f "$LIB" ] && [ -x "$SQL" ] ||
  { echo "usage: $0 --link fbwire-link --lib LIB.so --sql fbwire-sql" >&2; exit 2; }
ENV_FILE=${FBWIRE_STATE:-/var/tmp/fbwire-state}/servers.env
[ -r "$ENV_FILE" ] || { echo "servers not configured: run scripts/fb-servers.sh start" >&2; exit 1; }
set -a; . "$ENV_FILE"; set +a
export ISC_USER=$FBW_USER ISC_PASSWORD=$FBW_PASSWORD FBWIRE_SYSBENCH_LIB=$LIB
WORK=$(mktemp -d "${TMPDIR:-/tmp}/fbwire-link-faults.XXXXXX")
LINK_PID=""
stop_link() { [ -n "$LINK_PID" ] && kill "$LINK_PID" 2>/dev/null && wait "$LINK_PID" 2>/dev/null; LINK_PID=""; }
trap 'stop_link; rm -rf "$WORK"' EXIT
trap 'exit 1' INT TERM HUP
FAILS=0
ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
now() { date +%s.%N; }
sub() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a - b }'; }
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a <= b) }'; }

# start_link name host:port [options...]: a relay on a free port; sets PORT, FLOG, JSON.
start_link() {
  local name=$1 to=$2; shift 2
  FLOG=$WORK/$name.faults JSON=$WORK/$name.json
  rm -f "$WORK/$name.link"  # a reused name must not show the previous relay's port
  "$LINK" --listen 127.0.0.1:0 --to "$to" --fault-log "$FLOG" --json "$JSON" --quiet "$@" \
    2>"$WORK/$name.link" &
  LINK_PID=$!
  PORT=""
  for _ in $(seq 200); do
    PORT=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\),.*/\1/p' "$WORK/$name.link")
    [ -n "$PORT" ] && return 0
    sleep 0.025
  done
  echo "fbwire-link did not start: $(cat "$WORK/$name.link")" >&2
  return 1
}
json_num() { python3 "$(dirname "${BASH_SOURCE[0]}")/link_json.py" bytes "$1" "$2"; }
tps() { sed -n 's/.*transactions: *[0-9]* *(\([0-9.]*\) per sec.*/\1/p' "$1" | head -n 1; }

QUERY="with recursive r(n) as (select 1 from rdb\$database union all select n + 1 from r where n < 100) select n, 'row ' || n || ' of the link fault test' from r"
for server in fb3 fb4; do
  S=${server^^}
  host=FBW_${S}_HOST port=FBW_${S}_PORT db=FBW_${S}_DB dir=FBW_DBDIR_${S}
  to="${!host}:${!port}"
  # ---- sysbench
  sbdsn() { echo "127.0.0.1/$1:${!dir}/sb_link_faults.fdb"; }
  direct="${!host}/${!port}:${!dir}/sb_link_faults.fdb"
  common=(--db-driver=fbwire --tables=1 --table-size=1000 --fbwire-timeout=10)
  "$REPO/tools/fbwire-sysbench" oltp_read_write "${common[@]}" "--fbwire-db=$direct" cleanup \
    >"$WORK/prep.log" 2>&1
  if ! "$REPO/tools/fbwire-sysbench" oltp_read_write "${common[@]}" "--fbwire-db=$direct" \
      --fbwire-create-db=on prepare >>"$WORK/prep.log" 2>&1; then
    fail "$server: sysbench prepare"; tail -n 5 "$WORK/prep.log"; continue
  fi
  # Autocommit writes (oltp_insert: no BEGIN): the 150th write is an INSERT that commits with its
  # own reply, sent and never answered, so the driver must say its outcome is unknown (the
  # library's fbw_conn_outcome_unknown, not a guess from the SQL).
  name=$server-autocommit
  start_link "$name-reset" "$to" --fault 'after=client-writes:150 reset' || fail "$name"
  if [ -n "$PORT" ]; then
    timeout 60 "$REPO/tools/fbwire-sysbench" oltp_insert "${common[@]}" --threads=1 \
      "--fbwire-db=$(sbdsn "$PORT")" --time=20 run >"$WORK/$name-reset.log" 2>&1
    rc=$?
    stop_link
    msg=$(grep -m1 -o "connection lost during .*" "$WORK/$name-reset.log")
    echo "$server sysbench oltp_insert (autocommit), reset at the 150th write: exit $rc: $msg"
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [[ "$msg" == *"INSERT"*"outcome is unknown"* ]]; then
      ok "$server sysbench autocommit INSERT lost: outcome unknown"
    else
      fail "$server sysbench autocommit INSERT reset"; tail -n 8 "$WORK/$name-reset.log" | sed 's/^/    /'
    fi
  fi
  for pipeline in off transaction; do
    name=$server-$pipeline
    sb=("$REPO/tools/fbwire-sysbench" oltp_read_write "${common[@]}" --threads=2
        --fbwire-pipeline=$pipeline)
    # Reset at the 150th client write of every connection.
    start_link "$name-reset" "$to" --fault 'after=client-writes:150 reset' || { fail "$name"; continue; }
    t0=$(now)
    timeout 60 "${sb[@]}" "--fbwire-db=$(sbdsn "$PORT")" --time=20 run >"$WORK/$name-reset.log" 2>&1
    rc=$? took=$(sub "$(now)" "$t0")
    stop_link
    resets=$(grep -c '"fault":"reset"' "$FLOG" 2>/dev/null)
    msg=$(grep -m1 -o "connection lost during '.*" "$WORK/$name-reset.log" | cut -c1-300)
    echo "$server sysbench --fbwire-pipeline=$pipeline, reset at the 150th write: exit $rc after $took s, ${resets:-0} reset(s): $msg"
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && le "$took" 20 && [ "${resets:-0}" -ge 1 ] && [ -n "$msg" ]; then
      ok "$server sysbench pipeline=$pipeline: a reset ends the run with the statement named"
    else
      fail "$server sysbench pipeline=$pipeline reset"; tail -n 8 "$WORK/$name-reset.log" | sed 's/^/    /'
    fi
    # 1-byte slices both ways and 1 Mbit/s: the run works.
    timeout 60 "${sb[@]}" "--fbwire-db=$direct" --time=2 run >"$WORK/$name-direct.log" 2>&1
    tps_direct=$(tps "$WORK/$name-direct.log")
    for shape in "slice --slice 1" "rate --rate 1mbit"; do
      read -r kind opt val <<<"$shape"
      start_link "$name-$kind" "$to" "$opt" "$val" || { fail "$name $kind"; continue; }
      timeout 60 "${sb[@]}" "--fbwire-db=$(sbdsn "$PORT")" --time=2 run >"$WORK/$name-$kind.log" 2>&1
      rc=$?
      stop_link
      t=$(tps "$WORK/$name-$kind.log")
      echo "$server sysbench --fbwire-pipeline=$pipeline $opt $val: exit $rc, ${t:-?} tps (direct ${tps_direct:-?})"
      good=1
      [ "$rc" -eq 0 ] && ! grep -q FATAL "$WORK/$name-$kind.log" && le 0.01 "${t:-0}" || good=0
      if [ "$kind" = rate ]; then le "${t:-0}" "${tps_direct:-0}" || good=0; fi
      if [ $good = 1 ]; then ok "$server sysbench pipeline=$pipeline $opt $val works"
      else fail "$server sysbench pipeline=$pipeline $opt $val"; tail -n 8 "$WORK/$name-$kind.log" | sed 's/^/    /'; fi
    done
  done
  "$REPO/tools/fbwire-sysbench" oltp_read_write "${common[@]}" "--fbwire-db=$direct" cleanup \
    >>"$WORK/prep.log" 2>&1
  # ---- fbwire-sql: where the 100 rows travel, from two fault-free runs through the relay.
  for probe in one:"select 1 from rdb\$database" rows:"$QUERY"; do
    start_link "$server-probe-${probe%%:*}" "$to" || continue
    timeout 30 "$SQL" --tsv "127.0.0.1/$PORT:${!db}" "${probe#*:}" >"$WORK/$server-${probe%%:*}.out" 2>&1
    stop_link
    eval "down_${probe%%:*}=$(json_num "$JSON" down)"
  done
  at=$(( (down_one + down_rows) / 2 ))
  rows_all=$(grep -c 'of the link fault test' "$WORK/$server-rows.out")
  for fault in reset stall=hold; do
    start_link "$server-sql-$fault" "$to" --fault "after=server-bytes:$at $fault" || continue
    t0=$(now)
    timeout 30 "$SQL" --tsv --timeout 2 "127.0.0.1/$PORT:${!db}" "$QUERY" >"$WORK/$server-sql.out" 2>"$WORK/$server-sql.err"
    rc=$? took=$(sub "$(now)" "$t0")
    kill -USR1 "$LINK_PID" 2>/dev/null
    stop_link
    delivered=$(sed -n 's/.*"down":\([0-9]*\)}.*/\1/p' "$FLOG" | head -n 1)
    rows=$(grep -c 'of the link fault test' "$WORK/$server-sql.out")
    msg=$(head -n 1 "$WORK/$server-sql.err" | cut -c1-300)
    echo "$server fbwire-sql, $fault after $at of ${down_one}..${down_rows} bytes down (delivered ${delivered:-?}): exit $rc after $took s, $rows of $rows_all rows: $msg"
    good=1
    [ "$rc" -eq 1 ] && [ "${delivered:-0}" = "$at" ] && [ "$at" -gt "$down_one" ] && [ "$rows_all" -eq 100 ] || good=0
    [ "$rows" -lt 100 ] || good=0
    if [ "$fault" = reset ]; then
      grep -q "lost the connection" "$WORK/$server-sql.err" && le "$took" 5 || good=0
    else
      grep -q "no reply from the server for 2 s while waiting for the reply to op_" "$WORK/$server-sql.err" && le "$took" 3.5 || good=0
    fi
    if [ $good = 1 ]; then ok "$server fbwire-sql $fault in the middle of the rows"
    else fail "$server fbwire-sql $fault"; sed 's/^/    /' "$WORK/$server-sql.err" | head -n 5; fi
  done
done
[ "$FAILS" -eq 0 ] && echo "all link fault cases passed" || echo "$FAILS failed"
[ "$FAILS" -eq 0 ]
