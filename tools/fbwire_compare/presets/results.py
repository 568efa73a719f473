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
  engines    every Firebird registered (fb3, fb4, fb5, fb6: fb-servers.sh) through fbwire next to
             PostgreSQL 17 and MariaDB 11.8, and fb3 with the row format Firebird describes
             (fb3-described) next to fbwire's compact one: the ten upstream workloads and oltp_blob,
             1 thread, directly and at RTT 1 ms; the transactional workloads also pipelined on fb3
  formats    the row formats at 100 Mbit/s and RTT 1 ms: fb3 described and compact, each with and
             without zlib, next to PostgreSQL 17 and MariaDB 11.8; the same workloads, 1 thread
  blob       oltp_blob, 1 and 4 threads, directly and at RTT 1 ms, on every registered Firebird:
             fbclient with the system's libfbclient (Firebird 3's) and with Firebird 5's
             (--fbclient5), fbwire and fbwire pipelined; PostgreSQL 17 and MariaDB 11.8

Each part writes its own OUTDIR/PART (summary.md, summary.json, charts, runs/). They are made for a
quiet machine: measure with nothing else running and keep the load average the summary prints.
"""
import os
import re

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
PARTS = ("distance", "loopback", "rate", "engines", "formats", "blob")
# engines/formats/blob: the workloads with BEGIN ... COMMIT, where --fbwire-pipeline=transaction
# has a transaction to pipeline; the others run in autocommit.
TX_WORKLOADS = ("oltp_read_write", "oltp_read_only", "oltp_write_only")
FORMAT_WORKLOADS = wl.OLTP + ("oltp_blob",)
# fbwire with the row format Firebird describes (CHAR(n) of UTF8 at 4n bytes), compact's opposite.
DESCRIBED = "--target=fb3-described=fb3-fbwire:--fbwire-row-format=described"
FORMAT_SPECS = (DESCRIBED, "--target=fb3-described-zlib=fb3-fbwire:--fbwire-row-format=described "
                "--fbwire-compress=on", "--target=fb3-fbwire-zlib=fb3-fbwire:--fbwire-compress=on")


def registered_fb(state):
    """fb3, fb4 and every fb<major> servers.env names (fb5, fb6), in version order."""
    path = os.path.join(state, "servers.env")
    env = tg.load_env(path) if os.path.isfile(path) else {}
    more = {m.group(1).lower() for m in (re.match(r"^FBW_(FB[0-9]+)_PORT$", k) for k in env) if m}
    return sorted({"fb3", "fb4"} | more, key=lambda e: int(e[2:]))


def fb5_client(state):
    """libfbclient of the registered fb5 installation (start-install's DIR), or None."""
    conf = os.path.join(state, "registered", "fb5.conf")
    if not os.path.isfile(conf):
        return None
    d = tg.load_env(conf).get("DIR")
    lib = os.path.join(d, "lib", "libfbclient.so") if d else None
    return lib if lib and os.path.isfile(lib) else None


def part_argvs(part, outdir, time_s, runs, fbs, fbclient5):
    """fbwire-compare's command lines for one part: a list of (subdirectory, argv) pairs."""
    if part == "engines":
        every = ["pg17", "mariadb118", "fb3-described"] + ["%s-fbwire" % fb for fb in fbs]
        tx = every[:4] + ["fb3-fbwire-pipelined"] + every[4:]
        auto = [w for w in FORMAT_WORKLOADS if w not in TX_WORKLOADS]
        one = ["--threads", "1", "--tables", "1", "--runs", str(runs), "--time", str(time_s), "--capture", "once",
               "--rtt", "0,1", DESCRIBED]
        return [("engines-tx", [os.path.join(outdir, "engines-tx"), "--workloads", ",".join(TX_WORKLOADS),
                                "--targets", ",".join(tx)] + one),
                ("engines-auto", [os.path.join(outdir, "engines-auto"), "--workloads", ",".join(auto),
                                  "--targets", ",".join(every)] + one)]
    if part == "formats":
        t = ["pg17", "mariadb118", "fb3-described", "fb3-fbwire", "fb3-described-zlib", "fb3-fbwire-zlib"]
        return [("formats", [os.path.join(outdir, "formats"), "--workloads", ",".join(FORMAT_WORKLOADS),
                             "--targets", ",".join(t), "--threads", "1", "--tables", "1", "--runs", str(runs), "--time",
                             str(time_s), "--capture", "once", "--rtt", "1", "--rate", "100mbit"]
                 + list(FORMAT_SPECS))]
    if part == "blob":
        t, specs = ["pg17", "mariadb118"], []
        for fb in fbs:
            t += ["%s-fbclient" % fb, "%s-fbwire" % fb, "%s-fbwire-pipelined" % fb]
            if fbclient5:
                t.append("%s-fbclient5" % fb)
                specs.append("--target=%s-fbclient5=%s-fbclient@%s" % (fb, fb, fbclient5))
        return [("blob", [os.path.join(outdir, "blob"), "--workloads", "oltp_blob", "--targets", ",".join(t),
                          "--threads", "1,4", "--tables", "1", "--runs", str(runs), "--time", str(time_s),
                          "--capture", "once", "--rtt", "0,1"] + specs)]
    return [(part, part_argv(part, outdir, time_s, runs))]


def count_runs(argv):
    """How many sysbench runs one fbwire-compare command line makes (captured ones included)."""
    def opt(name):
        return argv[argv.index(name) + 1]
    n = len(opt("--workloads").split(",")) * len(opt("--threads").split(",")) * len(opt("--targets").split(","))
    rtts = len(opt("--rtt").split(",")) if "--rtt" in argv else 1
    return n * (rtts * int(opt("--runs")) + 1)


def part_argv(part, outdir, time_s, runs):
    """fbwire-compare's own command line for one of the first three parts (a list, without the program name)."""
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
    raise Fail("unknown part '%s' (%s)" % (part, ", ".join(PARTS)), 2)


def results(argv, here):
    p = parser("results", RESULTS_DOC)
    p.add_argument("outdir")
    p.add_argument("--part", action="append", choices=PARTS, default=[])
    p.add_argument("--time", type=int, default=5)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--fbclient5", default=None,
                   help="libfbclient of Firebird 5 for the blob part (default: the registered fb5 installation's)")
    p.add_argument("--dry-run", action="store_true", help="print the commands and run counts only")
    a = p.parse_args(argv)
    if a.time < 1 or a.runs < 1:
        raise Fail("--time and --runs must be at least 1", 2)
    parts = a.part or ["distance", "loopback", "rate"]
    from .. import builds as bl, cli  # here: cli imports the presets
    state = bl.state_dir()
    fbs = registered_fb(state)
    fbclient5 = a.fbclient5 or fb5_client(state)
    if a.fbclient5 and not os.path.isfile(a.fbclient5):
        raise Fail("--fbclient5: no file %s" % a.fbclient5, 2)
    if "blob" in parts and not fbclient5:
        print("fbwire-compare --preset results: no Firebird 5 client library (--fbclient5, or fb5 registered "
              "with start-install): the blob part runs fbclient with the system's library only", flush=True)
    status = 0
    for part in parts:
        for sub, args in part_argvs(part, a.outdir, a.time, a.runs, fbs, fbclient5):
            print("fbwire-compare --preset results: part %s, %d runs of %d s: fbwire-compare %s" % (
                sub, count_runs(args), a.time, " ".join(args)), flush=True)
            if not a.dry_run:
                status = max(status, cli.main(args, here))
    return status
