#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# pipeline.sh - what a round trip costs, through sysbench: each workload runs with fbwire
# --fbwire-pipeline=off, fbwire --fbwire-pipeline=transaction and fbclient (autocommit shared, the
# baseline), interleaved run by run, and the medians of TPS, round trips per event, statements per
# round trip, client CPU per statement and server CPU per statement and per event are printed with
# the ratio of TPS to pipeline off. Every figure comes from the drivers' own reports
# (docs/report.md); server CPU is the server process's (children included) over the run, so it
# also counts anything else that server did meanwhile: use otherwise idle servers.
#
#   tools/fbwire-report/pipeline.sh OUTDIR [--server fb3|fb4]... [--threads N]... [--runs N]
#       [--time S] [--tables N] [--table-size N] [--workloads LIST] [--forced-writes on|off]
#
# Defaults: fb3 and fb4; 1 and 4 threads; 3 runs of 5 s per case; 4 tables x 10,000 rows; the
# workloads oltp_read_only, oltp_read_only:--range_selects=off, oltp_read_write and
# oltp_write_only (a workload is SCRIPT[:extra options, comma separated]). Wire encryption is
# off for every client (captures and CPU comparable). The benchmark database (pipebench.fdb) runs
# with forced writes off by default: a COMMIT of a read-write transaction writes the TIP page, and
# with forced writes on its fsync (milliseconds on a VM disk) dominates every event and hides what
# the round trips cost; --forced-writes on measures that case too. Needs scripts/fb-servers.sh servers,
# sysbench and a build with libfbwire-sysbench.so (newest build*/, or FBWIRE_SYSBENCH_LIB).
# JSON reports, logs and summary.tsv stay in OUTDIR.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
OUT=${1:?usage: pipeline.sh OUTDIR [--server S]... [--threads N]... [--runs N] [--time S]}
shift
SERVERS=() THREADS=() RUNS=3 TIME=5 TABLES=4 SIZE=10000 FW=off
WORKLOADS="oltp_read_only oltp_read_only:--range_selects=off oltp_read_write oltp_write_only"
while [ $# -gt 0 ]; do
  case $1 in
    --server) SERVERS+=("$2"); shift 2 ;;
    --threads) THREADS+=("$2"); shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --time) TIME=$2; shift 2 ;;
    --tables) TABLES=$2; shift 2 ;;
    --table-size) SIZE=$2; shift 2 ;;
    --workloads) WORKLOADS=${2//,/ }; shift 2 ;;
    --forced-writes) FW=$2; shift 2 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
[ ${#SERVERS[@]} -eq 0 ] && SERVERS=(fb3 fb4)
[ ${#THREADS[@]} -eq 0 ] && THREADS=(1 4)
pick() { ls -t "$REPO"/build*/"$1" 2>/dev/null | head -n 1; } # the newest build
export FBWIRE_SYSBENCH_LIB=${FBWIRE_SYSBENCH_LIB:-$(pick driver/libfbwire-sysbench.so)}
[ -f "$FBWIRE_SYSBENCH_LIB" ] || { echo "build the plug-in first" >&2; exit 2; }
set -a; . "${FBWIRE_STATE:-$REPO/.fbwire}/servers.env"; set +a
export ISC_USER=$FBW_USER ISC_PASSWORD=$FBW_PASSWORD
mkdir -p "$OUT"
CASES=("fbwire off" "fbwire transaction" "fbclient off")

for server in "${SERVERS[@]}"; do
  S=${server^^}; h=FBW_${S}_HOST p=FBW_${S}_PORT d=FBW_DBDIR_${S}
  [ -n "${!p:-}" ] || { echo "unknown server $server" >&2; exit 2; }
  DSN="${!h}/${!p}:${!d}/pipebench.fdb"
  echo "QUIT;" | isql-fb -q "$DSN" >/dev/null 2>&1 ||
    echo "CREATE DATABASE '$DSN' USER '$FBW_USER' PASSWORD '$FBW_PASSWORD' PAGE_SIZE 8192;" | isql-fb -q
  gfix -write "$([ "$FW" = on ] && echo sync || echo async)" "$DSN" -user "$FBW_USER" \
    -password "$FBW_PASSWORD" || { echo "gfix -write failed" >&2; exit 1; }
  sb() { # script driver pipeline command [options]
    local script=$1 drv=$2 pipe=$3 cmd=$4; shift 4
    "$REPO/tools/fbwire-sysbench" "$script" --db-driver="$drv" --"$drv"-db="$DSN" \
      --"$drv"-wire-crypt=disabled --"$drv"-pipeline="$pipe" --tables="$TABLES" \
      --table-size="$SIZE" "$@" "$cmd"
  }
  sb oltp_read_write fbwire off cleanup >"$OUT/$server-setup.log" 2>&1
  sb oltp_read_write fbwire off prepare --threads=2 >>"$OUT/$server-setup.log" 2>&1 ||
    { echo "prepare failed, see $OUT/$server-setup.log" >&2; exit 1; }
  for wl in $WORKLOADS; do
    script=${wl%%:*} extra=""
    [ "$script" != "$wl" ] && extra=${wl#*:} && extra=${extra//,/ }
    tag=$script${extra:+$(echo "$extra" | tr -d ' ' | tr '=' '-' | sed 's/^--/_/; s/--/_/g')}
    for t in "${THREADS[@]}"; do
      for i in $(seq "$RUNS"); do
        for c in "${CASES[@]}"; do
          set -- $c; drv=$1 pipe=$2
          base=$OUT/$server-$tag-t$t-$drv-$pipe-$i
          # shellcheck disable=SC2086
          sb "$script" "$drv" "$pipe" run --threads="$t" --time="$TIME" --"$drv"-autocommit=shared \
            --"$drv"-report="$base.json" $extra >"$base.log" 2>&1 ||
            echo "failed: $base.log" >&2
        done
      done
      echo "done: $server $tag $t thread(s)" >&2
    done
  done
  sb oltp_read_write fbwire off cleanup >>"$OUT/$server-setup.log" 2>&1
done

python3 - "$OUT" "$RUNS" <<'PY'
import glob, json, os, re, statistics, sys
out, runs = sys.argv[1], int(sys.argv[2])
groups = {}
for path in sorted(glob.glob(os.path.join(out, "*.json"))):
    m = re.match(r"(fb\w+?)-(.+)-t(\d+)-(fbwire|fbclient)-(off|transaction)-(\d+)\.json$",
                 os.path.basename(path))
    if not m:
        continue
    server, tag, t, drv, pipe, _ = m.groups()
    d = json.load(open(path))
    groups.setdefault((server, tag, int(t)), {}).setdefault((drv, pipe), []).append(d)

def med(docs, f):
    v = [x for x in (f(d) for d in docs) if x is not None]
    return (statistics.median(v), min(v), max(v)) if v else (None, None, None)

def srv(d, key):
    s = d.get("server_cpu", {})
    return s.get(key) if s.get("available") else None

rows = []
print("%-5s %-30s %2s %-20s %10s %12s %8s %8s %9s %9s %9s %7s" % (
    "srv", "workload", "th", "client", "TPS", "(range)", "rt/ev", "st/rt", "cli us/st",
    "srv us/st", "srv us/ev", "xTPS"))
for (server, tag, t), cases in sorted(groups.items()):
    off = cases.get(("fbwire", "off"))
    off_tps = med(off, lambda d: d["tps"])[0] if off else None
    for key in (("fbclient", "off"), ("fbwire", "off"), ("fbwire", "transaction")):
        docs = cases.get(key)
        if not docs:
            continue
        tps = med(docs, lambda d: d["tps"])
        rte = med(docs, lambda d: d["round_trips_per_event"])[0]
        spr = med(docs, lambda d: d["totals"].get("statements_per_round_trip"))[0]
        cli = med(docs, lambda d: d["totals"]["cpu_us_per_execution"])[0]
        sst = med(docs, lambda d: srv(d, "us_per_execution"))[0]
        sev = med(docs, lambda d: srv(d, "us_per_event"))[0]
        name = "%s %s" % (key[0], "pipeline " + key[1] if key[0] == "fbwire" else "shared")
        fmt = lambda v, f: (f % v) if v is not None else "n/a"
        print("%-5s %-30s %2d %-20s %10.1f %12s %8.3f %8s %9.2f %9s %9s %7s" % (
            server, tag, t, name, tps[0], "%.0f-%.0f" % (tps[1], tps[2]), rte, fmt(spr, "%.2f"),
            cli, fmt(sst, "%.1f"), fmt(sev, "%.0f"),
            fmt(tps[0] / off_tps if off_tps else None, "%.2f")))
        rows.append("\t".join(str(x) for x in (server, tag, t, key[0], key[1], len(docs), tps[0],
                                                 tps[1], tps[2], rte, spr, cli, sst, sev)))
with open(os.path.join(out, "summary.tsv"), "w") as f:
    f.write("server\tworkload\tthreads\tdriver\tpipeline\truns\ttps_median\ttps_min\ttps_max\t"
            "rt_per_event\tstatements_per_rt\tclient_us_per_statement\tserver_us_per_statement\t"
            "server_us_per_event\n")
    f.write("\n".join(rows) + "\n")
print("medians of %d interleaved runs per case; xTPS = TPS / TPS of fbwire pipeline off; "
      "summary.tsv in %s" % (runs, out))
PY
