#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# compare.sh - tools/fbwire-compare --quick (its oltp_point_select half) against all four engines (PostgreSQL, MariaDB, FB3 and
# FB4; one extra target through --target's pass-through of driver options), then checks:
#   - summary.md, summary.json and the charts exist, every case has its TPS;
#   - one run's JSON says what sysbench itself printed (TPS, events, p95);
#   - the captured runs agree with the protocols: a PostgreSQL point select is one round trip, and
#     a Firebird run's capture counts what the fbwire driver counted itself (round_trips_all, up to
#     the few connect/detach exchanges outside the driver's accounting);
#   - figures that were not measured are null with a reason, never 0; no password in any file.
# Needs root (tcpdump, scripts/peer-servers.sh start); exit 77 (skipped) otherwise.
#
#   compare.sh --compare TOOL --pcap-tool FBWIRE-PCAP --report-tool FBWIRE-REPORT --lib SO [--cpu-tool FBWIRE-CPU]
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
while [ $# -gt 0 ]; do
  case $1 in
    --compare) COMPARE=$2; shift 2 ;;
    --pcap-tool) export FBWIRE_PCAP=$2; shift 2 ;;
    --report-tool) export FBWIRE_REPORT=$2; shift 2 ;;
    --lib) export FBWIRE_SYSBENCH_LIB=$2; shift 2 ;;
    --cpu-tool) export FBWIRE_CPU=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" -eq 0 ] || { echo "compare.sh: needs root (tcpdump, peer servers); skipped"; exit 77; }
export FBWIRE_STATE=${FBWIRE_STATE:-$REPO/.fbwire}
"$REPO/scripts/peer-servers.sh" start >/dev/null || { echo "FAIL: peer-servers.sh start"; exit 1; }
OUT=$(mktemp -d /tmp/fbwire-compare-test.XXXXXX)
trap '[ "$fail" = 0 ] && rm -rf "$OUT"' EXIT  # kept for a look when something failed
fail=0
check() { if eval "$2"; then echo "ok: $1"; else echo "FAIL: $1"; fail=1; fi; }

"$COMPARE" "$OUT" --quick --workloads oltp_point_select --targets pg,mariadb,fb3-fbwire,fb4-fbwire,fb3-ac \
  --target 'fb3-ac=fb3-fbwire:--fbwire-autocommit=pipelined' 2>"$OUT/compare.err"
rc=$?
tail -n 3 "$OUT/compare.err"
check "fbwire-compare exit 0" '[ "$rc" = 0 ]'
for f in summary.md summary.json meta.txt tps-t2.svg rt-t2.svg; do
  check "$f written" '[ -s "$OUT/$f" ]'
done
if [ -n "${FBWIRE_CPU:-}" ]; then check "cpu-t2.svg written" '[ -s "$OUT/cpu-t2.svg" ]'; fi
check "progress shows runs left and time to go" 'grep -q "run 2/10, 9 left, .* s to go" "$OUT/compare.err"'

python3 - "$OUT" "${FBWIRE_CPU:-}" "$REPO" <<'PY' || fail=1
import json, re, sys
out, cpu_tool = sys.argv[1], sys.argv[2]
bad = 0
def check(what, cond):
    global bad
    print(("ok: " if cond else "FAIL: ") + what)
    bad |= not cond
s = json.load(open(out + "/summary.json"))
check("5 cases: 1 workload x 5 targets", len(s["cases"]) == 5)
check("every case has its TPS", all(c["tps"] and c["tps"]["median"] > 0 for c in s["cases"]))
check("every case has round trips from its capture",
      all(c["round_trips_per_event"] and c["round_trips_per_event"]["median"] > 0 for c in s["cases"]))
md = open(out + "/summary.md").read()
check("summary.md has the TPS table with every target",
      all(t in md for t in ("| pg |", "| mariadb |", "| fb3-fbwire |", "| fb4-fbwire |", "| fb3-ac |")))

import glob, jsonschema
schema = json.load(open(sys.argv[3] + "/docs/compare.schema.json"))
figs = ("tps", "latency_p95_ms", "round_trips_per_event", "client_cpu_us_per_event", "server_cpu_us_per_event",
        "bytes_sent_per_event", "bytes_received_per_event", "driver_round_trips_per_event")
nruns = 0
for path in glob.glob(out + "/runs/*.json"):
    d = json.load(open(path))
    if d.get("format") != "fbwire-compare-run/1":
        continue
    nruns += 1
    try:
        jsonschema.validate(d, schema)
    except jsonschema.ValidationError as e:
        check("%s follows docs/compare.schema.json: %s" % (path, e.message), False)
    for k in figs:
        if d[k] is None and not d["not_available"].get(k):
            check("%s: %s is null without a reason" % (path, k), False)
        if d[k] == 0:
            check("%s: %s is 0" % (path, k), False)
check("10 run files, each valid and every missing figure with its reason", nruns == 10 and not bad)

def run(tag):
    return json.load(open("%s/runs/%s.json" % (out, tag)))
# one run against sysbench's own output
tag = "oltp_point_select-t2-pg-r1"
r, log = run(tag), open("%s/runs/%s.log" % (out, tag)).read()
tps = float(re.search(r"transactions:\s+\d+\s+\(([\d.]+) per sec", log).group(1))
ev = int(re.search(r"total number of events:\s+(\d+)", log).group(1))
p95 = float(re.search(r"95th percentile:\s+([\d.]+)", log).group(1))
check("%s: TPS %.2f = sysbench's %.2f" % (tag, r["tps"], tps), r["tps"] == tps)
check("%s: events %d = sysbench's %d" % (tag, r["events"], ev), r["events"] == ev)
check("%s: p95 %.2f = sysbench's %.2f" % (tag, r["latency_p95_ms"], p95), r["latency_p95_ms"] == p95)
check("%s: the case's median is this run's TPS (one run)" % tag,
      next(c for c in s["cases"] if c["target"] == "pg" and c["workload"] == "oltp_point_select")["tps"]["median"] == tps)
check("%s: not captured: round trips null with a reason" % tag,
      r["round_trips_per_event"] is None and r["not_available"].get("round_trips_per_event"))
check("%s: sysbench's pgsql driver counts no round trips: null with a reason" % tag,
      r["driver_round_trips_per_event"] is None and r["not_available"].get("driver_round_trips_per_event"))
if not cpu_tool:
    check("%s: without fbwire-cpu, CPU is null with a reason" % tag,
          r["client_cpu_us_per_event"] is None and r["not_available"].get("client_cpu_us_per_event"))
else:
    check("%s: client and server CPU per event measured" % tag,
          (r["client_cpu_us_per_event"] or 0) > 0 and (r["server_cpu_us_per_event"] or 0) > 0)
# captured runs against the protocols
c = run("oltp_point_select-t2-pg-cap")
check("pg point select: %.3f round trips per event from the capture (1 expected)" % c["round_trips_per_event"],
      0.98 <= c["round_trips_per_event"] <= 1.05)
check("pg capture counted only the sysbench process's 2 connections",
      c["capture"]["connections"] == 2)
for tag in ("oltp_point_select-t2-fb3-fbwire-cap", "oltp_point_select-t2-fb4-fbwire-cap"):
    c = run(tag)
    rep = json.load(open("%s/runs/%s.report.json" % (out, tag)))
    cap, drv = c["capture"]["round_trips"], rep["totals"]["round_trips_all"]
    check("%s: capture %d round trips vs the driver's own %d (connections %d)" % (tag, cap, drv, c["capture"]["connections"]),
          c["capture"]["connections"] == 2 and drv <= cap <= drv + 4 * c["capture"]["connections"])
    check("%s: capture bytes each way > 0" % tag, c["bytes_sent_per_event"] > 0 and c["bytes_received_per_event"] > 0)
PY

# No password of any server in any output file.
set -a; . "$FBWIRE_STATE/servers.env"; . "$FBWIRE_STATE/peers.env"; set +a
for pw in "$FBW_PASSWORD" "$PEER_PG_PASSWORD" "$PEER_MARIADB_PASSWORD"; do
  check "no password in the output" '! grep -rqF -- "$pw" "$OUT"'
done
exit $fail
