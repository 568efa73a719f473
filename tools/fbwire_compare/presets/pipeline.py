# SPDX-License-Identifier: MIT
"""Preset pipeline: Pipeline off, transaction and fbclient, server CPU too (tools/fbwire-report/pipeline.sh)."""
import glob
import os
import re
import subprocess
import sys

from .common import Fail, Firebird, driver_args, load, med, parser


PIPELINE_DOC = """what a round trip costs, through sysbench: each workload runs with fbwire
--fbwire-pipeline=off, fbwire --fbwire-pipeline=transaction and fbclient (autocommit shared, the
baseline), interleaved run by run, and the medians of TPS, round trips per event, statements per
round trip, client CPU per statement and server CPU per statement and per event are printed with the
ratio of TPS to pipeline off. Every figure comes from the drivers' own reports; server CPU is the
server process's over the run, so use otherwise idle servers. Defaults: fb3 and fb4; 1 and 4
threads; 3 runs of 5 s per case; 4 tables x 10,000 rows; the workloads oltp_read_only,
oltp_read_only:--range_selects=off, oltp_read_write and oltp_write_only (SCRIPT[:extra options,
comma separated]). The database (pipebench.fdb) runs with forced writes off by default (a commit's
fsync would hide what the round trips cost); --forced-writes on measures that case too."""
PIPELINE_CASES = (("fbwire", "off"), ("fbwire", "transaction"), ("fbclient", "off"))


def pipeline_tag(wl_spec):
    """'script:--a=1,--b' -> (script, ['--a=1', '--b'], 'script_a-1_b')"""
    script, _, extra = wl_spec.partition(":")
    opts = [o for o in extra.split(",") if o]
    tag = script + "".join("_" + o.lstrip("-").replace("=", "-") for o in opts)
    return script, opts, tag


def pipeline(argv, here):
    p = parser("pipeline", PIPELINE_DOC)
    p.add_argument("outdir")
    p.add_argument("--server", action="append", default=[])
    p.add_argument("--threads", action="append", type=int, default=[])
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--time", type=int, default=5)
    p.add_argument("--tables", type=int, default=4)
    p.add_argument("--table-size", type=int, default=10000)
    p.add_argument("--workloads", type=lambda v: v.replace(",", " ").split(),
                   default="oltp_read_only oltp_read_only:--range_selects=off oltp_read_write oltp_write_only".split())
    p.add_argument("--forced-writes", choices=("on", "off"), default="off")
    a = p.parse_args(argv)
    # --workloads a,b:--x=1 : options of a workload after ':' are comma separated too, so split
    # on the workload names instead (a word with no '--' starts a new workload)
    specs = []
    for w in a.workloads:
        if w.startswith("--") and specs:
            specs[-1] += "," + w
        else:
            specs.append(w)
    fb = Firebird(here)
    out = a.outdir
    os.makedirs(out, exist_ok=True)
    for server in a.server or ["fb3", "fb4"]:
        dsn = fb.dsn(server, "pipebench.fdb")
        fb.ensure_db(dsn)
        r = subprocess.run(["gfix", "-write", "sync" if a.forced_writes == "on" else "async", dsn],
                           env=fb.env, capture_output=True, text=True, timeout=120)
        if r.returncode:
            raise Fail("gfix -write failed: %s" % r.stderr.strip())

        def sb(script, drv, pipe, cmd, log, more=(), append=False):
            return fb.sysbench(script, driver_args(drv, dsn) + ["--%s-pipeline=%s" % (drv, pipe),
                               "--tables=%d" % a.tables, "--table-size=%d" % a.table_size] + list(more), cmd, log, append)
        setup = os.path.join(out, "%s-setup.log" % server)
        sb("oltp_read_write", "fbwire", "off", "cleanup", setup)
        if sb("oltp_read_write", "fbwire", "off", "prepare", setup, ["--threads=2"], True):
            raise Fail("prepare failed, see %s" % setup)
        for spec in specs:
            script, extra, tag = pipeline_tag(spec)
            for t in a.threads or [1, 4]:
                for i in range(1, a.runs + 1):
                    for drv, pipe in PIPELINE_CASES:
                        base = os.path.join(out, "%s-%s-t%d-%s-%s-%d" % (server, tag, t, drv, pipe, i))
                        if sb(script, drv, pipe, "run", base + ".log", ["--threads=%d" % t, "--time=%d" % a.time,
                              "--%s-autocommit=shared" % drv, "--%s-report=%s.json" % (drv, base)] + extra):
                            print("failed: %s.log" % base, file=sys.stderr)
                print("done: %s %s %d thread(s)" % (server, tag, t), file=sys.stderr)
        sb("oltp_read_write", "fbwire", "off", "cleanup", setup, append=True)
    pipeline_summary(out, a.runs)
    return 0


def pipeline_summary(out, runs):
    groups = {}
    for path in sorted(glob.glob(os.path.join(out, "*.json"))):
        m = re.match(r"(fb\w+?)-(.+)-t(\d+)-(fbwire|fbclient)-(off|transaction)-(\d+)\.json$", os.path.basename(path))
        d = load(path) if m else None
        if d:
            server, tag, t, drv, pipe, _ = m.groups()
            groups.setdefault((server, tag, int(t)), {}).setdefault((drv, pipe), []).append(d)

    def srv(d, key):
        s = d.get("server_cpu", {})
        return s.get(key) if s.get("available") else None

    def m_(docs, f):
        return (med(docs, f) or {}).get("median")

    def fmt(v, f):
        return (f % v) if v is not None else "n/a"
    rows = []
    print("%-5s %-30s %2s %-20s %10s %12s %8s %8s %9s %9s %9s %7s" % (
        "srv", "workload", "th", "client", "TPS", "(range)", "rt/ev", "st/rt", "cli us/st", "srv us/st", "srv us/ev",
        "xTPS"))
    for (server, tag, t), cases in sorted(groups.items()):
        off = cases.get(("fbwire", "off"))
        off_tps = m_(off, lambda d: d["tps"]) if off else None
        for key in (("fbclient", "off"), ("fbwire", "off"), ("fbwire", "transaction")):
            docs = cases.get(key)
            if not docs:
                continue
            tps = med(docs, lambda d: d["tps"])
            rte = m_(docs, lambda d: d["round_trips_per_event"])
            spr = m_(docs, lambda d: d["totals"].get("statements_per_round_trip"))
            cli = m_(docs, lambda d: d["totals"]["cpu_us_per_execution"])
            sst = m_(docs, lambda d: srv(d, "us_per_execution"))
            sev = m_(docs, lambda d: srv(d, "us_per_event"))
            name = "%s %s" % (key[0], "pipeline " + key[1] if key[0] == "fbwire" else "shared")
            print("%-5s %-30s %2d %-20s %10.1f %12s %8.3f %8s %9.2f %9s %9s %7s" % (
                server, tag, t, name, tps["median"], "%.0f-%.0f" % (tps["min"], tps["max"]), rte, fmt(spr, "%.2f"),
                cli, fmt(sst, "%.1f"), fmt(sev, "%.0f"), fmt(tps["median"] / off_tps if off_tps else None, "%.2f")))
            rows.append("\t".join(str(x) for x in (server, tag, t, key[0], key[1], len(docs), tps["median"],
                                                     tps["min"], tps["max"], rte, spr, cli, sst, sev)))
    with open(os.path.join(out, "summary.tsv"), "w") as f:
        f.write("server\tworkload\tthreads\tdriver\tpipeline\truns\ttps_median\ttps_min\ttps_max\t"
                "rt_per_event\tstatements_per_rt\tclient_us_per_statement\tserver_us_per_statement\t"
                "server_us_per_event\n")
        f.write("\n".join(rows) + "\n")
    print("medians of %d interleaved runs per case; xTPS = TPS / TPS of fbwire pipeline off; "
          "summary.tsv in %s" % (runs, out))
