#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""compare_check.py - the checks of tests/sysbench/compare.sh on an fbwire-compare OUTDIR.

  compare_check.py loopback OUTDIR CPU_TOOL REPO   the --quick comparison of five targets
  compare_check.py rtt OUTDIR                      the --rtt 0,1 comparison: measured and predicted TPS per RTT
"""
import glob
import json
import re
import sys

bad = 0


def check(what, cond):
    global bad
    print(("ok: " if cond else "FAIL: ") + what)
    bad |= not cond


def loopback(out, cpu_tool, repo):
    s = json.load(open(out + "/summary.json"))
    check("5 cases: 1 workload x 5 targets", len(s["cases"]) == 5)
    check("every case has its TPS", all(c["tps"] and c["tps"]["median"] > 0 for c in s["cases"]))
    check("every case has round trips from its capture",
          all(c["round_trips_per_event"] and c["round_trips_per_event"]["median"] > 0 for c in s["cases"]))
    md = open(out + "/summary.md").read()
    check("summary.md has the TPS table with every target",
          all(t in md for t in ("| pg |", "| mariadb |", "| fb3-fbwire |", "| fb4-fbwire |", "| fb3-ac |")))

    import jsonschema
    schema = json.load(open(repo + "/docs/compare.schema.json"))
    figs = ("tps", "latency_p95_ms", "round_trips_per_event", "client_cpu_us_per_event", "server_cpu_us_per_event",
            "bytes_sent_per_event", "bytes_received_per_event", "driver_round_trips_per_event")
    nruns = 0
    for path in glob.glob(out + "/runs/*.json"):
        d = json.load(open(path))
        if d.get("format") != "fbwire-compare-run/1":
            continue
        nruns += 1
        try:
            jsonschema.validate(d, schema)
        except jsonschema.ValidationError as e:
            check("%s follows docs/compare.schema.json: %s" % (path, e.message), False)
        for k in figs:
            if d[k] is None and not d["not_available"].get(k):
                check("%s: %s is null without a reason" % (path, k), False)
            if d[k] == 0:
                check("%s: %s is 0" % (path, k), False)
    check("10 run files, each valid and every missing figure with its reason", nruns == 10 and not bad)

    def run(tag):
        return json.load(open("%s/runs/%s.json" % (out, tag)))
    # one run against sysbench's own output
    tag = "oltp_point_select-t2-pg-r1"
    r, log = run(tag), open("%s/runs/%s.log" % (out, tag)).read()
    tps = float(re.search(r"transactions:\s+\d+\s+\(([\d.]+) per sec", log).group(1))
    ev = int(re.search(r"total number of events:\s+(\d+)", log).group(1))
    p95 = float(re.search(r"95th percentile:\s+([\d.]+)", log).group(1))
    check("%s: TPS %.2f = sysbench's %.2f" % (tag, r["tps"], tps), r["tps"] == tps)
    check("%s: events %d = sysbench's %d" % (tag, r["events"], ev), r["events"] == ev)
    check("%s: p95 %.2f = sysbench's %.2f" % (tag, r["latency_p95_ms"], p95), r["latency_p95_ms"] == p95)
    check("%s: the case's median is this run's TPS (one run)" % tag,
          next(c for c in s["cases"] if c["target"] == "pg" and c["workload"] == "oltp_point_select")["tps"]["median"] == tps)
    check("%s: not captured: round trips null with a reason" % tag,
          r["round_trips_per_event"] is None and r["not_available"].get("round_trips_per_event"))
    check("%s: sysbench's pgsql driver counts no round trips: null with a reason" % tag,
          r["driver_round_trips_per_event"] is None and r["not_available"].get("driver_round_trips_per_event"))
    if not cpu_tool:
        check("%s: without fbwire-cpu, CPU is null with a reason" % tag,
              r["client_cpu_us_per_event"] is None and r["not_available"].get("client_cpu_us_per_event"))
    else:
        check("%s: client and server CPU per event measured" % tag,
              (r["client_cpu_us_per_event"] or 0) > 0 and (r["server_cpu_us_per_event"] or 0) > 0)
    # captured runs against the protocols
    c = run("oltp_point_select-t2-pg-cap")
    check("pg point select: %.3f round trips per event from the capture (1 expected)" % c["round_trips_per_event"],
          0.98 <= c["round_trips_per_event"] <= 1.05)
    check("pg capture counted only the sysbench process's 2 connections",
          c["capture"]["connections"] == 2)
    for tag in ("oltp_point_select-t2-fb3-fbwire-cap", "oltp_point_select-t2-fb4-fbwire-cap"):
        c = run(tag)
        rep = json.load(open("%s/runs/%s.report.json" % (out, tag)))
        cap, drv = c["capture"]["round_trips"], rep["totals"]["round_trips_all"]
        check("%s: capture %d round trips vs the driver's own %d (connections %d)" % (tag, cap, drv, c["capture"]["connections"]),
              c["capture"]["connections"] == 2 and drv <= cap <= drv + 4 * c["capture"]["connections"])
        check("%s: capture bytes each way > 0" % tag, c["bytes_sent_per_event"] > 0 and c["bytes_received_per_event"] > 0)


def rtt(out):
    s = json.load(open(out + "/summary.json"))
    check("RTT 0 and 1 ms in the summary", s["rtt_ms"] == [0.0, 1.0])
    far = [c for c in s["cases"] if c["rtt_ms"] == 1.0]
    check("every target has a case at 1 ms", len(far) == len(s["targets"]) and far)
    for c in far:
        check("%s at 1 ms: measured TPS %s" % (c["target"], c["tps"]), c["tps"] and c["tps"]["median"] > 0)
        check("%s at 1 ms: predicted TPS %s from the loopback run" % (c["target"], c["predicted_tps"]),
              (c["predicted_tps"] or 0) > 0 and c["model_difference"] is not None)
        check("%s at 1 ms: the link's RTT measured (%s ms)" % (c["target"], c["link_rtt_ms"]),
              c["link_rtt_ms"] and c["link_rtt_ms"]["median"] >= 1.0)
        check("%s at 1 ms: predicted TPS %s at the link's measured RTT too" % (c["target"], c.get("predicted_tps_link_rtt")),
              0 < (c.get("predicted_tps_link_rtt") or 0) <= c["predicted_tps"]
              and c.get("model_difference_link_rtt") is not None)
        loop = next(x for x in s["cases"] if x["rtt_ms"] == 0 and x["target"] == c["target"])
        check("%s: slower at 1 ms (%s) than direct (%s)" % (c["target"], c["tps"]["median"], loop["tps"]["median"]),
              c["tps"]["median"] < loop["tps"]["median"])
    for path in glob.glob(out + "/runs/*-rtt1-r1.json"):
        d = json.load(open(path))
        check("%s: rtt_ms 1 and the link's CPU" % path, d["rtt_ms"] == 1.0 and (d["link_cpu_us_per_event"] or 0) > 0)
    md = open(out + "/summary.md").read()
    check("summary.md has TPS and latency against RTT", "TPS against RTT" in md and "latency p95 (ms) against RTT" in md)
    check("summary.md has the model at the link's measured RTT", "predicted at the link's measured RTT" in md)


if __name__ == "__main__":
    if sys.argv[1] == "loopback":
        loopback(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        rtt(sys.argv[2])
    sys.exit(1 if bad else 0)
