# SPDX-License-Identifier: MIT
"""sysbench 1.0.20's end-of-run output, parsed: the one parser of the project."""
import re


def _num(text, pattern):
    m = re.search(pattern, text, re.M)
    return float(m.group(1)) if m else None


def parse(text):
    """The figures sysbench prints at the end of `run`; None when it printed none (a failed run)."""
    tx = re.search(r"^\s*transactions:\s+(\d+)\s+\(([\d.]+) per sec", text, re.M)
    qs = re.search(r"^\s*queries:\s+(\d+)\s+\(([\d.]+) per sec", text, re.M)
    events = _num(text, r"^\s*total number of events:\s+(\d+)")
    if not tx or events is None:
        return None
    return {
        "transactions": int(tx.group(1)), "tps": float(tx.group(2)),
        "queries": {k: int(_num(text, r"^\s*%s:\s+(\d+)" % k) or 0)
                    for k in ("read", "write", "other", "total")},
        "qps": float(qs.group(2)) if qs else None,
        "errors": int(_num(text, r"^\s*ignored errors:\s+(\d+)") or 0),
        "reconnects": int(_num(text, r"^\s*reconnects:\s+(\d+)") or 0),
        "duration_s": _num(text, r"^\s*total time:\s+([\d.]+)s"),
        "events": int(events),
        "latency_ms": {"min": _num(text, r"^\s*min:\s+([\d.]+)"),
                       "avg": _num(text, r"^\s*avg:\s+([\d.]+)"),
                       "max": _num(text, r"^\s*max:\s+([\d.]+)"),
                       "p95": _num(text, r"^\s*95th percentile:\s+([\d.]+)")},
    }


def parse_file(path):
    try:
        with open(path, errors="replace") as f:
            return parse(f.read())
    except OSError:
        return None
