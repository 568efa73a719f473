# SPDX-License-Identifier: MIT
"""fbwire-compare - Firebird next to PostgreSQL and MariaDB: the upstream sysbench workloads on each
engine, side by side, with where each one's time goes, directly and at network distance
(docs/compare.md).

  fbwire-compare OUTDIR [--workloads LIST] [--targets LIST] [--target NAME=BASE[@LIBRARY][:OPTIONS]]...
                        [--threads LIST] [--runs N] [--time S] [--tables N] [--table-size N]
                        [--capture separate|once|none] [--capture-time S] [--keep-captures] [--crypt]
                        [--rtt LIST] [--rate RATE] [--quick] [--summarize-only]
  fbwire-compare --preset NAME OUTDIR [options of the preset]    (fbwire-compare --preset help)

For every workload: cleanup + prepare on every engine the targets use (the same tables and sizes
everywhere) and the optimiser statistics refreshed (ANALYZE, ANALYZE TABLE, SET STATISTICS INDEX),
then per thread count and RTT one captured run per target (tcpdump on lo, counted with
`fbwire-pcap turns`: round trips and bytes per event; --capture once: at the smallest RTT of the list
only), then --runs rounds over all targets,
interleaved (t1 t2 t3 t1 t2 t3 ...), each run under `fbwire-cpu` (client CPU of the sysbench
process, server CPU of the process listening on the target's port), then cleanup. PostgreSQL and
MariaDB run through sysbench's own pgsql and mysql drivers, Firebird through the fbwire plug-in
(drivers fbwire and fbclient); the Lua scripts are the stock ones in /usr/share/sysbench.

--rtt 0,0.2,1,5 (ms) runs every target through one fbwire-link per server and run with that
round-trip time (0 = direct), --rate 100mbit caps its bandwidth each way; the summary then has
TPS and latency p95 against RTT, and next to each measured TPS the one predicted from the loopback
run and its round trips per event.

OUTDIR gets: runs/<tag>.log (raw sysbench output), runs/<tag>.json (the figures of one run,
docs/compare.schema.json), the driver reports and fbwire-cpu/turns/link JSON they came from,
meta.txt (machine, versions, settings, connection strings; never passwords), summary.json,
summary.md (medians and ranges) and the charts *.svg.

Servers: scripts/fb-servers.sh start and scripts/peer-servers.sh start in the checkout (their state
in $FBWIRE_STATE, default /var/tmp/fbwire-state).
Tools are found next to this command (installed) or in the newest build*/ of the checkout, or
through FBWIRE_SYSBENCH_LIB, FBWIRE_PCAP, FBWIRE_REPORT, FBWIRE_CPU, FBWIRE_LINK.
"""
import argparse
import signal
import sys

from . import builds as bl, charts, presets, runner, summary, targets as tg, workloads as wl


class Usage(Exception):
    pass


def positive(name):
    def conv(v):
        if not v.isdigit() or int(v) < 1:
            raise argparse.ArgumentTypeError("--%s must be a positive whole number, got '%s'" % (name, v))
        return int(v)
    return conv


def whole(v):
    if not v.isdigit():
        raise argparse.ArgumentTypeError("--runs must be a whole number, got '%s'" % v)
    return int(v)


def rtt_list(v):
    try:
        out = [float(x) for x in wl.split(v)]
    except ValueError:
        raise argparse.ArgumentTypeError("--rtt takes milliseconds, e.g. 0,0.2,1,5; got '%s'" % v)
    if not out or any(x < 0 for x in out):
        raise argparse.ArgumentTypeError("--rtt takes milliseconds >= 0, got '%s'" % v)
    return list(dict.fromkeys(out))


def thread_list(v):
    out = wl.split(v)
    for t in out:
        if not t.isdigit() or int(t) < 1:
            raise argparse.ArgumentTypeError("--threads takes numbers, got '%s'" % t)
    return [int(t) for t in out]


class Parser(argparse.ArgumentParser):
    def error(self, message):
        print("fbwire-compare: %s (--help)" % message, file=sys.stderr)
        sys.exit(2)


def parser():
    p = Parser(prog="fbwire-compare", description=__doc__, add_help=False,
               formatter_class=argparse.RawDescriptionHelpFormatter, usage=argparse.SUPPRESS)
    p.add_argument("outdir", nargs="?")
    p.add_argument("-h", "--help", action="store_true")
    p.add_argument("--workloads", type=wl.split, default=list(wl.OLTP))
    p.add_argument("--targets", type=wl.split, default=list(tg.DEFAULT))
    p.add_argument("--target", action="append", default=[], help="NAME=BASE[@LIBRARY][:OPTIONS] (@LIBRARY: an fbclient target's libfbclient)")
    p.add_argument("--threads", type=thread_list, default=[1, 4])
    p.add_argument("--runs", type=whole, default=3)
    p.add_argument("--time", type=positive("time"), default=5)
    p.add_argument("--tables", type=positive("tables"), default=4)
    p.add_argument("--table-size", type=positive("table_size"), default=10000)
    p.add_argument("--capture", choices=("separate", "once", "none"), default="separate")
    p.add_argument("--capture-time", type=positive("capture_time"), default=None)
    p.add_argument("--keep-captures", action="store_true")
    p.add_argument("--crypt", action="store_true")
    p.add_argument("--rtt", type=rtt_list, default=[0.0])
    p.add_argument("--rate", default=None)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--summarize-only", action="store_true")
    return p


def settings(a, argv):
    """argparse result -> runner.Settings; --quick sets what it sets whatever its position, and
    options given after it win (as in the shell tool, which read them in order)."""
    st = runner.Settings()
    for k in ("workloads", "targets", "threads", "runs", "time", "tables", "table_size", "capture",
              "capture_time", "crypt", "rtt", "rate"):
        setattr(st, k, getattr(a, k))
    st.keep = a.keep_captures
    if a.quick:  # CI smoke: two workloads, two threads, one round, small tables, captures kept
        after = argv[argv.index("--quick") + 1:]
        given = {o.split("=")[0] for o in after if o.startswith("--")}
        quick = {"workloads": list(wl.QUICK), "threads": [2], "runs": 1, "time": 1, "tables": 1,
                 "table_size": 1000, "capture_time": 1}
        for k, v in quick.items():
            if "--" + k.replace("_", "-") not in given:
                setattr(st, k, v)
        st.keep = True
    st.specs = {}
    for spec in a.target:
        name, base, extra = tg.parse_spec(spec)
        st.specs[name] = (base, extra)
    if st.capture_time is None:
        st.capture_time = st.time
    if st.runs == 0 and st.capture == "none":
        raise Usage("--runs 0 (captured runs only) needs --capture separate or once")
    gone = wl.missing(st.workloads)
    if gone:
        raise Usage("no sysbench script for workload %s" % gone[0])
    return st


def do_summary(out, builds):
    report = builds.find("fbwire-report")
    s, made, bad = summary.summarize(out, lambda o, s_: charts.render(o, s_, report))
    if s["meta"].get("runs") == "0":  # captured runs only: they have no TPS, their result is the count
        bad = [c for c in s["cases"] if c["round_trips_per_event"] is None]
    print("fbwire-compare: %s/summary.md, summary.json, %d chart(s); %d case(s), %d without a result"
          % (out, len(made), len(s["cases"]), len(bad)), file=sys.stderr)
    charts_expected = charts.have_matplotlib() or bool(report)
    return 1 if bad or not s["cases"] or (charts_expected and not made) else 0


def interrupted(signum, frame):
    raise KeyboardInterrupt


def main(argv, here):
    if argv and argv[0] == "--preset":
        return presets.main(argv[1:], here)
    p = parser()
    a = p.parse_args(argv)
    if a.help:  # asked for: on stdout, success (help2man and people piping it to a pager)
        print(__doc__)
        return 0
    if not a.outdir or a.outdir.startswith("-"):
        print(__doc__, file=sys.stderr)
        return 2
    try:
        st = settings(a, argv)
    except (Usage, ValueError) as e:
        print("fbwire-compare: %s" % e, file=sys.stderr)
        return 2 if isinstance(e, Usage) else 1
    builds = bl.Builds(here)
    if a.summarize_only:
        return do_summary(a.outdir, builds)
    try:
        r = runner.Runner(a.outdir, st, builds, bl.state_dir())
    except ValueError as e:
        runner.say(str(e))
        return 1
    why = r.check()
    if why:
        runner.say(why)
        return 1
    signal.signal(signal.SIGTERM, interrupted)  # stop tcpdump and the link on the way out
    try:
        r.load_servers()  # first: without the state directory there is no lock file to take either
        r.lock()
        r.tls_dir()
        r.meta()
        r.run()
    except (RuntimeError, OSError) as e:
        runner.say(str(e))
        r.capture_kill()
        return 1
    except KeyboardInterrupt:
        r.capture_kill()
        return 130
    rc = do_summary(a.outdir, builds)
    return 1 if rc or r.failed else 0
