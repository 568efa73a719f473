#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# blob.sh - the blob workload (lua/oltp_blob.lua) through the plug-in on FB3 and FB4: prepare, 50
# events with --blob_check=on (every blob cell must be the text written: the drivers return blob
# columns as their contents), cleanup; then the round trips per execution from the driver's
# report: through fbwire a 10-row range SELECT with its blobs costs 2 (execute+fetch, then every
# blob in one write; 1 on Firebird 5.0.3+, whose protocol 19 sends them inline with the rows) and
# an INSERT 1; fbclient must read the same blobs (its figure is printed). Its @fb5 twin runs it
# with fb5 in fb4's place (tests/servers.cmake).
#
#   blob.sh --lib build/driver/libfbwire-sysbench.so [--server fb3] [--server fb4]
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
LIB="" SERVERS=()
while [ $# -gt 0 ]; do
  case $1 in
    --lib) LIB=$2; shift 2 ;;
    --server) SERVERS+=("$2"); shift 2 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
[ ${#SERVERS[@]} -eq 0 ] && SERVERS=(fb3 fb4)
[ -f "$LIB" ] || { echo "missing: --lib $LIB" >&2; exit 2; }
command -v sysbench >/dev/null || { echo "SKIP: sysbench not installed"; exit 77; }
ENV_FILE=${FBWIRE_STATE:-/var/tmp/fbwire-state}/servers.env
[ -f "$ENV_FILE" ] || { echo "no $ENV_FILE: scripts/fb-servers.sh start" >&2; exit 1; }
set -a; . "$ENV_FILE"; set +a
export FBWIRE_SYSBENCH_LIB=$LIB ISC_USER=$FBW_USER ISC_PASSWORD=$FBW_PASSWORD
SB=$REPO/tools/fbwire-sysbench
SCRIPT=$REPO/lua/oltp_blob.lua
LOG=$(mktemp -d "${TMPDIR:-/tmp}/fbwire-blob.XXXXXX")
fails=0

# rt/exec of a statement class in a report: the column after "execs".
rt_of() { awk -v c="$2" '$0 ~ "^ *" c " +[0-9]" { sub("^ *" c " +", ""); split($0, f, " +"); print f[2]; exit }' "$1"; }

for srv in "${SERVERS[@]}"; do
  up=${srv^^}
  h=FBW_${up}_HOST p=FBW_${up}_PORT d=FBW_${up}_DB
  dsn="${!h}/${!p}:$(dirname "${!d}")/sb_blob_test.fdb"
  v=FBW_${up}_VERSION want_sel=2.000
  # protocol 19 (Firebird 5.0.3 on): the blobs come inline with the rows, no blob request at all
  [ "$(printf '%s\n' 5.0.3 "${!v:-0}" | sort -V | head -n1)" = 5.0.3 ] && want_sel=1.000
  common=(--table_size=300 --blob_rows=10)
  "$SB" "$SCRIPT" --db-driver=fbwire --fbwire-db="$dsn" "${common[@]}" cleanup >/dev/null 2>&1
  if ! "$SB" "$SCRIPT" --db-driver=fbwire --fbwire-db="$dsn" --fbwire-create-db=on "${common[@]}" \
       prepare >"$LOG/$srv-prepare.log" 2>&1; then
    echo "FAIL $srv prepare (log: $LOG/$srv-prepare.log)"; fails=$((fails + 1)); continue
  fi
  for drv in fbwire fbclient; do
    log=$LOG/$srv-$drv.log
    if ! "$SB" "$SCRIPT" --db-driver=$drv --$drv-db="$dsn" "${common[@]}" --blob_check=on \
         --events=50 --time=0 run >"$log" 2>&1; then
      echo "FAIL $srv $drv run (log: $log)"; fails=$((fails + 1)); continue
    fi
    sel=$(rt_of "$log" "simple range") ins=$(rt_of "$log" insert)
    echo "$srv $drv: round trips per range SELECT with 10 blobs $sel, per INSERT $ins"
    if [ $drv = fbwire ]; then
      [ "$sel" = "$want_sel" ] || { echo "FAIL $srv fbwire: SELECT took $sel round trips, want $want_sel"; fails=$((fails + 1)); }
      awk -v x="$ins" 'BEGIN { exit !(x != "" && x < 1.1) }' ||
        { echo "FAIL $srv fbwire: INSERT took $ins round trips, want 1"; fails=$((fails + 1)); }
    else
      awk -v x="$sel" 'BEGIN { exit !(x != "" && x >= 12) }' ||
        { echo "FAIL $srv fbclient: SELECT took $sel round trips: are its blobs read?"; fails=$((fails + 1)); }
    fi
  done
  "$SB" "$SCRIPT" --db-driver=fbwire --fbwire-db="$dsn" "${common[@]}" cleanup >/dev/null 2>&1
done
[ $fails -eq 0 ] && { rm -rf "$LOG"; echo "PASS"; exit 0; }
echo "$fails failure(s); logs in $LOG"
exit 1
