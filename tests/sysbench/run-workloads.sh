#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run-workloads.sh - the upstream sysbench scripts end to end through the plug-in, plus the Lua
# API test (api_test.lua) and the connection-loss check (check_tables.lua reconnect).
#
#   tests/sysbench/run-workloads.sh [--driver fbwire|fbclient] [--server fb3|fb4]...
#       [--lib path/to/libfbwire-sysbench.so] [--db NAME.fdb] [--tables N] [--table-size N]
#       [--threads N] [--events N] [--bulk-events N] [--time S] [--only script,...]
#       [--ps-mode auto|disable] [--extra "sysbench options"] [--pipeline off|transaction]
#       [--checks values,api,reconnect,batch,insert-rt,pipeline] [--wire-crypt MODE|default]
#
# --wire-crypt (default disabled, so the fbclient tap decodes every op) is passed to the driver
# as --DRIVER-wire-crypt=MODE; "default" passes nothing and runs with the driver's default.
#
# For each script: cleanup (leftovers), prepare, a check that every table has table-size rows
# with ids 1..N (check_tables.lua, through the same driver), a short run (--events, capped by
# --time) that must end without errors other than ignored ones, the query counters of the run
# against what one event of that script issues (when nothing was retried), cleanup and a check
# that nothing is left. oltp_insert: the tables must have grown by exactly the writes sysbench
# counted. bulk_insert (no prepared data): its tables must hold exactly one row per event, ids
# 1..N. --only none runs just the --checks. --pipeline passes --DRIVER-pipeline to every run
# (scripts, API test and checks alike); the pipeline check runs pipeline_test.lua (fbwire only). Servers come from scripts/fb-servers.sh (started
# when its env file or a port is missing); each server gets the database --db (default
# sysbench.fdb) next to its test database. Prints one line per step; exits non-zero on failure.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
DRIVER=fbwire
SERVERS=()
LIB=""
DB_NAME=sysbench.fdb
TABLES=2
TABLE_SIZE=500
THREADS=2
EVENTS=100
BULK_EVENTS=60000
TIME=20
ONLY=""
EXTRA=""
PS_MODE=auto
PIPELINE=""
CHECKS=""
WIRE_CRYPT=disabled
SCRIPTS=(oltp_read_write oltp_read_only oltp_write_only oltp_point_select oltp_insert
         oltp_delete oltp_update_index oltp_update_non_index select_random_points
         select_random_ranges bulk_insert)

while [ $# -gt 0 ]; do
  case $1 in
    --driver) DRIVER=$2; shift 2 ;;
    --server) SERVERS+=("$2"); shift 2 ;;
    --lib) LIB=$2; shift 2 ;;
    --db) DB_NAME=$2; shift 2 ;;
    --tables) TABLES=$2; shift 2 ;;
    --table-size) TABLE_SIZE=$2; shift 2 ;;
    --threads) THREADS=$2; shift 2 ;;
    --events) EVENTS=$2; shift 2 ;;
    --bulk-events) BULK_EVENTS=$2; shift 2 ;;
    --time) TIME=$2; shift 2 ;;
    --only) ONLY=$2; shift 2 ;;
    --extra) EXTRA=$2; shift 2 ;;
    --ps-mode) PS_MODE=$2; shift 2 ;;
    --checks) CHECKS=$2; shift 2 ;;
    --wire-crypt) WIRE_CRYPT=$2; shift 2 ;;
    --pipeline) PIPELINE=$2; shift 2 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
[ ${#SERVERS[@]} -eq 0 ] && SERVERS=(fb3)

if [ -z "$LIB" ]; then
  for cand in "$REPO"/build*/driver/libfbwire-sysbench.so; do
    [ -f "$cand" ] && LIB=$cand && break
  done
fi
[ -f "$LIB" ] || { echo "libfbwire-sysbench.so not found (use --lib)" >&2; exit 2; }
command -v sysbench >/dev/null || { echo "sysbench not installed" >&2; exit 2; }
command -v isql-fb >/dev/null || { echo "isql-fb not installed" >&2; exit 2; }
export FBWIRE_SYSBENCH_LIB=$LIB
LAUNCHER=$REPO/tools/fbwire-sysbench

STATE=${FBWIRE_STATE:-/var/tmp/fbwire-state}
ENV_FILE=$STATE/servers.env
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
need_start=0
[ -f "$ENV_FILE" ] || need_start=1
if [ $need_start -eq 0 ]; then
  set -a; . "$ENV_FILE"; set +a
  for s in "${SERVERS[@]}"; do
    p=FBW_${s^^}_PORT
    port_open "${!p}" || need_start=1
  done
fi
if [ $need_start -eq 1 ]; then
  "$REPO/scripts/fb-servers.sh" start "${SERVERS[@]}" >&2 || { echo "servers did not start" >&2; exit 1; }
  set -a; . "$ENV_FILE"; set +a
fi

LOG_DIR=$(mktemp -d /tmp/fbwire-sysbench.XXXXXX)
FAILS=0
RESULTS=()

# The database each server uses for sysbench, created on first use through isql-fb.
ensure_db() { # server -> prints the connection string
  local s=${1^^} host port dir
  host=FBW_${s}_HOST port=FBW_${s}_PORT dir=FBW_DBDIR_${s}
  local dsn="${!host}/${!port}:${!dir}/$DB_NAME"
  if ! echo "QUIT;" | ISC_USER=$FBW_USER ISC_PASSWORD=$FBW_PASSWORD isql-fb -q "$dsn" >/dev/null 2>&1; then
    echo "CREATE DATABASE '$dsn' USER '$FBW_USER' PASSWORD '$FBW_PASSWORD' PAGE_SIZE 8192;" |
      isql-fb -q >/dev/null 2>&1
  fi
  echo "$dsn"
}

# sb <log> <script> <command> [options...]: run through the launcher, keep the output.
# The password travels in ISC_PASSWORD (the drivers' default), not on the command line.
# --extra options go to the upstream scripts only (check_tables.lua declares its own).
sb() {
  local log=$1; shift
  local script=$1 cmd=$2; shift 2
  local extra=$EXTRA crypt=()
  [[ $script == "$HERE"/* ]] && extra=""
  [ "$WIRE_CRYPT" = default ] || crypt=(--"$DRIVER"-wire-crypt="$WIRE_CRYPT")
  # shellcheck disable=SC2086
  ISC_USER=$FBW_USER ISC_PASSWORD=$FBW_PASSWORD \
    "$LAUNCHER" "$script" --db-driver="$DRIVER" --"$DRIVER"-db="$DSN" --db-ps-mode="$PS_MODE" \
    --threads="$THREADS" "${crypt[@]}" ${PIPELINE:+--"$DRIVER"-pipeline="$PIPELINE"} "$@" $extra "$cmd" >>"$log" 2>&1
}

check() { # log command [options]
  local log=$1 cmd=$2; shift 2
  echo "--- check_tables $cmd" >>"$log"
  sb "$log" "$HERE/check_tables.lua" "$cmd" "$@" && [ "$(tail -n 1 "$log")" = "CHECK OK" ]
}

# A number from the last sysbench report in a log: "read:", "write:", "transactions:" ...
report() { # log label
  awk -v k="$2:" '$1 == k { v = $2 } END { print (v == "" ? "?" : v) }' "$1"
}

rows_total() { # log -> total rows over --tables (check_tables count), "" on failure
  local log=$1; shift
  check "$log" count "$@" >/dev/null 2>&1 || return 1
  awk '$1 == "ROWS" { v = $2 } END { print v }' "$log"
}

auto_inc_off() { [[ " $EXTRA " =~ [[:space:]]--auto[-_]inc=(off|false|0)[[:space:]] ]]; }
skip_trx() { [[ " $EXTRA " =~ [[:space:]]--skip[-_]trx(=on|=true|=1)?[[:space:]] ]]; }

# Queries one event of each script issues with the default options: reads, then writes and
# others together (an UPDATE or DELETE that finds no row counts as other instead of write).
expected_counts() { # script -> "reads writes+others"
  local o=2
  skip_trx && o=0
  case $1 in
    oltp_read_write) echo "14 $((4 + o))" ;;
    oltp_read_only) echo "14 $o" ;;
    oltp_write_only) echo "0 $((4 + o))" ;;
    oltp_point_select|select_random_points|select_random_ranges) echo "1 0" ;;
    oltp_insert|oltp_delete|oltp_update_index|oltp_update_non_index) echo "0 1" ;;
    *) echo "" ;;
  esac
}

# Counters of the run against the script's shape; only exact when no event was retried.
check_counts() { # log script -> 0 ok; prints why not
  local log=$1 script=$2
  local ev rd wr ot er exp
  ev=$(report "$log" transactions) rd=$(report "$log" read) wr=$(report "$log" write)
  ot=$(report "$log" other)
  er=$(awk '$1 == "ignored" && $2 == "errors:" { v = $3 } END { print v }' "$log")
  exp=$(expected_counts "$script")
  [ -z "$exp" ] && return 0
  [ "$ev" = "?" ] && { echo "no report"; return 1; }
  if [ "${er:-0}" != 0 ]; then
    [ "$rd" -ge $((${exp% *} * ev)) ] || { echo "reads $rd < ${exp% *} x $ev events"; return 1; }
    return 0
  fi
  if [ "$rd" != $((${exp% *} * ev)) ] || [ $((wr + ot)) != $((${exp#* } * ev)) ]; then
    echo "counters read=$rd write=$wr other=$ot for $ev events, expected ${exp% *} and ${exp#* } per event"
    return 1
  fi
  case $script in
    oltp_read_only|oltp_point_select|select_random_*) [ "$wr" = 0 ] || { echo "writes in a read-only script"; return 1; } ;;
    oltp_insert) [ "$wr" = "$ev" ] || { echo "writes $wr != inserts $ev"; return 1; } ;;
  esac
  return 0
}

run_script() { # server script
  local server=$1 script=$2
  local log=$LOG_DIR/$server-$script.log
  local sizes=(--tables="$TABLES" --table-size="$TABLE_SIZE")
  local ctables=$TABLES events=$EVENTS csize=$TABLE_SIZE
  # oltp_insert --auto-inc=off prepares empty tables (its ids come from sysbench.rand.unique())
  [ "$script" = oltp_insert ] && auto_inc_off && csize=0
  case $script in
    select_random_*) sizes=(--tables=1 --table-size="$TABLE_SIZE"); ctables=1 ;;
    bulk_insert) sizes=(); ctables=$THREADS events=$BULK_EVENTS ;;
  esac
  local step=cleanup why="" before=0 after
  : >"$log"
  sb "$log" "$script" cleanup "${sizes[@]}" &&
  step=prepare && sb "$log" "$script" prepare "${sizes[@]}" &&
  if [ "$script" != bulk_insert ]; then
    step=verify && check "$log" verify --tables="$ctables" --table-size="$csize" &&
    before=$((ctables * csize))
  fi &&
  step=run && echo "--- run" >>"$log" &&
  sb "$log" "$script" run "${sizes[@]}" --events="$events" --time="$TIME" &&
  ! grep -q '^FATAL' "$log" &&
  step=counters && why=$(check_counts "$log" "$script") &&
  if [ "$script" = oltp_insert ]; then
    step=inserted && after=$(rows_total "$log" --tables="$ctables") &&
    why="rows $before -> $after, writes $(report "$log" write)" &&
    [ "$after" = $((before + $(report "$log" write))) ]
  elif [ "$script" = bulk_insert ]; then
    step=bulk-rows && check "$log" nonempty --tables="$ctables" &&
    after=$(rows_total "$log" --tables="$ctables") &&
    why="rows $after, events $(report "$log" transactions)" &&
    [ "$after" = "$(report "$log" transactions)" ]
  fi &&
  step=cleanup && sb "$log" "$script" cleanup "${sizes[@]}" &&
  step=absent && check "$log" absent --tables="$ctables" && step=ok
  local tps errs
  tps=$(awk '/transactions:/ {gsub(/[()]/, "", $3); print $3; exit}' "$log")
  errs=$(awk '$1 == "ignored" && $2 == "errors:" { print $3; exit }' "$log")
  if [ "$step" = ok ]; then
    RESULTS+=("PASS $server $script events=$(report "$log" transactions) tps=${tps:-?} r/w/o=$(report "$log" read)/$(report "$log" write)/$(report "$log" other) ignored_errors=${errs:-?}")
  else
    RESULTS+=("FAIL $server $script at $step${why:+ ($why)} (log: $log)")
    FAILS=$((FAILS + 1))
    grep -E '^FATAL|error' "$log" | head -n 5 | sed 's/^/    /' >&2
  fi
}

# api_test.lua: one event exercising the SQL API; it prints the counters it expects sysbench
# to report ("EXPECT read=.. write=.. other=.. errors=.. reconnects=..") and "API OK".
run_api() { # server
  local server=$1 log=$LOG_DIR/$1-api.log
  : >"$log"
  local ok=1 want got
  sb "$log" "$HERE/api_test.lua" run --threads=1 --events=1 --time=0 --db-debug=on || ok=0
  grep -q '^API OK' "$log" || ok=0
  # --db-debug shows what reached the server: placeholders, or the values inlined and quoted
  if [ "$PS_MODE" = disable ]; then
    grep -qF "$DRIVER: query: INSERT INTO fbw_types (id, i, bi, d, f, c, vc) VALUES (1, -2147483648, 9223372036854775807, 0.10000000000000001, 2.5, 'char', 'it''s a ''quoted'' value; ? and -- stay text')" "$log" || { ok=0; echo "    no inlined INSERT" >&2; }
  else
    grep -qF "$DRIVER: execute: INSERT INTO fbw_types (id, i, bi, d, f, c, vc) VALUES (?, ?, ?, ?, ?, ?, ?)" "$log" || { ok=0; echo "    no prepared INSERT" >&2; }
  fi
  want=$(sed -n 's/^EXPECT //p' "$log" | tail -n 1)
  got="read=$(report "$log" read) write=$(report "$log" write) other=$(report "$log" other)"
  got+=" errors=$(awk '$1 == "ignored" && $2 == "errors:" { print $3 }' "$log")"
  got+=" reconnects=$(report "$log" reconnects)"
  [ -n "$want" ] && [ "$want" = "$got" ] || ok=0
  if [ $ok = 1 ]; then
    RESULTS+=("PASS $server api_test.lua (ps-mode $PS_MODE: $got)")
  else
    RESULTS+=("FAIL $server api_test.lua (expected: ${want:-?}; sysbench: $got) (log: $log)")
    FAILS=$((FAILS + 1))
    grep -E '^FATAL|FAIL|error' "$log" | head -n 8 | sed 's/^/    /' >&2
  fi
}

# pipeline_test.lua (fbwire, --fbwire-pipeline=transaction): the single-connection cases in one
# event, then the deadlock between two pipelined transactions (2 threads), which must have been
# retried (ignored errors) and committed each event exactly once (checked by its cleanup).
run_pipeline() { # server
  local server=$1 log=$LOG_DIR/$1-pipeline.log ok=1 ign
  local o=(--fbwire-pipeline=transaction --fbwire-wire-crypt=disabled)
  : >"$log"
  sb "$log" "$HERE/pipeline_test.lua" run "${o[@]}" --pipe-case=single --threads=1 --events=1 \
    --time=0 || ok=0
  grep -q '^PIPELINE OK single' "$log" || ok=0
  sb "$log" "$HERE/pipeline_test.lua" prepare "${o[@]}" --pipe-case=deadlock --threads=2 || ok=0
  sb "$log" "$HERE/pipeline_test.lua" run "${o[@]}" --pipe-case=deadlock --threads=2 --events=2 \
    --time=0 --fbwire-lock-timeout=3 || ok=0
  ign=$(awk '$1 == "ignored" && $2 == "errors:" { v = $3 } END { print v }' "$log")
  [ "${ign:-0}" -ge 1 ] || ok=0
  sb "$log" "$HERE/pipeline_test.lua" cleanup "${o[@]}" --pipe-case=deadlock --threads=2 || ok=0
  grep -q '^PIPELINE OK deadlock' "$log" || ok=0
  if [ $ok = 1 ]; then
    RESULTS+=("PASS $server pipeline_test.lua (errors at statement k of n, killed attachment, 10,000 ranges; deadlock retried ${ign}x)")
  else
    RESULTS+=("FAIL $server pipeline_test.lua (log: $log)")
    FAILS=$((FAILS + 1))
    grep -E '^FATAL|FAIL' "$log" | head -n 8 | sed 's/^/    /' >&2
  fi
}

extra_check() { # server name tag description [options]
  local server=$1 name=$2 tag=$3 desc=$4; shift 4
  local log=$LOG_DIR/$server-$name-$tag.log
  : >"$log"
  if check "$log" "$name" "$@"; then
    RESULTS+=("PASS $server $desc: $(grep -E '^lost connection' "$log" | head -n 1)")
  else
    RESULTS+=("FAIL $server $desc (log: $log)")
    FAILS=$((FAILS + 1))
    tail -n 3 "$log" | sed 's/^/    /' >&2
  fi
}

# Which path a bulk insert takes on the wire (fbwire only), from the driver's JSON report of a
# bulk_insert run: the batch API on protocol 16+ (one op_batch_exec per flush, no op_execute
# per row), else one pipelined op_execute per row. Every row must be in the table either way.
op_packets() { # json op-name -> packets sent (0 when the op never appeared)
  awk -v op="\"$2\"" '$1 == "\"name\":" && $2 ~ "^" op { f = 1; next }
    f && $1 == "\"packets_sent\":" { gsub(/[^0-9]/, "", $2); v = $2; exit }
    END { print (v == "" ? 0 : v) }' "$1"
}

run_batch() { # server
  local server=$1 log=$LOG_DIR/$1-batch.log json=$LOG_DIR/$1-batch.json rows=5000 ok=0
  local proto exec bexec count
  : >"$log"
  if sb "$log" bulk_insert cleanup --threads=1 && sb "$log" bulk_insert prepare --threads=1 &&
     sb "$log" bulk_insert run --threads=1 --events=$rows --time=0 --fbwire-report="$json" &&
     count=$(rows_total "$log" --tables=1 --threads=1) &&
     sb "$log" bulk_insert cleanup --threads=1; then
    proto=$(grep -m1 -oE '"protocol": *[0-9]+' "$json" | grep -oE '[0-9]+$')
    exec=$(op_packets "$json" op_execute) bexec=$(op_packets "$json" op_batch_exec)
    if [ "$count" = $rows ] && [ -n "$proto" ]; then
      if [ "$proto" -ge 16 ]; then
        [ "$bexec" -ge 1 ] && [ "$exec" -lt 10 ] && ok=1
      else
        [ "$bexec" = 0 ] && [ "$exec" -ge $rows ] && ok=1
      fi
    fi
  fi
  local what="protocol ${proto:-?}: op_batch_exec=${bexec:-?} op_execute=${exec:-?} rows=${count:-?}/$rows"
  if [ $ok = 1 ]; then
    RESULTS+=("PASS $server bulk insert path ($what)")
  else
    RESULTS+=("FAIL $server bulk insert path ($what) (log: $log)")
    FAILS=$((FAILS + 1))
  fi
}

# An unprepared INSERT (upstream oltp_insert sends con:query text) costs fbwire one round trip:
# allocate, prepare, execute and the row count go out in one write (stmt.h
# fbw_stmt_execute_unprepared). The shared transaction restarts about once a second, which may add
# a wait to one event, hence the small tolerance.
run_insert_rt() { # server
  local server=$1 log=$LOG_DIR/$1-insert-rt.log json=$LOG_DIR/$1-insert-rt.json n=300 got="" ok=0
  : >"$log"
  if sb "$log" oltp_insert cleanup --tables=1 && sb "$log" oltp_insert prepare --tables=1 &&
     sb "$log" oltp_insert run --tables=1 --threads=1 --events=$n --time=0 --fbwire-report="$json" &&
     sb "$log" oltp_insert cleanup --tables=1; then
    got=$(/usr/bin/python3 "$HERE/rt_check.py" insert "$json" $n) && ok=1
  fi
  local execs=${got%% *} rt=${got##* }
  if [ $ok = 1 ]; then
    RESULTS+=("PASS $server unprepared INSERT: $rt round trips per execution ($execs executions)")
  else
    RESULTS+=("FAIL $server unprepared INSERT: ${rt:-?} round trips per execution (${execs:-?} executions; log: $log)")
    FAILS=$((FAILS + 1))
  fi
}

for server in "${SERVERS[@]}"; do
  DSN=$(ensure_db "$server")
  for c in ${CHECKS//,/ }; do
    case $c in
      values) extra_check "$server" values 1 "values (query_row, fetch_row, NULLs, transactions)" ;;
      api) run_api "$server" ;;
      pipeline) run_pipeline "$server" ;;
      batch) run_batch "$server" ;;
      insert-rt) run_insert_rt "$server" ;;
      reconnect)
        extra_check "$server" reconnect 1 "killed attachment, con:reconnect()"
        extra_check "$server" reconnect 2 "killed attachment, network errors ignorable" \
          --"$DRIVER"-ignore-errors=update-conflict,deadlock,lock-conflict,lock-timeout,network ;;
      *) echo "unknown check $c" >&2; exit 2 ;;
    esac
    echo "${RESULTS[-1]}"
  done
  for script in "${SCRIPTS[@]}"; do
    if [ -n "$ONLY" ] && [[ ",$ONLY," != *",$script,"* ]]; then continue; fi
    run_script "$server" "$script"
    echo "${RESULTS[-1]}"
  done
done

echo "---- $DRIVER ps-mode=$PS_MODE threads=$THREADS ${PIPELINE:+pipeline=$PIPELINE }${EXTRA:+extra: $EXTRA}"
printf '%s\n' "${RESULTS[@]}"
echo "logs: $LOG_DIR"
if [ $FAILS -eq 0 ]; then
  rm -rf "$LOG_DIR"
  exit 0
fi
exit 1
