# SPDX-License-Identifier: MIT
"""fbwire-link in front of a server: started per run with the comparison's RTT and rate, stopped
with SIGTERM (it writes its CPU and counts to --json on exit), and its achieved RTT measured with a
ping-pong through a second link of the same settings to a local echo server."""
import os
import signal
import socket
import statistics
import subprocess
import threading
import time

from . import procnet


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def args(rtt_ms, rate):
    a = ["--rtt", "%gms" % rtt_ms]
    if rate:
        a += ["--rate", rate]
    return a


class Link:
    def __init__(self, binary, to, rtt_ms, rate, json_path=None, log=None):
        self.port = free_port()
        cmd = [binary, "--listen", "127.0.0.1:%d" % self.port, "--to", "%s:%d" % to] + args(rtt_ms, rate)
        if json_path:
            cmd += ["--json", json_path]
        self.log = open(log, "w") if log else subprocess.DEVNULL
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=self.log)
        # ready when it listens (a test connection would reach the server through it)
        deadline = time.monotonic() + 5
        while not procnet.listening(self.port):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("fbwire-link did not start listening on port %d (see %s)" % (self.port, log))
            time.sleep(0.02)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        if self.log is not subprocess.DEVNULL:
            self.log.close()
        return self.proc.returncode


def _echo(server):
    try:
        server.settimeout(10)
        conn, _ = server.accept()
    except OSError:
        return
    with conn:
        conn.settimeout(10)
        try:
            while True:
                b = conn.recv(64)
                if not b:
                    return
                conn.sendall(b)
        except OSError:
            return


def measure_rtt(binary, rtt_ms, rate, pings=20):
    """Median RTT in ms of 1-byte ping-pongs through a link of these settings."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    th = threading.Thread(target=_echo, args=(server,), daemon=True)
    th.start()
    link = Link(binary, ("127.0.0.1", server.getsockname()[1]), rtt_ms, rate)
    times = []
    try:
        with socket.create_connection(("127.0.0.1", link.port), timeout=5 + rtt_ms / 100) as c:
            c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            for _ in range(pings):
                t0 = time.perf_counter()
                c.sendall(b"x")
                if c.recv(1) != b"x":
                    break
                times.append((time.perf_counter() - t0) * 1000)
    finally:
        link.stop()
        server.close()
        th.join(timeout=5)
    return statistics.median(times) if times else None


def available(binary):
    return bool(binary) and os.path.isfile(binary) and os.access(binary, os.X_OK)
