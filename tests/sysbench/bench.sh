#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench.sh - TPS of the upstream sysbench scripts through the plug-in, for docs/sysbench.md.
#
#   tests/sysbench/bench.sh [--driver fbwire|fbclient] [--server fb3|fb4]... [--lib LIB.so]
#       [--tables 4] [--table-size 10000] [--threads 4] [--time 10] [--runs 2]
#       [--only script,...] [--extra "sysbench options"] [--out results.tsv]
#
# Per server and script: cleanup, prepare (timed), --runs runs of --time seconds on the same
# prepared tables, cleanup. select_random_* use one table (upstream refuses more); bulk_insert
# has no prepared rows (one table per thread, emptied before every run; its TPS is rows per
# second). Appends one
# tab-separated line per script to --out (default stdout):
#   server driver script prepare_s tps_run1 ... tps_runN ignored_errors_last reconnects_last
# The machine should be quiet while this runs: the numbers are wall-clock rates.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
DRIVER=fbwire SERVERS=() LIB="" TABLES=4 TABLE_SIZE=10000 THREADS=4 TIME=10 RUNS=2 ONLY=""
EXTRA="" OUT=/dev/stdout
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
    --runs) RUNS=$2; shift 2 ;;
    --only) ONLY=$2; shift 2 ;;
    --extra) EXTRA=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
[ ${#SERVERS[@]} -eq 0 ] && SERVERS=(fb3 fb4)
if [ -z "$LIB" ]; then
  for cand in "$REPO"/build*/driver/libfbwire-sysbench.so; do
    [ -f "$cand" ] && LIB=$cand && break
  done
fi
[ -f "$LIB" ] || { echo "libfbwire-sysbench.so not found (use --lib)" >&2; exit 2; }
export FBWIRE_SYSBENCH_LIB=$LIB
set -a; . "${FBWIRE_STATE:-$REPO/.fbwire}/servers.env"; set +a
export ISC_USER=$FBW_USER ISC_PASSWORD=$FBW_PASSWORD
LOG=$(mktemp /tmp/fbwire-bench.XXXXXX)

sb() { # script command [options]
  local script=$1 cmd=$2; shift 2
  # shellcheck disable=SC2086
  # Wire crypt off on both drivers alike (the fbclient tap decodes only plain streams).
  "$REPO/tools/fbwire-sysbench" "$script" --db-driver="$DRIVER" --"$DRIVER"-db="$DSN" \
    --"$DRIVER"-wire-crypt=disabled --threads="$THREADS" "$@" $EXTRA "$cmd" >>"$LOG" 2>&1
}
last() { awk -v k="$1" '$1 == k { v = $2 } END { print v }' "$LOG"; }

for server in "${SERVERS[@]}"; do
  s=${server^^}
  host=FBW_${s}_HOST port=FBW_${s}_PORT dir=FBW_DBDIR_${s}
  DSN="${!host}/${!port}:${!dir}/bench.fdb"
  if ! echo "QUIT;" | isql-fb -q "$DSN" >/dev/null 2>&1; then
    echo "CREATE DATABASE '$DSN' PAGE_SIZE 8192;" | isql-fb -q >/dev/null 2>&1
  fi
  for script in "${SCRIPTS[@]}"; do
    if [ -n "$ONLY" ] && [[ ",$ONLY," != *",$script,"* ]]; then continue; fi
    sizes=(--tables="$TABLES" --table-size="$TABLE_SIZE")
    case $script in
      select_random_*) sizes=(--tables=1 --table-size="$TABLE_SIZE") ;;
      bulk_insert) sizes=() ;;
    esac
    : >"$LOG"
    sb "$script" cleanup "${sizes[@]}"
    t0=${EPOCHREALTIME/./}
    sb "$script" prepare "${sizes[@]}" || { echo "$server $script: prepare failed ($LOG)" >&2; exit 1; }
    prep=$(awk -v us=$((${EPOCHREALTIME/./} - t0)) 'BEGIN { printf "%.2f", us / 1e6 }')
    line="$server	$DRIVER	$script	$prep"
    for ((r = 1; r <= RUNS; r++)); do
      if [ "$script" = bulk_insert ] && [ $r -gt 1 ]; then # its ids start at 1 in every run
        sb "$script" cleanup && sb "$script" prepare
      fi
      sb "$script" run "${sizes[@]}" --time="$TIME" || { echo "$server $script: run failed ($LOG)" >&2; exit 1; }
      tps=$(awk '/transactions:/ { gsub(/[()]/, "", $3); v = $3 } END { print v }' "$LOG")
      line+="	$tps"
    done
    err=$(awk '$1 == "ignored" && $2 == "errors:" { v = $3 } END { print v }' "$LOG")
    line+="	$err	$(last reconnects:)"
    sb "$script" cleanup "${sizes[@]}"
    echo "$line" >>"$OUT"
  done
done
rm -f "$LOG"
