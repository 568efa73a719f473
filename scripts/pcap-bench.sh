#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# pcap-bench.sh - decode throughput and peak memory of fbwire-pcap dump and stats on a capture of
# at least --size-mb MB of sysbench traffic (a benchmark that prints figures, not a test).
#
#   scripts/pcap-bench.sh [--size-mb 1024] [--runs 3] [--threads 2] [--range-size 1000]
#       [--build DIR] [--workdir DIR]
#
# Makes a private database on fb3, prepares one sysbench table, then runs oltp_read_only through
# the fbwire driver (wire crypt disabled, big ranges so rows dominate) under scripts/capture.sh
# until the capture holds --size-mb MB. The capture lives in a temporary directory (default under
# /var/tmp) that is deleted at the end, with the database. Then, --runs times, interleaved:
# `fbwire-pcap dump` (output to /dev/null) and `stats` on the whole file and on its first quarter,
# each under /usr/bin/time (elapsed, maximum resident set). Prints the medians with their range:
# MB/s = capture file MB / elapsed s, and peak RSS; the quarter file's peak RSS next to the whole
# one's shows whether memory grows with the file (it must not: it is bounded by live connections).
# Needs root (tcpdump), sysbench, isql-fb, the servers of scripts/fb-servers.sh.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SIZE_MB=1024 RUNS=3 THREADS=2 RANGE=1000 BUILD=$REPO/build WORKDIR=/var/tmp
while [ $# -gt 0 ]; do
  case $1 in
    --size-mb) SIZE_MB=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --threads) THREADS=$2; shift 2 ;;
    --range-size) RANGE=$2; shift 2 ;;
    --build) BUILD=$2; shift 2 ;;
    --workdir) WORKDIR=$2; shift 2 ;;
    -h|--help) sed -n '3,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "pcap-bench.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
TOOL=$BUILD/tools/fbwire-pcap
LIB=$BUILD/driver/libfbwire-sysbench.so
for f in "$TOOL" "$LIB" /usr/bin/time; do
  [ -e "$f" ] || { echo "pcap-bench.sh: $f missing (build first; /usr/bin/time: apt-get install time)" >&2; exit 2; }
done
ENV_FILE=${FBWIRE_STATE:-/var/tmp/fbwire-state}/servers.env
[ -r "$ENV_FILE" ] || { echo "pcap-bench.sh: no $ENV_FILE: start the servers (scripts/fb-servers.sh start)" >&2; exit 2; }
set -a; . "$ENV_FILE"; set +a
export ISC_USER=$FBW_USER ISC_PASSWORD=$FBW_PASSWORD FBWIRE_SYSBENCH_LIB=$LIB

WORK=$(mktemp -d "$WORKDIR/fbwire-pcap-bench.XXXXXX")
DSN=$FBW_FB3_HOST/$FBW_FB3_PORT:$FBW_DBDIR_FB3/fbwire_pcap_bench.fdb
cleanup() {
  echo "DROP DATABASE;" | isql-fb -q "$DSN" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

echo "CREATE DATABASE '$DSN' PAGE_SIZE 8192;" | isql-fb -q >/dev/null 2>&1 || true
sb() { # command [options]
  local cmd=$1; shift
  "$REPO/tools/fbwire-sysbench" oltp_read_only --db-driver=fbwire --fbwire-db="$DSN" \
    --fbwire-wire-crypt=disabled --tables=1 --table-size=10000 --threads="$THREADS" "$@" "$cmd" \
    >>"$WORK/sysbench.log" 2>&1
}
sb prepare

# Run sysbench in 20 s slices until the capture is big enough (each slice is a complete set of
# connections, so the file holds whole sessions).
target=$((SIZE_MB * 1024 * 1024))
export -f sb; export REPO DSN THREADS WORK
fill() {
  local file=$1 target=$2 range=$3
  while [ "$(stat -c %s "$file" 2>/dev/null || echo 0)" -lt "$target" ]; do
    sb run --time=20 --range_size="$range" --point_selects=1 --report-interval=0 || return 1
  done
}
export -f fill
PCAP=$WORK/sysbench.pcap
t0=$SECONDS
"$REPO/scripts/capture.sh" "$PCAP" "tcp port $FBW_FB3_PORT" -- bash -c "fill '$PCAP' $target $RANGE"
size=$(stat -c %s "$PCAP")
echo "capture: $(awk -v b="$size" 'BEGIN { printf "%.0f", b / 1048576 }') MB in $((SECONDS - t0)) s (oltp_read_only, range_size $RANGE, $THREADS threads, fbwire driver, wire crypt disabled)"
QUARTER=$WORK/quarter.pcap
head -c $((size / 4)) "$PCAP" >"$QUARTER"
# What was decoded (a connection that stops early would make the figures look better: list why).
"$TOOL" stats --port "$FBW_FB3_PORT" "$PCAP" 2>/dev/null |
  awk '/^capture:/ { print } /^connection / { c = $3 " " $4 " " $5 }
       /^problem:/ { print "  " c " " substr($0, 1, 110) }
       /^total:/ { t = 1; print }
       t && /^(round_trips|packets_sent|packets_received|bytes_received):/ { print "  " $0 }' || true

# measure MODE FILE -> appends "elapsed_s maxrss_kb" to $WORK/MODE.FILE
measure() {
  local mode=$1 file=$2
  /usr/bin/time -f "%e %M" -o "$WORK/time" "$TOOL" "$mode" --port "$FBW_FB3_PORT" "$file" \
    >/dev/null 2>"$WORK/err" || [ $? -eq 1 ] # 1: some connection did not decode (reported)
  tail -1 "$WORK/time" >>"$WORK/$mode.$(basename "$file")" # (after "Command exited with ...")
}
for ((r = 1; r <= RUNS; r++)); do
  for mode in dump stats; do
    measure "$mode" "$PCAP"
    measure "$mode" "$QUARTER"
  done
done

# median and range of column C of FILE, scaled by awk expression F (x = value)
stat_of() {
  sort -n -k"$2" "$1" | awk -v c="$2" -v f="$3" '
    { v[NR] = $c }
    END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
          a = eval_f(f, m); lo = eval_f(f, v[1]); hi = eval_f(f, v[NR])
          printf "%.1f (%.1f-%.1f)", a, (lo < hi ? lo : hi), (lo < hi ? hi : lo) }
    function eval_f(f, x) { return f == "rss" ? x / 1024 : f == "mbs" ? MB / x : x }' MB="$4"
}
mb=$(awk -v b="$size" 'BEGIN { printf "%.3f", b / 1048576 }')
qmb=$(awk -v b="$((size / 4))" 'BEGIN { printf "%.3f", b / 1048576 }')
echo
echo "medians of $RUNS interleaved runs (range), file $mb MB; quarter = its first $qmb MB"
printf "%-6s %-22s %-22s %-22s %-22s\n" mode "s" "MB/s" "peak RSS MB" "peak RSS MB (quarter)"
for mode in dump stats; do
  printf "%-6s %-22s %-22s %-22s %-22s\n" "$mode" \
    "$(stat_of "$WORK/$mode.sysbench.pcap" 1 s "$mb")" \
    "$(stat_of "$WORK/$mode.sysbench.pcap" 1 mbs "$mb")" \
    "$(stat_of "$WORK/$mode.sysbench.pcap" 2 rss "$mb")" \
    "$(stat_of "$WORK/$mode.quarter.pcap" 2 rss "$qmb")"
done
