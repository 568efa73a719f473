#!/bin/bash
# SPDX-License-Identifier: MIT
# record.sh - re-record the project's reference captures pcap/<name>.pcap from the test servers of
# scripts/fb-servers.sh, and write pcap/<name>.expect next to each (fbwire-pcap stats --trips output
# under the hand-written header kept below). Needs root (tcpdump on lo), a build with fbwire-pcap and
# fbwire-sql (BUILD=..., default <source>/build), isql-fb for the fbclient capture.
#
# Wire crypt is disabled so the bytes stay readable (except fb4_info_crypt, which shows where decoding
# must stop without a key), or on with a key log: the *_arc4/_chacha/_chacha64 sessions and
# fb4_info_ipv6 run with FBWIRE_KEYLOGFILE set, and the connection's line is kept as pcap/NAME.keys
# (key material of a throwaway session on a test server; fbwire-pcap --keylog decrypts with it).
# fb3_info_sll and fb4_info_sll2 are captured on "any" (Linux cooked v1, and v2 with -y LINUX_SLL2),
# fb4_info_ipv6 over ::1 (FB4 listens on every address); all others on lo (Ethernet). Logins are SRP (or Legacy_Auth's
# DES hash at protocol 10), so no password is in any file. The servers are shared with other tests,
# so each session uses a private database (fbwire_pcap.fdb) and only its own connection is kept: the
# raw capture is filtered down to the client port that attached to that database. Servers listening
# on every address are reached as 127.0.0.2, so the kernel filter already drops other tests' traffic
# (a busy capture on 127.0.0.1 can lose packets; fbwire-pcap then reports a gap and we record again).
#
# usage: pcap/record.sh [name...]   (or --refresh: rewrite the .expect bodies from the existing pcaps)
#   names: fb3_info fb4_info fb4_info_crypt fb4_script_zlib fb3_script fb3_isql fb3l_p10
#          fb3_script_arc4 fb3_script_arc4_zlib fb4_script_chacha64 fb4_script_chacha64_zlib
#          fb4_script_chacha fb4_script_chacha_zlib fb3_info_sll fb4_info_sll2 fb4_info_ipv6
#          fb3_gbak_backup fb3_gbak_restore fb3_gfix_validate fb3_gfix_sweep fb3_svc_nbak
#          fb3_svc_stats fb3_svc_trace fb3_isql_zlib fb4_gbak_backup fb4_gbak_restore
#          fb4_gfix_validate fb4_gfix_sweep fb4_svc_nbak fb4_svc_stats fb4_svc_trace fb4_isql_zlib
#          fb4_gbak_restore_blobs fb5_blob_inline fb5_blob_batch fb3_blob fb5_scroll fb6_script_p19
#          fb6_script_p20
#
# fb5_scroll is fbwire-sql (its script mode, stdin a pipe) against the Firebird 5 registered as fb5:
# SET SCROLL ON, a SELECT of twelve rows read forward, then FETCH moves of every kind (op_fetch_scroll)
# to both ends and back, and SHOW COUNT (op_info_cursor).
#
# fb6_script_p19 and fb6_script_p20 are pcap/session.c against a Firebird 6 registered as fb6
# (scripts/fb-servers.sh register or start-install; it must listen on 127.0.0.2), offered up to
# protocol 19 and up to 20: the same session in both protocols a Firebird 6 server speaks, the
# second with the prepare flags protocol 20 adds to op_prepare_statement.
#
# The fb3_gbak_*, fb3_gfix_*, fb3_svc_* and fb3_isql_zlib captures are Firebird's own tools
# (Debian's firebird3.0-utils: gbak, gfix, fbsvcmgr, isql-fb; client WireCrypt = Disabled) on a
# tiny private database (fbwire_tools.fdb: two tables, five rows, two blobs) that each run creates
# afresh. gbak and gfix use the BLR request API (op_compile, op_start_and_receive, op_send ...).
# The fb4_* tool captures are the same sessions with Firebird 4's tools (Debian 13's
# firebird4.0-utils, run inside the FB4 chroot of scripts/fb-servers.sh) against the FB4 server;
# FB4's gbak restores through the batch API, so fb4_gbak_restore carries op_batch_blob_stream;
# fb4_gbak_restore_blobs adds eleven 12 KB blobs (not in the FB3 set), more than fbclient's 128 KB
# blob stream buffer, so a blob's segment runs on from one op_batch_blob_stream into the next.
# nbackup (FB3 and FB4 alike) refuses a database it cannot open as a local file ("nbackup needs
# local access to database file", even for -L), so nbackup over the network is the service
# manager's action_nbak, which runs nbackup inside the server: the *_svc_nbak captures. Their
# .expect headers carry an independent round-trip count (# independent:): tshark's turnarounds,
# client payload followed by server payload, which leaves out the final unanswered op_disconnect
# (needs tshark).
set -euo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$SRC/build}
PCAP_TOOL=$BUILD/tools/fbwire-pcap
FBWIRE_SQL=$BUILD/tools/fbwire-sql
OUT=$SRC/pcap
for f in "$PCAP_TOOL" "$FBWIRE_SQL" "$BUILD/libfbwire.a"; do
    [ -e "$f" ] || { echo "record.sh: $f missing: build first (BUILD=$BUILD)" >&2; exit 2; }
done
if [ -z "${FBW_FB3_PORT:-}" ]; then
    ENVFILE=${FBW_SERVERS_ENV:-${FBWIRE_STATE:-/var/tmp/fbwire-state}/servers.env}
    [ -r "$ENVFILE" ] || { echo "record.sh: servers not configured: run scripts/fb-servers.sh start" >&2; exit 2; }
    set -a; . "$ENVFILE"; set +a
fi

TMP=$(mktemp -d /tmp/fbwire-record.XXXXXX)
TCPDUMP_PID=
# Files Firebird's tools read or write: WD as the tools see it, WDH on this host (tool_server sets
# them; FB4's tools run inside the FB4 chroot, so there WD is a directory of the chroot).
WD=$TMP WDH=$TMP
cleanup() {
    [ -n "$TCPDUMP_PID" ] && kill -INT "$TCPDUMP_PID" 2>/dev/null || true
    [ -n "${KEEP_TMP:-}" ] || { rm -rf "$TMP"; [ "$WDH" = "$TMP" ] || rm -rf "$WDH"; }
}
trap cleanup EXIT

# The scripted fbwire session (fbwire-sql has no script mode yet).
cc -std=c11 -D_DEFAULT_SOURCE -O1 -I"$SRC/wire" -I"$SRC/auth" -I"$SRC/base" "$SRC/pcap/session.c" \
    "$BUILD/libfbwire.a" -lssl -lcrypto -lz -o "$TMP/session"

PRIVATE_DB=fbwire_pcap.fdb
db_fb3=$FBW_DBDIR_FB3/$PRIVATE_DB
db_fb4=$FBW_DBDIR_FB4/$PRIVATE_DB
db_fb3l=$FBW_DBDIR_FB3L/$PRIVATE_DB
db_fb5=${FBW_DBDIR_FB5:+$FBW_DBDIR_FB5/$PRIVATE_DB}
db_fb6=${FBW_DBDIR_FB6:+$FBW_DBDIR_FB6/$PRIVATE_DB}

# The server a capture talks to: HOST PORT DB (set by use).
use() { # fb3 | fb4 | fb4v6 | fb3l | fb5 | fb6
    case $1 in
    fb5) [ -n "$db_fb5" ] || { echo "record.sh: fb5 is not registered (servers.env)" >&2; exit 2; }
        HOST=127.0.0.2 PORT=$FBW_FB5_PORT DB=$db_fb5 ;;
    fb6) [ -n "$db_fb6" ] || { echo "record.sh: fb6 is not registered (servers.env)" >&2; exit 2; }
        HOST=127.0.0.2 PORT=$FBW_FB6_PORT DB=$db_fb6 ;;
    fb3) HOST=127.0.0.1 PORT=$FBW_FB3_PORT DB=$db_fb3 ;;   # fb3 listens on 127.0.0.1 only
    fb4) HOST=127.0.0.2 PORT=$FBW_FB4_PORT DB=$db_fb4 ;;
    fb4v6) HOST=::1 PORT=$FBW_FB4_PORT DB=$db_fb4 ;;
    fb3l) HOST=127.0.0.2 PORT=$FBW_FB3L_PORT DB=$db_fb3l ;;
    esac
    DSN=$HOST/$PORT:$DB
    [ "$HOST" != ::1 ] || DSN="[::1]/$PORT:$DB"
    # Create the private database once (not recorded).
    if ! ISC_PASSWORD=$FBW_PASSWORD "$FBWIRE_SQL" --info --user SYSDBA --wire-crypt disabled "$DSN" \
            >/dev/null 2>&1; then
        ISC_PASSWORD=$FBW_PASSWORD "$FBWIRE_SQL" --info --create --user SYSDBA --wire-crypt disabled \
            "$DSN" >/dev/null
    fi
    if [ "$1" = fb3l ]; then # the Legacy_Auth user creates the table (FB3 metadata privilege)
        echo "GRANT CREATE TABLE TO USER $FBW_LEGACY_USER; COMMIT;" |
            ISC_USER=SYSDBA ISC_PASSWORD=$FBW_PASSWORD isql-fb -q "$DSN" >/dev/null 2>&1 || true
    fi
}

# Drop a table a failed earlier run left behind (not recorded).
cleanup_table() {
    ISC_PASSWORD=$FBW_PASSWORD "$TMP/session" --cleanup "$DSN" >/dev/null 2>&1 || true
}

# record NAME command...: capture HOST:PORT on $IFACE (default lo; LINKTYPE=... passes -y) while the
# command runs, keep the connection that attached to DB, write pcap/NAME.pcap (and with KEYS=1 its
# key log line as pcap/NAME.keys). Tries three times: the capture must hold the whole session
# (fbwire-pcap decodes it with no problem reported).
record() {
    for attempt in 1 2 3; do
        if record_once "$@"; then
            return 0
        fi
        echo "record.sh: $1: attempt $attempt did not capture the session, again" >&2
    done
    exit 1
}

record_once() {
    local name=$1 port=$PORT db=$DB filter="tcp port $PORT"
    shift
    [ "$HOST" = 127.0.0.1 ] || filter="host $HOST and $filter"
    local raw=$TMP/$name.raw.pcap keys=$TMP/$name.keys keyopt=()
    rm -f "$keys"
    tcpdump -i "${IFACE:-lo}" ${LINKTYPE:+-y "$LINKTYPE"} -s 0 -B 65536 -U --immediate-mode \
        -w "$raw" "$filter" 2>"$TMP/tcpdump.err" &
    TCPDUMP_PID=$!
    for _ in $(seq 100); do grep -q "listening on" "$TMP/tcpdump.err" && break; sleep 0.05; done
    if [ -n "${KEYS:-}" ]; then export FBWIRE_KEYLOGFILE=$keys; else unset FBWIRE_KEYLOGFILE; fi
    if ! "$@" >"$TMP/$name.out"; then
        kill -INT "$TCPDUMP_PID"
        echo "record.sh: $name: the session failed" >&2
        exit 1
    fi
    sleep 0.5
    kill -INT "$TCPDUMP_PID"
    wait "$TCPDUMP_PID" || true
    TCPDUMP_PID=
    "$PCAP_TOOL" dump --port "$port" "$raw" >"$TMP/$name.dump" 2>/dev/null || true
    local conn cport
    conn=$(grep -F " C>S op_connect " "$TMP/$name.dump" | grep -F "file=\"${MATCH-$db}\"" |
        awk '{print $2}' | sed -n "${PICK:-\$}p") # the last one, or the PICK-th
    [ -n "$conn" ] || return 1
    grep -q "^$conn closed (FIN)" "$TMP/$name.dump" || return 1
    cport=$(grep "^$conn open " "$TMP/$name.dump" | sed -E 's/^[^ ]+ open [^ ]*:([0-9]+) -> .*/\1/')
    tcpdump -r "$raw" -w "$OUT/$name.pcap" "tcp port $port and tcp port $cport" 2>/dev/null
    if [ -n "${KEYS:-}" ]; then # the session's own line only
        grep -E " client=[^ ]*:$cport server=" "$keys" >"$OUT/$name.keys" || return 1
        keyopt=(--keylog "$OUT/$name.keys")
    fi
    if [ -n "${ENCRYPTED:-}" ]; then # must stop at op_crypt, and only there
        local st
        st=$("$PCAP_TOOL" stats --port "$port" "$OUT/$name.pcap" 2>/dev/null || true)
        grep -q "^problem: encrypted with" <<<"$st" || return 1
    else
        "$PCAP_TOOL" stats --port "$port" "${keyopt[@]}" "$OUT/$name.pcap" >/dev/null 2>&1 || return 1
    fi
    echo "record.sh: $name: $(stat -c %s "$OUT/$name.pcap") bytes, client port $cport"
    sed 's/^/# session: /' "$TMP/$name.out" >"$TMP/$name.session"
}

# expect NAME "how it was checked": write pcap/NAME.expect.
# With KEYS=1 the args name the key log as pcap/NAME.keys (relative to the source tree).
expect() {
    local name=$1 port=$PORT check=$2 keyarg=
    [ -z "${KEYS:-}" ] || keyarg=" --keylog pcap/$name.keys"
    {
        echo "# args: stats --trips --port $port$keyarg"
        [ -z "${ENCRYPTED:-}" ] || echo "# exit: 1"
        echo "# checked: $check"
        [ -z "${INDEPENDENT:-}" ] || independent_trips "$OUT/$name.pcap" "$port"
        cat "$TMP/$name.session"
        run_args "$(echo "stats --trips --port $port$keyarg")" "$OUT/$name.pcap" || [ -n "${ENCRYPTED:-}" ]
    } >"$OUT/$name.expect"
}

# independent_trips FILE PORT: the round trips of the capture's one connection counted by tshark,
# not by fbwire: payload-carrying segments in capture order, a turnaround wherever the server's
# payload follows the client's. The final op_disconnect has no answer, so it starts no turnaround.
independent_trips() {
    command -v tshark >/dev/null || { echo "record.sh: tshark missing (apt-get install tshark)" >&2; exit 2; }
    local n
    n=$(tshark -r "$1" -Y "tcp.len > 0" -T fields -e tcp.dstport 2>/dev/null |
        awk -v port="$2" '{ c = ($1 == port) } !c && last_c { n++ } { last_c = c } END { print n + 0 }')
    echo "# independent: round_trips=$n (tshark: turnarounds from client to server payload, the final unanswered op_disconnect has none)"
}

# run_args "ARGS" FILE: fbwire-pcap with an .expect's args (pcap/... relative to the source tree).
run_args() {
    local a
    read -r -a a <<<"${1//pcap\//$SRC/pcap/}"
    "$PCAP_TOOL" "${a[@]}" "$2"
}

isql_session() {
    mkdir -p "$TMP/fbroot"
    # fbclient reads $FIREBIRD/firebird.conf: wire crypt off on the client side only.
    printf 'WireCrypt = Disabled\nAuthClient = Srp256, Srp\n' >"$TMP/fbroot/firebird.conf"
    for m in /usr/lib/x86_64-linux-gnu/firebird/3.0/firebird.msg /usr/share/firebird/3.0/firebird.msg; do
        [ -e "$m" ] && ln -sf "$m" "$TMP/fbroot/firebird.msg" && break
    done
    cat >"$TMP/script.sql" <<'EOF'
CREATE TABLE FBW_PCAP (ID INTEGER NOT NULL PRIMARY KEY, NAME VARCHAR(20), AMOUNT NUMERIC(9,2));
INSERT INTO FBW_PCAP (ID, NAME, AMOUNT) WITH RECURSIVE R (N) AS (SELECT 1 FROM RDB$DATABASE UNION ALL SELECT N + 1 FROM R WHERE N < 100) SELECT N, CASE WHEN MOD(N, 10) = 0 THEN NULL ELSE 'row ' || N END, N * 1.5 FROM R;
SELECT ID, NAME, AMOUNT FROM FBW_PCAP ORDER BY ID;
UPDATE FBW_PCAP SET AMOUNT = AMOUNT + 1 WHERE ID <= 50;
COMMIT;
DROP TABLE FBW_PCAP;
COMMIT;
EOF
    FIREBIRD=$TMP/fbroot ISC_USER=SYSDBA ISC_PASSWORD=$FBW_PASSWORD \
        isql-fb -q -i "$TMP/script.sql" "$DSN" >"$TMP/isql.out"
    echo "isql printed $(grep -cE '^ +[0-9]+ ' "$TMP/isql.out") rows"
}

# Which Firebird's tools and server the tool captures use: fb3 (the host's tools, the FB3 server)
# or fb4 (the FB4 chroot's tools, the FB4 server). Sets TSRV TVER THOST TPORT TDIR (the server's
# database directory as it names it), TDIRH (the same on this host), WD, WDH and SVC.
tool_server() {
    TSRV=$1
    case $1 in
    fb3) TVER=3.0 THOST=127.0.0.1 TPORT=$FBW_FB3_PORT TDIR=$FBW_DBDIR_FB3 TDIRH=$FBW_DBDIR_FB3
         WD=$TMP WDH=$TMP ;;
    fb4) TVER=4.0 THOST=127.0.0.2 TPORT=$FBW_FB4_PORT TDIR=$FBW_DBDIR_FB4 TDIRH=$FBW_DBDIR_FB4_HOST
         WD=/tmp/$(basename "$TMP") WDH=$FBW_FB4_CHROOT/tmp/$(basename "$TMP")
         [ -x "$FBW_FB4_CHROOT/usr/bin/gbak" ] || {
             echo "record.sh: no gbak in the FB4 chroot: scripts/fb-servers.sh installs firebird4.0-utils there" >&2
             exit 2
         } ;;
    esac
    mkdir -p "$WDH"
    SVC=$THOST/$TPORT:service_mgr
}

# The client configuration Firebird's tools read ($FIREBIRD/firebird.conf): wire crypt off on the
# client side only, optional wire compression; the message file for readable errors.
fbroot() { # [compress]
    local root=/ m
    [ "$TSRV" = fb3 ] || root=$FBW_FB4_CHROOT/
    rm -rf "$WDH/fbroot"
    mkdir -p "$WDH/fbroot"
    printf 'WireCrypt = Disabled\nAuthClient = Srp256, Srp\n' >"$WDH/fbroot/firebird.conf"
    [ "${1:-}" != compress ] || echo 'WireCompression = true' >>"$WDH/fbroot/firebird.conf"
    for m in /usr/lib/x86_64-linux-gnu/firebird/$TVER/firebird.msg /usr/share/firebird/$TVER/firebird.msg; do
        [ -e "$root$m" ] && ln -sf "$m" "$WDH/fbroot/firebird.msg" && break
    done
}

fbtool() { # command...: one of Firebird's tools as SYSDBA, login from the environment
    if [ "$TSRV" = fb3 ]; then
        FIREBIRD=$WD/fbroot ISC_USER=SYSDBA ISC_PASSWORD=$FBW_PASSWORD timeout 120 "$@"
    else # Debian's FB4 client reads only the chroot's /etc/firebird/4.0/firebird.conf (the servers'
        # own, $FIREBIRD does not move it): the tool sees ours bound over it in a mount namespace of
        # its own, the servers' view stays as it is
        timeout 120 unshare -m --propagation private /bin/sh -c 'mount --bind "$1" "$2" && shift 2 && exec "$@"' \
            sh "$WDH/fbroot/firebird.conf" "$FBW_FB4_CHROOT/etc/firebird/4.0/firebird.conf" \
            chroot "$FBW_FB4_CHROOT" /usr/bin/env -i PATH=/usr/bin:/bin ISC_USER=SYSDBA \
            ISC_PASSWORD="$FBW_PASSWORD" "$@"
    fi
}

TOOLS_DB=fbwire_tools.fdb
# A tiny database for the tool captures, created afresh (not recorded): two tables, five rows,
# two text blobs, NULLs, a few types, on the server of tool_server SERVER (fb3 | fb4). Sets TDB
# (its path on the server), TDSN, and HOST PORT DB.
tools_db() {
    tool_server "$1"
    fbroot
    TDB=$TDIR/$TOOLS_DB
    TDSN=$THOST/$TPORT:$TDB
    echo "DROP DATABASE;" | fbtool isql-fb -q "$TDSN" >/dev/null 2>&1 || true
    fbtool isql-fb -q >/dev/null <<SQL
CREATE DATABASE '$TDSN';
CREATE TABLE T1 (ID INTEGER NOT NULL PRIMARY KEY, NAME VARCHAR(20), AMOUNT NUMERIC(9,2), NOTE BLOB SUB_TYPE TEXT);
CREATE TABLE T2 (K CHAR(4), D DATE, TS TIMESTAMP, F DOUBLE PRECISION);
INSERT INTO T1 VALUES (1, 'one', 1.5, 'first note');
INSERT INTO T1 VALUES (2, 'two', 2.25, NULL);
INSERT INTO T1 VALUES (3, NULL, NULL, 'third');
INSERT INTO T2 VALUES ('ab', DATE '2026-01-02', TIMESTAMP '2026-01-02 03:04:05', 1.25);
INSERT INTO T2 VALUES ('cd', NULL, NULL, NULL);
COMMIT;
SQL
    HOST=$THOST PORT=$TPORT DB=$TDB
}

gbak_backup_session() {
    fbtool gbak -b "$TDSN" "$WD/tools.fbk"
    echo "gbak -b wrote $(stat -c %s "$WDH/tools.fbk") bytes"
}

big_blobs() { # eleven blobs of 12,000 bytes into the tools database (not recorded)
    fbtool isql-fb -q "$TDSN" >/dev/null <<'SQL'
CREATE TABLE T3 (ID INTEGER, B BLOB SUB_TYPE TEXT);
SET TERM ^;
EXECUTE BLOCK AS DECLARE I INTEGER = 0; DECLARE J INTEGER; DECLARE X BLOB SUB_TYPE TEXT; BEGIN
  WHILE (I < 11) DO BEGIN
    X = ''; J = 0;
    WHILE (J < 6) DO BEGIN X = X || LPAD('', 2000, 'blob ' || I || ' part ' || J || '; '); J = J + 1; END
    INSERT INTO T3 VALUES (:I, :X);
    I = I + 1;
  END
END^
SET TERM ;^
COMMIT;
SQL
}

gbak_restore_session() { # restores the backup made before it over the database itself
    fbtool gbak -c -rep "$WD/tools.fbk" "$TDSN"
    echo "gbak -c -rep read $(stat -c %s "$WDH/tools.fbk") bytes"
}

gfix_session() { # gfix option...
    fbtool gfix "$@" "$TDSN"
    echo "gfix $* finished"
}

svc_stats_session() {
    fbtool fbsvcmgr "$SVC" action_db_stats dbname "$TDB" sts_hdr_pages |
        grep -c . | sed 's/^/fbsvcmgr printed lines: /'
}

svc_nbak_session() { # the backup file is written by the server, next to the database
    local nbk=$TDIR/fbwire_tools.nbk
    rm -f "$TDIRH/fbwire_tools.nbk" 2>/dev/null || true
    fbtool fbsvcmgr "$SVC" action_nbak dbname "$TDB" nbk_file "$nbk" \
        nbk_level 0 | grep -c . | sed 's/^/fbsvcmgr action_nbak printed lines: /'
    rm -f "$TDIRH/fbwire_tools.nbk" 2>/dev/null || true
}

svc_trace_session() { # a user trace session started, fed by one query, stopped from another attachment
    cat >"$WDH/trace.conf" <<CONF
database = $TDB
{
  enabled = true
  log_statement_finish = true
}
CONF
    fbtool fbsvcmgr "$SVC" action_trace_start trc_name fbwire \
        trc_cfg "$WD/trace.conf" >"$TMP/trace.out" &
    local pid=$! id=
    for _ in $(seq 100); do
        id=$(sed -n 's/^Trace session ID \([0-9]*\) started.*/\1/p' "$TMP/trace.out")
        [ -n "$id" ] && break
        sleep 0.1
    done
    echo "SELECT COUNT(*) FROM T1;" | fbtool isql-fb -q "$TDSN" >/dev/null
    sleep 1.5 # the trace flushes its log about once a second
    fbtool fbsvcmgr "$SVC" action_trace_stop trc_id "$id" >/dev/null
    wait "$pid"
    echo "trace session started and stopped; it printed $(grep -c . "$TMP/trace.out") lines"
}

isql_zlib_session() {
    fbroot compress
    echo "SELECT ID, NAME, AMOUNT FROM T1 ORDER BY ID; SELECT K, D, TS, F FROM T2;" |
        fbtool isql-fb -q "$TDSN" >"$TMP/isql.out"
    echo "isql printed $(grep -cE '^ +[0-9]+ |^ab|^cd' "$TMP/isql.out") rows"
}

fbwire_session() { # args...
    ISC_PASSWORD=${SESSION_PASSWORD:-$FBW_PASSWORD} "$TMP/session" "$DSN" "$@"
}

crypt_session() { # wire crypt left enabled: the capture must stop decoding at op_crypt
    ISC_PASSWORD=$FBW_PASSWORD "$FBWIRE_SQL" --info --user SYSDBA "$DSN" | grep -E '^(protocol|wire_crypt|round_trips):'
}

crypt_info_session() { # wire crypt on (the default), for a capture read with its key log
    ISC_PASSWORD=$FBW_PASSWORD "$FBWIRE_SQL" --info --user SYSDBA "$DSN" |
        grep -E '^(protocol|wire_crypt|round_trips|packets_sent|packets_received|bytes_sent|bytes_received):'
}

info_session() {
    ISC_PASSWORD=$FBW_PASSWORD "$FBWIRE_SQL" --info --user SYSDBA --wire-crypt disabled "$DSN" |
        grep -E '^(protocol|round_trips|packets_sent|packets_received|bytes_sent|bytes_received):'
}

SCROLL_TABLE=FBW_PCAP_SCROLL
scroll_session() { # fbwire-sql moving a scrollable cursor (Firebird 5+); its rows and counts printed
    ISC_PASSWORD=$FBW_PASSWORD "$FBWIRE_SQL" --user SYSDBA --wire-crypt disabled --tsv "$DSN" <<EOF
CREATE TABLE $SCROLL_TABLE (ID INTEGER NOT NULL PRIMARY KEY, V VARCHAR(10));
INSERT INTO $SCROLL_TABLE (ID, V) WITH RECURSIVE R (N) AS (SELECT 1 FROM RDB\$DATABASE UNION ALL SELECT N + 1 FROM R WHERE N < 12) SELECT N, 'row ' || N FROM R;
SET SCROLL ON;
SELECT ID, V FROM $SCROLL_TABLE ORDER BY ID;
FETCH FIRST;
FETCH PRIOR;
FETCH NEXT;
FETCH LAST;
FETCH NEXT;
FETCH PRIOR;
FETCH ABSOLUTE 5;
FETCH ABSOLUTE -3;
FETCH RELATIVE -4;
FETCH RELATIVE 2;
FETCH RELATIVE 0;
SHOW COUNT;
FETCH NEXT;
SET SCROLL OFF;
DROP TABLE $SCROLL_TABLE;
EOF
}

p10_session() { # Legacy_Auth user at protocol 10
    SESSION_PASSWORD=$FBW_LEGACY_PASSWORD fbwire_session --protocol-max 10 --auth Legacy_Auth \
        --user "$FBW_LEGACY_USER"
}

if [ "${1:-}" = --refresh ]; then # the tool's output changed: new bodies under the same headers
    for e in "$OUT"/*.expect; do
        args=$(sed -n 's/^# args: //p' "$e")
        { grep '^#' "$e"; run_args "$args" "${e%.expect}.pcap" || true; } >"$e.new"
        mv "$e.new" "$e"
    done
    exit 0
fi
NAMES=${*:-fb3_info fb4_info fb4_info_crypt fb4_script_zlib fb3_script fb3_isql fb3l_p10
    fb3_script_arc4 fb3_script_arc4_zlib fb4_script_chacha64 fb4_script_chacha64_zlib
    fb4_script_chacha fb4_script_chacha_zlib fb3_info_sll fb4_info_sll2 fb4_info_ipv6
    fb3_gbak_backup fb3_gbak_restore fb3_gfix_validate fb3_gfix_sweep fb3_svc_nbak fb3_svc_stats
    fb3_svc_trace fb3_isql_zlib fb4_gbak_backup fb4_gbak_restore fb4_gfix_validate fb4_gfix_sweep
    fb4_svc_nbak fb4_svc_stats fb4_svc_trace fb4_isql_zlib fb4_gbak_restore_blobs${FBW_FB6_PORT:+ fb6_script_p19 fb6_script_p20}}
for name in $NAMES; do
    case $name in
    fb3_info)
        use fb3
        record fb3_info info_session
        expect fb3_info "fbwire-sql --info (session lines below) counted the same round trips, packets and bytes live; the 4 trips are connect (op_accept_data carries the SRP reply, auth finishes inside op_attach), attach, info_database, detach, plus the unanswered op_disconnect"
        ;;
    fb4_info)
        use fb4
        record fb4_info info_session
        expect fb4_info "as fb3_info, against FB4 (protocol 17): same 4 trips, same live counts as fbwire-sql --info printed"
        ;;
    fb4_info_crypt)
        use fb4
        ENCRYPTED=1 record fb4_info_crypt crypt_session
        ENCRYPTED=1 expect fb4_info_crypt "fbwire-sql --info with wire crypt enabled (the default): decoding stops at op_crypt, the tool names the plugin fbwire-sql reports and the first encrypted packet; trips after it are not decodable"
        ;;
    fb4_script_zlib)
        use fb4
        cleanup_table
        record fb4_script_zlib fbwire_session --compress
        expect fb4_script_zlib "pcap/session.c with --compress; the per-step live round trips below sum to the decoded total; 100 rows = op_fetch_response messages=1 x100 plus the batch end; wire bytes < XDR bytes because of zlib"
        ;;
    fb3_script)
        use fb3
        cleanup_table
        record fb3_script fbwire_session
        expect fb3_script "pcap/session.c on the server fb3_isql used, for a like-for-like comparison with fbclient; per-step live round trips below sum to the decoded total"
        ;;
    fb3_isql)
        use fb3
        cleanup_table
        record fb3_isql isql_session
        expect fb3_isql "isql-fb (fbclient 3.0) running the same 7-line script with client WireCrypt = Disabled; trips read against the script by hand: prepare+describe, execute, fetch batches of the SELECT, deferred frees riding on later requests"
        ;;
    fb6_script_p19 | fb6_script_p20)
        use fb6
        cleanup_table
        record "$name" fbwire_session --protocol-max "${name##*_p}"
        expect "$name" "pcap/session.c against Firebird 6 (master) offered protocols up to ${name##*_p}: the session of fb3_script; at 20 each op_prepare_statement carries the prepare flags (fbwire-pcap dump shows prepare_flags=71), at 19 it has no such field; per-step live round trips below sum to the decoded total"
        ;;
    fb3l_p10)
        use fb3l
        cleanup_table
        record fb3l_p10 p10_session
        expect fb3l_p10 "pcap/session.c at protocol 10 with Legacy_Auth (no lazy send: every request is its own trip); rows carry P<13 per-field null indicators (every 10th NAME is NULL)"
        ;;
    fb3_script_arc4 | fb3_script_arc4_zlib | fb4_script_chacha64 | fb4_script_chacha64_zlib | \
        fb4_script_chacha | fb4_script_chacha_zlib)
        # NAME = SERVER_script_PLUGIN[_zlib]: pcap/session.c with that wire crypt plugin required
        plugin=$(cut -d_ -f3 <<<"$name")
        plugin=${plugin/arc4/Arc4}; plugin=${plugin/chacha64/ChaCha64}; plugin=${plugin/chacha/ChaCha}
        zopt=(); [[ $name != *_zlib ]] || zopt=(--compress)
        use "${name%%_*}"
        cleanup_table
        KEYS=1 record "$name" fbwire_session --crypt "$plugin" "${zopt[@]}"
        KEYS=1 expect "$name" "pcap/session.c with wire crypt $plugin required${zopt:+ and --compress}, decrypted with its key log line: the same ops, SQL and per-step round trips as the clear session on that server (fb3_script / fb4_script_zlib), plus op_crypt and its reply (tests/integ/test_pcap_keylog.c compares them)"
        ;;
    fb3_info_sll)
        use fb3
        IFACE=any record fb3_info_sll info_session
        expect fb3_info_sll "as fb3_info, captured with tcpdump -i any (Linux cooked v1, link type 113)"
        ;;
    fb4_info_sll2)
        use fb4
        IFACE=any LINKTYPE=LINUX_SLL2 record fb4_info_sll2 info_session
        expect fb4_info_sll2 "as fb4_info, captured with tcpdump -i any -y LINUX_SLL2 (Linux cooked v2, link type 276)"
        ;;
    fb4_info_ipv6)
        use fb4v6
        KEYS=1 record fb4_info_ipv6 crypt_info_session
        KEYS=1 expect fb4_info_ipv6 "fbwire-sql --info over IPv6 (::1) with wire crypt on (the default), decrypted with its key log line (an IPv6 address): the decoded round trips, packets and bytes equal the live ones fbwire-sql printed"
        ;;
    fb[34]_gbak_backup | fb[34]_gbak_restore)
        tools_db "${name%%_*}"
        if [ "$name" = "${TSRV}_gbak_backup" ]; then
            record "$name" gbak_backup_session
        else # gbak -c attaches to see the database, creates it anew, attaches to finish: keep the 2nd
            fbtool gbak -b "$TDSN" "$WD/tools.fbk" # not recorded
            PICK=2 record "$name" gbak_restore_session
        fi
        INDEPENDENT=1 expect "$name" "Firebird ${TVER%.0}'s gbak (${name#"${TSRV}"_gbak_} over the network, BLR request API$( [ "$name" != fb4_gbak_restore ] || echo "; the rows go in through the batch API, the blobs as op_batch_blob_stream")) on a database of two tables and five rows; every request's messages framed with the formats its op_compile BLR declared; the round trips equal the independent count below"
        ;;
    fb4_gbak_restore_blobs)
        tools_db fb4
        big_blobs
        fbtool gbak -b "$TDSN" "$WD/tools.fbk" # not recorded
        PICK=2 record "$name" gbak_restore_session
        INDEPENDENT=1 expect "$name" "Firebird 4's gbak restoring the tools database plus eleven 12 KB text blobs: the blob stream fills fbclient's 128 KB buffer, so one op_batch_blob_stream ends inside a segment and the next goes on with it (the decoder carries the statement's stream state); the round trips equal the independent count below"
        ;;
    fb[34]_gfix_validate | fb[34]_gfix_sweep)
        tools_db "${name%%_*}"
        if [ "$name" = "${TSRV}_gfix_validate" ]; then
            record "$name" gfix_session -v -full
        else
            record "$name" gfix_session -sweep
        fi
        INDEPENDENT=1 expect "$name" "Firebird ${TVER%.0}'s gfix ${name#"${TSRV}"_gfix_} over the network (the DPB asks for it in op_attach); the round trips equal the independent count below"
        ;;
    fb[34]_svc_stats | fb[34]_svc_nbak)
        tools_db "${name%%_*}"
        MATCH= record "$name" "${name#"${TSRV}"_}_session"
        INDEPENDENT=1 expect "$name" "Firebird ${TVER%.0}'s fbsvcmgr through the service manager (${name#"${TSRV}"_svc_}: op_service_start, then op_service_info until the output ends); the round trips equal the independent count below"
        ;;
    fb[34]_svc_trace)
        tools_db "${name%%_*}"
        MATCH= PICK=1 record "$name" svc_trace_session
        INDEPENDENT=1 expect "$name" "fbsvcmgr action_trace_start (the capture keeps that attachment; action_trace_stop came from another): op_service_info polls while the trace output streams; the round trips equal the independent count below"
        ;;
    fb[34]_isql_zlib)
        tools_db "${name%%_*}"
        record "$name" isql_zlib_session
        INDEPENDENT=1 expect "$name" "isql-fb (fbclient $TVER) with client WireCompression = true: two SELECTs over zlib-compressed streams; the round trips equal the independent count below"
        ;;
    fb5_blob_inline | fb5_blob_batch)
        # The blob session (pcap/session.c --blobs) on Firebird 5 (protocol 19): the captured
        # connection is the second one (the first makes the table). inline: the executes ask for
        # fbclient's 65535 bytes, every blob comes as op_inline_blob before its row; batch: they
        # ask for none, the blobs are read through a batch (every open and read in one write).
        use fb5
        ISC_PASSWORD=$FBW_PASSWORD "$TMP/session" --blobs --cleanup "$DSN" >/dev/null 2>&1 || true
        size=65535; [ "$name" = fb5_blob_inline ] || size=0
        record "$name" fbwire_session --blobs --inline-blob-size "$size"
        expect "$name" "pcap/session.c --blobs --inline-blob-size $size on Firebird 5 (protocol 19), the second of its connections; the per-step live round trips below sum to the decoded total; tests/wire/test_captured.c feeds these server bytes to the library (no socket)"
        ;;
    fb5_scroll)
        use fb5
        echo "DROP TABLE $SCROLL_TABLE;" | ISC_PASSWORD=$FBW_PASSWORD "$FBWIRE_SQL" --user SYSDBA \
            --wire-crypt disabled "$DSN" >/dev/null 2>&1 || true # a failed earlier run's (not recorded)
        record "$name" scroll_session
        expect "$name" "fbwire-sql SET SCROLL ON on Firebird 5 (protocol 19): op_execute with cursor_flags scrollable, a SELECT of 12 rows read forward, then 12 FETCH moves (op_fetch_scroll: first, prior past the start, next, last, next past the end, prior, absolute 5 and -3, relative -4, 2 and 0, next) and SHOW COUNT (op_info_cursor, 12); one round trip each; the rows below are what fbwire-sql printed; tests/integ/test_pcap_replay_scroll.c replays it"
        ;;
    fb3_blob)
        # The same blob session on Firebird 3 (no inline blobs below protocol 19): the blobs read
        # through a batch; its replay must ask a Firebird 5 target for no inline blobs
        # (tests/integ/test_pcap_replay_inline.c).
        use fb3
        ISC_PASSWORD=$FBW_PASSWORD "$TMP/session" --blobs --cleanup "$DSN" >/dev/null 2>&1 || true
        record "$name" fbwire_session --blobs
        expect "$name" "pcap/session.c --blobs on Firebird 3, the second of its connections: every blob read through one batch (op_open_blob2, op_info_blob, op_get_segment x5 in one write); the per-step live round trips below sum to the decoded total"
        ;;
    *)
        echo "record.sh: unknown capture $name" >&2
        exit 2
        ;;
    esac
done
