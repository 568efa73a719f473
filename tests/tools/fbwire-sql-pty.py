#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""fbwire-sql-pty.py - fbwire-sql at a terminal, driven through a pseudo-terminal (pty) on the FB3
and FB4 test servers: the SQL> prompt, a statement run when Enter follows its terminator, CON> for
a statement that goes on, history recalled with the up arrow and kept in the history file, Ctrl-C
cancelling a long cross join within a second with the session still usable, EXIT committing,
QUIT rolling back, one Ctrl-D leaving (and committing), a statement left unterminated at Ctrl-D
reported and not run, an unknown backslash command refused in one line, `-i -` on a terminal
ending at the first Ctrl-D, and statement timeouts: on FB4 --statement-timeout and SET STATEMENT
TIMEOUT (units as Firebird's) end the long cross join with Firebird's timeout error naming the
statement and the limit, the session going on, SHOW DATABASE and --info showing the setting; on FB3
both are refused naming the protocol (the option at connect, the command with the session going on);
SHOW DATABASE's header page (page size, ODS, next transaction) from the services API; scrollable
cursors: where the server speaks protocol 18 (the FB4 slot in the @fb5 twin) SET SCROLL ON, a SELECT
of known rows, every FETCH move landing on the row a model of the cursor predicts or "no row" past
either end, SHOW COUNT, one round trip each in SET STATS, the cursor closed by the next statement;
below protocol 18 (FB3, FB4) SET SCROLL ON refused naming the protocol and the session going on.

    fbwire-sql-pty.py PATH/TO/fbwire-sql

Servers: FBW_FB3_* / FBW_FB4_* from the environment, else $FBW_SERVERS_ENV, else
$FBWIRE_STATE/servers.env (scripts/fb-servers.sh writes it)."""
import os
import pty
import re
import select
import signal
import subprocess
import sys
import tempfile
import time

TOOL = os.path.abspath(sys.argv[1])
LONG_SQL = ("select count(*) from rdb$fields a cross join rdb$fields b cross join rdb$fields c "
            "cross join rdb$types d;")
FAILS = []


def load_env():
    if os.environ.get("FBW_FB3_PORT"):
        return dict(os.environ)
    path = os.environ.get("FBW_SERVERS_ENV") or os.path.join(
        os.environ.get("FBWIRE_STATE") or "/var/tmp/fbwire-state", "servers.env")  # fb-servers.sh's default
    if not os.path.isfile(path):
        sys.exit("servers not configured: run scripts/fb-servers.sh start (no %s)" % path)
    env = dict(os.environ)
    for line in open(path):
        m = re.match(r"^(?:export\s+)?([A-Z0-9_]+)=(.*)$", line.strip())
        if m:
            env[m.group(1)] = m.group(2).strip("'\"")
    return env


ENV = load_env()
ENV["ISC_USER"] = ENV["FBW_USER"]
ENV["ISC_PASSWORD"] = ENV["FBW_PASSWORD"]
ENV["TERM"] = "xterm"


def check(cond, what):
    print(("ok: " if cond else "FAIL: ") + what, flush=True)
    if not cond:
        FAILS.append(what)
    return cond


def batch(dsn, sql):
    """Run SQL the non-interactive way (stdin a pipe); returns stdout."""
    r = subprocess.run([TOOL, "--tsv", dsn], input=sql, capture_output=True, text=True, env=ENV,
                       timeout=60)
    if r.returncode != 0:
        raise RuntimeError("fbwire-sql %r failed: %s" % (sql, r.stderr))
    return r.stdout


class Term:
    """fbwire-sql on the slave side of a pty; the test types on the master side."""

    def __init__(self, args, env):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.execve(TOOL, [TOOL] + args, env)
        self.out = b""
        self.pos = 0
        self.status = None

    def read_some(self, timeout):
        r, _, _ = select.select([self.fd], [], [], timeout)
        if not r:
            return False
        try:
            data = os.read(self.fd, 65536)
        except OSError:  # EIO: the child closed the terminal
            data = b""
        if not data:
            raise EOFError
        self.out += data
        return True

    def expect(self, pattern, timeout=15):
        """Wait for regex pattern after the last match; returns the match or None."""
        rx = re.compile(pattern.encode() if isinstance(pattern, str) else pattern)
        end = time.monotonic() + timeout
        while True:
            m = rx.search(self.out, self.pos)
            if m:
                self.pos = m.end()
                return m
            left = end - time.monotonic()
            if left <= 0:
                return None
            try:
                self.read_some(left)
            except EOFError:
                m = rx.search(self.out, self.pos)
                if m:
                    self.pos = m.end()
                return m

    def send(self, text):
        os.write(self.fd, text.encode() if isinstance(text, str) else text)

    def wait_exit(self, timeout=10):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.status = status
                try:
                    while self.read_some(0.05):
                        pass
                except EOFError:
                    pass
                os.close(self.fd)
                return True
            try:
                self.read_some(0.1)
            except EOFError:
                pass
        os.kill(self.pid, signal.SIGKILL)
        os.waitpid(self.pid, 0)
        os.close(self.fd)
        return False

    def tail(self):
        return self.out[-600:].decode("utf-8", "replace")


def server(name, tmp):
    dsn = "%s/%s:%s" % (ENV["FBW_%s_HOST" % name], ENV["FBW_%s_PORT" % name],
                        ENV["FBW_%s_DB" % name])
    table = "T_PTY_%d_%s" % (os.getpid(), name)
    hist = os.path.join(tmp, "history-" + name)
    env = dict(ENV, FBWIRE_SQL_HISTORY=hist)
    batch(dsn, "create table %s (id integer not null primary key, v varchar(10));" % table)
    try:
        # 1. prompt, a statement on Enter, continuation, history, Ctrl-C, EXIT commits.
        t = Term(["--no-autocommit", dsn], env)
        check(t.expect(r"SQL> ") is not None, "%s: SQL> prompt" % name)
        t.send("select 40 + 2 as answer from rdb$database;\r")
        check(t.expect(r"\b42\b") is not None and t.expect(r"SQL> ") is not None,
              "%s: the statement ran on Enter and the prompt came back" % name)
        t.send("\x1b[A")  # up arrow: the last line again
        check(t.expect(r"select 40 \+ 2 as answer from rdb\$database;") is not None,
              "%s: up arrow recalls the last statement" % name)
        t.send("\r")
        check(t.expect(r"\b42\b") is not None and t.expect(r"SQL> ") is not None,
              "%s: the recalled statement ran" % name)
        t.send("select 7 as seven\r")
        check(t.expect(r"CON> ") is not None, "%s: CON> while the statement goes on" % name)
        t.send("from rdb$database;\r")
        check(t.expect(r"\b7\b") is not None and t.expect(r"SQL> ") is not None,
              "%s: the continued statement ran at its terminator" % name)
        t.send(LONG_SQL + "\r")
        time.sleep(0.8)
        t0 = time.monotonic()
        t.send("\x03")  # Ctrl-C
        m = t.expect(r"operation was cancelled", timeout=10)
        took = time.monotonic() - t0
        check(m is not None and took < 1.0,
              "%s: Ctrl-C cancelled the long query in %.3f s" % (name, took))
        check(t.expect(r"SQL> ") is not None, "%s: prompt after the cancel" % name)
        t.send("select 'still' || 'here' as s from rdb$database;\r")
        check(t.expect(r"stillhere") is not None, "%s: the session goes on after Ctrl-C" % name)
        t.send("\\foo\r")
        check(t.expect(r"fbwire-sql: unknown command \\foo[^\n]*\n") is not None,
              "%s: unknown backslash command refused in one line" % name)
        t.send("show foo;\r")
        check(t.expect(r"unknown SHOW command") is not None, "%s: unknown SHOW refused" % name)
        t.send("insert into %s values (1, 'exit');\r" % table)
        check(t.expect(r"1 row affected") is not None, "%s: insert" % name)
        t.send("exit;\r")
        check(t.wait_exit(), "%s: EXIT; leaves" % name)
        check(batch(dsn, "select v from %s where id = 1;" % table).split() == ["V", "exit"],
              "%s: EXIT committed" % name)
        # libedit writes the file in vis(3) form: a blank is \\040.
        saved = open(hist, errors="replace").read().replace("\\040", " ") if os.path.isfile(hist) else ""
        check("select 40 + 2 as answer from rdb$database;" in saved, "%s: history file written" % name)

        # 2. QUIT rolls back.
        t = Term(["--no-autocommit", dsn], env)
        t.expect(r"SQL> ")
        t.send("insert into %s values (2, 'quit');\r" % table)
        t.expect(r"1 row affected")
        t.send("QUIT;\r")
        check(t.wait_exit(), "%s: QUIT; leaves" % name)
        check(batch(dsn, "select count(*) from %s where id = 2;" % table).split() == ["COUNT", "0"],
              "%s: QUIT rolled back" % name)

        # 3. One Ctrl-D leaves and commits; an unfinished statement is reported, not run.
        t = Term(["--no-autocommit", dsn], env)
        t.expect(r"SQL> ")
        t.send("insert into %s values (3, 'eof');\r" % table)
        t.expect(r"1 row affected")
        t.expect(r"SQL> ")
        t.send("insert into %s values (4, 'unfinished')\r" % table)
        t.expect(r"CON> ")
        # libedit may print the prompt before it puts the terminal in raw mode; a ^D typed in
        # that instant would be the line discipline's end of file, not libedit's key. People do
        # not type that fast; the test waits as they would.
        time.sleep(0.3)
        t.send("\x04")
        if not check(t.wait_exit(5), "%s: one Ctrl-D ends the session" % name):
            print(t.tail())
        check(b"end of input inside a statement" in t.out,
              "%s: unterminated statement at Ctrl-D reported" % name)
        check(batch(dsn, "select id from %s where id in (3, 4);" % table).split() == ["ID", "3"],
              "%s: Ctrl-D committed, the unterminated insert did not run" % name)

        # 4. -i - on a terminal: the script ends at the first Ctrl-D.
        t = Term(["-i", "-", dsn], env)
        t.send("select 5 * 5 as n from rdb$database;\r")
        time.sleep(0.3)
        t.send("\x04")
        check(t.wait_exit(5) and b"25" in t.out,
              "%s: -i - on a terminal runs the script after one Ctrl-D" % name)
        if FAILS:
            print(t.tail())

        header_page(name, dsn, env)
        timeouts(name, dsn, env)
        scroll(name, dsn, env, table)
    finally:
        batch(dsn, "drop table %s;" % table)


def header_page(name, dsn, env):
    """6. SHOW DATABASE's header page through the services API (db_stats -h on a service attachment
    to the same server with the same login), after the connection's lines."""
    t = Term([dsn], env)
    t.expect(r"SQL> ")
    t.send("show database;\r")
    check(t.expect(r"wait_ms: [0-9.]+\r?\nheader_flags: \d+") is not None,
          "%s: SHOW DATABASE goes on with the header page" % name)
    m = t.expect(r"header_page_size: (\d+)")
    check(m is not None and int(m.group(1)) in (4096, 8192, 16384, 32768),
          "%s: the header's page size" % name)
    m = t.expect(r"header_ods_version: (\d+)\.\d+")
    want = {"FB3": 12, "FB4": 13}[name] if not ENV.get("FBW_TARGET") else None
    check(m is not None and (want is None or int(m.group(1)) >= want),
          "%s: the header's ODS version" % name)
    check(t.expect(r"header_next_transaction: \d+") is not None, "%s: next transaction" % name)
    check(t.expect(r"SQL> ") is not None, "%s: the prompt after SHOW DATABASE" % name)
    t.send("exit;\r")
    check(t.wait_exit() and os.WEXITSTATUS(t.status) == 0, "%s: exit 0 after SHOW DATABASE" % name)


def timeouts(name, dsn, env):
    """5. Statement timeouts: --statement-timeout, SET STATEMENT TIMEOUT, SHOW DATABASE, --info."""
    if name == "FB3":
        t = Term(["--statement-timeout", "300", dsn], env)
        m = t.expect(r"connect failed: statement timeouts need protocol 16[^\n]*protocol 15")
        check(t.wait_exit(5) and m is not None and os.WEXITSTATUS(t.status) == 1,
              "%s: --statement-timeout refused at connect, naming the protocol" % name)
        t = Term([dsn], env)
        t.expect(r"SQL> ")
        t.send("set statement timeout 300 millisecond;\r")
        check(t.expect(r"statement 1 \(line 1\) failed: statement timeouts need protocol 16"
                       r"[^\n]*protocol 15") is not None,
              "%s: SET STATEMENT TIMEOUT refused, naming the protocol" % name)
        t.send("show database;\r")
        check(t.expect(r"statement_timeout_ms: 0\b") is not None, "%s: the timeout stays 0" % name)
        t.send("set statement timeout 0;\r")
        t.send("select 'still' || 'here' as s from rdb$database;\r")
        check(t.expect(r"stillhere") is not None, "%s: the session goes on" % name)
        t.send("exit;\r")
        check(t.wait_exit() and os.WEXITSTATUS(t.status) == 1,
              "%s: exit status 1 (a statement failed)" % name)
        return
    info = subprocess.run([TOOL, "--info", "--statement-timeout", "1500", dsn], capture_output=True,
                          text=True, env=ENV, timeout=60)
    check(info.returncode == 0 and "statement_timeout_ms: 1500\n" in info.stdout,
          "%s: --info shows --statement-timeout" % name)
    t = Term(["--statement-timeout", "300", dsn], env)
    t.expect(r"SQL> ")
    t0 = time.monotonic()
    t.send(LONG_SQL + "\r")
    # Firebird's two lines, the second with isql's "-": "operation was cancelled" and
    # "-Statement level timeout expired.", the library's limit after it
    m = t.expect(r"statement 1 \(line 1\) failed: operation was cancelled\s+"
                 r"-Statement level timeout expired\. \(statement timeout 300 ms\)", timeout=20)
    took = time.monotonic() - t0
    check(m is not None, "%s: --statement-timeout 300 ended the long query after %.2f s with "
          "Firebird's error naming the statement and the limit" % (name, took))
    check(t.expect(r"SQLSTATE = HY008") is not None, "%s: SQLSTATE HY008" % name)
    t.send("select 'after' || 'timeout' as s from rdb$database;\r")
    check(t.expect(r"aftertimeout") is not None, "%s: the session goes on after the timeout" % name)
    t.send("show database;\r")
    check(t.expect(r"statement_timeout_ms: 300\b") is not None, "%s: SHOW DATABASE shows it" % name)
    t.send("set statement timeout 2;\r")
    t.send("show database;\r")
    check(t.expect(r"statement_timeout_ms: 2000\b") is not None,
          "%s: SET STATEMENT TIMEOUT 2 is 2 seconds (Firebird's default unit)" % name)
    t.send("set statement timeout 1 minute;\r")
    t.send("show database;\r")
    check(t.expect(r"statement_timeout_ms: 60000\b") is not None, "%s: ... MINUTE" % name)
    t.send("set statement timeout 250 millisecond;\r")
    t.send(LONG_SQL + "\r")
    check(t.expect(r"failed: operation was cancelled\s+-Statement level timeout expired\. "
                   r"\(statement timeout 250 ms\)",
                   timeout=20) is not None,
          "%s: SET STATEMENT TIMEOUT 250 MILLISECOND ends the long query" % name)
    t.send("set statement timeout soon;\r")
    check(t.expect(r"SET STATEMENT TIMEOUT takes a number") is not None,
          "%s: a bad SET STATEMENT TIMEOUT refused" % name)
    t.send("set statement timeout 0;\r")
    t.send("show database;\r")
    check(t.expect(r"statement_timeout_ms: 0\b") is not None, "%s: SET ... 0 removes it" % name)
    t.send("exit;\r")
    check(t.wait_exit(), "%s: EXIT; after the timeouts" % name)


def protocol(dsn):
    info = subprocess.run([TOOL, "--info", dsn], capture_output=True, text=True, env=ENV, timeout=60)
    m = re.search(r"^protocol: (\d+)$", info.stdout, re.M)
    return int(m.group(1)) if m else 0


SCROLL_ROWS = 7


def scroll_model(pos, op, n=0):
    """Where Firebird's cursor lands: 0 before the first row, SCROLL_ROWS + 1 after the last."""
    clamp = lambda p: max(0, min(SCROLL_ROWS + 1, p))
    if op == "NEXT":
        return clamp(pos + 1)
    if op == "PRIOR":
        return clamp(pos - 1)
    if op == "FIRST":
        return 1
    if op == "LAST":
        return SCROLL_ROWS
    if op == "ABSOLUTE":
        return clamp(n) if n >= 0 else clamp(SCROLL_ROWS + 1 + n)
    return clamp(pos + n)


def scroll(name, dsn, env, table):
    """7. Scrollable cursors: SET SCROLL ON, FETCH moves, SHOW COUNT (protocol 18+), or the
    refusal naming the protocol below it."""
    batch(dsn, "delete from %s; %s" % (table, " ".join(
        "insert into %s values (%d, 'r%d');" % (table, i, i * 7) for i in range(1, SCROLL_ROWS + 1))))
    proto = protocol(dsn)
    select = "select id, v from %s order by id;" % table
    t = Term(["--tsv", dsn], env)
    t.expect(r"SQL> ")
    if proto < 18:
        t.send("set scroll on;\r")
        check(t.expect(r"statement 1 \(line 1\) failed: a scrollable cursor needs protocol 18 "
                       r"\(Firebird 5 or later\); this connection speaks protocol %d" % proto)
              is not None, "%s: SET SCROLL ON refused, naming protocol %d" % (name, proto))
        t.send(select + "\r")
        check(t.expect(r"ID\tV\r?\n1\tr7\r?\n") is not None, "%s: the SELECT runs as usual" % name)
        t.send("fetch first;\r")
        check(t.expect(r"no scrollable cursor is open: SET SCROLL ON, then run a SELECT") is not None,
              "%s: FETCH without a scrollable cursor refused" % name)
        t.send("select 'still' || 'here' as s from rdb$database;\r")
        check(t.expect(r"stillhere") is not None, "%s: the session goes on" % name)
        t.send("exit;\r")
        check(t.wait_exit() and os.WEXITSTATUS(t.status) == 1,
              "%s: exit status 1 (the refused commands failed)" % name)
        return
    t.send("set stats on;\rset scroll on;\r" + select + "\r")
    rows = "".join(r"%d\tr%d\r?\n" % (i, i * 7) for i in range(1, SCROLL_ROWS + 1))
    check(t.expect(r"ID\tV\r?\n" + rows) is not None and
          t.expect(r"-- stats #\d+ line \d+: round_trips=\d+ begin=[01] prepare=1 execute=1 fetch=0 "
                   r"blob=0 tz=0 commit=0 ") is not None,
          "%s: with SCROLL ON the SELECT prints its rows as usual" % name)
    pos = SCROLL_ROWS + 1  # the forward fetches read to the end
    moves = [("PRIOR", 0), ("FIRST", 0), ("PRIOR", 0), ("PRIOR", 0), ("NEXT", 0), ("LAST", 0),
             ("NEXT", 0), ("PRIOR", 0), ("ABSOLUTE", 3), ("RELATIVE", 2), ("RELATIVE", -10),
             ("RELATIVE", 4), ("ABSOLUTE", -2), ("ABSOLUTE", 0), ("ABSOLUTE", 99), ("RELATIVE", -1),
             ("RELATIVE", -3), ("RELATIVE", 0)]
    for op, n in moves:
        cmd = "fetch %s%s;" % (op.lower(), " %d" % n if op in ("ABSOLUTE", "RELATIVE") else "")
        pos = scroll_model(pos, op, n)
        t.send(cmd + "\r")
        if 1 <= pos <= SCROLL_ROWS:
            m = t.expect(r"ID\tV\r?\n%d\tr%d\r?\n" % (pos, pos * 7))
            what = "row %d" % pos
        else:
            m = t.expect(r"no row: the cursor is %s" % ("before the first" if pos == 0 else
                                                         "after the last"))
            what = "no row (%s)" % ("before the first" if pos == 0 else "after the last")
        stats = t.expect(r"-- stats #\d+ line \d+: round_trips=1 begin=0 prepare=0 execute=0 fetch=1 ")
        check(m is not None and stats is not None, "%s: %s lands on %s, one round trip" %
              (name, cmd, what))
    t.send("show count;\r")
    check(t.expect(r"record count: %d\r?\n-- stats #\d+ line \d+: round_trips=1 " % SCROLL_ROWS)
          is not None, "%s: SHOW COUNT gives %d rows in one round trip" % (name, SCROLL_ROWS))
    t.send("fetch next;\r")
    pos = scroll_model(pos, "NEXT")
    check(t.expect(r"ID\tV\r?\n%d\tr%d\r?\n" % (pos, pos * 7)) is not None,
          "%s: the count did not move the cursor" % name)
    t.send("fetch absolute x;\r")
    check(t.expect(r"FETCH ABSOLUTE and RELATIVE take a whole number") is not None,
          "%s: a bad FETCH refused" % name)
    t.send("set scroll off;\rselect 'next' || 'statement' as s from rdb$database;\r")
    t.expect(r"nextstatement")
    # the SELECT's commit was held back for the next statement: two commits in its accounting
    check(t.expect(r"-- stats #\d+ line \d+: round_trips=\d+ begin=0 prepare=1 execute=1 "
                   r"fetch=0 blob=0 tz=0 commit=2 ") is not None,
          "%s: the next statement commits the cursor's transaction" % name)
    t.send("fetch prior;\r")
    check(t.expect(r"no scrollable cursor is open: SET SCROLL ON, then run a SELECT") is not None,
          "%s: the next statement closed the cursor" % name)
    t.send("exit;\r")
    check(t.wait_exit() and os.WEXITSTATUS(t.status) == 1, "%s: exit status 1 (2 refusals)" % name)
    if FAILS:
        print(t.out.decode("utf-8", "replace"))
    # One transaction (--no-autocommit): the cursor is closed by DSQL_close when the same
    # SELECT runs again, and the new cursor starts before the first row.
    t = Term(["--tsv", "--no-autocommit", dsn], env)
    t.expect(r"SQL> ")
    t.send("set scroll on;\r" + select + "\rfetch first;\r" + select + "\rfetch prior;\r")
    t.expect(r"ID\tV\r?\n" + rows)
    t.expect(r"ID\tV\r?\n1\tr7\r?\n")
    t.expect(r"ID\tV\r?\n" + rows)
    check(t.expect(r"ID\tV\r?\n%d\tr%d\r?\n" % (SCROLL_ROWS, SCROLL_ROWS * 7)) is not None,
          "%s: --no-autocommit: the same SELECT again reads a new cursor to its end" % name)
    t.send("fetch absolute 2;\rexit;\r")
    check(t.expect(r"ID\tV\r?\n2\tr14\r?\n") is not None and t.wait_exit() and
          os.WEXITSTATUS(t.status) == 0, "%s: --no-autocommit: moves on the new cursor" % name)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("FB3", "FB4"):
            server(name, tmp)
    if FAILS:
        print("%d failure(s)" % len(FAILS))
        return 1
    print("all pty checks passed")
    return 0


sys.exit(main())
