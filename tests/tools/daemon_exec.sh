#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# daemon_exec.sh - scripts/lib/daemon.sh: a server started with daemon_exec inherits no
# descriptor but 0-2. The caller holds a lock (as `flock LOCK ctest` does around a test run) and
# a pipe; a long-running child started the way peer-servers.sh starts PostgreSQL and MariaDB must
# hold neither: the lock is free for another process and the pipe's reader sees its end.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
. "$REPO/scripts/lib/daemon.sh"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/fbwire-daemon.XXXXXX")
child=
trap '[ -n "$child" ] && kill "$child" 2>/dev/null; rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

exec 7>"$WORK/held.lock"
flock 7
# A pipe whose reader waits for end of file; the writer end is fd 8 here. The reader must not
# have the lock itself: it ends only after the pipe's end, so it would still hold it when checked.
mkfifo "$WORK/fifo"
(exec 7>&-; cat "$WORK/fifo" >"$WORK/read.out"; echo done >"$WORK/read.end") &
exec 8>"$WORK/fifo"

(daemon_exec sleep 60) </dev/null >/dev/null 2>&1 &
child=$!
for _ in $(seq 1 50); do [ "$(cat /proc/$child/comm 2>/dev/null)" = sleep ] && break; sleep 0.1; done
[ "$(cat /proc/$child/comm 2>/dev/null)" = sleep ] || fail "the child did not exec its command"
extra=$(ls /proc/$child/fd | awk '$1 > 2' | tr '\n' ' ')
[ -z "$extra" ] || fail "the child kept descriptors $extra"

exec 7>&- 8>&-
flock -n "$WORK/held.lock" true || fail "the lock is still held after its holder closed it (the child has it)"
for _ in $(seq 1 50); do [ -f "$WORK/read.end" ] && break; sleep 0.1; done
[ -f "$WORK/read.end" ] || fail "the pipe's reader saw no end of file (the child holds its writer end)"

# The check can fail: the same child started without daemon_exec keeps both.
exec 7>"$WORK/held2.lock"
flock 7
(exec sleep 60) </dev/null >/dev/null 2>&1 &
plain=$!
exec 7>&-
if flock -n "$WORK/held2.lock" true; then kill "$plain"; fail "control: a plain child did not keep the lock"; fi
kill "$plain"
echo "ok: daemon_exec leaves the child only 0-2; the lock and the pipe are released"
