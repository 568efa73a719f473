#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# measure.sh - round trips per event of every upstream sysbench workload through fbwire and the
# fbclient baseline (both autocommit modes), one JSON report per run, then one fbwire-report table
# per workload and server.
#
#   tools/fbwire-report/measure.sh OUTDIR [--server fb3|fb4]... [--time S] [--threads N]
#                                  [--runs N] [--only script,...]
#
# Needs scripts/fb-servers.sh servers, sysbench, a build with libfbwire-sysbench.so and
# fbwire-report (the newest in build*/, or FBWIRE_SYSBENCH_LIB / FBWIRE_REPORT). Each workload gets
# fresh tables (prepare through fbwire), then runs with fbclient per-statement (the baseline),
# fbclient shared, fbwire shared and fbwire pipelined, on the same server, one after the other.
# With --runs N (default 1) that round of four is repeated N times; each case's table and chart use
# its run with the median TPS, and OUTDIR/summary.tsv has every case's median, lowest and highest
# TPS and its round trips per event (exact: the same in every run).
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
OUT=${1:?usage: measure.sh OUTDIR [--server fb3|fb4]... [--time S] [--threads N]}; shift
SERVERS=() TIME=5 THREADS=2 ONLY="" RUNS=1
while [ $# -gt 0 ]; do
  case $1 in
    --server) SERVERS+=("$2"); shift 2 ;;
    --time) TIME=$2; shift 2 ;;
    --threads) THREADS=$2; shift 2 ;;
    --only) ONLY=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
[ ${#SERVERS[@]} -eq 0 ] && SERVERS=(fb3 fb4)
pick() { ls -t "$REPO"/build*/"$1" 2>/dev/null | head -n 1; } # the newest build
export FBWIRE_SYSBENCH_LIB=${FBWIRE_SYSBENCH_LIB:-$(pick driver/libfbwire-sysbench.so)}
REPORT=${FBWIRE_REPORT:-$(pick tools/fbwire-report)}
[ -f "$FBWIRE_SYSBENCH_LIB" ] && [ -f "$REPORT" ] || { echo "build the plug-in and fbwire-report first" >&2; exit 2; }
set -a; . "${FBWIRE_STATE:-$REPO/.fbwire}/servers.env"; set +a
export ISC_USER=$FBW_USER ISC_PASSWORD=$FBW_PASSWORD
mkdir -p "$OUT"
printf 'server\tworkload\tcase\trt_per_event\ttps_median\ttps_min\ttps_max\truns\n' >"$OUT/summary.tsv"
SCRIPTS=(oltp_read_write oltp_read_only oltp_write_only oltp_point_select oltp_insert oltp_delete
         oltp_update_index oltp_update_non_index select_random_points select_random_ranges bulk_insert)
CASES=("fbclient per-statement" "fbclient shared" "fbwire shared" "fbwire pipelined")
for server in "${SERVERS[@]}"; do
  S=${server^^}; h=FBW_${S}_HOST p=FBW_${S}_PORT d=FBW_DBDIR_${S}
  DSN="${!h}/${!p}:${!d}/measure.fdb"
  echo "QUIT;" | isql-fb -q "$DSN" >/dev/null 2>&1 ||
    echo "CREATE DATABASE '$DSN' USER '$FBW_USER' PASSWORD '$FBW_PASSWORD' PAGE_SIZE 8192;" | isql-fb -q
  for script in "${SCRIPTS[@]}"; do
    [ -z "$ONLY" ] || [[ ",$ONLY," == *",$script,"* ]] || continue
    setup=(--db-driver=fbwire --fbwire-db="$DSN" --tables=2 --table-size=1000 --threads="$THREADS")
    fresh() { # bulk_insert's prepare creates empty tables; every other script's fills them
      "$REPO/tools/fbwire-sysbench" "$script" "${setup[@]}" cleanup >>"$OUT/$server-$script-setup.log" 2>&1
      "$REPO/tools/fbwire-sysbench" "$script" "${setup[@]}" prepare >>"$OUT/$server-$script-setup.log" 2>&1
    }
    : >"$OUT/$server-$script-setup.log"
    fresh
    for ((r = 1; r <= RUNS; r++)); do
      for c in "${CASES[@]}"; do
        set -- $c
        tag="$server-$script-$1-$2-r$r"
        [ "$script" != bulk_insert ] || fresh # its rows would collide with the previous run's
        # Wire crypt off for both drivers alike: the fbclient tap decodes only plain streams.
        "$REPO/tools/fbwire-sysbench" "$script" --db-driver="$1" --"$1"-db="$DSN" --"$1"-autocommit="$2" \
          --"$1"-wire-crypt=disabled \
          --tables=2 --table-size=1000 --threads="$THREADS" --time="$TIME" --"$1"-report="$OUT/$tag.json" run \
          >"$OUT/$tag.log" 2>&1 && [ -f "$OUT/$tag.json" ] ||
          echo "$server $script $1 $2 run $r: failed (see $OUT/$tag.log)" >&2
      done
    done
    files=()
    for c in "${CASES[@]}"; do
      set -- $c
      # The run with the median TPS stands for the case; the summary keeps the spread.
      med=$(/usr/bin/python3 - "$OUT" "$server" "$script" "$1" "$2" "$RUNS" <<'PY'
import glob, json, statistics, sys
out, server, script, drv, mode, runs = sys.argv[1:7]
runs_ = []
for r in range(1, int(runs) + 1):
    path = "%s/%s-%s-%s-%s-r%d.json" % (out, server, script, drv, mode, r)
    try:
        runs_.append((json.load(open(path))["tps"], path))
    except (OSError, ValueError, KeyError):
        pass
if runs_:
    runs_.sort()
    tps, path = runs_[(len(runs_) - 1) // 2]
    d = json.load(open(path))
    with open("%s/summary.tsv" % out, "a") as f:
        f.write("%s\t%s\t%s %s\t%.3f\t%.1f\t%.1f\t%.1f\t%d\n" % (server, script, drv, mode,
                d["round_trips_per_event"], statistics.median(t for t, _ in runs_),
                runs_[0][0], runs_[-1][0], len(runs_)))
    print(path)
PY
)
      [ -n "$med" ] && files+=("$med")
    done
    "$REPO/tools/fbwire-sysbench" "$script" "${setup[@]}" cleanup >>"$OUT/$server-$script-setup.log" 2>&1
    [ ${#files[@]} -gt 0 ] || continue
    "$REPORT" "${files[@]}" --svg "$OUT/$server-$script.svg" >"$OUT/$server-$script.md"
    echo "$server $script: $(for f in "${files[@]}"; do /usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print('%s/%s %.3f rt/event %.0f tps' % (d['driver'], d['connection']['autocommit'], d['round_trips_per_event'], d['tps']))" "$f"; done | paste -sd';')"
  done
done
