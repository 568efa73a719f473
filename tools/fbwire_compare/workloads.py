# SPDX-License-Identifier: MIT
"""The upstream sysbench workloads: one list for every measurement of the project."""
import os

SCRIPT_DIR = "/usr/share/sysbench"

# The OLTP cycle, in the order the tables show them.
OLTP = ("oltp_read_write", "oltp_read_only", "oltp_write_only", "oltp_point_select", "oltp_insert",
        "oltp_delete", "oltp_update_index", "oltp_update_non_index", "select_random_points",
        "select_random_ranges")
# bulk_insert measures multi-row INSERT into growing empty tables, not the OLTP cycle: only on demand.
ALL = OLTP + ("bulk_insert",)
# --quick: the CI smoke test.
QUICK = ("oltp_point_select", "oltp_read_write")


def split(text):
    """'a,b,,c' -> ['a', 'b', 'c']"""
    return [w.strip() for w in (text or "").split(",") if w.strip()]


def tables_for(workload, tables):
    """select_random_points/_ranges refuse --tables > 1 (upstream's rule): they get one table."""
    return 1 if workload.startswith("select_random_") else tables


def fresh_per_run(workload):
    """bulk_insert's rows collide with the previous run's: it needs fresh tables before each run."""
    return workload == "bulk_insert"


def missing(workloads, script_dir=SCRIPT_DIR):
    """The workloads that have no upstream Lua script."""
    return [w for w in workloads if not os.path.isfile(os.path.join(script_dir, w + ".lua"))]
