# SPDX-License-Identifier: MIT
"""Presets: the project's earlier measurement scripts as settings of this tool, with their options
and outputs. Each runs the upstream workloads through the Firebird drivers (fbwire-sysbench) and
reads the drivers' own JSON reports (docs/report.md).

  fbwire-compare --preset cpu OUTDIR       fbwire against fbclient: TPS and client CPU per statement
  fbwire-compare --preset measure OUTDIR   round trips per event of every workload, four clients
  fbwire-compare --preset pipeline OUTDIR  pipeline off / transaction / fbclient, server CPU too
  fbwire-compare --preset bench            TPS of every workload (docs/sysbench.md), TSV lines
  fbwire-compare --preset soak             a long run that checks nothing grows or drifts
  fbwire-compare --preset glance OUTDIR    oltp_read_only through fbclient, fbwire and fbwire pipelined,
                                           direct and at 1 ms RTT: one small table (scripts/main.sh)
  fbwire-compare --preset results OUTDIR   the measurements of docs/results.md, in parts (--part
                                           distance|loopback|rate|engines|formats|blob), for a quiet
                                           machine

`fbwire-compare --preset NAME --help` lists a preset's options. tools/fbwire-report/{cpu,measure,
pipeline}.sh, tests/sysbench/bench.sh and scripts/soak.sh call these;
scripts/main.sh ends with glance. One module per preset.
"""
import sys

from .bench import bench
from .common import Fail
from .cpu import cpu
from .glance import glance
from .measure import measure
from .pipeline import pipeline
from .results import results
from .soak import soak

PRESETS = {"cpu": cpu, "measure": measure, "pipeline": pipeline, "bench": bench, "soak": soak, "glance": glance,
           "results": results}


def main(argv, here):
    if not argv or argv[0] not in PRESETS:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        return PRESETS[argv[0]](argv[1:], here)
    except Fail as e:
        print("fbwire-compare --preset %s: %s" % (argv[0], e), file=sys.stderr)
        return e.status
