# SPDX-License-Identifier: MIT
"""Presets: the project's earlier measurement scripts as settings of this tool, with their options
and outputs. Each runs the upstream workloads through the Firebird drivers (fbwire-sysbench) and
reads the drivers' own JSON reports (docs/report.md).

  fbwire-compare --preset cpu OUTDIR       fbwire against fbclient: TPS and client CPU per statement
  fbwire-compare --preset measure OUTDIR   round trips per event of every workload, four clients
  fbwire-compare --preset pipeline OUTDIR  pipeline off / transaction / fbclient, server CPU too
  fbwire-compare --preset bench            TPS of every workload (docs/sysbench.md), TSV lines
  fbwire-compare --preset soak             a long run that checks nothing grows or drifts

`fbwire-compare --preset NAME --help` lists a preset's options. tools/fbwire-report/{cpu,measure,
pipeline}.sh, tests/sysbench/bench.sh and scripts/soak.sh call these.
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import time

from . import builds as bl, stats, sysbench, targets as tg, workloads as wl


class Fail(Exception):
    """A preset cannot go on: message and exit status."""

    def __init__(self, msg, status=1):
        super().__init__(msg)
        self.status = status


class Firebird:
    """The project's Firebird servers (scripts/fb-servers.sh) and fbwire-sysbench against them."""

    def __init__(self, here, lib=None):
        self.here = here
        self.builds = bl.Builds(here)
        self.state = bl.state_dir(here)
        lib = lib or self.builds.find("libfbwire-sysbench.so")
        if not lib or not os.path.isfile(lib):
            raise Fail("build the plug-in first (libfbwire-sysbench.so not found; FBWIRE_SYSBENCH_LIB)", 2)
        path = os.path.join(self.state, "servers.env")
        if not os.path.isfile(path):
            raise Fail("no %s: run scripts/fb-servers.sh start" % path, 2)
        self.e = tg.load_env(path)
        self.env = dict(os.environ, FBWIRE_SYSBENCH_LIB=lib, ISC_USER=self.e["FBW_USER"],
                        ISC_PASSWORD=self.e["FBW_PASSWORD"])

    def dsn(self, server, db):
        s = server.upper()
        if not self.e.get("FBW_%s_PORT" % s):
            raise Fail("unknown server %s" % server, 2)
        return "%s/%s:%s/%s" % (self.e["FBW_%s_HOST" % s], self.e["FBW_%s_PORT" % s], self.e["FBW_DBDIR_" + s], db)

    def isql(self, sql, dsn=None):
        cmd = ["isql-fb", "-q"] + ([dsn] if dsn else [])
        try:  # the SQL (with any password) goes through stdin, never the command line
            return subprocess.run(cmd, input=sql, capture_output=True, text=True, env=self.env, timeout=120)
        except subprocess.TimeoutExpired:
            raise Fail("isql-fb did not answer in 120 s")

    def ensure_db(self, dsn):
        if self.isql("QUIT;\n", dsn).returncode != 0:
            r = self.isql("CREATE DATABASE '%s' USER '%s' PASSWORD '%s' PAGE_SIZE 8192;\n" % (
                dsn, self.e["FBW_USER"], self.e["FBW_PASSWORD"]))
            if r.returncode != 0:
                raise Fail("cannot create %s: %s" % (dsn, r.stderr.strip().splitlines()[-1:]))

    def count(self, dsn, relation):
        """Rows of a monitoring table for this database's other attachments."""
        r = self.isql("SELECT 'N=' || COUNT(*) FROM %s WHERE MON$ATTACHMENT_ID <> CURRENT_CONNECTION;\n" % relation, dsn)
        m = re.search(r"^N=(\d+)", r.stdout, re.M)
        return int(m.group(1)) if m else None

    def launcher(self):
        return self.builds.sysbench_launcher()

    def sysbench(self, script, args, cmd, out, append=False, background=False):
        """fbwire-sysbench SCRIPT ARGS CMD with stdout and stderr to the file out."""
        with open(out, "a" if append else "w") as f:
            p = subprocess.Popen([self.launcher(), script] + args + [cmd], stdout=f, stderr=subprocess.STDOUT,
                                 stdin=subprocess.DEVNULL, env=self.env)
        return p if background else p.wait()


def driver_args(drv, dsn):
    # Wire crypt off for every client alike, so none pays for a cipher the others do not (and the
    # fbclient tap decodes only plain streams).
    return ["--db-driver=" + drv, "--%s-db=%s" % (drv, dsn), "--%s-wire-crypt=disabled" % drv]


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def med(docs, f):
    return stats.median_range(f(d) for d in docs)


def parser(name, doc):
    return argparse.ArgumentParser(prog="fbwire-compare --preset " + name, description=doc,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)


# ---------------------------------------------------------------- cpu

CPU_DOC = """client CPU per statement and TPS of fbwire against fbclient, side by side on one server:
runs of one upstream workload alternate between fbwire (autocommit shared, its default) and fbclient
(autocommit shared, its best), and the medians of each are printed with their ratios. Both figures
come from the drivers' own reports (docs/report.md: client CPU in the driver). Defaults: fb3,
oltp_point_select, 5 runs each, 4 s, 1 thread, 1 table x 10,000 rows. JSON reports and logs stay
in OUTDIR."""


def cpu(argv, here):
    p = parser("cpu", CPU_DOC)
    p.add_argument("outdir")
    p.add_argument("--server", default="fb3")
    p.add_argument("--script", default="oltp_point_select")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--time", type=int, default=4)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--table-size", type=int, default=10000)
    a = p.parse_args(argv)
    fb = Firebird(here)
    dsn = fb.dsn(a.server, "cpu.fdb")
    os.makedirs(a.outdir, exist_ok=True)
    fb.ensure_db(dsn)
    out = a.outdir

    def args(drv, *more):
        return driver_args(drv, dsn) + ["--tables=1", "--table-size=%d" % a.table_size,
                                        "--threads=%d" % a.threads] + list(more)
    setup = os.path.join(out, "setup.log")
    fb.sysbench(a.script, args("fbwire"), "cleanup", setup)
    if fb.sysbench(a.script, args("fbwire"), "prepare", setup, append=True):
        raise Fail("prepare failed, see %s" % setup)
    base = lambda drv, i: os.path.join(out, "%s-%s-%s-%d" % (a.server, a.script, drv, i))  # noqa: E731
    for i in range(1, a.runs + 1):
        for drv in ("fbwire", "fbclient"):
            if fb.sysbench(a.script, args(drv, "--time=%d" % a.time, "--%s-autocommit=shared" % drv,
                                          "--%s-report=%s.json" % (drv, base(drv, i))), "run", base(drv, i) + ".log"):
                raise Fail("%s run %d failed, see its log" % (drv, i))
    fb.sysbench(a.script, args("fbwire"), "cleanup", setup, append=True)
    m = {}
    for drv in ("fbwire", "fbclient"):
        docs = [load(base(drv, i) + ".json") for i in range(1, a.runs + 1)]
        docs = [d for d in docs if d]
        m[drv] = {k: (med(docs, f) or {}).get("median") for k, f in (
            ("tps", lambda d: d["tps"]), ("rt", lambda d: d["round_trips_per_event"]),
            ("cpu", lambda d: d["totals"]["cpu_us_per_execution"]), ("cpue", lambda d: d["totals"]["cpu_us_per_event"]))}
        x = m[drv]
        print("%s %s %-8s median of %d: %9.1f tps  %7.3f rt/event  client CPU %7.2f us/statement  %8.2f us/event"
              % (a.server, a.script, drv, a.runs, x["tps"], x["rt"], x["cpu"], x["cpue"]))
    w, c = m["fbwire"], m["fbclient"]
    print("%s %s fbwire / fbclient: TPS %.2fx, client CPU per statement %.2fx"
          % (a.server, a.script, w["tps"] / c["tps"], w["cpu"] / c["cpu"]))
    return 0


# ---------------------------------------------------------------- measure

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


# ---------------------------------------------------------------- pipeline

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


# ---------------------------------------------------------------- bench

BENCH_DOC = """TPS of the upstream sysbench scripts through the plug-in, for docs/sysbench.md. Per server
and script: cleanup, prepare (timed), --runs runs of --time seconds on the same prepared tables,
cleanup. select_random_* use one table (upstream refuses more); bulk_insert has no prepared rows
(one table per thread, emptied before every run; its TPS is rows per second). Appends one
tab-separated line per script to --out (default stdout):
  server driver script prepare_s tps_run1 ... tps_runN ignored_errors_last reconnects_last
The machine should be quiet while this runs: the numbers are wall-clock rates."""


def bench(argv, here):
    p = parser("bench", BENCH_DOC)
    p.add_argument("--driver", choices=("fbwire", "fbclient"), default="fbwire")
    p.add_argument("--server", action="append", default=[])
    p.add_argument("--lib", default=None)
    p.add_argument("--tables", type=int, default=4)
    p.add_argument("--table-size", type=int, default=10000)
    p.add_argument("--threads", type=int, default=4)
    p.add_argument("--time", type=int, default=10)
    p.add_argument("--runs", type=int, default=2)
    p.add_argument("--only", type=wl.split, default=None)
    p.add_argument("--extra", default="")
    p.add_argument("--out", default=None)
    a = p.parse_args(argv)
    fb = Firebird(here, a.lib)
    import tempfile
    work = tempfile.mkdtemp(prefix="fbwire-bench.")
    try:
        for server in a.server or ["fb3", "fb4"]:
            dsn = fb.dsn(server, "bench.fdb")
            fb.ensure_db(dsn)
            for script in wl.ALL:
                if a.only and script not in a.only:
                    continue
                line = bench_one(fb, a, server, dsn, script, work)
                if a.out:
                    with open(a.out, "a") as f:
                        f.write(line + "\n")
                else:
                    print(line, flush=True)
    finally:
        for f in glob.glob(os.path.join(work, "*")):
            os.unlink(f)
        os.rmdir(work)
    return 0


def bench_one(fb, a, server, dsn, script, work):
    sizes = ["--tables=%d" % wl.tables_for(script, a.tables), "--table-size=%d" % a.table_size]
    if wl.fresh_per_run(script):
        sizes = []
    base = driver_args(a.driver, dsn) + ["--threads=%d" % a.threads]
    extra = a.extra.split()
    log = os.path.join(work, "setup.log")

    def sb(cmd, more=(), out=log):
        return fb.sysbench(script, base + list(more) + extra, cmd, out, append=True)
    sb("cleanup", sizes)
    t0 = time.monotonic()
    if sb("prepare", sizes):
        raise Fail("%s %s: prepare failed (%s)" % (server, script, log))
    cols = [server, a.driver, script, "%.2f" % (time.monotonic() - t0)]
    last = None
    for r in range(1, a.runs + 1):
        if wl.fresh_per_run(script) and r > 1:  # its ids start at 1 in every run
            sb("cleanup")
            sb("prepare")
        out = os.path.join(work, "run.log")
        open(out, "w").close()
        if sb("run", sizes + ["--time=%d" % a.time], out):
            raise Fail("%s %s: run failed (%s)" % (server, script, out))
        last = sysbench.parse_file(out)
        cols.append("%.2f" % last["tps"] if last else "")
    cols += [str(last["errors"]) if last else "", str(last["reconnects"]) if last else ""]
    sb("cleanup", sizes)
    return "\t".join(cols)


# ---------------------------------------------------------------- soak

SOAK_DOC = """a long sysbench run through fbwire that checks nothing grows or drifts: the sysbench
process's memory, the statements and attachments the server holds for it, and the round trips per
event. Defaults: 10 minutes per server, fb3 and fb4, 16 threads, oltp_read_write, 4 x 10,000 rows.
Checks, per server (exit 1 when one fails, with the figures): sysbench exits 0 with no reconnects;
its resident memory grows from the sample at 25%% of the run to the last by less than max(8 MiB,
10%%); MON$STATEMENTS and MON$ATTACHMENTS, sampled every 15 s, stay within the smallest + threads
after the first quarter; every --report-interval's round trips per event after the first is within
5%% of the run's; the JSON report validates against docs/report.schema.json (with python3-jsonschema)."""


def soak(argv, here):
    p = parser("soak", SOAK_DOC)
    p.add_argument("--minutes", type=int, default=10)
    p.add_argument("--server", action="append", default=[])
    p.add_argument("--threads", type=int, default=16)
    p.add_argument("--script", default="oltp_read_write")
    p.add_argument("--tables", type=int, default=4)
    p.add_argument("--table-size", type=int, default=10000)
    p.add_argument("--keep", action="store_true")
    p.add_argument("--interval", type=int, default=15, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.minutes < 1:
        raise Fail("--minutes must be >= 1", 2)
    fb = Firebird(here)
    import shutil
    import tempfile
    work = tempfile.mkdtemp(prefix="fbwire-soak.")
    fails = 0
    for server in a.server or ["fb3", "fb4"]:
        fails += soak_one(fb, a, server, work)
    if a.keep:
        print("files kept in %s" % work)
    else:
        shutil.rmtree(work)
    print("soak: all checks passed" if not fails else "soak: %d failure(s)" % fails)
    return 1 if fails else 0


def rss_kb(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            return next((int(line.split()[1]) for line in f if line.startswith("VmRSS:")), None)
    except OSError:
        return None


def soak_one(fb, a, server, work):
    dsn = fb.dsn(server, "soak.fdb")
    fb.ensure_db(dsn)
    args = driver_args("fbwire", dsn) + ["--tables=%d" % a.tables, "--table-size=%d" % a.table_size,
                                         "--threads=%d" % a.threads]
    setup = os.path.join(work, server + "-setup.log")
    fb.sysbench(a.script, args, "cleanup", setup)
    if fb.sysbench(a.script, args, "prepare", setup, append=True):
        print("FAIL %s: prepare (see %s)" % (server, work))
        return 1
    secs = a.minutes * 60
    js, log = os.path.join(work, server + ".json"), os.path.join(work, server + ".log")
    print("soak %s: %s, %d threads, %d min" % (server, a.script, a.threads, a.minutes), flush=True)
    # the launcher execs sysbench, so the pid is the sysbench process whose memory is sampled
    proc = fb.sysbench(a.script, args + ["--time=%d" % secs, "--report-interval=%d" % a.interval,
                                         "--fbwire-report=" + js], "run", log, background=True)
    samples, t0 = [], time.monotonic()
    while proc.poll() is None:
        try:
            proc.wait(timeout=a.interval)
            break
        except subprocess.TimeoutExpired:
            pass
        el = time.monotonic() - t0
        if el < secs - 5:  # only while the run is surely on: at its end sysbench detaches
            samples.append((int(el), rss_kb(proc.pid), fb.count(dsn, "MON$STATEMENTS"), fb.count(dsn, "MON$ATTACHMENTS")))
    rc = proc.wait()
    fb.sysbench(a.script, args, "cleanup", setup, append=True)
    if rc:
        print("FAIL %s: sysbench exited %d (see %s)" % (server, rc, log))
        return 1
    text = open(log, errors="replace").read()
    for line in text.splitlines():
        if re.match(r"\s*(transactions|ignored errors|reconnects):", line):
            print("  " + line.strip())
    sb = sysbench.parse(text)
    fails = 0
    if not sb or sb["reconnects"]:
        print("FAIL %s: %s reconnects" % (server, sb["reconnects"] if sb else "?"))
        fails += 1
    fails += soak_samples([s for s in samples if None not in s], secs, a.threads, server)
    fails += soak_report(load(js), server)
    fails += soak_schema(fb, js, server)
    return fails


def soak_samples(rows, secs, threads, server):
    if len(rows) < 3:
        print("FAIL %s: only %d samples" % (server, len(rows)))
        return 1
    late = [r for r in rows if r[0] >= secs / 4] or rows[len(rows) // 4:]
    rss0, rss1 = late[0][1], rows[-1][1]
    grow = rss1 - rss0
    st, at = [r[2] for r in late], [r[3] for r in late]
    print("  memory: %.1f MiB at %d s, %.1f MiB at %d s (%+.1f MiB)" % (rss0 / 1024, late[0][0], rss1 / 1024,
                                                                      rows[-1][0], grow / 1024))
    print("  server: MON$STATEMENTS %d..%d, MON$ATTACHMENTS %d..%d over %d samples" % (
        min(st), max(st), min(at), max(at), len(late)))
    bad = 0
    if grow > max(8 * 1024, rss0 // 10):
        print("FAIL %s: sysbench memory grew by %.1f MiB" % (server, grow / 1024))
        bad = 1
    if max(st) > min(st) + threads or max(at) > min(at) + threads:
        print("FAIL %s: server-side statements or attachments grew" % server)
        bad = 1
    return bad


def soak_report(d, server):
    if not d:
        print("FAIL %s: no JSON report" % server)
        return 1
    whole = d["round_trips_per_event"]
    iv = [i["round_trips_per_event"] for i in d.get("intervals", []) if i["events"]][1:]
    worst = max((abs(x - whole) / whole for x in iv), default=0)
    print("  round trips per event: %.3f for the run, intervals %.3f..%.3f (%d), client CPU %.2f us/statement"
          % (whole, min(iv, default=whole), max(iv, default=whole), len(iv), d["totals"]["cpu_us_per_execution"]))
    if worst > 0.05:
        print("FAIL %s: an interval's round trips per event is %.1f%% off the run's" % (server, worst * 100))
        return 1
    return 0


def soak_schema(fb, js, server):
    try:
        import jsonschema  # noqa: F401
    except ImportError:
        return 0
    repo = fb.builds.repo
    check = os.path.join(repo, "tests", "sysbench", "rt_check.py")
    if not os.path.isfile(check):
        return 0
    bad = 0
    for what, args in (("the JSON report does not validate", ["schema", os.path.join(repo, "docs", "report.schema.json"), js]),
                       ("report sums", ["sums", js])):
        if subprocess.call([sys.executable, check] + args, stdout=subprocess.DEVNULL):
            print("FAIL %s: %s" % (server, what))
            bad = 1
    return bad


PRESETS = {"cpu": cpu, "measure": measure, "pipeline": pipeline, "bench": bench, "soak": soak}


def main(argv, here):
    if not argv or argv[0] not in PRESETS:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        return PRESETS[argv[0]](argv[1:], here)
    except Fail as e:
        print("fbwire-compare --preset %s: %s" % (argv[0], e), file=sys.stderr)
        return e.status
