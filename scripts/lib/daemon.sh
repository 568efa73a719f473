# SPDX-License-Identifier: MIT
# daemon.sh - sourced by scripts/peer-servers.sh; tested by tests/tools/daemon_exec.sh.
#
# daemon_exec COMMAND...: exec COMMAND with nothing open but stdin, stdout and stderr. Call it in
# a subshell: `(daemon_exec setsid server ...) </dev/null >>log 2>&1 &`. A server keeps every
# descriptor it inherits for as long as it runs, so without this our own lock (fd 9) would block
# every later start or stop, and a caller's (a lock held around a test run, a CI runner's pipe)
# would stay held, or never see its end of file, until the server stops. PostgreSQL and MariaDB
# keep them; Firebird's server closes them itself.
daemon_exec() {
  local fd
  for fd in /proc/$BASHPID/fd/*; do
    fd=${fd##*/}
    [ "$fd" -gt 2 ] && eval "exec $fd>&-" 2>/dev/null
  done
  exec "$@"
}
