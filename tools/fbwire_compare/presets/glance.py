# SPDX-License-Identifier: MIT
"""Preset glance: what fbwire is for, in one small table (the end of scripts/main.sh).

Named for what it is: a look, not a measurement to quote. One run per case, one thread, a few
seconds each: enough to see the round trips decide throughput once the server is 1 ms away, too
little for a figure with a range (the full comparison, docs/results.md, is for that).
"""
import json
import os
import sys

from .. import stats
from .common import Fail, parser

GLANCE_DOC = """oltp_read_only through fbclient, fbwire and fbwire pipelined (--fbwire-pipeline=transaction) on one
Firebird server, directly and through fbwire-link at --rtt ms: one run of each (1 thread, --time s,
1 table of --table-size rows, no capture; round trips per event are the drivers' own count), then
one small table of TPS and round trips per event and the path of the TPS-against-RTT chart. The
full reports stay in OUTDIR (summary.md, runs/: sysbench's output and the driver's report of every
run). About 45 s with the defaults. Needs the Firebird servers of scripts/fb-servers.sh and the
built fbwire-link; runs as any user (no capture)."""
CLIENTS = (("fbclient", "fbclient"), ("fbwire", "fbwire"), ("fbwire pipelined", "fbwire-pipelined"))
WORKLOAD = "oltp_read_only"


def glance(argv, here):
    p = parser("glance", GLANCE_DOC)
    p.add_argument("outdir")
    p.add_argument("--server", choices=("fb3", "fb4"), default="fb3")
    p.add_argument("--rtt", type=float, default=1.0)
    p.add_argument("--time", type=int, default=5)
    p.add_argument("--table-size", type=int, default=10000)
    a = p.parse_args(argv)
    if a.rtt <= 0 or a.time < 1 or a.table_size < 1:
        raise Fail("--rtt, --time and --table-size must be above 0", 2)
    from .. import cli  # here: cli imports the presets
    targets = ["%s-%s" % (a.server, t) for _, t in CLIENTS]
    rc = cli.main([a.outdir, "--workloads", WORKLOAD, "--targets", ",".join(targets), "--threads", "1",
                   "--rtt", "0,%g" % a.rtt, "--runs", "1", "--time", str(a.time), "--tables", "1",
                   "--table-size", str(a.table_size), "--capture", "none"], here)
    path = os.path.join(a.outdir, "summary.json")
    if not os.path.isfile(path):
        raise Fail("no summary (fbwire-compare exit %d); see the messages above" % rc)
    with open(path) as f:
        s = json.load(f)
    text, complete = table(s, a.server, a.rtt, a.outdir)
    sys.stdout.write(text)
    with open(os.path.join(a.outdir, "glance.txt"), "w") as f:
        f.write(text)
    if rc or not complete:
        print("fbwire-compare --preset glance: a figure is missing (n/a above); see %s/summary.md" % a.outdir,
              file=sys.stderr)
        return 1
    return 0


def figure(c, key, digits):
    v = c and c.get(key)
    return stats.num(v["median"], digits) if v else "n/a"


def table(s, server, rtt, outdir):
    """The table as text and whether every cell was measured."""
    version = s["meta"].get("version.%s" % server, "?")
    cases = {(c["target"], c["rtt_ms"]): c for c in s["cases"] if c["workload"] == WORKLOAD}
    lines = ["", "%s on Firebird %s (%s), 1 thread, %s s per run, directly and through fbwire-link at %g ms RTT:"
             % (WORKLOAD, version, server, s["meta"].get("time_s", "?"), rtt), "",
             "%-17s %-12s %9s %18s %15s" % ("client", "path", "TPS", "round trips/event", "TPS / fbclient")]
    complete = True
    for r in (0.0, rtt):
        base = cases.get(("%s-fbclient" % server, r))
        for name, t in CLIENTS:
            c = cases.get(("%s-%s" % (server, t), r))
            tps, rt = figure(c, "tps", 0), figure(c, "driver_round_trips_per_event", 2)
            ratio = "n/a"
            if c and c["tps"] and base and base["tps"] and base["tps"]["median"]:
                ratio = "%.2f" % (c["tps"]["median"] / base["tps"]["median"])
            complete &= "n/a" not in (tps, rt, ratio)
            lines.append("%-17s %-12s %9s %18s %15s" % (name, "direct" if r == 0 else "%g ms RTT" % r, tps, rt, ratio))
    link = next((c["link_rtt_ms"]["median"] for c in s["cases"] if c["rtt_ms"] == rtt and c.get("link_rtt_ms")), None)
    lines += ["", "At %g ms every round trip waits %g ms (the link measured %s ms): the round trips per event "
              "decide the TPS." % (rtt, rtt, "%.3f" % link if link else "n/a")]
    chart = os.path.join(outdir, "rtt-%s-t1.svg" % WORKLOAD)
    lines.append("Chart: %s" % (chart if os.path.isfile(chart) else "none (python3-matplotlib not installed)"))
    lines.append("Full reports: %s (summary), %s (every run's sysbench output and driver report)"
                 % (os.path.join(outdir, "summary.md"), os.path.join(outdir, "runs")))
    return "\n".join(lines) + "\n", complete
