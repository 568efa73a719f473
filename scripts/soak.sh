#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# soak.sh - a long sysbench run through fbwire that checks nothing grows or drifts: the sysbench
# process's memory, the statements and attachments the server holds for it, and the round trips
# per event. Not part of the default test run (it takes minutes by design).
#
#   scripts/soak.sh [--minutes N] [--server fb3|fb4]... [--threads N] [--script NAME]
#                   [--tables N] [--table-size N] [--keep]
#
# Defaults: 10 minutes per server, fb3 and fb4, 16 threads, oltp_read_write, 4 x 10,000 rows.
# Needs the servers of scripts/fb-servers.sh (started here if root and not running), sysbench and
# a build with libfbwire-sysbench.so (the newest build*/, or FBWIRE_SYSBENCH_LIB).
#
# Checks, per server (exit 1 when one fails, with the figures):
#   - sysbench exits 0 and reports no reconnects;
#   - resident memory of sysbench: growth from the sample at 25% of the run to the last sample
#     stays under max(8 MiB, 10%) (a leak per statement would show as steady growth);
#   - MON$STATEMENTS and MON$ATTACHMENTS of the database, sampled every 15 s: the largest count
#     after the first quarter is at most the smallest + threads (prepared statements per
#     connection are fixed; a handle leak grows without bound);
#   - round trips per event per --report-interval line: every interval after the first within
#     5% of the run's value (the protocol's cost does not drift);
#   - the JSON report validates against docs/report.schema.json when python3-jsonschema is there.
#
# A preset of the one measurement tool: `fbwire-compare --preset soak` (tools/fbwire_compare/presets.py).
set -uo pipefail
REPO=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)
# Provisioning stays in shell: the servers are started here if root and not running.
STATE=${FBWIRE_STATE:-/var/tmp/fbwire-state}
if [ ! -f "$STATE/servers.env" ] || ! "$REPO/scripts/fb-servers.sh" status >/dev/null 2>&1; then
  [ "$(id -u)" -eq 0 ] || { echo "soak.sh: servers not running; start them as root" >&2; exit 2; }
  "$REPO/scripts/fb-servers.sh" start >/dev/null || exit 2
fi
exec "$REPO/tools/fbwire-compare" --preset soak "$@"
