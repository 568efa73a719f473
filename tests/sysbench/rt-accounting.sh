#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rt-accounting.sh - the round trips the wire statistics report counts for N prepared point
# SELECTs, checked against what the protocol needs and against a loopback capture of the same run
# decoded by fbwire-pcap (an independent count: other process, other byte source).
#
#   rt-accounting.sh --lib libfbwire-sysbench.so --pcap-tool fbwire-pcap --report-tool fbwire-report
#                    [--server fb3|fb4]... [--keep]
#
# Round trips one SELECT needs once its statement is prepared:
#   fbwire pipelined        1  op_execute + op_fetch, in the long-lived read-only transaction
#   fbclient per-statement  3  op_transaction | op_execute + op_fetch (fbclient defers the execute
#                              of a cursor to the first fetch) | op_commit (+ the deferred free)
#   fbclient shared         1  op_execute + op_fetch in the shared autocommit transaction
# (restarts of the long-lived transactions are switched off so every SELECT costs the same).
# Each case runs twice (N1 and N2 events) under tcpdump on lo and must satisfy:
#   report:  point_select has N executions and N*PER round trips; the per-class table sums to the
#            per-op totals and to the totals; round_trips_per_event == PER
#   capture: rt(N2) - rt(N1) == (N2 - N1) * PER, and capture rt - report round_trips_all is the
#            same small d (0..3) in both runs: the detach, which the report leaves out. The run's
#            connection is found in the capture by its op_attach/prepare/execute/fetch counts.
# Then --fbwire-pipeline=transaction (1 thread, NP events each): oltp_read_only must cost exactly
# 1 round trip per event (statements and COMMIT in one write), oltp_read_write and oltp_write_only
# at most 2.05 (statements; then COMMIT once every reply was checked), and the capture of the same
# run must count the report's round trips plus the same small d (the detach).
# Then oltp_read_only in both row formats (--fbwire-row-format): the same round trips, compact rows
# in under half the bytes received, a bad value refused.
# Finally every report validates against docs/report.schema.json and fbwire-report renders them
# into a Markdown table and an SVG whose structure is checked.
# Exit 77 (skipped) without root, tcpdump, isql-fb, sysbench or python3-jsonschema.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
LIB="" PCAP_TOOL="" REPORT_TOOL="" KEEP=0
SERVERS=()
N1=40 N2=120 NP=60
while [ $# -gt 0 ]; do
  case $1 in
    --lib) LIB=$2; shift 2 ;;
    --pcap-tool) PCAP_TOOL=$2; shift 2 ;;
    --report-tool) REPORT_TOOL=$2; shift 2 ;;
    --server) SERVERS+=("$2"); shift 2 ;;
    --keep) KEEP=1; shift ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
[ ${#SERVERS[@]} -eq 0 ] && SERVERS=(fb3 fb4)
PY=/usr/bin/python3
CHECK="$PY $HERE/rt_check.py"
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "capturing on lo needs root"
command -v tcpdump >/dev/null || skip "tcpdump not installed"
command -v sysbench >/dev/null || skip "sysbench not installed"
command -v isql-fb >/dev/null || skip "isql-fb not installed"
$PY -c "import jsonschema" 2>/dev/null || skip "python3-jsonschema not installed"
for f in "$LIB" "$PCAP_TOOL" "$REPORT_TOOL"; do [ -f "$f" ] || { echo "missing: $f" >&2; exit 2; }; done

ENV_FILE=${FBWIRE_STATE:-/var/tmp/fbwire-state}/servers.env
[ -f "$ENV_FILE" ] || "$REPO/scripts/fb-servers.sh" start >&2 || { echo "servers did not start" >&2; exit 1; }
set -a; . "$ENV_FILE"; set +a
export FBWIRE_SYSBENCH_LIB=$LIB ISC_USER=$FBW_USER ISC_PASSWORD=$FBW_PASSWORD
WORK=$(mktemp -d /tmp/fbwire-rt.XXXXXX)
[ $KEEP -eq 1 ] || trap 'rm -rf "$WORK"' EXIT
FAILS=0
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }

ensure_db() { # server [file charset] -> connection string of its rtcheck.fdb (or file)
  local s=${1^^} host port dir file=${2:-rtcheck.fdb} cs=${3:+ DEFAULT CHARACTER SET $3}
  host=FBW_${s}_HOST port=FBW_${s}_PORT dir=FBW_DBDIR_${s}
  local dsn="${!host}/${!port}:${!dir}/$file"
  if ! echo "QUIT;" | isql-fb -q "$dsn" >/dev/null 2>&1; then
    echo "CREATE DATABASE '$dsn' USER '$FBW_USER' PASSWORD '$FBW_PASSWORD' PAGE_SIZE 8192$cs;" |
      isql-fb -q >/dev/null 2>&1
  fi
  echo "$dsn"
}

# capture <port> <pcap> <command...>: run the command while tcpdump records the port on lo.
capture() {
  local port=$1 pcap=$2; shift 2
  # A large buffer: other tests may load the same server meanwhile, and a lost segment makes
  # the run's connection undecodable (then the run is repeated once, see below).
  tcpdump -i lo --immediate-mode -B 65536 -U -Z root -w "$pcap" "tcp port $port" 2>"$pcap.err" &
  local td=$!
  for _ in $(seq 50); do grep -q listening "$pcap.err" 2>/dev/null && break; sleep 0.1; done
  "$@"
  local rc=$?
  sleep 0.3
  kill -INT $td; wait $td 2>/dev/null
  return $rc
}

# captured_run PCAP JSON LOG TAG COMMAND...: run COMMAND (a sysbench run writing JSON) under capture
# and decode the capture; repeated once when the capture itself lost this run's segments (kernel
# buffer overrun: other tests may load the same server meanwhile).
captured_run() {
  local pcap=$1 json=$2 log=$3 tag=$4; shift 4
  for attempt in 1 2; do
    capture "$PORT" "$pcap" "$@" >"$log" 2>&1 || return 1
    "$PCAP_TOOL" stats "$pcap" --port "$PORT" --json >"$pcap.json" 2>"$pcap.stats.err"
    $CHECK pcapconn "$pcap.json" "$json" >/dev/null && return 0
    grep -Eq '"problem": ?"gap in' "$pcap.json" || return 0
    echo "$tag: the capture lost packets, running again"
  done
}

for server in "${SERVERS[@]}"; do
  S=${server^^}; portvar=FBW_${S}_PORT; PORT=${!portvar}
  DSN=$(ensure_db "$server")
  sb() { "$REPO/tools/fbwire-sysbench" "$@"; }
  common=(--db-driver=fbwire --fbwire-db="$DSN" --tables=1 --table-size=100)
  sb oltp_point_select "${common[@]}" cleanup >"$WORK/$server-setup.log" 2>&1
  sb oltp_point_select "${common[@]}" prepare >>"$WORK/$server-setup.log" 2>&1 ||
    { fail "$server: preparing sbtest1"; continue; }
  REPORTS=()
  for case in "fbwire pipelined 1" "fbclient per-statement 3" "fbclient shared 1"; do
    set -- $case; drv=$1 mode=$2 per=$3
    tag="$server-$drv-$mode"
    declare -A RT=() D=()
    for n in $N1 $N2; do
      json=$WORK/$tag-$n.json pcap=$WORK/$tag-$n.pcap
      captured_run "$pcap" "$json" "$WORK/$tag-$n.log" "$tag/$n" sb "$HERE/point_select_n.lua" \
        --db-driver="$drv" --"$drv"-db="$DSN" --"$drv"-wire-crypt=disabled --"$drv"-autocommit="$mode" \
        --"$drv"-shared-restart-statements=0 --"$drv"-shared-restart-ms=0 --threads=1 \
        --events="$n" --"$drv"-report="$json" run
      [ -f "$json" ] || { fail "$tag: sysbench run with $n events (log: $WORK/$tag-$n.log)"; continue; }
      grep -q "Firebird wire statistics ($drv driver, autocommit $mode)" "$WORK/$tag-$n.log" ||
        fail "$tag: no text report after sysbench's"
      $CHECK points "$json" "$n" "$per" >/dev/null || fail "$tag: $($CHECK points "$json" "$n" "$per")"
      $CHECK sums "$json" >/dev/null || fail "$tag: $($CHECK sums "$json")"
      # fbwire-pcap exits 1 when some connection did not decode to the end: another test's
      # (encrypted, or cut by the capture's start); this run's must be complete (pcapconn checks).
      [ -s "$pcap.json" ] || fail "$tag: fbwire-pcap failed: $(head -c 300 "$pcap.stats.err")"
      read -r cap_rt cap_exec cap_fetch < <($CHECK pcapconn "$pcap.json" "$json")
      [ -n "${cap_rt:-}" ] && [ "$cap_rt" -eq "$cap_rt" ] 2>/dev/null ||
        { fail "$tag: $($CHECK pcapconn "$pcap.json" "$json")"; continue; }
      rep_all=$($CHECK field "$json" totals.round_trips_all)
      [ "$cap_exec" -ge "$n" ] && [ "$cap_fetch" -ge "$n" ] ||
        fail "$tag/$n: capture has $cap_exec op_execute, $cap_fetch op_fetch for $n selects"
      RT[$n]=$cap_rt
      D[$n]=$((cap_rt - rep_all))
      echo "$tag/$n: report $(( $($CHECK field "$json" totals.round_trips) )) statement rt, $rep_all in all; capture $cap_rt"
      REPORTS+=("$json")
    done
    if [ -n "${RT[$N1]:-}" ] && [ -n "${RT[$N2]:-}" ]; then
      [ $((RT[$N2] - RT[$N1])) -eq $(((N2 - N1) * per)) ] ||
        fail "$tag: capture round trips grew by $((RT[$N2] - RT[$N1])) for $((N2 - N1)) more selects, expected $(((N2 - N1) * per))"
      [ "${D[$N1]}" -eq "${D[$N2]}" ] && [ "${D[$N1]}" -ge 0 ] && [ "${D[$N1]}" -le 3 ] ||
        fail "$tag: capture minus report round trips: ${D[$N1]} and ${D[$N2]} (expected the same 0..3)"
      echo "ok $tag: $per round trip(s) per select; the capture agrees (detach: ${D[$N1]} round trip(s) not in the report)"
    fi
    unset RT D
  done
  for case in "oltp_read_only 1.00 exact" "oltp_read_write 2.05 max" "oltp_write_only 2.05 max"; do
    set -- $case; script=$1 limit=$2 how=$3
    tag="$server-pipeline-$script" json=$WORK/$server-pipeline-$script.json
    pcap=$WORK/$server-pipeline-$script.pcap
    captured_run "$pcap" "$json" "$WORK/$tag.log" "$tag" sb "$script" "${common[@]}" \
      --fbwire-pipeline=transaction --fbwire-wire-crypt=disabled --threads=1 --events=$NP \
      --time=0 --fbwire-report="$json" run
    [ -f "$json" ] || { fail "$tag: sysbench run (log: $WORK/$tag.log)"; continue; }
    $CHECK pipe "$json" "$NP" "$limit" "$how" >/dev/null || fail "$tag: $($CHECK pipe "$json" "$NP" "$limit" "$how")"
    $CHECK sums "$json" >/dev/null || fail "$tag: $($CHECK sums "$json")"
    read -r cap_rt _ _ < <($CHECK pcapconn "$pcap.json" "$json")
    [ -n "${cap_rt:-}" ] && [ "$cap_rt" -eq "$cap_rt" ] 2>/dev/null ||
      { fail "$tag: $($CHECK pcapconn "$pcap.json" "$json")"; continue; }
    rep_all=$($CHECK field "$json" totals.round_trips_all)
    d=$((cap_rt - rep_all))
    [ "$d" -ge 0 ] && [ "$d" -le 3 ] || fail "$tag: capture $cap_rt round trips, report $rep_all"
    echo "ok $tag: $($CHECK field "$json" round_trips_per_event) round trips per event; capture $cap_rt = report $rep_all + $d (detach)"
    REPORTS+=("$json")
  done
  sb oltp_point_select "${common[@]}" cleanup >>"$WORK/$server-setup.log" 2>&1
  # Row formats: oltp_read_only with --fbwire-row-format=described, then compact (the default), in
  # a UTF8 database (rtcheck.fdb is NONE: its CHARs are single-byte and stay CHAR): the same round
  # trips, and the compact rows (CHAR(120)/CHAR(60) of UTF8 as VARCHAR) in well under half the
  # bytes received; the report says which format ran; a bad value is refused.
  utf8=(--db-driver=fbwire --fbwire-db="$(ensure_db "$server" rtcheck-utf8.fdb UTF8)" --tables=1
        --table-size=100)
  sb oltp_read_only "${utf8[@]}" cleanup >>"$WORK/$server-setup.log" 2>&1
  sb oltp_read_only "${utf8[@]}" prepare >>"$WORK/$server-setup.log" 2>&1 ||
    fail "$server: preparing sbtest1 in rtcheck-utf8.fdb"
  declare -A RXB=() RTS=()
  for rf in described compact; do
    tag="$server-rowformat-$rf" json=$WORK/$server-rowformat-$rf.json
    sb oltp_read_only "${utf8[@]}" --fbwire-row-format=$rf --fbwire-wire-crypt=disabled --threads=1 \
      --events=$NP --time=0 --fbwire-report="$json" run >"$WORK/$tag.log" 2>&1
    [ -f "$json" ] || { fail "$tag: sysbench run (log: $WORK/$tag.log)"; continue; }
    [ "$($CHECK field "$json" connection.row_format)" = "$rf" ] || fail "$tag: report row_format"
    grep -Eq "row format: +$rf" "$WORK/$tag.log" || fail "$tag: text report lacks the row format"
    RXB[$rf]=$($CHECK field "$json" totals.bytes_received)
    RTS[$rf]=$($CHECK field "$json" totals.round_trips)
    REPORTS+=("$json")
  done
  if [ -n "${RXB[compact]:-}" ] && [ -n "${RXB[described]:-}" ]; then
    [ "${RTS[compact]}" -eq "${RTS[described]}" ] ||
      fail "$server: row formats: round trips ${RTS[compact]} compact, ${RTS[described]} described"
    [ $((RXB[compact] * 2)) -lt "${RXB[described]}" ] ||
      fail "$server: row formats: ${RXB[compact]} bytes received compact, ${RXB[described]} described"
    echo "ok $server row formats: ${RXB[compact]} bytes received compact, ${RXB[described]} described, ${RTS[compact]} round trips each"
  fi
  unset RXB RTS
  out=$(sb oltp_read_only "${utf8[@]}" --fbwire-row-format=packed --events=1 --time=0 run 2>&1) &&
    fail "$server: --fbwire-row-format=packed accepted"
  grep -q "invalid --fbwire-row-format (compact or described)" <<<"$out" ||
    fail "$server: no message for a bad --fbwire-row-format: $(head -c 300 <<<"$out")"
  sb oltp_read_only "${utf8[@]}" cleanup >>"$WORK/$server-setup.log" 2>&1
  $CHECK schema "$REPO/docs/report.schema.json" "${REPORTS[@]}" || fail "$server: schema"
  # Two runs (fbclient per-statement as the baseline, then fbwire) into a table and a chart.
  base=$WORK/$server-fbclient-per-statement-$N2.json other=$WORK/$server-fbwire-pipelined-$N2.json
  if "$REPORT_TOOL" "$base" "$other" --svg "$WORK/$server.svg" >"$WORK/$server.md"; then
    grep -q "| driver | fbclient per-statement | fbwire pipelined |" "$WORK/$server.md" &&
      grep -q '| \*\*round trips per event\*\* | \*\*3.000\*\* | \*\*1.000\*\* (0.33×) |' "$WORK/$server.md" &&
      grep -q "| point select | 3.000 | 1.000 (0.33×) |" "$WORK/$server.md" &&
      grep -Eq '^\| client CPU in the driver, µs per statement \| [0-9]+\.[0-9]{2} \| [0-9]+\.[0-9]{2} \([0-9.]+×\) \|$' \
        "$WORK/$server.md" ||
      fail "$server: fbwire-report table ($WORK/$server.md)"
    $PY - "$WORK/$server.svg" <<'PYEOF' || fail "$server: fbwire-report SVG structure"
import sys, xml.etree.ElementTree as ET
ns = {"s": "http://www.w3.org/2000/svg"}
root = ET.parse(sys.argv[1]).getroot()
groups = root.findall(".//s:g[@class='group']", ns)
assert [g.get("data-class") for g in groups] == ["point_select", "total"], [g.get("data-class") for g in groups]
for g in groups:
    bars = g.findall("s:rect[@class='bar']", ns)
    assert [b.get("data-run") for b in bars] == ["1", "2"], bars
    h = [float(b.get("height")) for b in bars]
    assert abs(h[0] - 3 * h[1]) < 0.5, h  # 3 round trips per event against 1
assert len(root.findall(".//s:rect[@class='tps']", ns)) == 2
PYEOF
  else
    fail "$server: fbwire-report failed"
  fi
done
[ $KEEP -eq 1 ] && echo "files kept in $WORK"
[ $FAILS -eq 0 ] && echo "rt-accounting: all checks passed" || echo "rt-accounting: $FAILS failure(s)"
exit $((FAILS > 0))
