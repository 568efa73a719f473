#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# fbwire-cpu against a small local server made here: the command's CPU is measured (children
# included), the server's CPU during the command is found from its port, a port nobody listens on
# is "not available" with a reason (never 0), and the command's exit status passes through.
#   fbwire-cpu.sh PATH/TO/fbwire-cpu
set -euo pipefail
TOOL=$1
T=$(mktemp -d)
trap 'kill $SRV 2>/dev/null || true; rm -rf "$T"' EXIT

# The server: on each connection it spends 0.4 s of CPU, answers, and goes on listening.
python3 - "$T/port" <<'PY' &
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(4)
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1]))
import os; os.rename(sys.argv[1] + ".tmp", sys.argv[1])
while True:
    c, _ = s.accept(); c.recv(16)
    t = time.process_time()
    while time.process_time() - t < 0.4: pass
    c.sendall(b"ok\n"); c.close()
PY
SRV=$!
for _ in $(seq 100); do [ -s "$T/port" ] && break; sleep 0.1; done
PORT=$(cat "$T/port")

# The client spends 0.3 s itself (in a grandchild: waited-for children count), then asks once.
CLIENT='python3 -c "import time
t=time.process_time()
while time.process_time()-t<0.3: pass"; exec 3<>/dev/tcp/127.0.0.1/'$PORT'; echo go >&3; read -r ans <&3; [ "$ans" = ok ]'
"$TOOL" --port "$PORT" --json "$T/run.json" -- bash -c "$CLIENT" 2>"$T/err"
cat "$T/err"
grep -q "server port $PORT: pid $SRV" "$T/err"

# A free port: listen on an ephemeral port, close it, ask for it.
FREE=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
set +e
"$TOOL" --port "$FREE" --json "$T/free.json" -- bash -c 'exit 3' 2>"$T/err2"
rc=$?
set -e
cat "$T/err2"
[ "$rc" = 3 ] || { echo "exit status $rc, want 3"; exit 1; }

python3 - "$T/run.json" "$T/free.json" <<'PY'
import json, sys
run = json.load(open(sys.argv[1])); free = json.load(open(sys.argv[2]))
srv = run["servers"][0]
assert run["exit_status"] == 0, run
assert run["client_cpu_s"] >= 0.25, run
assert srv["available"] and srv["cpu_s"] >= 0.3, srv
assert free["exit_status"] == 3, free
f = free["servers"][0]
assert f["available"] is False and "cpu_s" not in f and "listens on port" in f["why"], f
print("fbwire-cpu: 2 passed, 0 failed")
PY
