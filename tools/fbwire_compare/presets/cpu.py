# SPDX-License-Identifier: MIT
"""Preset cpu: fbwire against fbclient: TPS and client CPU per statement (tools/fbwire-report/cpu.sh)."""
import os

from .common import Fail, Firebird, driver_args, load, med, parser


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
