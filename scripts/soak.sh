#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# soak.sh - a long sysbench run through fbwire that checks nothing grows or drifts: the sysbench
# process's memory, the statements and attachments the server holds for it, and the round trips
# per event. Not part of the default test run (it takes minutes by design).
#
#   scripts/soak.sh [--minutes N] [--server fb3|fb4]... [--threads N] [--script NAME]
#                   [--tables N] [--table-size N] [--keep]
#
# Defaults: 10 minutes per server, fb3 and fb4, 16 threads, oltp_read_write, 4 x 10,000 rows.
# Needs the servers of scripts/fb-servers.sh (started here if root and not running), sysbench and
# a build with libfbwire-sysbench.so (the newest build*/, or FBWIRE_SYSBENCH_LIB).
#
# Checks, per server (exit 1 when one fails, with the figures):
#   - sysbench exits 0 and reports no reconnects;
#   - resident memory of sysbench: growth from the sample at 25% of the run to the last sample
#     stays under max(8 MiB, 10%) (a leak per statement would show as steady growth);
#   - MON$STATEMENTS and MON$ATTACHMENTS of the database, sampled every 15 s: the largest count
#     after the first quarter is at most the smallest + threads (prepared statements per
#     connection are fixed; a handle leak grows without bound);
#   - round trips per event per --report-interval line: every interval after the first within
#     5% of the run's value (the protocol's cost does not drift);
#   - the JSON report validates against docs/report.schema.json when python3-jsonschema is there.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
MINUTES=10 SERVERS=() THREADS=16 SCRIPT=oltp_read_write TABLES=4 SIZE=10000 KEEP=0
while [ $# -gt 0 ]; do
  case $1 in
    --minutes) MINUTES=$2; shift 2 ;;
    --server) SERVERS+=("$2"); shift 2 ;;
    --threads) THREADS=$2; shift 2 ;;
    --script) SCRIPT=$2; shift 2 ;;
    --tables) TABLES=$2; shift 2 ;;
    --table-size) SIZE=$2; shift 2 ;;
    --keep) KEEP=1; shift ;;
    *) echo "soak.sh: unknown argument: $1" >&2; exit 2 ;;
  esac
done
[ ${#SERVERS[@]} -eq 0 ] && SERVERS=(fb3 fb4)
[[ $MINUTES =~ ^[0-9]+$ ]] && [ "$MINUTES" -ge 1 ] || { echo "soak.sh: --minutes must be >= 1" >&2; exit 2; }

STATE=${FBWIRE_STATE:-$REPO/.fbwire}
if [ ! -f "$STATE/servers.env" ] || ! "$REPO/scripts/fb-servers.sh" status >/dev/null 2>&1; then
  [ "$(id -u)" -eq 0 ] || { echo "soak.sh: servers not running; start them as root" >&2; exit 2; }
  "$REPO/scripts/fb-servers.sh" start >/dev/null || exit 2
fi
pick() { ls -t "$REPO"/build*/"$1" 2>/dev/null | head -n 1; }
export FBWIRE_SYSBENCH_LIB=${FBWIRE_SYSBENCH_LIB:-$(pick driver/libfbwire-sysbench.so)}
[ -f "$FBWIRE_SYSBENCH_LIB" ] || { echo "soak.sh: build the plug-in first" >&2; exit 2; }
set -a; . "$STATE/servers.env"; set +a
export ISC_USER=$FBW_USER ISC_PASSWORD=$FBW_PASSWORD
WORK=$(mktemp -d /tmp/fbwire-soak.XXXXXX)
FAILS=0
fail() { echo "FAIL $*"; FAILS=$((FAILS + 1)); }

# count <dsn> <relation>: rows of a monitoring table for this database's other attachments.
count() {
  echo "SELECT 'N=' || COUNT(*) FROM $2 WHERE MON\$ATTACHMENT_ID <> CURRENT_CONNECTION;" |
    isql-fb -q "$1" 2>/dev/null | awk -F= '/^N=/ { print $2 }'
}

rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null; }

for server in "${SERVERS[@]}"; do
  S=${server^^}; h=FBW_${S}_HOST p=FBW_${S}_PORT d=FBW_DBDIR_${S}
  [ -n "${!p:-}" ] || { echo "soak.sh: unknown server $server" >&2; exit 2; }
  DSN="${!h}/${!p}:${!d}/soak.fdb"
  echo "QUIT;" | isql-fb -q "$DSN" >/dev/null 2>&1 ||
    echo "CREATE DATABASE '$DSN' PAGE_SIZE 8192;" | isql-fb -q
  sb() { # command [options]
    local cmd=$1; shift
    "$REPO/tools/fbwire-sysbench" "$SCRIPT" --db-driver=fbwire --fbwire-db="$DSN" --fbwire-wire-crypt=disabled \
      --tables="$TABLES" --table-size="$SIZE" --threads="$THREADS" "$@" "$cmd"
  }
  sb cleanup >"$WORK/$server-setup.log" 2>&1
  sb prepare >>"$WORK/$server-setup.log" 2>&1 || { fail "$server: prepare (see $WORK)"; continue; }
  secs=$((MINUTES * 60))
  json=$WORK/$server.json log=$WORK/$server.log samples=$WORK/$server.samples
  echo "soak $server: $SCRIPT, $THREADS threads, $MINUTES min"
  # Started directly (not through sb, a function would run it in a subshell): the launcher execs
  # sysbench, so $! is the sysbench process whose memory is sampled.
  "$REPO/tools/fbwire-sysbench" "$SCRIPT" --db-driver=fbwire --fbwire-db="$DSN" --fbwire-wire-crypt=disabled --tables="$TABLES" \
    --table-size="$SIZE" --threads="$THREADS" --time="$secs" --report-interval=15 \
    --fbwire-report="$json" run >"$log" 2>&1 &
  pid=$!
  : >"$samples"
  t0=$SECONDS
  while kill -0 "$pid" 2>/dev/null; do
    sleep 15
    kill -0 "$pid" 2>/dev/null || break
    # Only while the run is surely on: at its end sysbench detaches (counts drop to zero).
    [ $((SECONDS - t0)) -lt $((secs - 5)) ] || continue
    # elapsed rss_kb statements attachments
    echo "$((SECONDS - t0)) $(rss_kb "$pid") $(count "$DSN" 'MON$STATEMENTS') $(count "$DSN" 'MON$ATTACHMENTS')" >>"$samples"
  done
  wait "$pid"; rc=$?
  sb cleanup >>"$WORK/$server-setup.log" 2>&1
  [ $rc -eq 0 ] || { fail "$server: sysbench exited $rc (see $log)"; continue; }
  grep -E "transactions:|ignored errors:|reconnects:" "$log" | sed 's/^ */  /'
  recon=$(awk '$1 == "reconnects:" { print $2 }' "$log")
  [ "${recon:-0}" = 0 ] || fail "$server: $recon reconnects"
  python3 - "$samples" "$secs" "$THREADS" "$server" <<'PY' || FAILS=$((FAILS + 1))
import sys
path, secs, threads, server = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
rows = [list(map(int, l.split())) for l in open(path) if len(l.split()) == 4]
if len(rows) < 3:
    print("FAIL %s: only %d samples" % (server, len(rows))); sys.exit(1)
late = [r for r in rows if r[0] >= secs / 4] or rows[len(rows) // 4:]
rss0, rss1 = late[0][1], rows[-1][1]
grow = rss1 - rss0
st = [r[2] for r in late]; at = [r[3] for r in late]
print("  memory: %.1f MiB at %d s, %.1f MiB at %d s (%+.1f MiB)" % (rss0 / 1024, late[0][0], rss1 / 1024, rows[-1][0], grow / 1024))
print("  server: MON$STATEMENTS %d..%d, MON$ATTACHMENTS %d..%d over %d samples" % (min(st), max(st), min(at), max(at), len(late)))
bad = 0
if grow > max(8 * 1024, rss0 // 10):
    print("FAIL %s: sysbench memory grew by %.1f MiB" % (server, grow / 1024)); bad = 1
if max(st) > min(st) + threads or max(at) > min(at) + threads:
    print("FAIL %s: server-side statements or attachments grew" % server); bad = 1
sys.exit(bad)
PY
  python3 - "$json" "$server" <<'PY' || FAILS=$((FAILS + 1))
import json, sys
d = json.load(open(sys.argv[1])); server = sys.argv[2]
whole = d["round_trips_per_event"]
iv = [i["round_trips_per_event"] for i in d["intervals"] if i["events"]][1:]
worst = max((abs(x - whole) / whole for x in iv), default=0)
print("  round trips per event: %.3f for the run, intervals %.3f..%.3f (%d), client CPU %.2f us/statement"
      % (whole, min(iv, default=whole), max(iv, default=whole), len(iv), d["totals"]["cpu_us_per_execution"]))
if worst > 0.05:
    print("FAIL %s: an interval's round trips per event is %.1f%% off the run's" % (server, worst * 100)); sys.exit(1)
PY
  if python3 -c "import jsonschema" 2>/dev/null; then
    python3 "$REPO/tests/sysbench/rt_check.py" schema "$REPO/docs/report.schema.json" "$json" >/dev/null ||
      fail "$server: the JSON report does not validate"
    python3 "$REPO/tests/sysbench/rt_check.py" sums "$json" >/dev/null || fail "$server: report sums"
  fi
done
if [ $KEEP -eq 1 ]; then echo "files kept in $WORK"; else rm -rf "$WORK"; fi
[ $FAILS -eq 0 ] && echo "soak: all checks passed" || echo "soak: $FAILS failure(s)"
exit $((FAILS > 0))
