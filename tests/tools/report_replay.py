#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""report_replay.py - `fbwire-report --replay` on a recorded `fbwire-pcap replay --json` output.

    tests/tools/report_replay.py path/to/fbwire-report

tests/tools/replay-sysbench.json is the JSON of a paced replay on FB4 4.0.5 of a 4-thread sysbench
oltp_read_write capture (fbclient driver) made on FB3 3.0.11 (tests/sysbench/xreplay.py). The
chart must hold the --top N slowest fingerprints in the JSON's order, four bars each whose values
are the JSON's latencies and whose lengths follow them on the log axis, statement labels that fit
the chart (a long one cut with an ellipsis, markup escaped), and refuse what it cannot draw.
"""
import json
import math
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"
HERE = os.path.dirname(os.path.abspath(__file__))
RECORDED = os.path.join(HERE, "replay-sysbench.json")
SERIES = [("capture p50", "capture", "p50_ms"), ("capture p95", "capture", "p95_ms"),
          ("replay p50", "replay", "p50_ms"), ("replay p95", "replay", "p95_ms")]
failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)
        print("FAIL: " + msg)


def report(tool, *args):
    return subprocess.run([tool] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, timeout=60)


def chart(tool, tmp, src, top=None):
    svg = os.path.join(tmp, "chart.svg")
    if os.path.exists(svg):
        os.remove(svg)
    args = ["--replay", src, "--svg", svg] + (["--top", str(top)] if top else [])
    p = report(tool, *args)
    check(p.returncode == 0, "%s: exit %d: %s" % (args, p.returncode, p.stderr))
    return ET.parse(svg).getroot()


def groups(root):
    return [g for g in root.iter(NS + "g") if g.get("class") == "fingerprint"]


def check_chart(root, doc, n, label):
    stmts = doc["load"]["statements"]
    width = float(root.get("width"))
    gs = groups(root)
    check(len(gs) == n, "%s: %d fingerprints drawn, expected %d" % (label, len(gs), n))
    widths = []
    for i, g in enumerate(gs):
        st = stmts[i]
        check(g.get("data-rank") == str(i + 1), "%s: group %d has rank %s" % (label, i, g.get("data-rank")))
        check(g.find(NS + "title").text == st["statement"],
              "%s: group %d is %r, the JSON's %d. is %r" % (label, i + 1, g.find(NS + "title").text,
                                                          i + 1, st["statement"]))
        text = g.find(NS + "text")
        shown = "".join(text.itertext())
        # 12px monospace: 7.2 px a character; the label starts at x=20
        check(20 + len(shown) * 7.2 <= width,
              "%s: label %r (%d characters) does not fit %g px" % (label, shown, len(shown), width))
        check(shown.startswith("%d. " % (i + 1)), "%s: label %r has no rank" % (label, shown))
        check(("%d executions" % st["count"]) in shown, "%s: label %r has no count" % (label, shown))
        bars = [r for r in g.iter(NS + "rect") if r.get("class") == "bar"]
        check([b.get("data-series") for b in bars] == [s[0] for s in SERIES],
              "%s: group %d bars %s" % (label, i + 1, [b.get("data-series") for b in bars]))
        for b, (name, side, key) in zip(bars, SERIES):
            v = st[side][key]
            check(abs(float(b.get("data-ms")) - v) <= 0.0005 + 1e-9,
                  "%s: %d. %s is %s, JSON %s" % (label, i + 1, name, b.get("data-ms"), v))
            widths.append((v, float(b.get("width"))))
    # log axis: width = a + b*log10(v), the same a and b for every bar
    pts = [(math.log10(v), w) for v, w in widths if v > 0 and w > 1]
    if len(pts) >= 2:
        (x0, y0), (x1, y1) = min(pts), max(pts)
        slope = (y1 - y0) / (x1 - x0) if x1 > x0 else 0
        check(slope > 0, "%s: bar lengths do not grow with the latency" % label)
        for x, y in pts:
            check(abs(y0 + slope * (x - x0) - y) < 0.2,
                  "%s: a bar of 10^%.3f ms is %.1f px, off the log axis" % (label, x, y))


def main():
    tool = sys.argv[1]
    with open(RECORDED) as f:
        doc = json.load(f)
    n = len(doc["load"]["statements"])
    tmp = tempfile.mkdtemp(prefix="fbwire-report-replay.")
    check(n == 20, "the recorded JSON has %d fingerprints" % n)

    check_chart(chart(tool, tmp, RECORDED), doc, min(10, n), "default --top")
    check_chart(chart(tool, tmp, RECORDED, 3), doc, 3, "--top 3")
    check_chart(chart(tool, tmp, RECORDED, 100), doc, n, "--top 100")

    # a long statement with markup: cut to fit, escaped, the whole text in the tooltip
    long_sql = "SELECT " + ", ".join("c%d <> '&x'" % i for i in range(200)) + " FROM t"
    doc2 = json.loads(json.dumps(doc))
    doc2["load"]["statements"][0]["statement"] = long_sql
    doc2["load"]["statements"][1]["replay"]["p95_ms"] = None
    src2 = os.path.join(tmp, "long.json")
    with open(src2, "w") as f:
        json.dump(doc2, f)
    root = chart(tool, tmp, src2, 2)
    g = groups(root)
    shown = "".join(g[0].find(NS + "text").itertext())
    check("…" in shown and shown.startswith("1. SELECT c0 <> '&x'"),
          "a long statement is shown as %r" % shown[:80])
    check(g[0].find(NS + "title").text == long_sql, "the tooltip is not the whole statement")
    check(20 + len(shown) * 7.2 <= float(root.get("width")), "the long label does not fit")
    bars = [r.get("data-series") for r in g[1].iter(NS + "rect") if r.get("class") == "bar"]
    check(bars == ["capture p50", "capture p95", "replay p50"], "a null p95 drew %s" % bars)
    check("n/a" in [t.text for t in g[1].iter(NS + "text")], "a null p95 is not shown as n/a")

    # what it cannot draw: --list output (no load), no statements, usage errors
    listed = os.path.join(tmp, "list.json")
    with open(listed, "w") as f:
        json.dump({"mode": "list", "connections": []}, f)
    svg = os.path.join(tmp, "x.svg")
    p = report(tool, "--replay", listed, "--svg", svg)
    check(p.returncode == 1 and "load.statements" in p.stderr and not os.path.exists(svg),
          "--list output: exit %d, %r" % (p.returncode, p.stderr))
    doc3 = json.loads(json.dumps(doc))
    doc3["load"]["statements"] = []
    with open(listed, "w") as f:
        json.dump(doc3, f)
    p = report(tool, "--replay", listed, "--svg", svg)
    check(p.returncode == 1 and "no statements" in p.stderr and not os.path.exists(svg),
          "no statements: exit %d, %r" % (p.returncode, p.stderr))
    p = report(tool, "--replay", RECORDED)
    check(p.returncode == 2, "--replay without --svg: exit %d" % p.returncode)
    p = report(tool, "--replay", RECORDED, "--svg", svg, "--top", "0")
    check(p.returncode == 2, "--top 0: exit %d" % p.returncode)
    p = report(tool, "--replay", RECORDED, "--svg", svg, RECORDED)
    check(p.returncode == 2, "--replay with a RUN.json: exit %d" % p.returncode)

    for name in os.listdir(tmp):
        os.remove(os.path.join(tmp, name))
    os.rmdir(tmp)
    if failures:
        print("%d failures" % len(failures))
        sys.exit(1)
    print("OK")


if __name__ == "__main__":
    main()
