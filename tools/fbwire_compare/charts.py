# SPDX-License-Identifier: MIT
"""The summary's charts, SVG, drawn with matplotlib (Debian's python3-matplotlib).

Why matplotlib rather than fbwire-report's own SVG writer (tools/fbwire-report/render.c): the
charts here are grouped bars whose width follows the number of workloads and targets, log axes
with readable ticks, wrapped titles, legends placed outside the data and log-log lines; the C writer
would need a layout engine for each of these. Its charts stay for the driver reports.
Without matplotlib, the loopback charts come from `fbwire-report --compare` as before.
"""
import os
import subprocess

from . import summary as sm

METRICS = {  # metric -> (title, field(s), axis label)
    "tps": ("TPS (median of the timed runs; bars: range)", ("tps",), "transactions per second"),
    "cpu": ("CPU per event, µs (median): the sysbench process and the server",
            ("client_cpu_us_per_event", "server_cpu_us_per_event"), "µs per event"),
    "rt": ("Round trips per event (the captured run)", ("round_trips_per_event",), "round trips per event"),
}


def have_matplotlib():
    try:
        import matplotlib  # noqa: F401
        return True
    except ImportError:
        return False


def _plt():
    import matplotlib
    matplotlib.use("svg")
    import matplotlib.pyplot as plt
    matplotlib.rcParams["svg.hashsalt"] = "fbwire"  # the same input gives the same file
    return plt


def scale(ax, values):
    """A log axis only when the values span more than 20x (bars of 40 and 40,000 TPS side by side);
    otherwise linear from 0, where a bar's height is its value. Plain numbers on both."""
    from matplotlib.ticker import FuncFormatter
    v = [x for x in values if x and x > 0]
    if v and max(v) / min(v) > 20:
        ax.set_yscale("log")
    else:
        ax.set_ylim(bottom=0)
    ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: "{:,g}".format(y)))
    ax.yaxis.set_minor_formatter(FuncFormatter(lambda y, _: ""))


def bars(path, s, n, metric):
    """Grouped bars, one group per workload that has data, one bar per target (its range as an
    error bar); for CPU, client and server are two panels side by side, never stacked."""
    title, fields, label = METRICS[metric]
    rtt0 = min(s["rtt_ms"])
    cs = [c for c in s["cases"] if c["threads"] == n and c["rtt_ms"] == rtt0]
    wls = [w for w in s["workloads"] if any(c["workload"] == w and any(c[f] for f in fields) for c in cs)]
    tgs = [t for t in s["targets"] if any(c["target"] == t and any(c[f] for f in fields) for c in cs)]
    if not wls or not tgs:
        return False
    plt = _plt()
    width = min(16, max(5.0, 1.6 + len(wls) * (0.35 * len(tgs) + 0.5)))
    fig, axes = plt.subplots(1, len(fields), figsize=(width * (1 if len(fields) == 1 else 0.75) * len(fields) ** 0.5,
                                                    4.2), squeeze=False, layout="constrained")
    bw = 0.8 / len(tgs)
    for ax, f in zip(axes[0], fields):
        for i, t in enumerate(tgs):
            xs, ys, lo, hi = [], [], [], []
            for j, w in enumerate(wls):
                c = sm.find(cs, w, t, rtt0)
                if c and c[f]:
                    xs.append(j - 0.4 + bw * (i + 0.5))
                    ys.append(c[f]["median"])
                    lo.append(c[f]["median"] - c[f]["min"])
                    hi.append(c[f]["max"] - c[f]["median"])
            ax.bar(xs, ys, bw * 0.9, label=t, yerr=[lo, hi] if any(lo + hi) else None, capsize=2)
        scale(ax, [c[f]["median"] for c in cs if c[f] and c["target"] in tgs and c["workload"] in wls])
        ax.set_xticks(range(len(wls)), [w.replace("_", "_\u200b") for w in wls],
                      rotation=20 if len(wls) > 3 else 0, ha="right" if len(wls) > 3 else "center", fontsize=8)
        ax.set_ylabel(label)
        if len(fields) > 1:
            ax.set_title(f.split("_")[0], fontsize=10)
        ax.grid(axis="y", which="both", alpha=0.3)
    axes[0][-1].legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))
    fig.suptitle("%s: %s" % (sm.plural(n), title), fontsize=10, wrap=True)
    fig.savefig(path)
    plt.close(fig)
    return True


def rtt_lines(path, s, w, n):
    """TPS against RTT, log-log, one line per target (measured solid, model dashed). Direct runs
    (RTT 0) cannot sit on a log axis: they are drawn at a quarter of the smallest RTT, labelled."""
    cs = [c for c in s["cases"] if c["threads"] == n and c["workload"] == w and c["tps"]]
    nz = sorted({c["rtt_ms"] for c in cs if c["rtt_ms"]})
    if not nz:
        return False
    x0 = nz[0] / 4
    pos = lambda r: r if r else x0  # noqa: E731
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.4, 4.2), layout="constrained")
    for t in s["targets"]:
        mine = sorted((c for c in cs if c["target"] == t), key=lambda c: c["rtt_ms"])
        if not mine:
            continue
        line, = ax.plot([pos(c["rtt_ms"]) for c in mine], [c["tps"]["median"] for c in mine], "o-", label=t)
        pred = [(pos(c["rtt_ms"]), c["predicted_tps"]) for c in mine if c["rtt_ms"] and c.get("predicted_tps")]
        if pred:
            ax.plot([x0] + [p[0] for p in pred], [mine[0]["tps"]["median"] if mine[0]["rtt_ms"] == 0 else pred[0][1]]
                    + [p[1] for p in pred], "--", color=line.get_color(), alpha=0.6, linewidth=1)
    ax.set_xscale("log")
    ax.set_yscale("log")
    from matplotlib.ticker import FuncFormatter
    ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: "{:,g}".format(y)))
    ticks = [x0] + nz
    ax.set_xticks(ticks, [sm.rtt_label(0, s["meta"].get("rate")).replace(" ms", "")] + ["%g" % r for r in nz])
    ax.minorticks_off()
    ax.set_xlabel("round-trip time added by fbwire-link, ms")
    ax.set_ylabel("transactions per second")
    ax.grid(which="both", alpha=0.3)
    ax.legend(fontsize=8, title="solid: measured, dashed: model", title_fontsize=8)
    ax.set_title("%s, %s: TPS against RTT" % (w, sm.plural(n)), fontsize=10, wrap=True)
    fig.savefig(path)
    plt.close(fig)
    return True


def render(outdir, s, report_tool=None):
    """Every chart of the summary; returns their file names."""
    out = []
    if not have_matplotlib():
        return render_with_report(outdir, s, report_tool)
    for n in s["threads"]:
        for metric in METRICS:
            name = "%s-t%d.svg" % (metric, n)
            if bars(os.path.join(outdir, name), s, n, metric):
                out.append(name)
        for w in s["workloads"]:
            name = "rtt-%s-t%d.svg" % (w, n)
            if rtt_lines(os.path.join(outdir, name), s, w, n):
                out.append(name)
    return out


def render_with_report(outdir, s, report_tool):
    charts = []
    if not report_tool:
        return charts
    for n in s["threads"]:
        for metric in METRICS:
            name = "%s-t%d.svg" % (metric, n)
            rc = subprocess.call([report_tool, "--compare", os.path.join(outdir, "summary.json"), "--metric", metric,
                                  "--threads", str(n), "--svg", os.path.join(outdir, name)])
            if rc == 0:
                charts.append(name)
    return charts
