# SPDX-License-Identifier: MIT
"""Engines and targets: which sysbench driver and options reach which server, and how.

A target is an engine (pg, mariadb, fb3, fb4) plus the client that drives it. Wire crypt and TLS
are always set explicitly (a driver's default may change): off, or on everywhere with crypt.
Passwords travel in the environment of sysbench only (env()), never in options or records.
"""
import re

ENGINES = ("pg", "mariadb", "fb3", "fb4")
BUILTIN = ("pg", "mariadb", "fb3-fbwire", "fb4-fbwire", "fb3-fbwire-pipelined", "fb4-fbwire-pipelined",
           "fb3-fbclient", "fb4-fbclient", "fb3-fbclient-per-statement", "fb4-fbclient-per-statement")
DEFAULT = ("pg", "mariadb", "fb3-fbwire", "fb4-fbwire")


class Crypt:
    def __init__(self, on):
        self.on = bool(on)
        self.fb = "required" if on else "disabled"
        self.pg = "require" if on else "disable"
        self.my = "on" if on else "off"


def engine_of(base):
    if base in ("pg", "mariadb"):
        return base
    m = re.match(r"^(fb[34])-", base)
    if m and base in BUILTIN:
        return m.group(1)
    return None


def driver_options(base, crypt):
    """A built-in target's driver options (no connection options)."""
    if base == "pg":
        return ["--db-driver=pgsql"]
    if base == "mariadb":
        return ["--db-driver=mysql", "--mysql-ssl=" + crypt.my]
    kind = base[4:]
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
    if engine == "pg":
        return ["--db-driver=pgsql"]
    if engine == "mariadb":
        return ["--db-driver=mysql", "--mysql-ssl=" + crypt.my]
    return ["--db-driver=fbwire", "--fbwire-wire-crypt=" + crypt.fb]


class Target:
    def __init__(self, name, base, extra, crypt):
        self.name, self.base = name, base
        self.engine = engine_of(base)
        if self.engine is None:
            raise ValueError("unknown target '%s' (pg, mariadb, fb3|fb4-fbwire, -fbwire-pipelined, -fbclient, "
                             "-fbclient-per-statement, or --target NAME=BASE:OPTIONS)" % name)
        self.options = driver_options(base, crypt) + [o for o in extra.split() if o]
        self.driver = next((o.split("=", 1)[1] for o in self.options if o.startswith("--db-driver=")), None)


def parse_spec(spec):
    """--target NAME=BASE[:extra sysbench options] -> (name, base, extra)"""
    name, eq, rest = spec.partition("=")
    if not eq or not name:
        raise ValueError("--target takes NAME=BASE[:OPTIONS]")
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

    def host_port(self, engine):
        if engine == "pg":
            return self.e["PEER_PG_HOST"], int(self.e["PEER_PG_PORT"])
        if engine == "mariadb":
            return self.e["PEER_MARIADB_HOST"], int(self.e["PEER_MARIADB_PORT"])
        s = engine.upper()
        return self.e["FBW_%s_HOST" % s], int(self.e["FBW_%s_PORT" % s])

    def fb_dsn(self, engine, host=None, port=None, db=None):
        s = engine.upper()
        h, p = self.host_port(engine)
        return "%s/%s:%s/%s" % (host or h, port or p, self.e["FBW_DBDIR_" + s], db or self.e["PEER_FB_DB"])

    def conn_options(self, engine, via=None):
        """Connection options; via = (host, port) of a link in front of the server."""
        h, p = via or self.host_port(engine)
        if engine == "pg":
            return ["--pgsql-host=" + h, "--pgsql-port=%d" % p, "--pgsql-user=" + self.e["PEER_PG_USER"],
                    "--pgsql-db=" + self.e["PEER_PG_DB"]]
        if engine == "mariadb":
            return ["--mysql-host=" + h, "--mysql-port=%d" % p, "--mysql-user=" + self.e["PEER_MARIADB_USER"],
                    "--mysql-db=" + self.e["PEER_MARIADB_DB"]]
        dsn = self.fb_dsn(engine, h, p)
        return ["--fbwire-db=" + dsn, "--fbclient-db=" + dsn]

    def conn_string(self, engine):
        """For the record: no password."""
        e = self.e
        if engine == "pg":
            return "postgresql://%s@%s:%s/%s?sslmode=%s" % (e["PEER_PG_USER"], e["PEER_PG_HOST"], e["PEER_PG_PORT"],
                                                             e["PEER_PG_DB"], self.crypt.pg)
        if engine == "mariadb":
            return "mysql://%s@%s:%s/%s?ssl=%s" % (e["PEER_MARIADB_USER"], e["PEER_MARIADB_HOST"],
                                                   e["PEER_MARIADB_PORT"], e["PEER_MARIADB_DB"], self.crypt.my)
        return "%s user %s wire_crypt=%s" % (self.fb_dsn(engine), e["FBW_USER"], self.crypt.fb)

    def version(self, engine):
        key = {"pg": "PEER_PG_VERSION", "mariadb": "PEER_MARIADB_VERSION"}.get(engine, "FBW_%s_VERSION" % engine.upper())
        return self.e.get(key, "?")

    def env(self):
        """The passwords for sysbench's environment (and the peers' TLS mode)."""
        e = self.e
        return {"PGPASSWORD": e.get("PEER_PG_PASSWORD", ""), "PGSSLMODE": self.crypt.pg,
                "MYSQL_PWD": e.get("PEER_MARIADB_PASSWORD", ""), "ISC_USER": e.get("FBW_USER", ""),
                "ISC_PASSWORD": e.get("FBW_PASSWORD", "")}

    def passwords(self):
        return [v for k, v in self.e.items() if k.endswith("PASSWORD") and v]
