#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# compare.sh - tools/fbwire-compare --quick (its oltp_point_select half) against all four engines (PostgreSQL, MariaDB, FB3 and
# FB4; one extra target through --target's pass-through of driver options), then checks:
#   - summary.md, summary.json and the charts exist, every case has its TPS;
#   - one run's JSON says what sysbench itself printed (TPS, events, p95);
#   - the captured runs agree with the protocols: a PostgreSQL point select is one round trip, and
#     a Firebird run's capture counts what the fbwire driver counted itself (round_trips_all, up to
#     the few connect/detach exchanges outside the driver's accounting);
#   - figures that were not measured are null with a reason, never 0; no password in any file.
# Needs root (tcpdump, scripts/peer-servers.sh start); exit 77 (skipped) otherwise.
#
# With fbwire-link (--link-tool, or FBWIRE_LINK), also `--quick --rtt 0,1` of 2 targets and 1 workload:
# measured and predicted TPS per RTT, the link's RTT and CPU (compare_check.py rtt); skipped otherwise.
#
#   compare.sh --compare TOOL --pcap-tool FBWIRE-PCAP --report-tool FBWIRE-REPORT --lib SO [--cpu-tool FBWIRE-CPU]
#              [--link-tool FBWIRE-LINK]
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
while [ $# -gt 0 ]; do
  case $1 in
    --compare) COMPARE=$2; shift 2 ;;
    --pcap-tool) export FBWIRE_PCAP=$2; shift 2 ;;
    --report-tool) export FBWIRE_REPORT=$2; shift 2 ;;
    --lib) export FBWIRE_SYSBENCH_LIB=$2; shift 2 ;;
    --cpu-tool) export FBWIRE_CPU=$2; shift 2 ;;
    --link-tool) export FBWIRE_LINK=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" -eq 0 ] || { echo "compare.sh: needs root (tcpdump, peer servers); skipped"; exit 77; }
export FBWIRE_STATE=${FBWIRE_STATE:-/var/tmp/fbwire-state}
"$REPO/scripts/peer-servers.sh" start >/dev/null || { echo "FAIL: peer-servers.sh start"; exit 1; }
OUT=$(mktemp -d /tmp/fbwire-compare-test.XXXXXX)
trap '[ "$fail" = 0 ] && rm -rf "$OUT"' EXIT  # kept for a look when something failed
fail=0
check() { if eval "$2"; then echo "ok: $1"; else echo "FAIL: $1"; fail=1; fi; }

"$COMPARE" "$OUT" --quick --workloads oltp_point_select --targets pg,mariadb,fb3-fbwire,fb4-fbwire,fb3-ac \
  --target 'fb3-ac=fb3-fbwire:--fbwire-autocommit=pipelined' 2>"$OUT/compare.err"
rc=$?
tail -n 3 "$OUT/compare.err"
check "fbwire-compare exit 0" '[ "$rc" = 0 ]'
for f in summary.md summary.json meta.txt tps-t2.svg rt-t2.svg; do
  check "$f written" '[ -s "$OUT/$f" ]'
done
if [ -n "${FBWIRE_CPU:-}" ]; then check "cpu-t2.svg written" '[ -s "$OUT/cpu-t2.svg" ]'; fi
check "progress shows runs left and time to go" 'grep -q "run 2/10, 9 left, .* s to go" "$OUT/compare.err"'

python3 "$HERE/compare_check.py" loopback "$OUT" "${FBWIRE_CPU:-}" "$REPO" || fail=1

if [ -x "${FBWIRE_LINK:-}" ]; then
  "$COMPARE" "$OUT/rtt" --quick --workloads oltp_point_select --targets pg,fb3-fbwire --rtt 0,1 2>"$OUT/rtt.err"
  rc=$?
  tail -n 2 "$OUT/rtt.err"
  check "fbwire-compare --quick --rtt 0,1 exit 0" '[ "$rc" = 0 ]'
  python3 "$HERE/compare_check.py" rtt "$OUT/rtt" || fail=1
else
  echo "skipped: --rtt through fbwire-link (not built; --link-tool or FBWIRE_LINK)"
fi

# No password of any server in any output file.
set -a; . "$FBWIRE_STATE/servers.env"; . "$FBWIRE_STATE/peers.env"; set +a
for pw in "$FBW_PASSWORD" "$PEER_PG_PASSWORD" "$PEER_MARIADB_PASSWORD"; do
  check "no password in the output" '! grep -rqF -- "$pw" "$OUT"'
done
exit $fail
