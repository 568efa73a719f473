#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# capture.sh - record the traffic of one command with tcpdump, for fbwire-pcap.
#
#   scripts/capture.sh [-i IFACE] [-y LINKTYPE] FILE FILTER -- command [args...]
#   e.g. FBWIRE_KEYLOGFILE=/tmp/keys scripts/capture.sh /tmp/s.pcap "tcp port 3050" -- \
#            tools/fbwire-sysbench oltp_read_only --db-driver=fbwire ... run
#
# Starts tcpdump on IFACE (default lo; "any" gives Linux cooked captures, -y LINUX_SLL2 their v2)
# with the BPF FILTER, waits until it listens, runs the command, lets the last packets arrive,
# stops tcpdump and checks that the kernel dropped nothing (a drop is a gap fbwire-pcap reports).
# Needs root. Set FBWIRE_KEYLOGFILE for the command to be able to decrypt an encrypted session
# afterwards (fbwire-pcap --keylog). Exit status: the command's; 3 when packets were dropped; 2 usage.
set -uo pipefail

IFACE=lo LINKTYPE=
while [ $# -gt 0 ]; do
  case $1 in
    -i) IFACE=$2; shift 2 ;;
    -y) LINKTYPE=$2; shift 2 ;;
    *) break ;;
  esac
done
if [ $# -lt 4 ] || [ "$3" != -- ]; then
  sed -n '4,5p' "$0" | sed 's/^# \{0,3\}//' >&2
  exit 2
fi
FILE=$1 FILTER=$2
shift 3
ERR=$(mktemp /tmp/fbwire-capture.XXXXXX)
trap 'rm -f "$ERR"' EXIT

# A 512 MB kernel buffer, and libpcap's block-buffered delivery (not --immediate-mode, not -U):
# per-packet wake-ups and writes made tcpdump drop packets of a busy loopback run. The ring is
# drained when tcpdump stops, after the command's last packets had a second to arrive.
tcpdump -i "$IFACE" ${LINKTYPE:+-y "$LINKTYPE"} -s 0 -B 524288 -w "$FILE" "$FILTER" 2>"$ERR" &
TD=$!
for _ in $(seq 200); do
  grep -q "listening on" "$ERR" && break
  kill -0 "$TD" 2>/dev/null || { cat "$ERR" >&2; exit 2; }
  sleep 0.05
done
"$@"
status=$?
sleep 1
kill -INT "$TD"
wait "$TD" 2>/dev/null
dropped=$(sed -n 's/^\([0-9]*\) packets dropped by kernel$/\1/p' "$ERR")
if [ "${dropped:-0}" != 0 ]; then
  echo "capture.sh: tcpdump: $dropped packets dropped by kernel: $FILE has gaps" >&2
  [ $status -eq 0 ] && status=3
fi
exit $status
