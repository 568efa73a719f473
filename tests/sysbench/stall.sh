#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# stall.sh - a server that stops answering mid-run ends the run at the timeout, with an error that
# names the wait (issue: sysbench waited for a SIGSTOPped server far past --time).
#
#   tests/sysbench/stall.sh --stall fbwire-test-stall --lib libfbwire-sysbench.so   (sysbench)
#   tests/sysbench/stall.sh --stall fbwire-test-stall --sql fbwire-sql              (fbwire-sql)
#
# On each stock server (fb3s, fb4s; never the shared fb3/fb4, which other work uses):
#   sysbench: oltp_point_select with --fbwire-pipeline=off and oltp_read_write with
#     --fbwire-pipeline=transaction, --threads=2 --time=6 --fbwire-timeout=3; 1.5 s in, the server
#     is stopped (SIGSTOP) until sysbench has ended. sysbench must end with an error within
#     time + timeout + 1 s of its start (and within timeout + 1 s of the stall), the log naming
#     the wait ("no reply from the server for 3 s while waiting for the reply to op_...").
#     On fb3s also --fbwire-ignore-errors=network with the server stopped for 4 s: the timed-out
#     threads reconnect once it answers again and the run ends normally (exit 0, reconnects >= 1).
#     On fb4s also a run started while the server is stopped, both drivers with
#     --P-connect-timeout=2: it must fail within 3 s naming the connect timeout.
#   fbwire-sql: a script of 40000 short queries with --timeout 3, the server stopped 1.5 s in:
#     it must end (exit 1) within timeout + 1 s of the stall, naming the wait.
# The server is resumed by the EXIT trap, by fbwire-test-stall's watchdog (at most 15 s after the
# stall, whatever happens to this script) and as soon as the client ended.
# Prints one line per case with the measured times; exits non-zero on failure.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
LIB="" SQL="" STALL=""
while [ $# -gt 0 ]; do
  case $1 in
    --lib) LIB=$2; shift 2 ;;
    --sql) SQL=$2; shift 2 ;;
    --stall) STALL=$2; shift 2 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
[ -x "$STALL" ] && { [ -f "$LIB" ] || [ -x "$SQL" ]; } ||
  { echo "usage: $0 --stall fbwire-test-stall (--lib LIB.so | --sql fbwire-sql)" >&2; exit 2; }
ENV_FILE=${FBWIRE_STATE:-/var/tmp/fbwire-state}/servers.env
[ -r "$ENV_FILE" ] || { echo "servers not configured: run scripts/fb-servers.sh start" >&2; exit 1; }
set -a; . "$ENV_FILE"; set +a
export ISC_USER=$FBW_USER ISC_PASSWORD=$FBW_PASSWORD
TIMEOUT=3 TIME=6 STALL_AFTER=1.5 WATCHDOG_MS=15000
WORK=$(mktemp -d "${TMPDIR:-/tmp}/fbwire-stall.XXXXXX")
SERVER_PID="" WATCHDOG_PID="" CLIENT_PID=""
resume() {
  [ -n "$SERVER_PID" ] && kill -CONT "$SERVER_PID" 2>/dev/null
  [ -n "$WATCHDOG_PID" ] && kill "$WATCHDOG_PID" 2>/dev/null
  SERVER_PID="" WATCHDOG_PID=""
}
trap 'resume; [ -n "$CLIENT_PID" ] && kill -9 "$CLIENT_PID" 2>/dev/null; rm -rf "$WORK"' EXIT
trap 'exit 1' INT TERM HUP
FAILS=0
ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
now() { date +%s.%N; }
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a <= b) }'; } # a <= b (decimals)
sub() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a - b }'; }

# Run "$@" in the background, stop the server of port $1 STALL_AFTER s later, wait for the client
# (at most HARD s, then kill it), resume the server. Sets T_START, T_STALL, T_END, RC.
run_stalled() { # port hard-limit log command...
  local port=$1 hard=$2 log=$3; shift 3
  T_START=$(now)
  "$@" >"$log" 2>&1 &
  CLIENT_PID=$!
  sleep "$STALL_AFTER"
  local out
  if ! out=$("$STALL" "$port" "$WATCHDOG_MS" 2>&1); then
    echo "cannot stall port $port: $out" >>"$log"
  else
    read -r SERVER_PID WATCHDOG_PID <<<"$out"
  fi
  T_STALL=$(now)
  local waited=0
  while kill -0 "$CLIENT_PID" 2>/dev/null && [ "$waited" -lt $((hard * 20)) ]; do
    sleep 0.05; waited=$((waited + 1))
  done
  T_END=$(now)
  if kill -0 "$CLIENT_PID" 2>/dev/null; then
    kill -9 "$CLIENT_PID" 2>/dev/null
    echo "still running after ${hard} s: killed" >>"$log"
  fi
  wait "$CLIENT_PID"; RC=$?
  CLIENT_PID=""
  resume
}

# Judge one case: exit status non-zero, bounds, the error text.
judge() { # name log total-limit pattern
  local name=$1 log=$2 limit=$3 pat=$4
  local total after
  total=$(sub "$T_END" "$T_START") after=$(sub "$T_END" "$T_STALL")
  echo "$name: ended ${after} s after the stall, ${total} s after the start (exit $RC)"
  local bad=""
  [ "$RC" -ne 0 ] || bad="$bad exit 0 (the run did not notice the stall);"
  le "$total" "$limit" || bad="$bad took ${total} s, limit ${limit} s;"
  le "$after" "$((TIMEOUT + 1))" || bad="$bad ended ${after} s after the stall, limit $((TIMEOUT + 1)) s;"
  grep -Eq -- "$pat" "$log" || bad="$bad no /$pat/ in the log;"
  grep -q "cannot stall" "$log" && bad="$bad $(grep "cannot stall" "$log");"
  grep -m1 -E -- "$pat" "$log" | cut -c1-400 | sed 's/^/    /'
  if [ -z "$bad" ]; then ok "$name"; else fail "$name:$bad"; tail -n 8 "$log" | sed 's/^/    /'; fi
}

WAIT_PAT="no reply from the server for $TIMEOUT s while waiting for the reply to op_[a-z_]+"
for server in fb3s fb4s; do
  S=${server^^}
  host=FBW_${S}_HOST port=FBW_${S}_PORT db=FBW_${S}_DB
  if [ -n "$LIB" ]; then
    export FBWIRE_SYSBENCH_LIB=$LIB
    if [ "$server" = fb3s ]; then dir=$FBW_DBDIR_FB3S; else dir=$FBW_DBDIR_FB4S; fi
    dsn="${!host}/${!port}:$dir/sb_stall.fdb"
    common=(--db-driver=fbwire "--fbwire-db=$dsn" --tables=1 --table-size=200)
    "$REPO/tools/fbwire-sysbench" oltp_read_write "${common[@]}" cleanup >"$WORK/prep.log" 2>&1
    if ! "$REPO/tools/fbwire-sysbench" oltp_read_write "${common[@]}" --fbwire-create-db=on \
        prepare >>"$WORK/prep.log" 2>&1; then
      fail "$server: prepare"; tail -n 5 "$WORK/prep.log" | sed 's/^/    /'; continue
    fi
    for c in "oltp_point_select off" "oltp_read_write transaction"; do
      read -r script pipeline <<<"$c"
      log=$WORK/$server-$pipeline.log
      run_stalled "${!port}" $((TIME + TIMEOUT + 10)) "$log" \
        "$REPO/tools/fbwire-sysbench" "$script" "${common[@]}" --threads=2 --time=$TIME \
        --fbwire-timeout=$TIMEOUT --fbwire-pipeline="$pipeline" run
      judge "$server sysbench $script --fbwire-pipeline=$pipeline" "$log" \
        "$((TIME + TIMEOUT + 1))" "FATAL: fbwire: connection lost during '.*': $WAIT_PAT"
    done
    # With network errors ignorable the timeout is a reconnect instead: the server stopped for 4 s
    # (the watchdog resumes it), the threads time out, reattach once it answers again, and the run
    # goes on to its end (exit 0, reconnects counted).
    if [ "$server" = fb3s ]; then
      log=$WORK/$server-reconnect.log
      WATCHDOG_MS=4000
      run_stalled "${!port}" $((TIME + TIMEOUT + 40)) "$log" \
        "$REPO/tools/fbwire-sysbench" oltp_point_select "${common[@]}" --threads=2 \
        --time=$((TIME + 2)) --fbwire-timeout=$TIMEOUT --fbwire-connect-timeout=2 \
        --fbwire-ignore-errors=network run
      WATCHDOG_MS=15000
      total=$(sub "$T_END" "$T_START")
      reconnects=$(sed -n 's/^ *reconnects: *\([0-9]*\).*/\1/p' "$log" | head -n 1)
      echo "$server sysbench reconnect after the stall: ended ${total} s after the start (exit $RC, reconnects ${reconnects:-none})"
      if [ "$RC" -eq 0 ] && [ "${reconnects:-0}" -ge 1 ] && le "$total" "$((TIME + 2 + TIMEOUT))"; then
        ok "$server sysbench --fbwire-ignore-errors=network reconnects after the timeout"
      else
        fail "$server sysbench --fbwire-ignore-errors=network (exit $RC, reconnects ${reconnects:-none}, ${total} s)"
        tail -n 12 "$log" | sed 's/^/    /'
      fi
    fi
    # Connecting to a stopped server: both drivers give up at the connect timeout (fbclient
    # through isc_dpb_connect_timeout, in its own words plus a hint naming the option).
    if [ "$server" = fb4s ]; then
      for drv in fbwire fbclient; do
        log=$WORK/$server-connect-$drv.log
        out=$("$STALL" "${!port}" 8000 2>&1) && read -r SERVER_PID WATCHDOG_PID <<<"$out"
        T_START=$(now)
        timeout 20 "$REPO/tools/fbwire-sysbench" oltp_point_select --db-driver=$drv \
          "--$drv-db=$dsn" --tables=1 --time=2 "--$drv-connect-timeout=2" run >"$log" 2>&1
        RC=$?
        T_END=$(now)
        resume
        total=$(sub "$T_END" "$T_START")
        echo "$server $drv connect to the stopped server: ended after ${total} s (exit $RC)"
        grep -m1 "FATAL" "$log" | cut -c1-400 | sed 's/^/    /'
        if [ -z "${out##* *}" ] && [ "$RC" -ne 0 ] && le "$total" 3 &&
           grep -Eq "the login timed out: no reply from the server within the connect timeout of 2 s|--fbclient-connect-timeout=2" "$log"; then
          ok "$server $drv --$drv-connect-timeout=2"
        else
          fail "$server $drv --$drv-connect-timeout=2 (exit $RC, ${total} s; $out)"
          tail -n 5 "$log" | sed 's/^/    /'
        fi
      done
    fi
    "$REPO/tools/fbwire-sysbench" oltp_read_write "${common[@]}" cleanup >>"$WORK/prep.log" 2>&1
  fi
  if [ -n "$SQL" ]; then
    awk 'BEGIN { for (i = 0; i < 40000; i++) printf "select %d from rdb$database;\n", i }' \
      >"$WORK/q.sql"
    log=$WORK/$server-sql.log
    run_stalled "${!port}" $((TIMEOUT + 10)) "$log" \
      "$SQL" --timeout $TIMEOUT -i "$WORK/q.sql" "${!host}/${!port}:${!db}"
    judge "$server fbwire-sql --timeout $TIMEOUT" "$log" 30 "$WAIT_PAT"
  fi
done
[ "$FAILS" -eq 0 ] && echo "all stall cases passed" || echo "$FAILS failed"
[ "$FAILS" -eq 0 ]
