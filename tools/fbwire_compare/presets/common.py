# SPDX-License-Identifier: MIT
"""What the presets share: the Firebird test servers, fbwire-sysbench against them, the drivers'
JSON reports and the options parser."""
import argparse
import json
import os
import re
import subprocess

from .. import builds as bl, stats, targets as tg


class Fail(Exception):
    """A preset cannot go on: message and exit status."""

    def __init__(self, msg, status=1):
        super().__init__(msg)
        self.status = status


class Firebird:
    """The project's Firebird servers (scripts/fb-servers.sh) and fbwire-sysbench against them."""

    def __init__(self, here, lib=None):
        self.here = here
        self.builds = bl.Builds(here)
        self.state = bl.state_dir()
        lib = lib or self.builds.find("libfbwire-sysbench.so")
        if not lib or not os.path.isfile(lib):
            raise Fail("build the plug-in first (libfbwire-sysbench.so not found; FBWIRE_SYSBENCH_LIB)", 2)
        path = os.path.join(self.state, "servers.env")
        if not os.path.isfile(path):
            raise Fail(bl.no_servers(path), 2)
        self.e = tg.load_env(path)
        self.env = dict(os.environ, FBWIRE_SYSBENCH_LIB=lib, ISC_USER=self.e["FBW_USER"],
                        ISC_PASSWORD=self.e["FBW_PASSWORD"])

    def dsn(self, server, db):
        s = server.upper()
        if not self.e.get("FBW_%s_PORT" % s):
            raise Fail("unknown server %s" % server, 2)
        return "%s/%s:%s/%s" % (self.e["FBW_%s_HOST" % s], self.e["FBW_%s_PORT" % s], self.e["FBW_DBDIR_" + s], db)

    def isql(self, sql, dsn=None):
        cmd = ["isql-fb", "-q"] + ([dsn] if dsn else [])
        try:  # the SQL (with any password) goes through stdin, never the command line
            return subprocess.run(cmd, input=sql, capture_output=True, text=True, env=self.env, timeout=120)
        except subprocess.TimeoutExpired:
            raise Fail("isql-fb did not answer in 120 s")

    def ensure_db(self, dsn):
        if self.isql("QUIT;\n", dsn).returncode != 0:
            r = self.isql("CREATE DATABASE '%s' USER '%s' PASSWORD '%s' PAGE_SIZE 8192;\n" % (
                dsn, self.e["FBW_USER"], self.e["FBW_PASSWORD"]))
            if r.returncode != 0:
                raise Fail("cannot create %s: %s" % (dsn, r.stderr.strip().splitlines()[-1:]))

    def count(self, dsn, relation):
        """Rows of a monitoring table for this database's other attachments."""
        r = self.isql("SELECT 'N=' || COUNT(*) FROM %s WHERE MON$ATTACHMENT_ID <> CURRENT_CONNECTION;\n" % relation, dsn)
        m = re.search(r"^N=(\d+)", r.stdout, re.M)
        return int(m.group(1)) if m else None

    def launcher(self):
        return self.builds.sysbench_launcher()

    def sysbench(self, script, args, cmd, out, append=False, background=False):
        """fbwire-sysbench SCRIPT ARGS CMD with stdout and stderr to the file out."""
        with open(out, "a" if append else "w") as f:
            p = subprocess.Popen([self.launcher(), script] + args + [cmd], stdout=f, stderr=subprocess.STDOUT,
                                 stdin=subprocess.DEVNULL, env=self.env)
        return p if background else p.wait()


def driver_args(drv, dsn):
    # Wire crypt off for every client alike, so none pays for a cipher the others do not (and the
    # fbclient tap decodes only plain streams).
    return ["--db-driver=" + drv, "--%s-db=%s" % (drv, dsn), "--%s-wire-crypt=disabled" % drv]


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def med(docs, f):
    return stats.median_range(f(d) for d in docs)


def parser(name, doc):
    return argparse.ArgumentParser(prog="fbwire-compare --preset " + name, description=doc,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
