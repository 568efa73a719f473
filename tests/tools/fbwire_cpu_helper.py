#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""fbwire_cpu_helper.py - the pieces of tests/tools/fbwire-cpu.sh that are Python.

  fbwire_cpu_helper.py server PORTFILE      a server that spends 0.4 s of CPU per connection,
                                            answers "ok" and goes on listening; its port in PORTFILE
  fbwire_cpu_helper.py spin SECONDS         spend that much CPU, then exit
  fbwire_cpu_helper.py free-port            a port nobody listens on (bound, then closed)
  fbwire_cpu_helper.py check RUN.json FREE.json   the figures fbwire-cpu wrote
"""
import json
import os
import socket
import sys
import time


def spin(seconds):
    t = time.process_time()
    while time.process_time() - t < seconds:
        pass


def server(portfile):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(4)
    with open(portfile + ".tmp", "w") as f:
        f.write(str(s.getsockname()[1]))
    os.rename(portfile + ".tmp", portfile)
    while True:
        c, _ = s.accept()
        c.settimeout(10)
        c.recv(16)
        spin(0.4)
        c.sendall(b"ok\n")
        c.close()


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    print(s.getsockname()[1])
    s.close()


def check(run_path, free_path):
    run, free = json.load(open(run_path)), json.load(open(free_path))
    srv = run["servers"][0]
    assert run["exit_status"] == 0, run
    assert run["client_cpu_s"] >= 0.25, run
    assert srv["available"] and srv["cpu_s"] >= 0.3, srv
    assert free["exit_status"] == 3, free
    f = free["servers"][0]
    assert f["available"] is False and "cpu_s" not in f and "listens on port" in f["why"], f
    print("fbwire-cpu: 2 passed, 0 failed")


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "server":
        server(args[0])
    elif cmd == "spin":
        spin(float(args[0]))
    elif cmd == "free-port":
        free_port()
    elif cmd == "check":
        check(args[0], args[1])
    else:
        print(__doc__)
        sys.exit(2)
