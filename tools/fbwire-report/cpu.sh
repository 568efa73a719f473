#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# cpu.sh - client CPU per statement and TPS of fbwire against fbclient, side by side on one server:
# runs of one upstream workload alternate between fbwire (autocommit shared, its default) and
# fbclient (autocommit shared, its best), and the medians of each are printed with their ratios.
# Both figures come from the drivers' own reports (docs/report.md: client CPU in the driver).
#
#   tools/fbwire-report/cpu.sh OUTDIR [--server fb3|fb4] [--script NAME] [--runs N] [--time S]
#                                     [--threads N] [--table-size N]
#
# Defaults: fb3, oltp_point_select, 5 runs each, 4 s, 1 thread, 1 table x 10,000 rows. Needs
# scripts/fb-servers.sh servers, sysbench and a build with libfbwire-sysbench.so (the newest in
# build*/, or FBWIRE_SYSBENCH_LIB). JSON reports and logs stay in OUTDIR.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
OUT=${1:?usage: cpu.sh OUTDIR [--server fb3|fb4] [--script NAME] [--runs N] [--time S] [--threads N]}
shift
SERVER=fb3 SCRIPT=oltp_point_select RUNS=5 TIME=4 THREADS=1 SIZE=10000
while [ $# -gt 0 ]; do
  case $1 in
    --server) SERVER=$2; shift 2 ;;
    --script) SCRIPT=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --time) TIME=$2; shift 2 ;;
    --threads) THREADS=$2; shift 2 ;;
    --table-size) SIZE=$2; shift 2 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
pick() { ls -t "$REPO"/build*/"$1" 2>/dev/null | head -n 1; } # the newest build
export FBWIRE_SYSBENCH_LIB=${FBWIRE_SYSBENCH_LIB:-$(pick driver/libfbwire-sysbench.so)}
[ -f "$FBWIRE_SYSBENCH_LIB" ] || { echo "build the plug-in first" >&2; exit 2; }
set -a; . "${FBWIRE_STATE:-$REPO/.fbwire}/servers.env"; set +a
export ISC_USER=$FBW_USER ISC_PASSWORD=$FBW_PASSWORD
S=${SERVER^^}; h=FBW_${S}_HOST p=FBW_${S}_PORT d=FBW_DBDIR_${S}
[ -n "${!p:-}" ] || { echo "unknown server $SERVER" >&2; exit 2; }
DSN="${!h}/${!p}:${!d}/cpu.fdb"
mkdir -p "$OUT"
echo "QUIT;" | isql-fb -q "$DSN" >/dev/null 2>&1 ||
  echo "CREATE DATABASE '$DSN' USER '$FBW_USER' PASSWORD '$FBW_PASSWORD' PAGE_SIZE 8192;" | isql-fb -q
sb() { # driver command [options]
  local drv=$1 cmd=$2; shift 2
  # Wire crypt off for both clients alike, so neither pays for a cipher the other does not.
  "$REPO/tools/fbwire-sysbench" "$SCRIPT" --db-driver="$drv" --"$drv"-db="$DSN" --"$drv"-wire-crypt=disabled --tables=1 \
    --table-size="$SIZE" --threads="$THREADS" "$@" "$cmd"
}
sb fbwire cleanup >"$OUT/setup.log" 2>&1
sb fbwire prepare >>"$OUT/setup.log" 2>&1 || { echo "prepare failed, see $OUT/setup.log" >&2; exit 1; }
for i in $(seq "$RUNS"); do
  for drv in fbwire fbclient; do
    json=$OUT/$SERVER-$SCRIPT-$drv-$i.json
    sb "$drv" run --time="$TIME" --"$drv"-autocommit=shared --"$drv"-report="$json" \
      >"$OUT/$SERVER-$SCRIPT-$drv-$i.log" 2>&1 || { echo "$drv run $i failed, see its log" >&2; exit 1; }
  done
done
sb fbwire cleanup >>"$OUT/setup.log" 2>&1
python3 - "$OUT" "$SERVER" "$SCRIPT" "$RUNS" <<'PY'
import json, statistics, sys
out, server, script, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
med = {}
for drv in ("fbwire", "fbclient"):
    docs = [json.load(open("%s/%s-%s-%s-%d.json" % (out, server, script, drv, i)))
            for i in range(1, runs + 1)]
    med[drv] = {k: statistics.median(f(d) for d in docs) for k, f in (
        ("tps", lambda d: d["tps"]), ("rt", lambda d: d["round_trips_per_event"]),
        ("cpu", lambda d: d["totals"]["cpu_us_per_execution"]),
        ("cpue", lambda d: d["totals"]["cpu_us_per_event"]))}
    m = med[drv]
    print("%s %s %-8s median of %d: %9.1f tps  %7.3f rt/event  client CPU %7.2f us/statement  %8.2f us/event"
          % (server, script, drv, runs, m["tps"], m["rt"], m["cpu"], m["cpue"]))
w, c = med["fbwire"], med["fbclient"]
print("%s %s fbwire / fbclient: TPS %.2fx, client CPU per statement %.2fx"
      % (server, script, w["tps"] / c["tps"], w["cpu"] / c["cpu"]))
PY
