#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# statement-timeout.sh - the driver's --fbwire-statement-timeout inside the stock sysbench:
#
#   tests/sysbench/statement-timeout.sh --lib libfbwire-sysbench.so
#
#   FB4, 300 ms, --fbwire-ignore-errors=statement-timeout: a query that would run for minutes
#     ends as an ignorable error and the same connection goes on (statement_timeout.lua: "TIMEOUT
#     OK", exit 0);
#   FB4, 300 ms, default ignore list: the run ends with Firebird's timeout error, naming the query
#     and the limit;
#   FB3 (protocol 15): the timeout is refused at connect, naming the protocol;
#   a negative value is refused naming the option.
# Prints one line per case; exits non-zero on failure.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# shellcheck source=tests/sysbench/lib-args.sh
. "$HERE/lib-args.sh"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/fbwire-stmt-timeout.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
FAILS=0
ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); tail -n 8 "$LOG" | sed 's/^/    /'; }

run() { # server log extra-options...
  local s=${1^^} log=$2; shift 2
  local host=FBW_${s}_HOST port=FBW_${s}_PORT db=FBW_${s}_DB
  timeout 60 "$REPO/tools/fbwire-sysbench" "$HERE/statement_timeout.lua" --db-driver=fbwire \
    "--fbwire-db=${!host}/${!port}:${!db}" --threads=1 --events=1 --time=0 "$@" run >"$log" 2>&1
}

LOG=$WORK/ignored.log
run fb4 "$LOG" --fbwire-statement-timeout=300 --fbwire-ignore-errors=statement-timeout
rc=$?
if [ $rc -eq 0 ] && grep -q "^TIMEOUT OK" "$LOG"; then
  ok "fb4: a timed-out query is an ignorable error and the connection goes on"
else
  fail "fb4 with statement-timeout ignorable (exit $rc)"
fi

LOG=$WORK/fatal.log
run fb4 "$LOG" --fbwire-statement-timeout=300
# Firebird's message is two lines: "operation was cancelled" and "-Statement level timeout expired."
line=$(grep -m1 -A1 "FATAL" "$LOG")
echo "$line" | cut -c1-400 | sed 's/^/    /'
if grep -q "for query 'select count(\*) from rdb\$fields a" <<<"$line" &&
   grep -q "Statement level timeout expired" <<<"$line" &&
   grep -q "(statement timeout 300 ms)" <<<"$line" && ! grep -q "^TIMEOUT OK" "$LOG"; then
  ok "fb4: the run ends with Firebird's timeout error naming the query and the limit"
else
  fail "fb4: no timeout error naming the query and the limit"
fi

LOG=$WORK/fb3.log
run fb3 "$LOG" --fbwire-statement-timeout=300
rc=$?
if [ $rc -ne 0 ] && grep -q "statement timeouts need protocol 16.*protocol 15" "$LOG" &&
   ! grep -q "^TIMEOUT OK" "$LOG"; then
  ok "fb3: refused at connect, naming the protocol"
else
  fail "fb3: the timeout was not refused (exit $rc)"
fi

LOG=$WORK/bad.log
run fb4 "$LOG" --fbwire-statement-timeout=-5
rc=$?
if [ $rc -ne 0 ] && grep -q "invalid --fbwire-statement-timeout" "$LOG"; then
  ok "a negative timeout is refused naming the option"
else
  fail "--fbwire-statement-timeout=-5 accepted (exit $rc)"
fi

[ $FAILS -eq 0 ] && echo "statement-timeout: all passed" || echo "statement-timeout: $FAILS failed"
exit $((FAILS > 0))
