#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# fbwire-cpu against a small local server made here: the command's CPU is measured (children
# included), the server's CPU during the command is found from its port, a port nobody listens on
# is "not available" with a reason (never 0), and the command's exit status passes through.
#   fbwire-cpu.sh PATH/TO/fbwire-cpu
set -euo pipefail
TOOL=$1
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
T=$(mktemp -d)
trap 'kill $SRV 2>/dev/null || true; rm -rf "$T"' EXIT

# The server: on each connection it spends 0.4 s of CPU, answers, and goes on listening.
python3 "$HERE/fbwire_cpu_helper.py" server "$T/port" &
SRV=$!
for _ in $(seq 100); do [ -s "$T/port" ] && break; sleep 0.1; done
PORT=$(cat "$T/port")

# The client spends 0.3 s itself (in a grandchild: waited-for children count), then asks once.
CLIENT='python3 "'$HERE'/fbwire_cpu_helper.py" spin 0.3; exec 3<>/dev/tcp/127.0.0.1/'$PORT'; echo go >&3; read -r ans <&3; [ "$ans" = ok ]'
"$TOOL" --port "$PORT" --json "$T/run.json" -- bash -c "$CLIENT" 2>"$T/err"
cat "$T/err"
grep -q "server port $PORT: pid $SRV" "$T/err"

# A free port: listen on an ephemeral port, close it, ask for it.
FREE=$(python3 "$HERE/fbwire_cpu_helper.py" free-port)
set +e
"$TOOL" --port "$FREE" --json "$T/free.json" -- bash -c 'exit 3' 2>"$T/err2"
rc=$?
set -e
cat "$T/err2"
[ "$rc" = 3 ] || { echo "exit status $rc, want 3"; exit 1; }

python3 "$HERE/fbwire_cpu_helper.py" check "$T/run.json" "$T/free.json"
