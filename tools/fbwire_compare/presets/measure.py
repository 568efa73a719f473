# SPDX-License-Identifier: MIT
"""Preset measure: Round trips per event of every workload, four clients (tools/fbwire-report/measure.sh)."""
import os
import subprocess
import sys

from .. import stats, workloads as wl
from .common import Fail, Firebird, driver_args, load, parser


MEASURE_DOC = """round trips per event of every upstream sysbench workload through fbwire and the fbclient
baseline (both autocommit modes), one JSON report per run, then one fbwire-report table per workload
and server. Each workload gets fresh tables (prepare through fbwire), then runs with fbclient
per-statement (the baseline), fbclient shared, fbwire shared and fbwire pipelined, on the same
server, one after the other. With --runs N (default 1) that round of four is repeated N times; each
case's table and chart use its run with the median TPS, and OUTDIR/summary.tsv has every case's
median, lowest and highest TPS and its round trips per event (exact: the same in every run)."""
MEASURE_CASES = (("fbclient", "per-statement"), ("fbclient", "shared"), ("fbwire", "shared"), ("fbwire", "pipelined"))


def measure(argv, here):
    p = parser("measure", MEASURE_DOC)
    p.add_argument("outdir")
    p.add_argument("--server", action="append", default=[])
    p.add_argument("--time", type=int, default=5)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--runs", type=int, default=1)
    p.add_argument("--only", type=wl.split, default=None)
    a = p.parse_args(argv)
    fb = Firebird(here)
    report = fb.builds.find("fbwire-report")
    if not report:
        raise Fail("build the plug-in and fbwire-report first", 2)
    out = a.outdir
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "summary.tsv"), "w") as f:
        f.write("server\tworkload\tcase\trt_per_event\ttps_median\ttps_min\ttps_max\truns\n")
    for server in a.server or ["fb3", "fb4"]:
        dsn = fb.dsn(server, "measure.fdb")
        fb.ensure_db(dsn)
        for script in wl.ALL:
            if a.only and script not in a.only:
                continue
            measure_one(fb, a, report, server, dsn, script)
    return 0


def measure_one(fb, a, report, server, dsn, script):
    out = a.outdir
    setup = driver_args("fbwire", dsn)[:2] + ["--tables=2", "--table-size=1000", "--threads=%d" % a.threads]
    log = os.path.join(out, "%s-%s-setup.log" % (server, script))
    open(log, "w").close()

    def fresh():  # bulk_insert's prepare creates empty tables; every other script's fills them
        fb.sysbench(script, setup, "cleanup", log, append=True)
        fb.sysbench(script, setup, "prepare", log, append=True)
    fresh()
    for r in range(1, a.runs + 1):
        for drv, mode in MEASURE_CASES:
            tag = os.path.join(out, "%s-%s-%s-%s-r%d" % (server, script, drv, mode, r))
            if wl.fresh_per_run(script):
                fresh()  # its rows would collide with the previous run's
            rc = fb.sysbench(script, driver_args(drv, dsn) + [
                "--%s-autocommit=%s" % (drv, mode), "--tables=2", "--table-size=1000", "--threads=%d" % a.threads,
                "--time=%d" % a.time, "--%s-report=%s.json" % (drv, tag)], "run", tag + ".log")
            if rc or not os.path.isfile(tag + ".json"):
                print("%s %s %s %s run %d: failed (see %s.log)" % (server, script, drv, mode, r, tag), file=sys.stderr)
    files = []
    for drv, mode in MEASURE_CASES:
        runs = []
        for r in range(1, a.runs + 1):
            path = os.path.join(out, "%s-%s-%s-%s-r%d.json" % (server, script, drv, mode, r))
            d = load(path)
            if d and d.get("tps") is not None:
                runs.append((d, path))
        if not runs:
            continue
        # The run with the median TPS stands for the case; the summary keeps the spread.
        d, path = stats.median_item(runs, lambda x: x[0]["tps"])
        t = stats.median_range(x[0]["tps"] for x in runs)
        with open(os.path.join(out, "summary.tsv"), "a") as f:
            f.write("%s\t%s\t%s %s\t%.3f\t%.1f\t%.1f\t%.1f\t%d\n" % (server, script, drv, mode,
                    d["round_trips_per_event"], t["median"], t["min"], t["max"], t["n"]))
        files.append((d, path))
    fb.sysbench(script, setup, "cleanup", log, append=True)
    if not files:
        return
    with open(os.path.join(out, "%s-%s.md" % (server, script)), "w") as md:
        subprocess.call([report] + [p_ for _, p_ in files] + ["--svg", os.path.join(out, "%s-%s.svg" % (server, script))],
                        stdout=md)
    print("%s %s: %s" % (server, script, ";".join("%s/%s %.3f rt/event %.0f tps" % (
        d["driver"], d["connection"]["autocommit"], d["round_trips_per_event"], d["tps"]) for d, _ in files)))
