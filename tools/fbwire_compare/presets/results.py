# SPDX-License-Identifier: MIT
"""Preset results: the measurements behind docs/results.md, each part one command, so that the doc's
tables can be made again exactly (and a part measured in one quiet window, another in the next).

  distance   the four oltp_* workloads that decide the comparison, at 1 and 4 threads, RTT 0, 0.2, 1
             and 5 ms, every engine and every Firebird client (12 targets); captured runs at RTT 0
  loopback   the other six OLTP workloads directly (RTT 0), the same targets but the two pipelined
             ones (these workloads run in autocommit, where there is no transaction to pipeline:
             `--fbwire-pipeline=transaction` changes nothing); with `distance`'s RTT 0 column this is
             the whole loopback comparison
  rate       --rate 100mbit --rtt 1 (and direct): oltp_read_only and oltp_point_select, Firebird
             through fbwire with and without wire compression next to PostgreSQL and MariaDB

Each part writes its own OUTDIR/PART (summary.md, summary.json, charts, runs/). They are made for a
quiet machine: measure with nothing else running and keep the load average the summary prints.
"""
import os

from .. import targets as tg, workloads as wl
from .common import Fail, parser

RESULTS_DOC = __doc__.split("\n\n", 1)[1].rsplit("\n\n", 1)[0]
DISTANCE_WORKLOADS = ("oltp_point_select", "oltp_read_only", "oltp_read_write", "oltp_write_only")
PEERS = ("pg", "pg17", "mariadb", "mariadb118")
EVERY_TARGET = PEERS + tuple("%s-%s" % (fb, k) for fb in ("fb3", "fb4") for k in tg.FB_KINDS)
# The compressed Firebird targets of the rate part: fbwire's zlib (op_connect's compression flag).
ZLIB = tuple("%s-fbwire-zlib" % fb for fb in ("fb3", "fb4"))
# Autocommit workloads have no BEGIN ... COMMIT, so a pipelined target would measure fbwire twice.
LOOPBACK_TARGETS = tuple(t for t in EVERY_TARGET if not t.endswith("-pipelined"))
RATE_TARGETS = ("pg17", "mariadb118", "fb3-fbwire", "fb4-fbwire") + ZLIB
RATE_SPECS = tuple("--target=%s=%s:--fbwire-compress=on" % (z, z[:-len("-zlib")]) for z in ZLIB)


def part_argv(part, outdir, time_s, runs):
    """fbwire-compare's own command line for one part (a list, without the program name)."""
    common = [os.path.join(outdir, part), "--threads", "1,4", "--runs", str(runs), "--time", str(time_s),
              "--capture", "once"]
    if part == "distance":
        return common + ["--workloads", ",".join(DISTANCE_WORKLOADS), "--targets", ",".join(EVERY_TARGET),
                         "--rtt", "0,0.2,1,5"]
    if part == "loopback":
        rest = [w for w in wl.OLTP if w not in DISTANCE_WORKLOADS]
        return common + ["--workloads", ",".join(rest), "--targets", ",".join(LOOPBACK_TARGETS)]
    if part == "rate":
        return common + ["--workloads", "oltp_read_only,oltp_point_select", "--targets", ",".join(RATE_TARGETS),
                         "--rtt", "0,1", "--rate", "100mbit"] + list(RATE_SPECS)
    raise Fail("unknown part '%s' (distance, loopback, rate)" % part, 2)


def runs_of(part, runs):
    """How many sysbench runs a part makes (captured ones included), for the plan it prints."""
    targets = {"distance": len(EVERY_TARGET), "loopback": len(LOOPBACK_TARGETS), "rate": len(RATE_TARGETS)}[part]
    workloads = {"distance": len(DISTANCE_WORKLOADS), "loopback": len(wl.OLTP) - len(DISTANCE_WORKLOADS),
                 "rate": 2}[part]
    rtts = {"distance": 4, "loopback": 1, "rate": 2}[part]
    return workloads * 2 * targets * (rtts * runs + 1)


def results(argv, here):
    p = parser("results", RESULTS_DOC)
    p.add_argument("outdir")
    p.add_argument("--part", action="append", choices=("distance", "loopback", "rate"), default=[])
    p.add_argument("--time", type=int, default=5)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--dry-run", action="store_true", help="print the commands and run counts only")
    a = p.parse_args(argv)
    if a.time < 1 or a.runs < 1:
        raise Fail("--time and --runs must be at least 1", 2)
    parts = a.part or ["distance", "loopback", "rate"]
    from .. import cli  # here: cli imports the presets
    status = 0
    for part in parts:
        args = part_argv(part, a.outdir, a.time, a.runs)
        print("fbwire-compare --preset results: part %s, %d runs of %d s: fbwire-compare %s" % (
            part, runs_of(part, a.runs), a.time, " ".join(args)), flush=True)
        if not a.dry_run:
            status = max(status, cli.main(args, here))
    return status
