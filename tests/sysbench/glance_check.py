# SPDX-License-Identifier: MIT
"""glance_check.py - `fbwire-compare --preset glance` (the end of scripts/main.sh) with tiny
settings against the FB3 test server, then checks its table: exit 0; one row per client
(fbclient, fbwire, fbwire pipelined) and path (direct, through fbwire-link), each with measured
TPS, round trips per event and ratio (no n/a); the round trips per event are the ones the project
documents for oltp_read_only: fbclient and fbwire from docs/results.md's first table ("In short"),
fbwire pipelined from
docs/sysbench.md's "Round trips per event with `transaction`"; the chart and the reports it names
exist. Exit 77 (skipped) when the Firebird servers' env file is missing.

  glance_check.py COMPARE REPO      (FBWIRE_SYSBENCH_LIB, FBWIRE_LINK, ... in the environment)
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

CLIENTS = ("fbclient", "fbwire", "fbwire pipelined")


def documented(repo):
    """{client: round trips per oltp_read_only event} as docs/results.md and docs/sysbench.md give them."""
    with open(os.path.join(repo, "docs", "results.md")) as f:
        results = f.read()
    head = re.search(r"^\| workload \| fbclient per-statement \| fbclient shared \| fbwire \|$", results, re.M)
    row = re.search(r"^\| oltp_read_only \(BEGIN \.\.\. COMMIT\) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \|$", results, re.M)
    with open(os.path.join(repo, "docs", "sysbench.md")) as f:
        sb = " ".join(f.read().split())
    pipe = re.search(r"Round trips per event with `transaction` [^:]*: `oltp_read_only` (\d+)", sb)
    if not (head and row and pipe):
        sys.exit("FAIL: the round-trip table of docs/results.md or the pipelined figure of docs/sysbench.md "
                 "is not where this test reads it")
    # the glance runs fbclient with autocommit shared (target fb3-fbclient, docs/compare.md)
    return {"fbclient": float(row.group(2)), "fbwire": float(row.group(3)), "fbwire pipelined": float(pipe.group(1))}


def rows(text):
    """{(client, path): (tps, rt, ratio)} of the table's lines."""
    out = {}
    for line in text.splitlines():
        m = re.match(r"^(fbwire pipelined|fbwire|fbclient)\s+(direct|[\d.]+ ms RTT)\s+(\S+)\s+(\S+)\s+(\S+)$", line)
        if m:
            out[(m.group(1), m.group(2))] = m.group(3, 4, 5)
    return out


def main():
    compare, repo = sys.argv[1], sys.argv[2]
    state = os.environ.get("FBWIRE_STATE") or "/var/tmp/fbwire-state"  # as scripts/fb-servers.sh
    if not os.path.isfile(os.path.join(state, "servers.env")):
        print("glance_check: no %s/servers.env (scripts/fb-servers.sh start); skipped" % state)
        return 77
    expect = documented(repo)
    out = tempfile.mkdtemp(prefix="fbwire-glance-test.")
    fail = []

    def check(what, ok):
        print("%s: %s" % ("ok" if ok else "FAIL", what))
        if not ok:
            fail.append(what)

    r = subprocess.run([compare, "--preset", "glance", out, "--time", "1", "--table-size", "1000"],
                       capture_output=True, text=True, timeout=280)
    sys.stderr.write(r.stderr[-2000:])
    print(r.stdout)
    check("fbwire-compare --preset glance exit 0", r.returncode == 0)
    table = rows(r.stdout)
    for client in CLIENTS:
        for path in ("direct", "1 ms RTT"):
            cells = table.get((client, path))
            check("row %s, %s" % (client, path), cells is not None)
            if not cells:
                continue
            tps, rt, ratio = cells
            check("%s, %s: TPS, round trips and ratio measured (%s)" % (client, path, " ".join(cells)),
                  "n/a" not in cells and float(tps.replace(",", "")) > 0 and float(ratio) > 0)
            if rt != "n/a":
                check("%s, %s: %s round trips per event, documented %g" % (client, path, rt, expect[client]),
                      abs(float(rt) - expect[client]) < 0.005)
    chart = re.search(r"^Chart: (\S+\.svg)$", r.stdout, re.M)
    check("the chart it names exists", bool(chart) and os.path.getsize(chart.group(1)) > 0)
    check("glance.txt holds the table", os.path.isfile(os.path.join(out, "glance.txt"))
          and rows(open(os.path.join(out, "glance.txt")).read()) == table)
    check("summary.md and the runs' driver reports kept", os.path.isfile(os.path.join(out, "summary.md"))
          and len([f for f in os.listdir(os.path.join(out, "runs")) if f.endswith(".report.json")]) == 6)
    if fail:
        print("kept for a look: %s" % out)
        return 1
    shutil.rmtree(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
