#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# measure.sh - round trips per event of every upstream sysbench workload through fbwire and the
# fbclient baseline (both autocommit modes), one JSON report per run, then one fbwire-report table
# per workload and server.
#
#   tools/fbwire-report/measure.sh OUTDIR [--server fb3|fb4]... [--time S] [--threads N]
#                                  [--runs N] [--only script,...]
#
# Needs scripts/fb-servers.sh servers, sysbench, a build with libfbwire-sysbench.so and
# fbwire-report (the newest in build*/, or FBWIRE_SYSBENCH_LIB / FBWIRE_REPORT). Each workload gets
# fresh tables (prepare through fbwire), then runs with fbclient per-statement (the baseline),
# fbclient shared, fbwire shared and fbwire pipelined, on the same server, one after the other.
# With --runs N (default 1) that round of four is repeated N times; each case's table and chart use
# its run with the median TPS, and OUTDIR/summary.tsv has every case's median, lowest and highest
# TPS and its round trips per event (exact: the same in every run).
#
# A preset of the one measurement tool: `fbwire-compare --preset measure` (tools/fbwire_compare/presets.py).
set -uo pipefail
REPO=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)
exec "$REPO/tools/fbwire-compare" --preset measure "$@"
