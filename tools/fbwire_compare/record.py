# SPDX-License-Identifier: MIT
"""One run's figures (docs/compare.schema.json) from the files the run left next to its log.

RUNPATH.log is sysbench's own output, RUNPATH.cpu.json fbwire-cpu's, RUNPATH.turns.json the
capture's count (captured runs), RUNPATH.report.json the fbwire/fbclient driver's report and
RUNPATH.link.json fbwire-link's (runs at a distance). A figure that was not measured is None and
not_available says why; never 0.
"""
import json
import os

from . import sysbench

FORMAT = "fbwire-compare-run/1"
# Figures per event, in the order the tables show them.
PER_EVENT = ("round_trips_per_event", "client_cpu_us_per_event", "server_cpu_us_per_event",
             "bytes_sent_per_event", "bytes_received_per_event")
CAPTURED = ("round_trips_per_event", "bytes_sent_per_event", "bytes_received_per_event")


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def cpu_figures(doc):
    """(client CPU s, server CPU s or None, why not) from fbwire-cpu's JSON."""
    if doc is None:
        return None, None, "no fbwire-cpu output"
    servers = doc.get("servers") or []
    server, why = None, "fbwire-cpu reported no server"
    if servers:
        s = servers[0]
        if s.get("available"):
            server = s.get("cpu_s")
        else:
            why = s.get("why") or "not available"
    return doc.get("client_cpu_s"), server, why


def link_figures(doc):
    """(CPU s, RTT ms it reports or None) from fbwire-link's JSON: its own CPU, user + system."""
    if not isinstance(doc, dict):
        return None, None
    cpu = doc.get("cpu_s")
    if cpu is None and isinstance(doc.get("cpu"), dict):
        c = doc["cpu"]
        sys_s = c.get("sys_s", c.get("system_s"))
        if c.get("user_s") is not None and sys_s is not None:
            cpu = c["user_s"] + sys_s
        else:
            cpu = c.get("total_s")
    if cpu is None and doc.get("user_s") is not None and doc.get("system_s") is not None:
        cpu = doc["user_s"] + doc["system_s"]
    return cpu, doc.get("measured_rtt_ms", doc.get("rtt_measured_ms"))


def own_connections(turns, client_ports):
    """The connections of `fbwire-pcap turns --json` whose client port is one of the run's."""
    conns = (turns or {}).get("connections") or []
    if not client_ports:
        return conns
    return [c for c in conns if int(c["client"].rsplit(":", 1)[1]) in client_ports]


def capture_problem(turns, client_ports, dropped=0):
    """Why a captured run's figures would be short, or None when the capture is complete: every
    connection of the run is in it from its SYN to its FIN or RST, with no gap, and the kernel
    dropped no packet (tcpdump's own count)."""
    if turns is None:
        return "fbwire-pcap turns gave no result"
    if dropped:
        return "tcpdump: %d packet(s) dropped by the kernel" % dropped
    if turns.get("truncated"):
        return "the capture file is truncated: %s" % turns["truncated"]
    conns = own_connections(turns, client_ports)
    if client_ports and len({int(c["client"].rsplit(":", 1)[1]) for c in conns}) < len(client_ports):
        return "%d of the run's %d connection(s) are not in the capture" % (
            len(client_ports) - len({int(c["client"].rsplit(":", 1)[1]) for c in conns}), len(client_ports))
    # sysbench has exited, so each of its connections ended: one without its FIN or RST in the
    # capture lost its end, and its count is short
    unended = sum(1 for c in conns if c["end"] == "capture") if client_ports else 0
    started = sum(1 for c in conns if not c.get("saw_syn", True)) if client_ports else 0
    broken = [c["problem"] for c in conns if c["problem"]]
    if not (unended or started or broken):
        return None
    parts = []
    if unended:
        parts.append("%d connection(s) without their FIN or RST" % unended)
    if started:
        parts.append("%d without their SYN" % started)
    if broken:
        parts.append("%d not followed (%s)" % (len(broken), broken[0]))
    return "%d connection(s) of the capture could not be followed to their end: %s" % (
        unended + started + len(broken), ", ".join(parts))


def capture_figures(out, turns, client_ports, events, problem=None):
    """problem: the runner's verdict on the capture (capture_problem, with tcpdump's drop count)."""
    na = out["not_available"]
    conns = own_connections(turns, client_ports)
    if client_ports:
        out["capture_note"] = "%d of %d connections: those of this sysbench process" % (
            len(conns), len(turns.get("connections") or []))
    else:
        out["capture_note"] = "every connection to the port (the process's were not identified)"
    problem = problem or capture_problem(turns, client_ports)
    t = {"connections": len(conns), "round_trips": sum(c["round_trips"] for c in conns),
         "bytes_sent": sum(c["bytes_sent"] for c in conns),
         "bytes_received": sum(c["bytes_received"] for c in conns)}
    if problem:
        for k in CAPTURED:
            na[k] = problem
    else:
        out["round_trips_per_event"] = t["round_trips"] / events
        out["bytes_sent_per_event"] = t["bytes_sent"] / events
        out["bytes_received_per_event"] = t["bytes_received"] / events
    out["capture"] = t


def record(path, run):
    """The run's JSON document. run: target, engine, workload, threads, repeat, exit, wall, loadavg,
    connection, options (list), cpu_note, client_ports (set), foreign, rtt_ms, rate, link_rtt_ms."""
    opts = list(run.get("options") or [])
    out = {"format": FORMAT, "target": run["target"], "engine": run["engine"], "workload": run["workload"],
           "threads": run["threads"], "repeat": run["repeat"], "captured": run["repeat"] == 0,
           "exit_status": run["exit"], "wall_s": run.get("wall"), "loadavg_1min": run.get("loadavg"),
           "connection": run.get("connection", ""), "options": opts,
           "driver": next((o.split("=", 1)[1] for o in opts if o.startswith("--db-driver=")), None),
           "rtt_ms": run.get("rtt_ms", 0.0), "rate": run.get("rate"),
           "link_rtt_ms": None, "link_cpu_us_per_event": None,
           "files": {"sysbench_output": os.path.basename(path + ".log")}, "not_available": {}}
    na = out["not_available"]
    sb = sysbench.parse_file(path + ".log")
    out["sysbench"] = sb
    events = sb["events"] if sb else 0
    out["tps"] = sb["tps"] if sb else None
    out["latency_p95_ms"] = sb["latency_ms"]["p95"] if sb else None
    out["events"] = events if sb else None
    for k in PER_EVENT + ("driver_round_trips_per_event", "driver_client_cpu_us_per_event"):
        out[k] = None
    if not sb or events <= 0:
        why = "sysbench printed no result (exit %d)" % run["exit"] if not sb else "no events"
        for k in ("tps", "latency_p95_ms") + PER_EVENT:
            na[k] = why
        return out
    cpu_figs(out, path, run, events)
    turns = load(path + ".turns.json")
    if turns is not None:
        out["files"]["turns"] = os.path.basename(path + ".turns.json")
        capture_figures(out, turns, run.get("client_ports") or set(), events, run.get("capture_problem"))
        out["capture_attempts"] = run.get("capture_attempts", 1)
        out["capture_problem"] = run.get("capture_problem")
    else:
        for k in CAPTURED:
            na[k] = "not captured (only the captured run of each case is)" if run["repeat"] else "no capture"
    # The Firebird drivers count their own round trips and client CPU inside driver calls
    rep = load(path + ".report.json")
    if rep is not None:
        out["files"]["driver_report"] = os.path.basename(path + ".report.json")
        out["driver_round_trips_per_event"] = rep.get("round_trips_per_event")
        out["driver_client_cpu_us_per_event"] = (rep.get("totals") or {}).get("cpu_us_per_event")
        out["server_version"] = rep.get("server_version")
        # fbclient: which libfbclient ran and its version (--fbclient-library; a target BASE@LIBRARY)
        out["client_library"] = (rep.get("connection") or {}).get("client_library")
    else:
        na["driver_round_trips_per_event"] = "sysbench's own %s driver counts no round trips" % out["driver"]
    link_figs(out, path, run, events)
    return out


def cpu_figs(out, path, run, events):
    na = out["not_available"]
    cpu = load(path + ".cpu.json")
    if cpu is not None:
        out["files"]["cpu"] = os.path.basename(path + ".cpu.json")
    client, server, why = cpu_figures(cpu)
    if cpu is None and run.get("cpu_note"):
        why = run["cpu_note"]
    if client is not None:
        out["client_cpu_us_per_event"] = client * 1e6 / events
    else:
        na["client_cpu_us_per_event"] = run.get("cpu_note") or "no fbwire-cpu output"
    out["foreign_connections"] = run.get("foreign", 0)
    if out["foreign_connections"]:  # shared test servers: their CPU is not this run's alone
        na["server_cpu_us_per_event"] = ("%d other client connection(s) to the server during the run"
                                         % out["foreign_connections"])
    elif server == 0:  # /proc counts clock ticks: no tick is "too little to see", not "no CPU"
        na["server_cpu_us_per_event"] = ("under the server CPU resolution (%g s) over the whole run"
                                         % ((cpu or {}).get("server_cpu_resolution_s") or 0.01))
    elif server is not None:
        out["server_cpu_us_per_event"] = server * 1e6 / events
    else:
        na["server_cpu_us_per_event"] = why


def link_figs(out, path, run, events):
    na = out["not_available"]
    if not run.get("rtt_ms") and not run.get("rate"):
        why = "direct: no link"
        na["link_rtt_ms"] = na["link_cpu_us_per_event"] = why
        return
    out["link_rtt_ms"] = run.get("link_rtt_ms")
    if out["link_rtt_ms"] is None:
        na["link_rtt_ms"] = run.get("link_note") or "the link's RTT was not measured"
    doc = load(path + ".link.json")
    if doc is not None:
        out["files"]["link"] = os.path.basename(path + ".link.json")
    cpu, _ = link_figures(doc)
    # how late the link delivered after each chunk's due time: its own timer error, apart from
    # the endpoints' (docs/fbwire-link.md)
    out["link_late_us"] = doc.get("late_us") if isinstance(doc, dict) else None
    if cpu is not None:
        out["link_cpu_us_per_event"] = cpu * 1e6 / events
    else:
        na["link_cpu_us_per_event"] = "no CPU figure in fbwire-link's JSON" if doc else "no fbwire-link JSON"
