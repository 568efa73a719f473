# SPDX-License-Identifier: MIT
"""The sysbench workloads: upstream's, and the project's own in lua/ (one list for every measurement
of the project)."""
import os

SCRIPT_DIR = "/usr/share/sysbench"
# The project's workloads: lua/<name>.lua next to tools/ (portable SQL, every driver).
PROJECT_DIR = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lua"))
PROJECT = ("oltp_blob",)

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


def script(workload):
    """What sysbench is given: an upstream workload by name, a project one by its path."""
    return os.path.join(PROJECT_DIR, workload + ".lua") if workload in PROJECT else workload


def table_names(workload, tables):
    """The tables a workload's prepare makes (their statistics are refreshed after it)."""
    if workload == "oltp_blob":
        return ["sbblob"]
    return ["sbtest%d" % i for i in range(1, tables_for(workload, tables) + 1)]


def tables_for(workload, tables):
    """select_random_points/_ranges refuse --tables > 1 (upstream's rule): they get one table."""
    return 1 if workload.startswith("select_random_") else tables


def fresh_per_run(workload):
    """bulk_insert's rows collide with the previous run's: it needs fresh tables before each run."""
    return workload == "bulk_insert"


def missing(workloads, script_dir=SCRIPT_DIR):
    """The workloads that have no Lua script (upstream's, or the project's in lua/)."""
    return [w for w in workloads
            if not os.path.isfile(os.path.join(PROJECT_DIR if w in PROJECT else script_dir, w + ".lua"))]
