#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench.sh - TPS of the upstream sysbench scripts through the plug-in, for docs/sysbench.md.
#
#   tests/sysbench/bench.sh [--driver fbwire|fbclient] [--server fb3|fb4]... [--lib LIB.so]
#       [--tables 4] [--table-size 10000] [--threads 4] [--time 10] [--runs 2]
#       [--only script,...] [--extra "sysbench options"] [--out results.tsv]
#
# Per server and script: cleanup, prepare (timed), --runs runs of --time seconds on the same
# prepared tables, cleanup. select_random_* use one table (upstream refuses more); bulk_insert
# has no prepared rows (one table per thread, emptied before every run; its TPS is rows per
# second). Appends one
# tab-separated line per script to --out (default stdout):
#   server driver script prepare_s tps_run1 ... tps_runN ignored_errors_last reconnects_last
# The machine should be quiet while this runs: the numbers are wall-clock rates.
#
# A preset of the one measurement tool: `fbwire-compare --preset bench` (tools/fbwire_compare/presets.py).
set -uo pipefail
REPO=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)
exec "$REPO/tools/fbwire-compare" --preset bench "$@"
