#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# replay-rss.sh - peak memory of `fbwire-pcap replay` as the capture grows (a benchmark that prints
# figures, not a test): the same workload captured with N and with 4N iterations, each replayed
# with --pace none into a fresh database on fb3 under /usr/bin/time (maximum resident set).
#
#   scripts/replay-rss.sh [--n 2000] [--build DIR] [--old PATH-TO-ANOTHER-fbwire-pcap]
#
# The workload: two fbwire-sql sessions at once, each N times INSERT, UPDATE and SELECT of one row
# of its own table (made beforehand) (autocommit: a transaction each, literals in the SQL). tcpdump records them on
# lo; only their two connections are kept (tcpdump -r with their client ports). The streaming
# replay's peak RSS must stay flat from N to 4N: it is bounded by the open connections. --old
# replays the same captures with another build (e.g. one that decodes the whole file first) for
# comparison. Needs root (tcpdump) and the servers of scripts/fb-servers.sh; FBWIRE_STATE set.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
N=2000 BUILD=$REPO/build OLD=
while [ $# -gt 0 ]; do
  case $1 in
    --n) N=$2; shift 2 ;;
    --build) BUILD=$2; shift 2 ;;
    --old) OLD=$2; shift 2 ;;
    -h|--help) sed -n '3,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "replay-rss.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
TOOL=$BUILD/tools/fbwire-pcap SQL=$BUILD/tools/fbwire-sql
for f in "$TOOL" "$SQL" /usr/bin/time; do
  [ -e "$f" ] || { echo "replay-rss.sh: $f missing" >&2; exit 2; }
done
: "${FBWIRE_STATE:?set FBWIRE_STATE to the shared servers state directory}"
set -a; . "$FBWIRE_STATE/servers.env"; set +a
export ISC_USER=$FBW_USER ISC_PASSWORD=$FBW_PASSWORD
PORT=$FBW_FB3_PORT DBDIR=$(dirname "$FBW_FB3_DB") TAG=replay_rss_$$
TMP=$(mktemp -d "${TMPDIR:-/var/tmp}/fbwire-replay-rss.XXXXXX")
chmod 0777 "$TMP" # tcpdump drops privileges before writing
DBS=()
cleanup() {
  for db in "${DBS[@]}"; do rm -f "$db"; done
  rm -rf "$TMP"
}
trap cleanup EXIT

newdb() { # a fresh database; prints its DSN
  local path=$DBDIR/${TAG}_$1.fdb
  DBS+=("$path")
  "$SQL" --info --create --wire-crypt disabled "127.0.0.1/$PORT:$path" >/dev/null
  echo "127.0.0.1/$PORT:$path"
}

tables() { # $1 DSN: the two tables (made before the capture: concurrent DDL would conflict)
  "$SQL" --wire-crypt disabled "$1" "CREATE TABLE RSS_A (ID INTEGER NOT NULL PRIMARY KEY, V VARCHAR(200));
    CREATE TABLE RSS_B (ID INTEGER NOT NULL PRIMARY KEY, V VARCHAR(200));" >/dev/null
}

script() { # $1 table, $2 iterations
  for ((i = 1; i <= $2; i++)); do
    echo "INSERT INTO $1 VALUES ($i, 'row $i of the replay memory benchmark');"
    echo "UPDATE $1 SET V = V || ' updated' WHERE ID = $i;"
    echo "SELECT ID, V FROM $1 WHERE ID = $i;"
  done
}

capture() { # $1 name, $2 iterations -> $TMP/$1.pcap
  local src raw=$TMP/$1.raw.pcap
  src=$(newdb "src_$1")
  tables "$src"
  script RSS_A "$2" >"$TMP/a.sql"
  script RSS_B "$2" >"$TMP/b.sql"
  "$REPO/scripts/capture.sh" "$raw" "tcp port $PORT" -- bash -c \
    "'$SQL' --wire-crypt disabled -i '$TMP/a.sql' '$src' >/dev/null & \
     '$SQL' --wire-crypt disabled -i '$TMP/b.sql' '$src' >/dev/null & wait" >/dev/null
  # our two connections: the ones whose SQL names RSS_A or RSS_B
  local ports
  # (other clients of the shared server may be in the raw capture, some cut at its ends)
  "$TOOL" replay "$raw" --list --json --port "$PORT" >"$TMP/list.json" 2>/dev/null || true
  ports=$(python3 -c '
import json, sys
d = json.load(sys.stdin)
for c in d["connections"]:
    if any("RSS_" in (s.get("sql") or "") for s in c.get("steps", [])):
        print(c["client"].rsplit(":", 1)[1])' <"$TMP/list.json")
  [ "$(echo "$ports" | wc -l)" = 2 ] || { echo "replay-rss.sh: expected 2 connections in $raw" >&2; exit 1; }
  local keep p
  keep="tcp port $PORT and (tcp port $(echo "$ports" | paste -sd' ' | sed 's/ / or tcp port /'))"
  tcpdump -r "$raw" -w "$TMP/$1.pcap" "$keep" 2>/dev/null
  rm -f "$raw"
}

measure() { # $1 tool, $2 capture -> "peak_kB wall_s status"
  local dst out
  dst=$(newdb "dst_$(basename "$2" .pcap)_$RANDOM")
  tables "$dst"
  out=$TMP/time.out
  set +e
  /usr/bin/time -f '%M %e' -o "$out" "$1" replay "$2" --db "$dst" --pace none --json >"$TMP/r.json" 2>"$TMP/r.err"
  local st=$?
  set -e
  local steps
  steps=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["total"]["steps"], d["total"]["failed"], d["load"]["results"]["matched"])' "$TMP/r.json" 2>/dev/null || echo "? ? ?")
  echo "$(cat "$out" | tail -1) $st $steps"
}

capture small "$N"
capture large $((4 * N))
printf '%-8s %-10s %12s %12s %10s %8s %10s %8s %8s\n' build capture file_MB steps peak_RSS_MB wall_s exit failed matched
for which in new ${OLD:+old}; do
  tool=$TOOL
  [ "$which" = old ] && tool=$OLD
  for cap in small large; do
    read -r kb wall st steps failed matched <<<"$(measure "$tool" "$TMP/$cap.pcap")"
    mb=$(du -m "$TMP/$cap.pcap" | cut -f1)
    printf '%-8s %-10s %12s %12s %10.1f %8s %10s %8s %8s\n' "$which" "$cap" "$mb" "$steps" \
      "$(echo "$kb / 1024" | bc -l)" "$wall" "$st" "$failed" "$matched"
  done
done
