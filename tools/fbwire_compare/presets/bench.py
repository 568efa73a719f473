# SPDX-License-Identifier: MIT
"""Preset bench: TPS of every upstream workload for docs/sysbench.md (tests/sysbench/bench.sh)."""
import glob
import os
import time

from .. import sysbench, workloads as wl
from .common import Fail, Firebird, driver_args, parser



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
