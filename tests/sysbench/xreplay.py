#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""xreplay.py - a sysbench capture on one server version replayed on the other.

    tests/sysbench/xreplay.py --lib libfbwire-sysbench.so --pcap fbwire-pcap --link fbwire-link
        --sql fbwire-sql [--report fbwire-report] --from fb3|fb4 [--driver fbwire|fbclient]
        [--script partitioned|stock] [--rand-type T] [--rate R] [--time S] [--threads N] [--tables N]
        [--table-size N] [--allow-not-replayed OP]... [--keep DIR]

The same sysbench oltp_read_write tables (--rand-seed=1, one thread: the same rows) are prepared
in fresh databases on the --from server and on the other version; the test checks that both hold
the same rows. sysbench (--driver; default 4 threads, 5 s, 2 tables of 1000 rows, --rate 50
transactions per second: clients with think time, as on a live server) then runs
oltp_read_write on the --from copy through fbwire-link on a private port that tcpdump records (the
shared server ports carry other engineers' traffic). `fbwire-pcap replay --list` must decode the
capture whole. `fbwire-pcap replay --pace original` onto a fresh copy on the other version, also
through an fbwire-link (capture and replay latencies then include the same relay hop), must
replay every step, fail none, list no op as not replayed (but --allow-not-replayed ones), compare
every result and find it the same, print the per-fingerprint table, and take a wall time within
10% of the capture's duration. A second paced replay onto another fresh copy writes --json, which
must follow docs/fbwire-pcap-replay.schema.json and pass the same checks; fbwire-report --replay
draws its 10 slowest fingerprints (--report).

The one result that must differ is the plug-in's server version query (driver/sbreport.c); it is
accepted, counted and printed, and the exit status 1 it causes alone is accepted. --script
partitioned (default) runs tests/sysbench/oltp_rw_partitioned.lua, oltp_read_write with a slice of
ids per thread: no thread touches another's rows, so results do not depend on how the connections
interleave. --script stock runs the upstream script, whose threads race for the same rows: its
replay differs where the interleaving differs (docs/fbwire-pcap.md), and this test then fails.

Retries, printed when they happen: a capture in which tcpdump reported dropped packets is made
again (up to 3 times); a paced replay whose wall time is outside 10% on this shared machine is run
again on a new copy (up to 3 times). Nothing else is retried. Needs root (tcpdump) and the servers
of servers.env ($FBWIRE_STATE); exits 77 (skipped) without them. The password is never on a
command line.
"""
import argparse
import atexit
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
LAUNCHER = os.path.join(REPO, "tools", "fbwire-sysbench")
SCHEMA = os.path.join(REPO, "docs", "fbwire-pcap-replay.schema.json")
PARTITIONED = os.path.join(HERE, "oltp_rw_partitioned.lua")


def log(*a):
    print(*a, flush=True)


def fail(msg):
    log("FAIL: " + msg)
    sys.exit(1)


SERVERS = {}
CREATED = []  # databases to remove at exit, also when the test fails


def load_env():
    # where scripts/fb-servers.sh keeps it: $FBWIRE_STATE, else /var/tmp/fbwire-state (as the C
    # tests' tests/support/servers.c and scripts/test.sh look for it)
    state = os.environ.get("FBWIRE_STATE") or "/var/tmp/fbwire-state"
    path = os.path.join(state, "servers.env")
    if not os.path.isfile(path):
        log("skip: no %s (scripts/fb-servers.sh start, or export FBWIRE_STATE)" % path)
        sys.exit(SKIP)
    env = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#") and "=" in line:
                k, v = line.split("=", 1)
                env[k] = v
    return env


class Server:
    def __init__(self, env, name):
        up = name.upper()
        self.name = name
        self.host = env["FBW_%s_HOST" % up]
        self.port = int(env["FBW_%s_PORT" % up])
        self.dir = env["FBW_DBDIR_%s" % up]
        self.version = env.get("FBW_%s_VERSION" % up, "?")
        self.host_dir = env.get("FBW_DBDIR_%s_HOST" % up, self.dir)
        SERVERS[name] = self

    def dsn(self, db, port=None):
        return "%s/%d:%s/%s" % (self.host, port or self.port, self.dir, db)


def run(argv, env, timeout, check=True, what=None):
    p = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=timeout)
    if check and p.returncode != 0:
        fail("%s exited %d:\n%s%s" % (what or argv[0], p.returncode, p.stdout[-4000:],
                                      p.stderr[-4000:]))
    return p


def fresh_db(a, env, srv, db):
    """A new database (fbwire-sql --create: fbclient's isql is not needed, nor waited for)."""
    dsn = srv.dsn(db)
    run([a.sql, "--info", "--create", "--page-size", "8192", "--wire-crypt", "disabled", dsn],
        env, 120, what="fbwire-sql --create %s" % dsn)
    CREATED.append(dsn)
    return dsn


def drop_db(env, dsn):
    """Remove a database this test made: its file, seen from the host (FB4's is in a chroot)."""
    if dsn in CREATED:
        CREATED.remove(dsn)
    for srv in SERVERS.values():
        prefix = "%s/%d:%s/" % (srv.host, srv.port, srv.dir)
        if dsn.startswith(prefix):
            path = os.path.join(srv.host_dir, dsn[len(prefix):])
            if os.path.exists(path):
                os.remove(path)


def sysbench(a, env, driver, dsn, cmd, threads, extra=(), timeout=120, script="oltp_read_write"):
    argv = [LAUNCHER, script, "--db-driver=" + driver, "--%s-db=%s" % (driver, dsn),
            "--%s-wire-crypt=disabled" % driver, "--tables=%d" % a.tables,
            "--table-size=%d" % a.table_size, "--threads=%d" % threads] + list(extra) + [cmd]
    return run(argv, env, timeout, what="sysbench %s %s" % (cmd, dsn))


def prepare(a, env, srv, db):
    dsn = fresh_db(a, env, srv, db)
    sysbench(a, env, "fbwire", dsn, "prepare", 1, ["--rand-seed=1"])
    return dsn


def table_digest(a, env, dsn):
    """Every row of every table, as fbwire-sql prints it (tsv)."""
    out = []
    for t in range(1, a.tables + 1):
        p = run([a.sql, "--wire-crypt", "disabled", "--tsv", dsn,
                 "SELECT id, k, c, pad FROM sbtest%d ORDER BY id;" % t], env, 60,
                what="fbwire-sql on %s" % dsn)
        out.append(p.stdout)
    return "".join(out)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_link(a, srv):
    port = free_port()
    p = subprocess.Popen([a.link, "--listen", "127.0.0.1:%d" % port,
                          "--to", "%s:%d" % (srv.host, srv.port), "--quiet"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return p, port
        except OSError:
            if p.poll() is not None:
                fail("fbwire-link did not start: " + p.stderr.read())
            time.sleep(0.05)
    p.kill()
    fail("fbwire-link does not listen on %d" % port)


def stop(p, sig=signal.SIGTERM):
    if p.poll() is None:
        p.send_signal(sig)
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def capture(a, env, tmp, srv, db, attempt):
    """Prepare db on srv, run sysbench through fbwire-link under tcpdump. Returns (pcap, port,
    sysbench seconds) or None when tcpdump dropped packets."""
    dsn = prepare(a, env, srv, db)
    link, port = start_link(a, srv)
    pcap = os.path.join(tmp, "capture%d.pcap" % attempt)
    errlog = os.path.join(tmp, "tcpdump%d.err" % attempt)
    with open(errlog, "w") as ef:
        td = subprocess.Popen(["tcpdump", "-i", "lo", "-s", "0", "-B", "524288", "-w", pcap,
                               "tcp port %d" % port], stdout=subprocess.DEVNULL, stderr=ef)
    for _ in range(200):
        with open(errlog) as ef:
            if "listening on" in ef.read():
                break
        if td.poll() is not None:
            stop(link)
            fail("tcpdump did not start: " + open(errlog).read())
        time.sleep(0.05)
    t0 = time.monotonic()
    out = sysbench(a, env, a.driver, srv.dsn(db, port), "run", a.threads,
                   ["--time=%d" % a.time, "--events=0", "--rand-type=" + a.rand_type,
                    "--rate=%d" % a.rate],
                   timeout=a.time + 120,
                   script=PARTITIONED if a.script == "partitioned" else "oltp_read_write").stdout
    secs = time.monotonic() - t0
    time.sleep(1)
    stop(td, signal.SIGINT)
    stop(link)
    drop_db(env, dsn)
    m = re.search(r"transactions:\s+(\d+)", out)
    ign = re.search(r"ignored errors:\s+(\d+)", out)
    log("capture %d on %s %s (%s driver, %d threads, %d s): %s transactions, %s ignored errors, "
        "sysbench ran %.3f s" % (attempt + 1, srv.name, srv.version, a.driver, a.threads, a.time,
                                 m.group(1) if m else "?", ign.group(1) if ign else "?", secs))
    with open(errlog) as ef:
        err = ef.read()
    d = re.search(r"(\d+) packets dropped by kernel", err)
    if d and int(d.group(1)):
        log("capture %d: tcpdump: %s packets dropped by kernel: captured again" %
            (attempt + 1, d.group(1)))
        return None
    return pcap, port


def replay(a, env, pcap, port, srv, db, extra=()):
    """Replay through an fbwire-link of its own, as the capture went through one: both
    latencies then include the same relay hop."""
    link, lport = start_link(a, srv)
    argv = [a.pcap, "replay", pcap, "--port", str(port), "--db", srv.dsn(db, lport), "--pace",
            "original"]
    try:
        p = run(argv + list(extra), env, a.time * 10 + 300, check=False)
    finally:
        stop(link)
    if env["ISC_PASSWORD"] in p.stdout or env["ISC_PASSWORD"] in p.stderr:
        fail("the password was printed")
    return p


# The sysbench plug-in asks the server for its version (driver/sbreport.c): a result that must
# differ between versions. It is the only difference the test accepts, once per connection.
VERSION_SQL = "SELECT rdb$get_context('SYSTEM', 'ENGINE_VERSION') FROM rdb$database"
VERSION_FP = "SELECT rdb$get_context(?, ?) FROM rdb$database"


def check_text(a, out, err, status):
    """The checks on a text replay; returns (wall, capture) seconds."""
    problems = []
    version_diffs = 0
    for m in re.finditer(r"^different: (.*)$", out, re.M):
        if re.match(r'step \d+ execute s\d+ "%s": ' % re.escape(VERSION_SQL), m.group(1)):
            version_diffs += 1
        else:
            problems.append(m.group(0))
    # exit 1 is what the version query's difference alone gives
    if status != 0 and not (status == 1 and version_diffs):
        problems.append("exit status %d (stderr: %s)" % (status, err.strip()[-2000:]))
    for pat in (r"^failed: .*$", r"^error: .*$", r"\[not replayable.*$"):
        for m in re.finditer(pat, out, re.M):
            problems.append(m.group(0))
    for m in re.finditer(r"^not replayed: (.*)$", out, re.M):
        for item in m.group(1).split(", "):
            if item.split(" ")[0] not in a.allow_not_replayed:
                problems.append("not replayed: " + item)
    r = re.search(r"^results: (\d+) compared, (\d+) matched, (\d+) different", out, re.M)
    if not r:
        problems.append("no results line")
    elif (int(r.group(1)) == 0 or int(r.group(2)) + version_diffs != int(r.group(1))
          or int(r.group(3)) != version_diffs):
        problems.append(r.group(0))
    if "cap_p50   cap_p95   rep_p50   rep_p95  ratio rt_cap rt_rep" not in out:
        problems.append("no per-fingerprint table")
    # every execution of every other fingerprint compared and matched
    for m in re.finditer(r"^\s+(\d+)\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+\s+(\d+)/(\d+)\s+(.*)$",
                         out, re.M):
        if m.group(4) != VERSION_FP and (m.group(2) != m.group(3) or m.group(3) != m.group(1)):
            problems.append("fingerprint %s: %s executions, %s/%s matched/compared" %
                            (m.group(4), m.group(1), m.group(2), m.group(3)))
    w = re.search(r"^wall time: ([\d.]+) s replay, ([\d.]+) s capture", out, re.M)
    if not w:
        problems.append("no wall time line")
    if problems:
        fail("replay:\n  " + "\n  ".join(problems[:60]) + "\n--- output\n" + out[-12000:])
    log("version query: %d differences (one per connection: %s is not %s)" %
        (version_diffs, "the capture's server", "the replay's"))
    return float(w.group(1)), float(w.group(2))


def check_json(a, env, tmp, text, status, svg):
    doc = json.loads(text)
    import jsonschema  # Debian's python3-jsonschema, as the load test uses
    with open(SCHEMA) as f:
        jsonschema.validate(doc, json.load(f))
    tot, load = doc["total"], doc["load"]
    res = load["results"]
    bad = []
    if tot["failed"] or tot["replayed"] != tot["connections"]:
        bad.append("total %s" % json.dumps(tot)[:400])
    version_diffs = 0
    for c in doc["connections"]:
        diffs = [d for d in c["differences"] if d["sql"] != VERSION_SQL]
        version_diffs += len(c["differences"]) - len(diffs)
        others = {op: n for op, n in c["not_replayed"].items() if op not in a.allow_not_replayed}
        if c["failures"] or diffs or others or c["error"]:
            bad.append("connection %d: failures %s, differences %s, not replayed %s, error %s" %
                       (c["id"], c["failures"][:3], diffs[:3], others, c["error"]))
    if (not res["compared"] or res["compared"] != res["matched"] + version_diffs
            or res["different"] != version_diffs):
        bad.append("results %s" % res)
    if status != 0 and not (status == 1 and version_diffs):
        bad.append("exit status %d" % status)
    if bad:
        fail("JSON replay:\n  " + "\n  ".join(bad))
    log("JSON replay: %d steps, results %s, wall %.3f s for a %.3f s capture" %
        (tot["steps"], res, load["wall_s"], load["capture_s"]))
    if a.report:
        path = os.path.join(tmp, "replay.json")
        with open(path, "w") as f:
            f.write(text)
        run([a.report, "--replay", path, "--top", "10", "--svg", svg], env, 60)
        with open(svg) as f:
            s = f.read()
        bars = len(re.findall(r'<rect class="bar" data-fingerprint=', s))
        want = min(10, len(load["statements"])) * 4
        if bars != want:
            fail("%s: %d bars, expected %d (4 per fingerprint)" % (svg, bars, want))
        log("fbwire-report --replay: %s, %d fingerprints" % (svg, want // 4))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--pcap", required=True)
    ap.add_argument("--link", required=True)
    ap.add_argument("--sql", required=True)
    ap.add_argument("--report")
    ap.add_argument("--from", dest="src", choices=("fb3", "fb4"), required=True)
    ap.add_argument("--driver", choices=("fbwire", "fbclient"), default="fbwire")
    ap.add_argument("--time", type=int, default=5)
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--tables", type=int, default=2)
    ap.add_argument("--table-size", type=int, default=1000)
    ap.add_argument("--allow-not-replayed", action="append", default=[], metavar="OP",
                    help="an op the replay may list as not replayed (none is, for sysbench)")
    ap.add_argument("--script", choices=("partitioned", "stock"), default="partitioned",
                    help="the run: oltp_read_write with a slice of ids per thread "
                         "(oltp_rw_partitioned.lua, default) or the stock script, whose threads "
                         "race for the same rows")
    ap.add_argument("--rate", type=int, default=50,
                    help="sysbench --rate: transactions per second over all threads (0: as fast "
                         "as they go; a saturated capture replays at the replay server's speed, "
                         "not at the capture's pace, whenever that server is the slower)")
    ap.add_argument("--rand-type", default="uniform",
                    help="sysbench --rand-type of the run (its default, special, sends most "
                         "events to a few ids in the middle of each table)")
    ap.add_argument("--keep", help="copy the capture, outputs and chart into DIR")
    a = ap.parse_args()

    if os.geteuid() != 0:
        log("skip: tcpdump on lo needs root")
        sys.exit(SKIP)
    if not shutil.which("sysbench") or not shutil.which("tcpdump"):
        log("skip: sysbench or tcpdump not installed")
        sys.exit(SKIP)
    senv = load_env()
    env = dict(os.environ, FBWIRE_SYSBENCH_LIB=a.lib, ISC_USER=senv["FBW_USER"],
               ISC_PASSWORD=senv["FBW_PASSWORD"])
    src = Server(senv, a.src)
    dst = Server(senv, "fb4" if a.src == "fb3" else "fb3")
    tag = "xreplay_%s_%s_%d" % (a.src, a.driver, os.getpid())
    atexit.register(lambda: [drop_db(env, d) for d in list(CREATED)])
    tmp = tempfile.mkdtemp(prefix="fbwire-xreplay.")
    os.chmod(tmp, 0o777)  # tcpdump drops privileges before writing
    log("load average: %s" % open("/proc/loadavg").read().split()[:3])

    # The same starting data on both versions.
    ref = prepare(a, env, dst, tag + "_ref.fdb")
    ref_rows = table_digest(a, env, ref)
    drop_db(env, ref)
    if ref_rows.count("\n") < a.tables * a.table_size:
        fail("the prepared tables hold %d rows" % ref_rows.count("\n"))

    cap = None
    for attempt in range(3):
        dsn = prepare(a, env, src, tag + "_src.fdb")
        if table_digest(a, env, dsn) != ref_rows:
            fail("sysbench prepare --rand-seed=1 gave other rows on %s than on %s" %
                 (src.name, dst.name))
        drop_db(env, dsn)
        cap = capture(a, env, tmp, src, tag + "_src.fdb", attempt)
        if cap:
            break
    if not cap:
        log("skip: tcpdump dropped packets in each of 3 captures (a busy machine)")
        sys.exit(SKIP)
    pcap, port = cap

    p = run([a.pcap, "replay", pcap, "--port", str(port), "--list"], env, 300, check=False)
    if p.returncode != 0:
        fail("replay --list exited %d:\n%s" % (p.returncode, (p.stdout + p.stderr)[-4000:]))
    kinds = {}
    for m in re.finditer(r"^\s+\d+ (\w+) ", p.stdout, re.M):
        kinds[m.group(1)] = kinds.get(m.group(1), 0) + 1
    log("steps: " + ", ".join("%s %d" % kv for kv in sorted(kinds.items())))
    st = run([a.pcap, "stats", pcap, "--port", str(port)], env, 300).stdout
    conns = len(re.findall(r"^connection \d+", st, re.M))
    log("capture: %d connections, %d bytes" % (conns, os.path.getsize(pcap)))
    if conns != a.threads:
        fail("%d connections in the capture, expected %d" % (conns, a.threads))

    wall = capture_s = None
    for attempt in range(3):
        dsn = prepare(a, env, dst, tag + "_dst%d.fdb" % attempt)
        p = replay(a, env, pcap, port, dst, tag + "_dst%d.fdb" % attempt)
        wall, capture_s = check_text(a, p.stdout, p.stderr, p.returncode)
        drop_db(env, dsn)
        table = p.stdout[p.stdout.find("statements by fingerprint"):]
        log("paced replay %d of the %s capture on %s %s:\n%s" %
            (attempt + 1, src.name, dst.name, dst.version, table))
        if a.keep:
            os.makedirs(a.keep, exist_ok=True)
            with open(os.path.join(a.keep, "replay-%s-to-%s.txt" % (src.name, dst.name)), "w") as f:
                f.write(p.stdout)
        if abs(wall / capture_s - 1) <= 0.10:
            break
        log("wall time %.3f s not within 10%% of the capture's %.3f s: replayed again" %
            (wall, capture_s))
    if abs(wall / capture_s - 1) > 0.10:
        fail("wall time %.3f s not within 10%% of the capture's %.3f s in 3 replays" %
             (wall, capture_s))
    log("wall time: %.3f s replay, %.3f s capture (ratio %.3f)" % (wall, capture_s,
                                                                    wall / capture_s))

    dsn = prepare(a, env, dst, tag + "_json.fdb")
    p = replay(a, env, pcap, port, dst, tag + "_json.fdb", ["--json"])
    drop_db(env, dsn)
    if p.returncode not in (0, 1):
        fail("JSON replay exited %d: %s" % (p.returncode, p.stderr[-3000:]))
    svg = os.path.join(a.keep or tmp, "slowest-%s-to-%s.svg" % (src.name, dst.name))
    check_json(a, env, tmp, p.stdout, p.returncode, svg)
    if a.keep:
        shutil.copy(pcap, os.path.join(a.keep, "capture-%s.pcap" % src.name))
        with open(os.path.join(a.keep, "replay-%s-to-%s.json" % (src.name, dst.name)), "w") as f:
            f.write(p.stdout)
    shutil.rmtree(tmp, ignore_errors=True)
    log("OK")


if __name__ == "__main__":
    main()
