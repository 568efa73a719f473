#!/usr/bin/env bash
# run-workloads.sh - the ten upstream sysbench scripts end to end through the plug-in.
#
#   tests/sysbench/run-workloads.sh [--driver fbclient|fbwire] [--server fb3|fb4]...
#       [--lib path/to/libfbwire-sysbench.so] [--tables N] [--table-size N] [--threads N]
#       [--time S] [--only script,...] [--extra "sysbench options"]
#
# For each script: cleanup (leftovers), prepare, a check that every table has table-size rows
# with ids 1..N (check_tables.lua, through the same driver), a short run that must finish
# without errors other than the ignorable ones, cleanup and a check that nothing is left.
# bulk_insert has no data to prepare: its tables must be non-empty after the run instead.
# Servers come from scripts/fb-servers.sh (started when its env file or the port is missing);
# each server gets its own database sysbench.fdb next to the test database. Prints one result
# line per script and the TPS of each run; exits non-zero if anything failed.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
DRIVER=fbclient
SERVERS=()
LIB=""
TABLES=2
TABLE_SIZE=1000
THREADS=2
TIME=5
ONLY=""
EXTRA=""
SCRIPTS=(oltp_read_write oltp_read_only oltp_write_only oltp_point_select oltp_insert
         oltp_delete oltp_update_index oltp_update_non_index select_random_points
         select_random_ranges bulk_insert)

while [ $# -gt 0 ]; do
  case $1 in
    --driver) DRIVER=$2; shift 2 ;;
    --server) SERVERS+=("$2"); shift 2 ;;
    --lib) LIB=$2; shift 2 ;;
    --tables) TABLES=$2; shift 2 ;;
    --table-size) TABLE_SIZE=$2; shift 2 ;;
    --threads) THREADS=$2; shift 2 ;;
    --time) TIME=$2; shift 2 ;;
    --only) ONLY=$2; shift 2 ;;
    --extra) EXTRA=$2; shift 2 ;;
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

STATE=${FBWIRE_STATE:-$REPO/.fbwire}
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
  local dsn="${!host}/${!port}:${!dir}/sysbench.fdb"
  if ! echo "QUIT;" | ISC_USER=$FBW_USER ISC_PASSWORD=$FBW_PASSWORD isql-fb -q "$dsn" >/dev/null 2>&1; then
    echo "CREATE DATABASE '$dsn' USER '$FBW_USER' PASSWORD '$FBW_PASSWORD' PAGE_SIZE 8192;" |
      isql-fb -q >/dev/null 2>&1
  fi
  echo "$dsn"
}

# sb <log> <script> <command> [options...]: run through the launcher, keep the output.
sb() {
  local log=$1; shift
  local script=$1 cmd=$2; shift 2
  # shellcheck disable=SC2086
  "$LAUNCHER" "$script" --db-driver="$DRIVER" --"$DRIVER"-db="$DSN" \
    --"$DRIVER"-user="$FBW_USER" --"$DRIVER"-password="$FBW_PASSWORD" \
    --threads="$THREADS" "$@" $EXTRA "$cmd" >>"$log" 2>&1
}

check() { # log command [options]
  local log=$1 cmd=$2; shift 2
  sb "$log" "$HERE/check_tables.lua" "$cmd" "$@" && [ "$(tail -n 1 "$log")" = "CHECK OK" ]
}

run_script() { # server script
  local server=$1 script=$2
  local log=$LOG_DIR/$server-$script.log
  local sizes=(--tables="$TABLES" --table-size="$TABLE_SIZE")
  local ctables=$TABLES
  case $script in
    select_random_*) sizes=(--tables=1 --table-size="$TABLE_SIZE"); ctables=1 ;;
    bulk_insert) sizes=(); ctables=$THREADS ;;
  esac
  local step=cleanup
  : >"$log"
  sb "$log" "$script" cleanup "${sizes[@]}" &&
  step=prepare && sb "$log" "$script" prepare "${sizes[@]}" &&
  if [ "$script" != bulk_insert ]; then
    step=verify && check "$log" verify --tables="$ctables" --table-size="$TABLE_SIZE"
  fi &&
  step=run && sb "$log" "$script" run "${sizes[@]}" --time="$TIME" &&
  if [ "$script" = bulk_insert ]; then
    step=nonempty && check "$log" nonempty --tables="$ctables"
  fi &&
  step=cleanup && sb "$log" "$script" cleanup "${sizes[@]}" &&
  step=absent && check "$log" absent --tables="$ctables" && step=ok
  local tps
  tps=$(awk '/transactions:/ {gsub(/[()]/, "", $3); print $3; exit}' "$log")
  local errs
  errs=$(awk '/ignored errors:/ {print $3; exit}' "$log")
  if [ "$step" = ok ]; then
    RESULTS+=("PASS $server $script tps=${tps:-?} ignored_errors=${errs:-?}")
  else
    RESULTS+=("FAIL $server $script at $step (log: $log)")
    FAILS=$((FAILS + 1))
    tail -n 5 "$log" | sed 's/^/    /' >&2
  fi
}

for server in "${SERVERS[@]}"; do
  DSN=$(ensure_db "$server")
  step_log=$LOG_DIR/$server-values.log
  if check "$step_log" values; then
    RESULTS+=("PASS $server values (query_row, fetch_row, NULLs, transactions)")
  else
    RESULTS+=("FAIL $server values (log: $step_log)")
    FAILS=$((FAILS + 1))
  fi
  for script in "${SCRIPTS[@]}"; do
    if [ -n "$ONLY" ] && [[ ",$ONLY," != *",$script,"* ]]; then continue; fi
    run_script "$server" "$script"
    echo "${RESULTS[-1]}"
  done
done

echo "----"
printf '%s\n' "${RESULTS[@]}"
echo "logs: $LOG_DIR"
[ $FAILS -eq 0 ]
