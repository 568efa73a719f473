#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# cpu.sh - client CPU per statement and TPS of fbwire against fbclient, side by side on one server:
# runs of one upstream workload alternate between fbwire (autocommit shared, its default) and
# fbclient (autocommit shared, its best), and the medians of each are printed with their ratios.
# Both figures come from the drivers' own reports (docs/report.md: client CPU in the driver).
#
#   tools/fbwire-report/cpu.sh OUTDIR [--server fb3|fb4] [--script NAME] [--runs N] [--time S]
#                                     [--threads N] [--table-size N]
#
# Defaults: fb3, oltp_point_select, 5 runs each, 4 s, 1 thread, 1 table x 10,000 rows. Needs
# scripts/fb-servers.sh servers, sysbench and a build with libfbwire-sysbench.so (the newest in
# build*/, or FBWIRE_SYSBENCH_LIB). JSON reports and logs stay in OUTDIR.
#
# A preset of the one measurement tool: `fbwire-compare --preset cpu` (tools/fbwire_compare/presets.py).
set -uo pipefail
REPO=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)
exec "$REPO/tools/fbwire-compare" --preset cpu "$@"
