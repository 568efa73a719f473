# SPDX-License-Identifier: MIT
"""The comparison itself: per workload, prepare on every engine, then per thread count and RTT one
captured run per target and --runs interleaved timed runs, each recorded as runs/<tag>.json."""
import fcntl
import json
import os
import platform
import re
import signal
import subprocess
import sys
import time

from . import builds as bl, link as linkmod, procnet, record, targets as tg, workloads as wl


class Settings:
    """What one invocation measures (cli.py fills it in)."""
    workloads = list(wl.OLTP)
    targets = list(tg.DEFAULT)
    specs = {}
    threads = [1, 4]
    runs = 3
    time = 5
    tables = 4
    table_size = 10000
    capture = "separate"
    capture_time = None
    keep = False
    crypt = False
    rtt = [0.0]
    rate = None


def say(msg):
    print("fbwire-compare: " + msg, file=sys.stderr, flush=True)


def rtt_tag(rtt, rate):
    """'' for a direct run (the tags of the loopback comparison stay as they were)."""
    if not rtt and not rate:
        return ""
    return "-rtt%g" % rtt + ("-%s" % rate if rate else "")


class Runner:
    def __init__(self, out, st, builds, state):
        self.out, self.st, self.builds, self.state = out, st, builds, state
        self.crypt = tg.Crypt(st.crypt)
        self.targets = tg.resolve(st.targets, st.specs, self.crypt)
        self.engines = list(dict.fromkeys(t.engine for t in self.targets))
        self.pcap = builds.find("fbwire-pcap")
        self.cpu = builds.find("fbwire-cpu")
        self.cpu_note = "" if self.cpu and os.access(self.cpu, os.X_OK) else "fbwire-cpu not built"
        if self.cpu_note:
            self.cpu = None
        self.link = builds.find("fbwire-link")
        lib = builds.find("libfbwire-sysbench.so")
        self.env = dict(os.environ)
        if lib:
            self.env["FBWIRE_SYSBENCH_LIB"] = lib
        self.done = self.failed = 0
        self.cap_proc = None
        self.distance = any(st.rtt) or bool(st.rate)

    # ------------------------------------------------------------ checks and set-up

    def check(self):
        st = self.st
        if st.capture != "none":
            if not self.pcap:
                return "fbwire-pcap not found (build it, or FBWIRE_PCAP)"
            if not any(os.access(os.path.join(d, "tcpdump"), os.X_OK)
                       for d in os.environ.get("PATH", "").split(":") + ["/usr/bin", "/usr/sbin"]):
                return "tcpdump not installed (or --capture none)"
            if os.geteuid() != 0:
                return "captures on lo need root (or --capture none)"
        if self.distance and not linkmod.available(self.link):
            return "fbwire-link not found (build it, or FBWIRE_LINK): needed for --rtt above 0 and --rate"
        return None

    def lock(self):
        """Every invocation uses the same sbtest tables: one at a time."""
        self.lockf = open(os.path.join(self.state, ".compare.lock"), "w")
        try:
            fcntl.flock(self.lockf, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            say("another fbwire-compare uses the servers; waiting for it to finish")
            fcntl.flock(self.lockf, fcntl.LOCK_EX)

    def load_servers(self):
        env = {}
        # peers.env only when a target needs PostgreSQL or MariaDB (Firebird alone: fb-servers.sh)
        need_peers = any(e in tg.PEERS for e in self.engines)
        for f in ("servers.env", "peers.env"):
            path = os.path.join(self.state, f)
            if f == "peers.env" and not need_peers and not os.access(path, os.R_OK):
                continue
            if not os.access(path, os.R_OK):
                raise RuntimeError(bl.no_servers(path, "fb-servers.sh" if f == "servers.env" else "peer-servers.sh"))
            env.update(tg.load_env(path))
        self.servers = tg.Servers(env, self.crypt)
        missing = [e for e in self.engines if e in tg.PEERS and tg.PEERS[e][1] + "_PORT" not in env]
        if missing:
            raise RuntimeError("peers.env names no %s: run scripts/peer-servers.sh start %s" % (
                ", ".join(missing), " ".join(missing)))
        for e in self.engines:
            if e not in tg.PEERS:
                try:
                    self.servers.host_port(e)
                except KeyError as why:
                    raise RuntimeError(why.args[0])

    def tls_dir(self):
        d = os.path.join(self.out, "tls-client")
        os.makedirs(os.path.join(self.out, "runs"), exist_ok=True)
        os.makedirs(d, exist_ok=True)
        e = self.servers.e
        for name, key in (("client-cert.pem", "PEER_TLS_CLIENT_CERT"), ("client-key.pem", "PEER_TLS_CLIENT_KEY"),
                          ("cacert.pem", "PEER_TLS_CERT")):
            p = os.path.join(d, name)
            if os.path.lexists(p):
                os.unlink(p)
            if e.get(key):
                os.symlink(e[key], p)
        return d

    # ------------------------------------------------------------ sysbench

    def sysbench(self, engine, args, cpu_wrap=(), stdout=None, stderr=None):
        """sysbench (Firebird: through fbwire-sysbench) in tls-client/, the passwords in its
        environment only; cwd holds the client TLS files that the mysql driver loads by fixed name."""
        prog = [self.builds.sysbench_launcher()] if tg.kind(engine) == "fb" else ["sysbench"]
        return subprocess.Popen(list(cpu_wrap) + prog + args, cwd=os.path.join(self.out, "tls-client"),
                                env=dict(self.env, **self.servers.env(engine)), stdout=stdout, stderr=stderr,
                                stdin=subprocess.DEVNULL)

    def setup(self, engine, workload, cmd):
        st = self.st
        args = [wl.script(workload)] + tg.setup_options(engine, self.crypt) + self.servers.conn_options(engine) + [
            "--tables=%d" % wl.tables_for(workload, st.tables), "--table-size=%d" % st.table_size,
            "--threads=1", cmd]
        with open(os.path.join(self.out, "runs", "setup-%s-%s.log" % (engine, workload)), "a") as log:
            p = self.sysbench(engine, args, stdout=log, stderr=subprocess.STDOUT)
            return p.wait() == 0

    def refresh_statistics(self, engine, workload):
        """After prepare, every engine's optimiser statistics describe the loaded tables: sysbench
        creates each table (and Firebird its primary key index) empty, then fills it, so without
        this PostgreSQL autovacuum may or may not have run, MariaDB samples at its own moment, and
        Firebird's primary key index keeps the selectivity of an empty table. Returns the refresh
        command's output lines (kept in the setup log); False when it failed."""
        s, k = self.servers, tg.kind(engine)
        host, port = s.host_port(engine)
        tables = wl.table_names(workload, self.st.tables)
        if k == "pg":
            cmd = ["psql", "-X", "-At", "-v", "ON_ERROR_STOP=1", "-h", host, "-p", str(port),
                   "-U", s.peer(engine, "USER"), s.peer(engine, "DB"), "-c", "ANALYZE " + ", ".join(tables)]
            env = {"PGPASSWORD": s.peer(engine, "PASSWORD"), "PGSSLMODE": self.crypt.pg}
            stdin = None
        elif k == "mariadb":
            cmd = ["mariadb", "--no-defaults", "-h", host, "-P", str(port), "-u", s.peer(engine, "USER"),
                   "-N", "-B", "--skip-ssl", s.peer(engine, "DB"), "-e", "ANALYZE TABLE " + ", ".join(tables)]
            env = {"MYSQL_PWD": s.peer(engine, "PASSWORD")}
            stdin = None
        else:
            # Firebird: recompute the selectivity of every index of the tables (primary keys included).
            cmd = ["isql-fb", "-q", "-bail", self.servers.fb_dsn(engine)]
            env = s.fb_login(engine)
            names = ", ".join("'%s'" % t.upper() for t in tables)
            stdin = ("SET TERM ^;\nEXECUTE BLOCK AS DECLARE n VARCHAR(63); BEGIN\n"
                     "  FOR SELECT TRIM(RDB$INDEX_NAME) FROM RDB$INDICES WHERE RDB$RELATION_NAME IN (%s) INTO n DO\n"
                     "    EXECUTE STATEMENT 'SET STATISTICS INDEX \"' || n || '\"';\nEND^\nSET TERM ;^\nCOMMIT;\n"
                     "SET HEADING OFF;\nSELECT COUNT(*) || ' index statistics refreshed' FROM RDB$INDICES "
                     "WHERE RDB$RELATION_NAME IN (%s);\n" % (names, names))
        try:
            r = subprocess.run(cmd, input=stdin, capture_output=True, text=True, env=dict(os.environ, **env),
                               timeout=120)
        except (OSError, subprocess.TimeoutExpired) as e:
            return False, [str(e)]
        return r.returncode == 0, (r.stdout + r.stderr).splitlines()

    def prepare(self, engine, workload):
        """cleanup + prepare + statistics; False (and a message) when any of them failed."""
        self.setup(engine, workload, "cleanup")
        log = os.path.join(self.out, "runs", "setup-%s-%s.log" % (engine, workload))
        if not self.setup(engine, workload, "prepare"):
            say("prepare %s on %s failed, see %s" % (workload, engine, log))
            return False
        ok, lines = self.refresh_statistics(engine, workload)
        with open(log, "a") as f:
            f.write("statistics refresh: %s\n%s\n" % ("ok" if ok else "FAILED", "\n".join(lines)))
        if not ok:
            say("refreshing the statistics of %s on %s failed, see %s" % (workload, engine, log))
        return ok

    # ------------------------------------------------------------ meta.txt

    def query(self, cmd, env, stdin=None):
        try:
            r = subprocess.run(cmd, input=stdin, capture_output=True, text=True, env=dict(os.environ, **env),
                               timeout=30)
            return (r.stdout + r.stderr).splitlines()
        except (OSError, subprocess.TimeoutExpired) as e:
            return [str(e)]

    def settings(self, engine):
        s, k = self.servers, tg.kind(engine)
        host, port = s.host_port(engine)
        if k == "pg":
            return self.query(["psql", "-X", "-At", "-h", host, "-p", str(port), "-U", s.peer(engine, "USER"),
                               s.peer(engine, "DB"), "-c",
                               "SELECT name || '=' || current_setting(name) FROM pg_settings WHERE name IN "
                               "('shared_buffers','fsync','synchronous_commit','full_page_writes','wal_sync_method',"
                               "'ssl','max_connections','default_transaction_isolation')"],
                              {"PGPASSWORD": s.peer(engine, "PASSWORD"), "PGSSLMODE": self.crypt.pg})
        if k == "mariadb":
            return self.query(["mariadb", "--no-defaults", "-h", host, "-P", str(port),
                               "-u", s.peer(engine, "USER"), "-N", "-B", "--skip-ssl", "-e",
                               "SELECT CONCAT(VARIABLE_NAME, '=', VARIABLE_VALUE) FROM information_schema.GLOBAL_VARIABLES "
                               "WHERE VARIABLE_NAME IN ('INNODB_BUFFER_POOL_SIZE','INNODB_FLUSH_LOG_AT_TRX_COMMIT',"
                               "'INNODB_DOUBLEWRITE','LOG_BIN','SYNC_BINLOG','INNODB_FLUSH_METHOD','TX_ISOLATION',"
                               "'HAVE_SSL','MAX_CONNECTIONS')"],
                              {"MYSQL_PWD": s.peer(engine, "PASSWORD")})
        sql = ("SET HEADING OFF;\nSELECT 'page_buffers=' || MON$PAGE_BUFFERS, 'page_size=' || MON$PAGE_SIZE, "
               "'forced_writes=' || MON$FORCED_WRITES FROM MON$DATABASE;\n")
        lines = self.query(["isql-fb", "-q", self.servers.fb_dsn(engine)], s.fb_login(engine), stdin=sql)
        # name=value words only: an error message (no database yet: prepare creates it) adds nothing
        return [w for line in lines for w in line.split() if re.match(r"^[a-z_]+=\S+$", w)]

    def meta(self):
        st, s = self.st, self.servers
        with open("/proc/loadavg") as f:
            load = " ".join(f.read().split()[:3])
        cpu = next((line.split(": ", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "?")
        mem = next((line.split()[1] for line in open("/proc/meminfo") if line.startswith("MemTotal")), "0")
        osname = next((line.split("=", 1)[1].strip().strip('"') for line in open("/etc/os-release")
                       if line.startswith("PRETTY_NAME=")), "?")
        sbv = self.query(["sysbench", "--version"], {})
        lines = ["date=" + time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                 "host=%s %s %s" % (platform.system(), platform.release(), platform.machine()),
                 "cpu=%s x %d" % (cpu, os.cpu_count() or 0), "memory_kb=" + mem, "os=" + osname,
                 "sysbench=" + (sbv[0] if sbv else "?"), "loadavg=" + load]
        for e in tg.ENGINES + tuple(sorted(e for e in self.engines if e not in tg.ENGINES)):
            if e in ("pg", "mariadb", "fb3", "fb4") or e in self.engines:
                lines.append("version.%s=%s" % (e, s.version(e)))
        lines += ["workloads=" + ",".join(st.workloads), "threads=" + ",".join(map(str, st.threads)),
                  "runs=%d" % st.runs, "time_s=%d" % st.time, "tables=%d" % st.tables,
                  "table_size=%d" % st.table_size, "capture=" + st.capture,
                  "capture_time_s=%d" % st.capture_time, "crypt=%d" % st.crypt,
                  "cpu_tool=" + (self.cpu or "not available: " + self.cpu_note),
                  "rtt_ms=" + ",".join("%g" % r for r in st.rtt), "rate=" + (st.rate or "")]
        if self.distance:
            lines.append("link_tool=" + self.link)
        for e in self.engines:
            lines.append("connection.%s=%s" % (e, s.conn_string(e)))
            lines += ["setting.%s.%s" % (e, x) for x in self.settings(e)]
        for t in self.targets:
            lines.append("target.%s=%s %s" % (t.name, t.engine, " ".join(t.options)))
        text = "\n".join(lines) + "\n"
        if "password" in text.lower() or any(p in text for p in s.passwords()):
            raise RuntimeError("a password-like string got into meta.txt; refusing")
        with open(os.path.join(self.out, "meta.txt"), "w") as f:
            f.write(text)

    # ------------------------------------------------------------ capture

    # tcpdump's kernel buffer (-B, KiB). libpcap's TPACKET_V3 ring packs packets back to back, so
    # 64 MiB holds a few seconds of a 4-thread run's small packets while tcpdump waits for the CPU
    # on a loaded machine. No --immediate-mode: that falls back to TPACKET_V2, whose fixed frames
    # are as large as lo's 64 KiB MTU, and the same buffer would hold only ~1,000 packets.
    CAPTURE_BUFFER_KIB = 65536
    # Full packets (-s 0: 262,144 bytes, above lo's MTU): fbwire-pcap turns follows each TCP stream
    # and a packet cut short by the snaplen breaks it.
    SNAPLEN = 0
    # libpcap hands the ring's blocks to tcpdump when they are full or at its 1 s block timeout:
    # the last packets of a run reach the file up to that long after they were sent.
    BLOCK_TIMEOUT_S = 1.0

    def capture_start(self, pcap, port):
        log = open(pcap + ".log", "w")
        self.cap_proc = subprocess.Popen(["tcpdump", "-i", "lo", "-n", "-s", str(self.SNAPLEN),
                                          "-B", str(self.CAPTURE_BUFFER_KIB), "-U", "-w", pcap,
                                          "tcp port %d" % port], stdout=subprocess.DEVNULL, stderr=log)
        log.close()
        for _ in range(40):
            try:
                if "listening on" in open(pcap + ".log").read():
                    return True
            except OSError:
                pass
            time.sleep(0.1)
        say("tcpdump did not start, see %s.log" % pcap)
        self.capture_kill()
        return False

    def turns(self, pcap, port, out=None, err=None):
        """`fbwire-pcap turns --json` of the file as it is now (None when it gave no JSON)."""
        try:
            r = subprocess.run([self.pcap, "turns", pcap, "--port", str(port), "--json"], capture_output=True,
                               text=True, timeout=120)
        except subprocess.TimeoutExpired:
            return None
        if out:
            with open(out, "w") as f:
                f.write(r.stdout)
        if err:
            with open(err, "a") as f:
                f.write(r.stderr)
        try:
            return json.loads(r.stdout)
        except ValueError:
            return None

    def capture_stop(self, pcap, port, own):
        """The stopping order of a captured run, after sysbench (and the link) exited: wait until the
        kernel has closed each of the run's connections both ways, then until the file holds the FIN
        or RST of each (libpcap's block timeout), then stop tcpdump. Waits at most 20 s in all.
        Returns the number of packets tcpdump says the kernel dropped (None: it did not say)."""
        deadline = time.monotonic() + 20
        procnet.wait_closed(port, own, deadline)
        time.sleep(self.BLOCK_TIMEOUT_S + 0.2)
        while time.monotonic() < deadline:
            t = self.turns(pcap, port)
            if t is not None and all(c["end"] != "capture" for c in record.own_connections(t, own)) \
                    and {int(c["client"].rsplit(":", 1)[1]) for c in t.get("connections") or []} >= set(own):
                break
            time.sleep(0.5)
        self.capture_kill()
        try:
            with open(pcap + ".log") as f:
                m = re.search(r"^(\d+) packets? dropped by kernel", f.read(), re.M)
        except OSError:
            m = None
        return int(m.group(1)) if m else None

    def capture_kill(self):
        if self.cap_proc:
            self.cap_proc.send_signal(signal.SIGINT)
            try:
                self.cap_proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.cap_proc.kill()
                self.cap_proc.wait(timeout=5)
            self.cap_proc = None

    # ------------------------------------------------------------ one run

    def progress(self, total, t0, what):
        el = int(time.monotonic() - t0)
        eta = str(el * (total - self.done) // self.done) if self.done else "?"
        print("[fbwire-compare %s] run %d/%d, %d left, %d s elapsed, ~%s s to go: %s" % (
            time.strftime("%H:%M:%S"), self.done + 1, total, total - self.done, el, eta, what),
            file=sys.stderr, flush=True)

    def run_one(self, t, w, n, r, rtt, total, t0):
        """One run; a captured run whose capture is incomplete is made once more, and if the second
        capture is incomplete too the run counts as failed, with the reason in its JSON."""
        tag = "%s-t%d-%s%s-%s" % (w, n, t.name, rtt_tag(rtt, self.st.rate), "cap" if r == 0 else "r%d" % r)
        base = os.path.join(self.out, "runs", tag)
        attempts = 2 if r == 0 else 1
        for attempt in range(1, attempts + 1):
            self.progress(total, t0, "%s, %d thread(s), %s%s, %s%s" % (
                w, n, t.name, ", RTT %g ms" % rtt if self.distance else "",
                "captured run" if r == 0 else "repeat %d/%d" % (r, self.st.runs),
                "" if attempt == 1 else ", attempt %d" % attempt))
            ok, problem = self.attempt(t, w, n, r, rtt, base, attempt)
            if not ok or not problem:
                break
            if attempt < attempts:
                say("%s: the capture is incomplete (%s); the captured run once more" % (tag, problem))
                for ext in (".json", ".turns.json", ".pcap.log", ".pcap"):
                    if os.path.exists(base + ext):
                        os.replace(base + ext, "%s.try%d%s" % (base, attempt, ext))
            else:
                say("FAILED %s: the capture is incomplete after %d attempts: %s" % (tag, attempts, problem))
                self.failed += 1
        if not ok:
            self.failed += 1
        self.done += 1

    def attempt(self, t, w, n, r, rtt, base, attempt):
        """-> (the run was made, why its capture is incomplete or None)."""
        st, e = self.st, t.engine
        host, port = self.servers.host_port(e)
        tag = os.path.basename(base)
        secs = st.capture_time if r == 0 else st.time
        rep = []
        if t.driver in ("fbwire", "fbclient"):
            rep = ["--%s-report=%s.report.json" % (t.driver, base)]
        wrap = [self.cpu, "--port", str(port), "--json", base + ".cpu.json", "--"] if self.cpu else []
        lk, run = None, {"rtt_ms": rtt, "rate": st.rate}
        if rtt or st.rate:
            run["link_rtt_ms"], run["link_note"] = self.link_rtt(rtt)
            try:
                lk = linkmod.Link(self.link, (host, port), rtt, st.rate, base + ".link.json", base + ".link.log")
            except RuntimeError as ex:
                say("%s: %s" % (tag, ex))
                return False, None
        if r == 0 and not self.capture_start(base + ".pcap", port):
            if lk:
                lk.stop()
            return False, None
        opts = t.options + self.servers.conn_options(e, ("127.0.0.1", lk.port) if lk else None)
        sized = ["--tables=%d" % wl.tables_for(w, st.tables), "--table-size=%d" % st.table_size,
                 "--threads=%d" % n, "--time=%d" % secs]
        start = time.monotonic()
        try:
            with open(base + ".log", "w") as so, open(base + ".stderr", "w") as se:
                p = self.sysbench(e, [wl.script(w)] + opts + sized + ["--report-interval=0", "--percentile=95"] + rep + ["run"],
                                  wrap, so, se)
                # the servers are shared: count only the connections of this sysbench process (and of
                # its link); a run during which others were connected has no server CPU figure
                watch = procnet.Watch(p.pid, port, [lk.proc.pid] if lk else [])
                rc = p.wait()
        finally:
            if lk:
                lk.stop()
        ports = watch.stop()
        watch.write(base + ".ports")
        own = {p_ for k, p_ in ports if k == "O"}
        problem = None
        if r == 0:
            dropped = self.capture_stop(base + ".pcap", port, own)
            turns = self.turns(base + ".pcap", port, base + ".turns.json", base + ".stderr")
            problem = record.capture_problem(turns, own, dropped)
            if dropped is None and not problem:
                problem = "tcpdump did not report its kernel drop count (see %s.pcap.log)" % tag
            run.update({"capture_attempts": attempt, "capture_problem": problem})
            if not st.keep and not problem:
                os.unlink(base + ".pcap")
        with open("/proc/loadavg") as f:
            load = float(f.read().split()[0])
        run.update({"target": t.name, "engine": e, "workload": w, "threads": n, "repeat": r, "exit": rc,
                    "wall": int(time.monotonic() - start), "cpu_note": self.cpu_note, "loadavg": load,
                    "client_ports": own, "foreign": sum(1 for k, _ in ports if k == "F"),
                    "connection": self.servers.conn_string(e) + (" via fbwire-link %s" % " ".join(
                        linkmod.args(rtt, st.rate)) if lk else ""),
                    # the direct connection options, as a reader would type them
                    "options": t.options + sized})
        doc = record.record(base, run)
        with open(base + ".json", "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
        if doc["sysbench"] is None or rc != 0:
            say("%s: sysbench exit %d, see %s.log and .stderr" % (tag, rc, base))
            return False, None
        return True, problem

    def link_rtt(self, rtt):
        """The achieved RTT of a link with these settings (measured once per RTT)."""
        cache = self.__dict__.setdefault("_rtts", {})
        if rtt not in cache:
            try:
                cache[rtt] = (linkmod.measure_rtt(self.link, rtt, self.st.rate), None)
            except (OSError, RuntimeError) as ex:
                cache[rtt] = (None, "ping-pong through fbwire-link failed: %s" % ex)
        return cache[rtt]

    # ------------------------------------------------------------ the whole comparison

    def run(self):
        st = self.st
        ncap = 0 if st.capture == "none" else 1
        # --capture once: the captured run at the smallest RTT of the list only (round trips per event do
        # not depend on the distance; the model takes them from the RTT 0 run)
        caps = len(st.rtt) if st.capture == "separate" else ncap
        total = len(st.workloads) * len(st.threads) * len(self.targets) * (len(st.rtt) * st.runs + caps)
        say("%d runs (%d workloads x %d thread counts x %s%d targets x %d), output in %s" % (
            total, len(st.workloads), len(st.threads), "%d RTTs x " % len(st.rtt) if self.distance else "",
            len(self.targets), st.runs + ncap, self.out))
        t0 = time.monotonic()
        for w in st.workloads:
            for e in self.engines:
                if not self.prepare(e, w):
                    self.failed += 1
            for n in st.threads:
                for rtt in st.rtt:
                    if ncap and (st.capture == "separate" or rtt == min(st.rtt)):
                        for t in self.targets:
                            self.run_one(t, w, n, 0, rtt, total, t0)
                    for r in range(1, st.runs + 1):
                        for t in self.targets:
                            self.run_one(t, w, n, r, rtt, total, t0)
            for e in self.engines:
                self.setup(e, w, "cleanup")
        say("%d runs in %d s, %d problem(s)" % (self.done, int(time.monotonic() - t0), self.failed))
