# SPDX-License-Identifier: MIT
"""Engines and targets: which sysbench driver and options reach which server, and how.

A target is an engine (pg, pg17, mariadb, mariadb118, fb3, fb4, or any Firebird registered in servers.env under
fb<major>: fb5, fb6; scripts/fb-servers.sh) plus the client that drives it. Wire crypt and TLS
are always set explicitly (a driver's default may change): off, or on everywhere with crypt. The fbclient kinds
take another client library as BASE@LIBRARY (fb4-fbclient@/opt/firebird5/lib/libfbclient.so.2: that libfbclient
instead of the system's, --fbclient-library), so clients of several Firebird versions meet the same server.
Passwords travel in the environment of sysbench only (env()), never in options or records.
"""
import os
import re

# Peer engines: name -> (kind, prefix of their variables in peers.env). pg17 and mariadb118 are
# the Debian 13 pair scripts/peer-servers.sh runs in the chroot; sysbench's drivers of the host
# reach them over loopback TCP like the Debian 12 pair.
PEERS = {"pg": ("pg", "PEER_PG"), "pg17": ("pg", "PEER_PG17"),
         "mariadb": ("mariadb", "PEER_MARIADB"), "mariadb118": ("mariadb", "PEER_MARIADB118")}
ENGINES = tuple(PEERS) + ("fb3", "fb4")
FB_KINDS = ("fbwire", "fbwire-pipelined", "fbclient", "fbclient-per-statement")
BUILTIN = tuple(PEERS) + tuple("%s-%s" % (fb, k) for fb in ("fb3", "fb4") for k in FB_KINDS)
# A Firebird engine is fb<major>: fb3 and fb4 always (CI's servers), others once registered.
FB_ENGINE = re.compile(r"^fb[0-9]+$")
DEFAULT = ("pg", "mariadb", "fb3-fbwire", "fb4-fbwire")
# The Firebird database of the comparison when peers.env does not name one (the same name as
# scripts/peer-servers.sh gives it); prepare creates it when missing.
FB_DB = "sbtest.fdb"


def is_builtin(base):
    """A peer, or fb<major>-<kind> for any Firebird engine name (whether it is registered is the
    servers' business: Servers.host_port says so when it is not)."""
    if base in PEERS:
        return True
    fb, dash, k = base.partition("-")
    return bool(dash) and FB_ENGINE.match(fb) is not None and k in FB_KINDS


def kind(engine):
    """pg, mariadb or fb: which driver family reaches the engine."""
    return PEERS[engine][0] if engine in PEERS else "fb"


class Crypt:
    def __init__(self, on):
        self.on = bool(on)
        self.fb = "required" if on else "disabled"
        self.pg = "require" if on else "disable"
        self.my = "on" if on else "off"


def split_library(base):
    """BASE@LIBRARY -> (BASE, LIBRARY); LIBRARY None without '@'. Only the fbclient kinds load a library."""
    b, at, lib = base.partition("@")
    if not at:
        return base, None
    if not (is_builtin(b) and b.partition("-")[2].startswith("fbclient")):
        raise ValueError("'%s': only the fbclient targets take @LIBRARY (fbN-fbclient[-per-statement]@PATH)" % base)
    if not lib:
        raise ValueError("'%s': @ needs the path of a libfbclient" % base)
    if "/" in lib and not os.path.isfile(lib):
        raise ValueError("'%s': no file %s" % (base, lib))
    return b, lib


def engine_of(base):
    if base in PEERS:
        return base
    if is_builtin(base):
        return base.partition("-")[0]
    return None


def driver_options(base, crypt):
    """A built-in target's driver options (no connection options)."""
    if base in PEERS:
        return setup_options(base, crypt)
    kind = base.partition("-")[2]
    fbwire = ["--db-driver=fbwire", "--fbwire-wire-crypt=" + crypt.fb]
    return {
        "fbwire": fbwire,
        # the pipeline of issue #9 (--fbwire-pipeline)
        "fbwire-pipelined": fbwire + ["--fbwire-pipeline=transaction"],
        "fbclient": ["--db-driver=fbclient", "--fbclient-wire-crypt=" + crypt.fb, "--fbclient-autocommit=shared"],
        "fbclient-per-statement": ["--db-driver=fbclient", "--fbclient-wire-crypt=" + crypt.fb,
                                   "--fbclient-autocommit=per-statement"],
    }[kind]


def setup_options(engine, crypt):
    """Driver options for prepare and cleanup."""
    if kind(engine) == "pg":
        return ["--db-driver=pgsql"]
    if kind(engine) == "mariadb":
        return ["--db-driver=mysql", "--mysql-ssl=" + crypt.my]
    return ["--db-driver=fbwire", "--fbwire-wire-crypt=" + crypt.fb, "--fbwire-create-db=on"]


class Target:
    def __init__(self, name, base, extra, crypt):
        self.name, self.base = name, base
        if "@" in name or "/" in name:  # it names files: runs/<workload>-t<threads>-<target>...
            raise ValueError("target name '%s': give a target with a library a name of its own "
                             "(--target NAME=%s)" % (name, base))
        base, self.library = split_library(base)
        self.engine = engine_of(base)
        if self.engine is None:
            raise ValueError("unknown target '%s' (pg, pg17, mariadb, mariadb118, fbN-fbwire (fb3, fb4, fb5, ...), -fbwire-pipelined, -fbclient, "
                             "-fbclient-per-statement, or --target NAME=BASE[@LIBRARY]:OPTIONS)" % name)
        self.options = driver_options(base, crypt) + [o for o in extra.split() if o]
        if self.library:
            self.options.append("--fbclient-library=" + self.library)
        self.driver = next((o.split("=", 1)[1] for o in self.options if o.startswith("--db-driver=")), None)


def parse_spec(spec):
    """--target NAME=BASE[@LIBRARY][:extra sysbench options] -> (name, base, extra); base keeps @LIBRARY"""
    name, eq, rest = spec.partition("=")
    if not eq or not name:
        raise ValueError("--target takes NAME=BASE[@LIBRARY][:OPTIONS]")
    base, _, extra = rest.partition(":")
    return name, base, extra


def resolve(names, specs, crypt):
    """Targets in the order named; specs: name -> (base, extra) from --target."""
    out = []
    for n in names:
        base, extra = specs.get(n, (n, ""))
        out.append(Target(n, base, extra, crypt))
    return out


def load_env(path):
    """KEY=value lines of servers.env / peers.env (written by the provisioning scripts)."""
    env = {}
    with open(path) as f:
        for line in f:
            m = re.match(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", line.rstrip("\n"))
            if m:
                v = m.group(2)
                if len(v) >= 2 and v[0] == v[-1] and v[0] in "'\"":
                    v = v[1:-1]
                env[m.group(1)] = v
    return env


class Servers:
    """Where each engine listens, from the provisioning scripts' env files."""

    def __init__(self, env, crypt):
        self.e, self.crypt = env, crypt

    def peer(self, engine, what):
        """A peer's variable from peers.env: HOST, PORT, USER, DB, PASSWORD, VERSION."""
        return self.e["%s_%s" % (PEERS[engine][1], what)]

    def host_port(self, engine):
        if engine in PEERS:
            return self.peer(engine, "HOST"), int(self.peer(engine, "PORT"))
        s = engine.upper()
        if "FBW_%s_PORT" % s not in self.e:
            raise KeyError("%s is not registered in servers.env (scripts/fb-servers.sh start-install %s DIR, "
                           "or register %s HOST/PORT DBDIR USER PASSWORD-FILE)" % (engine, engine, engine))
        return self.e["FBW_%s_HOST" % s], int(self.e["FBW_%s_PORT" % s])

    def fb_dsn(self, engine, host=None, port=None, db=None):
        s = engine.upper()
        h, p = self.host_port(engine)
        return "%s/%s:%s/%s" % (host or h, port or p, self.e["FBW_DBDIR_" + s], db or self.e.get("PEER_FB_DB", FB_DB))

    def conn_options(self, engine, via=None):
        """Connection options; via = (host, port) of a link in front of the server."""
        h, p = via or self.host_port(engine)
        k = kind(engine)
        if k in ("pg", "mariadb"):
            o = "--pgsql-" if k == "pg" else "--mysql-"
            return [o + "host=" + h, o + "port=%d" % p, o + "user=" + self.peer(engine, "USER"),
                    o + "db=" + self.peer(engine, "DB")]
        dsn = self.fb_dsn(engine, h, p)
        return ["--fbwire-db=" + dsn, "--fbclient-db=" + dsn]

    def conn_string(self, engine):
        """For the record: no password."""
        k = kind(engine)
        if k in ("pg", "mariadb"):
            h, p = self.host_port(engine)
            tail = "sslmode=" + self.crypt.pg if k == "pg" else "ssl=" + self.crypt.my
            return "%s://%s@%s:%d/%s?%s" % ("postgresql" if k == "pg" else "mysql", self.peer(engine, "USER"), h, p,
                                           self.peer(engine, "DB"), tail)
        return "%s user %s wire_crypt=%s" % (self.fb_dsn(engine), self.fb_login(engine)["ISC_USER"], self.crypt.fb)

    def version(self, engine):
        if engine in PEERS:
            return self.e.get("%s_VERSION" % PEERS[engine][1], "?")
        return self.e.get("FBW_%s_VERSION" % engine.upper(), "?")

    def env(self, engine=None):
        """The passwords for the environment of sysbench run against engine (and the TLS mode)."""
        e = self.e
        out = {"PGSSLMODE": self.crypt.pg, "ISC_USER": e.get("FBW_USER", ""), "ISC_PASSWORD": e.get("FBW_PASSWORD", ""),
               "PGPASSWORD": e.get("PEER_PG_PASSWORD", ""), "MYSQL_PWD": e.get("PEER_MARIADB_PASSWORD", "")}
        if engine in PEERS:
            out["PGPASSWORD" if kind(engine) == "pg" else "MYSQL_PWD"] = e.get(PEERS[engine][1] + "_PASSWORD", "")
        elif engine:
            out.update(self.fb_login(engine))
        return out

    def fb_login(self, engine):
        """ISC_USER and ISC_PASSWORD for a Firebird engine: a server registered with a login of its
        own (fb-servers.sh register) uses it, the others the test servers' SYSDBA."""
        e, s = self.e, engine.upper()
        return {"ISC_USER": e.get("FBW_%s_USER" % s) or e.get("FBW_USER", ""),
                "ISC_PASSWORD": e.get("FBW_%s_PASSWORD" % s) or e.get("FBW_PASSWORD", "")}

    def passwords(self):
        return [v for k, v in self.e.items() if k.endswith("PASSWORD") and v]
