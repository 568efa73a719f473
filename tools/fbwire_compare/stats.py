# SPDX-License-Identifier: MIT
"""Medians and ranges: the one place the project computes them."""
import statistics


def median_range(values):
    """{"median", "min", "max", "n"} of the values that were measured (None skipped); None if none."""
    v = [x for x in values if x is not None]
    if not v:
        return None
    return {"median": statistics.median(v), "min": min(v), "max": max(v), "n": len(v)}


def median_item(items, key):
    """The item whose key is the median (the lower middle one for an even count): the run that
    stands for a case when its other figures must stay together. None for no items."""
    s = sorted((i for i in items if key(i) is not None), key=key)
    return s[(len(s) - 1) // 2] if s else None


def num(v, digits=0):
    return "{:,.{d}f}".format(v, d=digits)


def fmt(s, digits=0):
    """A figure or a median_range as text: 'median (min–max)' when the runs differ, 'n/a' when None."""
    if s is None:
        return "n/a"
    if isinstance(s, dict):
        if s["n"] > 1 and s["max"] != s["min"]:
            return "%s (%s–%s)" % (num(s["median"], digits), num(s["min"], digits), num(s["max"], digits))
        return num(s["median"], digits)
    return num(s, digits)
