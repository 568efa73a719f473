#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""rt_check.py - checks of the wire statistics report for tests/sysbench/rt-accounting.sh.

  rt_check.py schema SCHEMA REPORT.json...          validate against docs/report.schema.json
  rt_check.py sums REPORT.json                      classes sum to the per-op totals
  rt_check.py points REPORT.json N PER              point_select: N executions, N*PER round trips
  rt_check.py pipe REPORT.json N LIMIT exact|max   a pipelined run: N events, no errors, round
                                                    trips per event == LIMIT or <= LIMIT
  rt_check.py field REPORT.json|PCAP.json PATH      print a value (dotted path, [i] for arrays)
  rt_check.py pcapconn PCAP.json REPORT.json        the capture connection that is this run's:
                                                    prints "round_trips op_execute op_fetch"
  rt_check.py insert REPORT.json N                  unprepared INSERTs: N executions of 1.00 to
                                                    1.02 round trips each; prints "executions rt"
Exit status 0 when the check holds, 1 (with a message) when not.
"""
import json
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def schema(args):
    import jsonschema
    s = load(args[0])
    jsonschema.Draft202012Validator.check_schema(s)
    v = jsonschema.Draft202012Validator(s)
    for path in args[1:]:
        errors = sorted(v.iter_errors(load(path)), key=lambda e: list(e.path))
        if errors:
            fail("%s: %s at %s" % (path, errors[0].message, list(errors[0].path)))
    print("schema OK:", len(args) - 1, "file(s)")


def sums(args):
    d = load(args[0])
    t = d["totals"]
    cls = d["classes"]
    for key in ("packets_sent", "packets_received", "bytes_sent", "bytes_received"):
        by_class = sum(c[key] for c in cls)
        by_op = sum(o[key] for o in d["ops"])
        if not (by_class == by_op == t[key]):
            fail("%s: classes %d, ops %d, totals %d" % (key, by_class, by_op, t[key]))
    rt_all = sum(c["round_trips"] for c in cls)
    rt_stmt = sum(c["round_trips"] for c in cls if c["class"] not in ("prepare", "session"))
    if rt_all != t["round_trips_all"] or rt_stmt != t["round_trips"]:
        fail("round trips: classes %d/%d, totals %d/%d" % (rt_stmt, rt_all, t["round_trips"],
                                                        t["round_trips_all"]))
    ev = d["run"]["events"]
    if ev and abs(d["round_trips_per_event"] - t["round_trips"] / ev) > 1e-6:
        fail("round_trips_per_event %f != %d / %d" % (d["round_trips_per_event"], t["round_trips"], ev))
    # Client CPU: the statement classes add up to the total, and a statement that went to the
    # server cost some CPU but not more than the run's whole duration on every thread.
    cpu_stmt = sum(c["cpu_ns"] for c in cls if c["class"] not in ("prepare", "session"))
    if cpu_stmt != t["cpu_ns"]:
        fail("cpu_ns: classes %d, totals %d" % (cpu_stmt, t["cpu_ns"]))
    if t["executions"] and not 0 < t["cpu_ns"] <= d["run"]["duration_s"] * 1e9 * d["run"]["threads"]:
        fail("cpu_ns %d outside (0, duration x threads] for %d executions" % (t["cpu_ns"], t["executions"]))
    if ev and abs(t["cpu_us_per_event"] - t["cpu_ns"] / 1e3 / ev) > 1e-6:
        fail("cpu_us_per_event %f != %d ns / %d" % (t["cpu_us_per_event"], t["cpu_ns"], ev))
    # How the CPU was taken (docs/report.md): every class says how many of its calls were timed;
    # every-call times all of them, sampled times the first calls of a connection in full, so a
    # run this short is exact, and a longer one is an estimate from a part of its calls.
    stmt = [c for c in cls if c["class"] not in ("prepare", "session")]
    for c in cls:
        if not 0 <= c["cpu_measured_calls"] <= c["cpu_calls"]:
            fail("%s: %d calls timed of %d" % (c["class"], c["cpu_measured_calls"], c["cpu_calls"]))
        if c["cpu_measured_calls"] == 0 and c["cpu_ns"] != 0:
            fail("%s: a CPU figure with no call timed" % c["class"])
    if sum(c["cpu_calls"] for c in stmt) != t["cpu_calls"] or \
            sum(c["cpu_measured_calls"] for c in stmt) != t["cpu_measured_calls"]:
        fail("cpu calls: classes and totals disagree")
    if t["cpu_calls"] < t["executions"]:
        fail("cpu_calls %d < executions %d" % (t["cpu_calls"], t["executions"]))
    if t["cpu_method"] == "every-call" and t["cpu_measured_calls"] != t["cpu_calls"]:
        fail("every-call timed %d of %d calls" % (t["cpu_measured_calls"], t["cpu_calls"]))
    if t["cpu_method"] == "sampled" and t["cpu_calls"] <= 64 and t["cpu_measured_calls"] != t["cpu_calls"]:
        fail("sampled: a run of %d calls must be timed in full, %d were" %
             (t["cpu_calls"], t["cpu_measured_calls"]))
    print("sums OK: %d round trips, %d packets sent" % (rt_all, t["packets_sent"]))


def points(args):
    d = load(args[0])
    n, per = int(args[1]), int(args[2])
    ps = [c for c in d["classes"] if c["class"] == "point_select"]
    if len(ps) != 1:
        fail("no point_select class")
    c = ps[0]
    if c["executions"] != n or c["round_trips"] != n * per:
        fail("point_select: %d executions, %d round trips; expected %d and %d" %
             (c["executions"], c["round_trips"], n, n * per))
    if d["run"]["events"] != n or abs(d["round_trips_per_event"] - per) > 1e-9:
        fail("events %d, round trips per event %f" % (d["run"]["events"], d["round_trips_per_event"]))
    print("points OK: %d selects, %d round trips each" % (n, per))


def pipe(args):
    d = load(args[0])
    n, limit, how = int(args[1]), float(args[2]), args[3]
    run = d["run"]
    if run["events"] != n or run.get("errors", 0):
        fail("events %d (want %d), errors %s" % (run["events"], n, run.get("errors")))
    rpe = d["round_trips_per_event"]
    ok = abs(rpe - limit) < 1e-9 if how == "exact" else rpe <= limit + 1e-9
    if not ok:
        fail("round trips per event %.4f, want %s %.2f" % (rpe, "==" if how == "exact" else "<=", limit))
    print("pipe OK: %.4f round trips per event over %d events" % (rpe, n))


def field(args):
    v = load(args[0])
    for part in args[1].split("."):
        if part.endswith("]"):
            name, idx = part[:-1].split("[")
            v = v[name][int(idx)] if name else v[int(idx)]
        else:
            v = v[part]
    print(v)


def op_count(ops, name, key):
    if isinstance(ops, dict):
        return ops.get(name, {}).get(key, 0)
    return sum(o[key] for o in ops if o["name"] == name)


def pcapconn(args):
    cap, rep = load(args[0]), load(args[1])
    # Other tests may use the same server meanwhile: this run's connection is the one (fully
    # decoded) that sent as many op_attach, op_prepare_statement, op_execute and op_fetch packets
    # as the report says this run sent. Its round trips are then counted independently.
    keys = ("op_attach", "op_prepare_statement", "op_execute", "op_fetch")
    want = [op_count(rep["ops"], k, "packets_sent") for k in keys]
    mine = [c for c in cap["connections"] if c["problem"] is None and
            [op_count(c["ops"], k, "packets_sent") for k in keys] == want]
    if len(mine) != 1:
        fail("%d capture connections sent %s = %s" % (len(mine), "/".join(keys), want))
    c = mine[0]
    print(c["round_trips"], op_count(c["ops"], "op_execute", "packets_sent"),
          op_count(c["ops"], "op_fetch", "packets_sent"))


def insert(args):
    d = load(args[0])
    c = [k for k in d["classes"] if k["class"] == "insert"]
    execs, rt = (c[0]["executions"], c[0]["round_trips_per_execution"]) if c else (0, 0.0)
    print("%d %.4f" % (execs, rt))
    # the shared transaction restarts about once a second, which may add a wait to one event
    sys.exit(0 if execs == int(args[1]) and 1.0 <= rt <= 1.02 else 1)


if __name__ == "__main__":
    cmds = {"schema": schema, "sums": sums, "points": points, "pipe": pipe, "field": field, "pcapconn": pcapconn,
            "insert": insert}
    if len(sys.argv) < 3 or sys.argv[1] not in cmds:
        print(__doc__)
        sys.exit(2)
    cmds[sys.argv[1]](sys.argv[2:])
