# SPDX-License-Identifier: MIT
"""summary.json and summary.md of an output directory: medians and ranges per workload, thread
count, target and RTT; at a distance, TPS and latency against RTT and the round-trip model."""
import glob
import json
import os
import re

from . import record, stats

FORMAT = "fbwire-compare-summary/1"
FLAG = 0.15  # the model explains the time when measured and predicted are within 15%
# A run whose link wrote its median chunk this late (µs) was not running on time: fbwire-link wakes
# up to 100 µs early and polls, so a median this late means the host had stopped the machine's
# CPUs, the clients' and servers' with the relay's. Such a run is slow for reasons other than round
# trips (docs/compare.md, "The model next to the measurement").
STALLED_LINK_US = 20


def load_runs(outdir):
    runs = []
    for path in sorted(glob.glob(os.path.join(outdir, "runs", "*.json"))):
        d = record.load(path)
        if d and d.get("format") == record.FORMAT:
            runs.append(d)
    return runs


def read_meta(outdir):
    meta = {}
    try:
        with open(os.path.join(outdir, "meta.txt")) as f:
            for line in f:
                if "=" in line:
                    k, v = line.rstrip("\n").split("=", 1)
                    meta[k] = v
    except OSError:
        pass
    return meta


def rtt_of(r):
    return float(r.get("rtt_ms") or 0.0)


def late_p50(run):
    """The median lateness (µs) of the run's link, None without a link or its figures."""
    late = run.get("link_late_us")
    return late.get("p50") if isinstance(late, dict) else None


def stalled(runs):
    """How many of the runs had a link whose median chunk was STALLED_LINK_US late or more; None
    when no run went through a link that reported its lateness."""
    v = [late_p50(r) for r in runs]
    v = [x for x in v if x is not None]
    return sum(x >= STALLED_LINK_US for x in v) if v else None


def case(sel, w, n, t, rtt, no_capture="no captured run"):
    timed = [r for r in sel if not r["captured"] and r["exit_status"] == 0]
    capd = [r for r in sel if r["captured"] and r["exit_status"] == 0]
    mr = stats.median_range
    c = {"workload": w, "threads": n, "target": t, "rtt_ms": rtt, "rate": sel[0].get("rate"),
         "engine": sel[0]["engine"], "driver": sel[0]["driver"], "runs": len(timed),
         "failed_runs": sum(r["exit_status"] != 0 for r in sel),
         "tps": mr(r["tps"] for r in timed),
         "latency_p95_ms": mr(r["latency_p95_ms"] for r in timed),
         "client_cpu_us_per_event": mr(r["client_cpu_us_per_event"] for r in timed),
         "server_cpu_us_per_event": mr(r["server_cpu_us_per_event"] for r in timed),
         "driver_round_trips_per_event": mr(r.get("driver_round_trips_per_event") for r in timed),
         "link_rtt_ms": mr(r.get("link_rtt_ms") for r in timed + capd),
         "link_cpu_us_per_event": mr(r.get("link_cpu_us_per_event") for r in timed),
         "link_late_p50_us": mr(late_p50(r) for r in timed),
         "stalled_link_runs": stalled(timed)}
    for k in record.CAPTURED:
        c[k] = mr(r[k] for r in capd)
    na = c["not_available"] = {}
    for k in ("tps", "latency_p95_ms", "client_cpu_us_per_event", "server_cpu_us_per_event"):
        if c[k] is None:
            na[k] = next((r["not_available"].get(k) for r in timed + sel if r["not_available"].get(k)), "no run")
    for k in record.CAPTURED:
        if c[k] is None:
            na[k] = next((r["not_available"].get(k) for r in capd if r["not_available"].get(k)), no_capture)
    return c


def predict(loop, rtt_ms):
    """TPS at RTT r from the loopback case alone: per event and thread, the loopback event time
    (threads / TPS) plus round trips per event x r. None when the loopback lacks a figure."""
    if not loop or not loop["tps"] or not loop["tps"]["median"]:
        return None
    rt = loop["round_trips_per_event"] or loop["driver_round_trips_per_event"]
    if not rt:
        return None
    n = loop["threads"]
    return n / (n / loop["tps"]["median"] + rt["median"] * rtt_ms / 1000.0)


def difference(measured, predicted):
    """(measured - predicted) / predicted; None when either figure is missing."""
    return (measured - predicted) / predicted if predicted and measured is not None else None


def model(cases):
    """Predicted next to measured for every case at a distance (and the loopback's own)."""
    for c in cases:
        loop = next((x for x in cases if x["rtt_ms"] == 0 and x["workload"] == c["workload"]
                     and x["threads"] == c["threads"] and x["target"] == c["target"]), None)
        p = predict(loop, c["rtt_ms"])
        c["predicted_tps"] = p
        m = c["tps"]["median"] if c["tps"] else None
        c["model_difference"] = difference(m, p)
        c["model_flag"] = c["model_difference"] is not None and abs(c["model_difference"]) > FLAG
        if p is None and c["rtt_ms"]:
            c["not_available"]["predicted_tps"] = ("no loopback run (RTT 0) to predict from" if not loop else
                                                   "the loopback run has no TPS or round-trip count")
        # The same model at the RTT the link was measured to give (a ping through it before the
        # run): what the round trips explain once the relay's own lateness is counted as wire.
        lr = c["link_rtt_ms"]["median"] if c["link_rtt_ms"] and c["rtt_ms"] else None
        c["predicted_tps_link_rtt"] = predict(loop, lr) if lr is not None else None
        c["model_difference_link_rtt"] = difference(m, c["predicted_tps_link_rtt"])


def summarize(outdir, render=None):
    """Writes summary.json and summary.md; render(outdir, summary) -> chart file names."""
    runs = load_runs(outdir)
    meta = read_meta(outdir)
    targets = [k[len("target."):] for k in meta if k.startswith("target.")]
    workloads = [w for w in meta.get("workloads", "").split(",") if w]
    threads = [int(t) for t in meta.get("threads", "").split(",") if t]
    rtts = [float(r) for r in meta.get("rtt_ms", "").split(",") if r]
    for r in runs:  # a partial or re-run directory: whatever is there
        for lst, v in ((targets, r["target"]), (workloads, r["workload"]), (threads, r["threads"]),
                       (rtts, rtt_of(r))):
            if v not in lst:
                lst.append(v)
    rtts = sorted(rtts) or [0.0]
    cases = []
    for w in workloads:
        for n in threads:
            for t in targets:
                for rtt in rtts:
                    sel = [r for r in runs if r["workload"] == w and r["threads"] == n and r["target"] == t
                           and rtt_of(r) == rtt]
                    if sel:
                        once = meta.get("capture") == "once" and rtt != rtts[0]
                        cases.append(case(sel, w, n, t, rtt, "captured at RTT %g ms only (--capture once)" % rtts[0]
                                          if once else "no captured run"))
    model(cases)
    summary = {"format": FORMAT, "meta": meta, "targets": targets, "workloads": workloads,
               "threads": threads, "rtt_ms": rtts, "cases": cases,
               "loadavg_1min": stats.median_range(r.get("loadavg_1min") for r in runs)}
    with open(os.path.join(outdir, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    charts = render(outdir, summary) if render else []
    with open(os.path.join(outdir, "summary.md"), "w") as f:
        f.write(markdown(summary, charts))
    bad = [c for c in cases if c["tps"] is None]
    return summary, charts, bad


def find(cs, w, t, rtt=0.0):
    return next((c for c in cs if c["workload"] == w and c["target"] == t and c["rtt_ms"] == rtt), None)


def plural(n):
    return "%d thread%s" % (n, "" if n == 1 else "s")


def rtt_label(r, rate=None):
    """RTT 0 is direct unless a --rate put a link in front of the server anyway."""
    return "direct" if r == 0 and not rate else "%g ms" % r


def header(s):
    m, out = s["meta"], []
    out.append("# fbwire-compare: %s\n" % ", ".join(s["targets"]))
    out.append("Machine: %s, %s, %s MB, %s. %s. Load average at the start: %s.\n" % (
        m.get("cpu", "?"), m.get("host", "?"), int(m.get("memory_kb", "0") or 0) // 1024,
        m.get("os", "?"), m.get("sysbench", "?"), m.get("loadavg", "?")))
    loads = s.get("loadavg_1min")
    if loads:
        out.append("Load average (1 min) after each run: median %s, highest %s, over %d runs.\n" % (
            stats.num(loads["median"], 2), stats.num(loads["max"], 2), loads["n"]))
    more = sorted(k[8:] for k in m if re.match(r"^version\.fb[0-9]+$", k) and k not in ("version.fb3", "version.fb4"))
    out.append("Servers: PostgreSQL %s, MariaDB %s, Firebird %s (fb3) and %s (fb4)%s.\n" % (
        m.get("version.pg", "?"), m.get("version.mariadb", "?"), m.get("version.fb3", "?"),
        m.get("version.fb4", "?"), "".join(", %s %s (%s)" % (n, m[k], k[8:]) for k, n in (
            ("version.pg17", "PostgreSQL"), ("version.mariadb118", "MariaDB")) + tuple(
            ("version." + e, "Firebird") for e in more) if k in m)))
    out.append("Runs: %s s each, %s interleaved repeat(s) per case, %s table(s) x %s rows, threads %s, "
               "crypt %s; round trips and bytes from one captured run of %s s per case (capture: %s); "
               "CPU: %s. %s\n" % (
                   m.get("time_s"), m.get("runs"), m.get("tables"), m.get("table_size"),
                   m.get("threads"), "on (TLS / wire crypt)" if m.get("crypt") == "1" else "off",
                   m.get("capture_time_s"), m.get("capture"), m.get("cpu_tool"), m.get("date", "")))
    if any(r for r in s.get("rtt_ms", [])) or m.get("rate"):
        out.append("Distance: RTT %s ms through one fbwire-link per server (0 = direct), rate %s; link: %s.\n" % (
            m.get("rtt_ms"), m.get("rate") or "unlimited", m.get("link_tool", "?")))
    out.append("Settings:\n")
    for k in sorted(k for k in m if k.startswith("setting.") or k.startswith("connection.")):
        out.append("- `%s`: `%s`" % (k, m[k]))
    out.append("")
    return out


def loopback_tables(s, n, cs):
    out = ["## %s: TPS, median of the timed runs (range)\n" % plural(n),
           "| workload | " + " | ".join(s["targets"]) + " |", "|---|" + "---:|" * len(s["targets"])]
    rtt0 = min(s["rtt_ms"])
    for w in s["workloads"]:
        row = []
        for t in s["targets"]:
            c = find(cs, w, t, rtt0)
            row.append(stats.fmt(c["tps"]) if c else "")
        out.append("| %s | %s |" % (w, " | ".join(row)))
    out.append("")
    out.append("## %s: per event (medians)\n" % plural(n))
    out.append("| workload | target | TPS | p95 ms | round trips | client CPU µs | server CPU µs "
               "| bytes sent | bytes received | driver round trips |")
    out.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for w in s["workloads"]:
        for t in s["targets"]:
            c = find(cs, w, t, rtt0)
            if not c:
                continue
            def med(k, d):
                return stats.fmt(c[k]["median"] if c[k] else None, d)
            out.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                w, t, med("tps", 0), med("latency_p95_ms", 2), med("round_trips_per_event", 2),
                med("client_cpu_us_per_event", 1), med("server_cpu_us_per_event", 1),
                med("bytes_sent_per_event", 0), med("bytes_received_per_event", 0),
                med("driver_round_trips_per_event", 2)))
    out.append("")
    return out


def distance_tables(s, n, cs):
    """TPS, the model and p95 against RTT for each workload at this thread count."""
    out = []
    rtts = s["rtt_ms"]
    for w in s["workloads"]:
        if not any(find(cs, w, t, r) for t in s["targets"] for r in rtts):
            continue
        out.append("## %s, %s: TPS against RTT, measured / predicted (difference)\n" % (w, plural(n)))
        out.append("Predicted from the loopback run alone: threads / (threads / TPS + round trips per "
                   "event x RTT). A difference over 15% is marked **!**.\n")
        out.append("| target | round trips | " + " | ".join(rtt_label(r, s["meta"].get("rate")) for r in rtts) + " |")
        out.append("|---|---:|" + "---:|" * len(rtts))
        for t in s["targets"]:
            row = []
            for r in rtts:
                c = find(cs, w, t, r)
                row.append(model_cell(c) if c else "")
            loop = find(cs, w, t, 0.0)
            rt = loop and (loop["round_trips_per_event"] or loop["driver_round_trips_per_event"])
            out.append("| %s | %s | %s |" % (t, stats.fmt(rt["median"] if rt else None, 2), " | ".join(row)))
        out.append("")
        out.append("## %s, %s: latency p95 (ms) against RTT\n" % (w, plural(n)))
        out.append("| target | " + " | ".join(rtt_label(r, s["meta"].get("rate")) for r in rtts) + " |")
        out.append("|---|" + "---:|" * len(rtts))
        for t in s["targets"]:
            cells = []
            for r in rtts:
                c = find(cs, w, t, r)
                cells.append(stats.fmt(c["latency_p95_ms"], 2) if c else "")
            out.append("| %s | %s |" % (t, " | ".join(cells)))
        out.append("")
        links = [c for c in cs if c["workload"] == w and c["rtt_ms"] and c["link_rtt_ms"]]
        if links:
            out.append("Link RTT measured (ms): " + ", ".join(
                "%s at %s: %s" % (c["target"], rtt_label(c["rtt_ms"], c["rate"]), stats.fmt(c["link_rtt_ms"], 3))
                for c in links) + "\n")
            out += link_model_table(s, w, n, cs)
            out += stalled_table(s, w, n, cs)
    return out


def distance_table(s, w, n, cs, heading, cell):
    """A table of one figure per target and RTT at a distance: heading (a list of lines under the
    "## workload, threads:" title), then cell(case) per target and RTT, "n/a" without a case."""
    rtts = [r for r in s["rtt_ms"] if r]
    out = ["## %s, %s: %s" % (w, plural(n), heading[0])] + heading[1:] + [
        "| target | " + " | ".join(rtt_label(r, s["meta"].get("rate")) for r in rtts) + " |",
        "|---|" + "---:|" * len(rtts)]
    for t in s["targets"]:
        cases = [find(cs, w, t, r) for r in rtts]
        out.append("| %s | %s |" % (t, " | ".join(cell(c) if c else "n/a" for c in cases)))
    out.append("")
    return out


def stalled_table(s, w, n, cs):
    """Per case, the link's median lateness and how many runs had a stalled link."""
    def cell(c):
        if c.get("stalled_link_runs") is None:
            return "n/a"
        late = c["link_late_p50_us"]
        return "%s (%d of %d stalled)" % (stats.fmt(late), c["stalled_link_runs"], late["n"])
    return distance_table(s, w, n, cs, [
        "the link's median lateness (µs), and runs with a stalled link\n",
        "A run whose link wrote its median chunk %d µs late or more had the machine stopped under it "
        "(the link wakes early and polls): it is slow for reasons other than round trips.\n" % STALLED_LINK_US],
        cell)


def link_model_table(s, w, n, cs):
    """The model again with the link's measured RTT in place of the asked one."""
    def cell(c):
        d = c.get("model_difference_link_rtt")
        return "%s (%+.0f%%)" % (stats.fmt(c["predicted_tps_link_rtt"]), d * 100) if d is not None else "n/a"
    return distance_table(s, w, n, cs, [
        "predicted at the link's measured RTT (difference of the measured TPS)\n"], cell)


def model_cell(c):
    m = stats.fmt(c["tps"]["median"] if c["tps"] else None)
    if c["rtt_ms"] == 0:
        return m
    p = stats.fmt(c.get("predicted_tps"))
    d = c.get("model_difference")
    if d is None:
        return "%s / %s" % (m, p)
    return "%s / %s (%+.0f%%%s)" % (m, p, d * 100, " **!**" if c.get("model_flag") else "")


def markdown(s, charts):
    out = header(s)
    distance = len(s["rtt_ms"]) > 1 or any(s["rtt_ms"])
    for n in s["threads"]:
        cs = [c for c in s["cases"] if c["threads"] == n]
        if not cs:
            continue
        out += loopback_tables(s, n, cs)
        if distance:
            out += distance_tables(s, n, cs)
    flagged = [c for c in s["cases"] if c.get("model_flag")]
    if flagged:
        out.append("Measured and predicted differ by more than 15%: the round-trip count does not explain "
                   "the time alone (commit fsyncs, lock waits, CPU contention or bandwidth):\n")
        for c in flagged:
            out.append("- %s, %s, %s at %s: measured %s, predicted %s (%+.0f%%)" % (
                c["workload"], plural(c["threads"]), c["target"], rtt_label(c["rtt_ms"], c["rate"]),
                stats.fmt(c["tps"]["median"]), stats.fmt(c["predicted_tps"]), c["model_difference"] * 100))
        out.append("")
    na = sorted({(k, v) for c in s["cases"] for k, v in c["not_available"].items()})
    if na:
        out.append("Not available (n/a above):\n")
        for k, v in na:
            out.append("- %s: %s" % (k, v))
        out.append("")
    if charts:
        out.append("## Charts\n")
        for c in charts:
            out.append("![%s](%s)" % (c, c))
        out.append("")
    return "\n".join(out) + "\n"
