#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# pipeline.sh - what a round trip costs, through sysbench: each workload runs with fbwire
# --fbwire-pipeline=off, fbwire --fbwire-pipeline=transaction and fbclient (autocommit shared, the
# baseline), interleaved run by run, and the medians of TPS, round trips per event, statements per
# round trip, client CPU per statement and server CPU per statement and per event are printed with
# the ratio of TPS to pipeline off. Every figure comes from the drivers' own reports
# (docs/report.md); server CPU is the server process's (children included) over the run, so it
# also counts anything else that server did meanwhile: use otherwise idle servers.
#
#   tools/fbwire-report/pipeline.sh OUTDIR [--server fb3|fb4]... [--threads N]... [--runs N]
#       [--time S] [--tables N] [--table-size N] [--workloads LIST] [--forced-writes on|off]
#
# Defaults: fb3 and fb4; 1 and 4 threads; 3 runs of 5 s per case; 4 tables x 10,000 rows; the
# workloads oltp_read_only, oltp_read_only:--range_selects=off, oltp_read_write and
# oltp_write_only (a workload is SCRIPT[:extra options, comma separated]). Wire encryption is
# off for every client (captures and CPU comparable). The benchmark database (pipebench.fdb) runs
# with forced writes off by default: a COMMIT of a read-write transaction writes the TIP page, and
# with forced writes on its fsync (milliseconds on a VM disk) dominates every event and hides what
# the round trips cost; --forced-writes on measures that case too. Needs scripts/fb-servers.sh servers,
# sysbench and a build with libfbwire-sysbench.so (newest build*/, or FBWIRE_SYSBENCH_LIB).
# JSON reports, logs and summary.tsv stay in OUTDIR.
#
# A preset of the one measurement tool: `fbwire-compare --preset pipeline` (tools/fbwire_compare/presets.py).
set -uo pipefail
REPO=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)
exec "$REPO/tools/fbwire-compare" --preset pipeline "$@"
