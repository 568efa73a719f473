#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A real Firebird session through fbwire-link with 1-byte slices both ways (and once more through
# 2 ms of RTT with jitter): fbwire-sql's output through the link is byte for byte the direct one,
# on FB3 and FB4, and the link's summary shows one write per byte.
#   fbwire-link-sql.sh PATH/TO/fbwire-link PATH/TO/fbwire-sql
set -euo pipefail
LINK=$1 SQL=$2
ENV_FILE=${FBWIRE_STATE:-/var/tmp/fbwire-state}/servers.env
[ -f "$ENV_FILE" ] || { echo "no $ENV_FILE: start the servers (scripts/fb-servers.sh start)" >&2; exit 1; }
set -a; . "$ENV_FILE"; set +a
export ISC_USER=$FBW_USER ISC_PASSWORD=$FBW_PASSWORD
T=$(mktemp -d)
LPID=
trap '[ -n "$LPID" ] && kill $LPID 2>/dev/null; rm -rf "$T"' EXIT
FAILS=0
ok() { echo "  ok: $*"; }
fail() { echo "  FAIL: $*"; FAILS=$((FAILS + 1)); }

# Rows of many sizes and types, a few hundred of them: enough packets to cross every boundary.
cat >"$T/script.sql" <<'SQL'
SELECT RDB$RELATION_ID, TRIM(RDB$RELATION_NAME), RDB$SYSTEM_FLAG FROM RDB$RELATIONS ORDER BY RDB$RELATION_ID;
WITH RECURSIVE r(n) AS (SELECT 1 FROM RDB$DATABASE UNION ALL SELECT n + 1 FROM r WHERE n < 300)
  SELECT n, n * n, 'row ' || n, CAST(n AS DOUBLE PRECISION) / 7, SUBSTRING('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ' FROM 1 FOR MOD(n, 50)) FROM r;
SELECT COUNT(*) FROM RDB$FIELDS;
SQL

# Start a link with the given options; sets LPORT and LPID.
start_link() {
  local to=$1; shift
  # a fresh file: the previous link's "listening on" line must not be read as this one's
  rm -f "$T/link.err"
  "$LINK" --listen 127.0.0.1:0 --to "$to" --json "$T/link.json" --quiet "$@" 2>"$T/link.err" &
  LPID=$!
  for _ in $(seq 200); do grep -q "listening on" "$T/link.err" 2>/dev/null && break; sleep 0.05; done
  LPORT=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\),.*/\1/p' "$T/link.err")
  [ -n "$LPORT" ] || { cat "$T/link.err"; exit 1; }
}

stop_link() {
  kill -TERM $LPID
  wait $LPID || fail "fbwire-link exit status $?"
  LPID=
}

for server in FB3 FB4; do
  host=FBW_${server}_HOST port=FBW_${server}_PORT db=FBW_${server}_DB
  "$SQL" --tsv --timeout 30 -i "$T/script.sql" "${!host}/${!port}:${!db}" >"$T/direct.out" 2>"$T/direct.err" ||
    { fail "$server direct run"; cat "$T/direct.err"; continue; }
  rows=$(wc -l <"$T/direct.out")
  for mode in "--slice 1" "--rtt 2ms --jitter 1ms --slice 7"; do
    # shellcheck disable=SC2086
    start_link "${!host}:${!port}" $mode
    if "$SQL" --tsv --timeout 60 -i "$T/script.sql" "127.0.0.1/$LPORT:${!db}" >"$T/link.out" 2>"$T/link.err2" &&
       cmp -s "$T/direct.out" "$T/link.out"; then
      ok "$server through fbwire-link $mode: $rows output lines byte for byte the direct ones"
    else
      fail "$server through fbwire-link $mode"; cat "$T/link.err2"; diff "$T/direct.out" "$T/link.out" | head
    fi
    stop_link
    if [ "$mode" = "--slice 1" ]; then
      python3 "$(dirname "${BASH_SOURCE[0]}")/link_json.py" slice-check "$T/link.json" &&
        ok "$server: one write per byte each way" || fail "$server: slice counts"
    fi
  done
done
[ $FAILS -eq 0 ] || { echo "$FAILS failure(s)"; exit 1; }
echo "fbwire-link Firebird session checks passed"
