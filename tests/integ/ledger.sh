#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ledger.sh - the commit ledger (tests/ledger/main.c) on one server, for ctest.
#
#   tests/integ/ledger.sh LEDGER --server NAME [LEDGER-ARGS...]
#
# The ledger resets connections at random while threads insert. The server must survive that, and
# the ledger checks the table through a new connection afterwards. Firebird 4.0.5 (Debian 13's
# package) did not, twice in about thirty 10-s runs on 2026-12-06: once it hung, every thread of
# the process waiting on a mutex and no reply to any op_connect, once it died (docs/faults.md).
# A server that crashes or hangs is a Firebird fault, not the library's, and without the server the
# ledger cannot be checked: the ledger exits 3 then. This script says so, restarts that server
# (`scripts/fb-servers.sh start NAME` stops a hung one and starts it again, so the tests after this
# one find it answering) and runs the ledger once more; that run decides. Every other result is the
# ledger's own. NAME is the server in FBW_TARGET when tests/support/on-server.sh runs a twin.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
[ $# -ge 3 ] && [ "$2" = --server ] || { echo "usage: $0 LEDGER --server NAME [ARGS...]" >&2; exit 2; }
name=${FBW_TARGET:-$3}

"$@"
rc=$?
[ "$rc" = 3 ] || exit "$rc"
echo "FIREBIRD FAULT: $name stopped answering under the ledger's resets (crashed or hung); restarting it"
[ "$(id -u)" -eq 0 ] || { echo "FAIL: only root can restart $name"; exit 1; }
# A twin runs in tests/support/on-server.sh's mount namespace, where servers.env is a copy that
# names NAME in fb4's place; fb-servers.sh rewrites servers.env, so it runs in the machine's.
enter=()
[ -z "${FBW_HOST_MOUNT_NS:-}" ] || enter=(nsenter "--mount=$FBW_HOST_MOUNT_NS")
if ! out=$(timeout 300 "${enter[@]}" "$REPO/scripts/fb-servers.sh" start "$name" 2>&1); then
  printf '%s\n' "$out" | tail -n 5
  echo "FAIL: $name could not be restarted"
  exit 1
fi
echo "$name restarted; the ledger once more (this run decides)"
"$@"
