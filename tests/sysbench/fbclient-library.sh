#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# fbclient-library.sh - the fbclient driver's --fbclient-library inside the stock sysbench, on FB3:
#
#   tests/sysbench/fbclient-library.sh --lib libfbwire-sysbench.so
#
#   the system's libfbclient named by its full path: the run works and the report (text and
#     JSON) names that file and the version the library gives (isc_get_client_version);
#   without the option: libfbclient.so.2 as the dynamic linker finds it, named the same way;
#   a path with no file, and a library that is no Firebird client (libz): the run fails at once
#     with an error naming the file and what is wrong;
#   the fbwire driver's report names no client library.
# Prints one line per case; exits non-zero on failure.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# shellcheck source=tests/sysbench/lib-args.sh
. "$HERE/lib-args.sh"
# The system's libraries by full path, as the dynamic linker's cache lists them.
lib_path() { ldconfig -p | awk -v n="$1" '$1 == n && /x86-64|64bit/ { print $NF; exit }'; }
FBCLIENT=$(lib_path libfbclient.so.2)
LIBZ=$(lib_path libz.so.1)
[ -n "$FBCLIENT" ] && [ -n "$LIBZ" ] ||
  { echo "the system has no libfbclient.so.2 or libz.so.1 (scripts/install-deps.sh)" >&2; exit 1; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/fbwire-fbclient-lib.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
FAILS=0
ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); tail -n 8 "$LOG" | sed 's/^/    /'; }

run() { # driver log extra-options...
  local drv=$1 log=$2; shift 2
  timeout 60 "$REPO/tools/fbwire-sysbench" "$HERE/select_one.lua" --db-driver="$drv" \
    "--$drv-db=$FBW_FB3_HOST/$FBW_FB3_PORT:$FBW_FB3_DB" "--$drv-wire-crypt=enabled" \
    "--$drv-report=$log.json" --threads=1 --events=2 --time=0 "$@" run >"$log" 2>&1
}
json_library() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["connection"]["client_library"])' "$1"; }

LOG=$WORK/path.log
run fbclient "$LOG" --fbclient-library="$FBCLIENT"
rc=$?
line=$(grep -m1 "client library:" "$LOG")
echo "   $line"
text=$(sed 's/^ *client library: *//' <<<"$line")
if [ $rc -eq 0 ] && [ "$(grep -c '^SELECT OK' "$LOG")" = 2 ] &&
   [[ $text =~ ^$FBCLIENT\ \(.*Firebird\ [0-9]+\.[0-9]+\)$ ]] &&
   [ "$(json_library "$LOG.json")" = "$text" ]; then
  ok "--fbclient-library=$FBCLIENT: the run works, the report names the file and its version"
else
  fail "--fbclient-library=$FBCLIENT (exit $rc)"
fi

LOG=$WORK/default.log
run fbclient "$LOG"
rc=$?
line=$(grep -m1 "client library:" "$LOG")
echo "   $line"
if [ $rc -eq 0 ] && [[ $line =~ client\ library:\ +/.*/libfbclient\.so\.2\ \(.*Firebird\ [0-9]+\.[0-9]+\)$ ]]; then
  ok "default: libfbclient.so.2 as the dynamic linker finds it, named in the report"
else
  fail "default library (exit $rc)"
fi

LOG=$WORK/missing.log
run fbclient "$LOG" --fbclient-library=/nonexistent/libfbclient.so.2
rc=$?
if [ $rc -ne 0 ] && grep -q "FATAL: fbclient: cannot load /nonexistent/libfbclient.so.2: " "$LOG" &&
   ! grep -q "^SELECT OK" "$LOG"; then
  ok "a path with no file: refused naming it"
else
  fail "--fbclient-library=/nonexistent/libfbclient.so.2 (exit $rc)"
fi

LOG=$WORK/libz.log
run fbclient "$LOG" --fbclient-library="$LIBZ"
rc=$?
if [ $rc -ne 0 ] && grep -q "FATAL: fbclient: $LIBZ lacks isc_attach_database" "$LOG"; then
  ok "a library that is no Firebird client: refused naming the missing entry point"
else
  fail "--fbclient-library=$LIBZ (exit $rc)"
fi

LOG=$WORK/fbwire.log
run fbwire "$LOG"
rc=$?
if [ $rc -eq 0 ] && ! grep -q "client library:" "$LOG" && [ "$(json_library "$LOG.json")" = None ]; then
  ok "the fbwire driver's report names no client library"
else
  fail "fbwire report (exit $rc)"
fi

[ $FAILS -eq 0 ] && echo "fbclient-library: all passed" || echo "fbclient-library: $FAILS failed"
exit $((FAILS > 0))
