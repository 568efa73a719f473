# SPDX-License-Identifier: MIT
"""Preset soak: A long run that checks nothing grows or drifts (scripts/soak.sh)."""
import argparse
import os
import re
import subprocess
import sys
import time

from .. import sysbench
from .common import Fail, Firebird, driver_args, load, parser


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
