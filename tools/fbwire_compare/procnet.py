# SPDX-License-Identifier: MIT
"""TCP connections from /proc: which client ports to a server port belong to our processes.

The servers are shared (other tests may talk to them meanwhile): a run counts only its own
connections, found by matching the socket inodes of its processes against /proc/net/tcp*.
Polled every 0.1 s, which is cheap enough not to miss a connection of a 1 s run.
"""
import os
import threading
import time

TCP_FILES = ("/proc/net/tcp", "/proc/net/tcp6")
ESTABLISHED, LISTEN = "01", "0A"
# Both FINs exchanged (or the socket closed): nothing more of the connection goes on the wire.
DONE = ("06", "07")  # TIME_WAIT, CLOSE


def children(pid):
    out = []
    try:
        for tid in os.listdir("/proc/%d/task" % pid):
            with open("/proc/%d/task/%s/children" % (pid, tid)) as f:
                out += [int(x) for x in f.read().split()]
    except OSError:
        pass
    return out


def descendants(pids):
    """The pids and all their descendants."""
    seen, todo = set(), list(pids)
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        todo += children(p)
    return seen


def socket_inodes(pid):
    inodes = set()
    try:
        fds = os.listdir("/proc/%d/fd" % pid)
    except OSError:
        return inodes
    for fd in fds:
        try:
            link = os.readlink("/proc/%d/fd/%s" % (pid, fd))
        except OSError:
            continue
        if link.startswith("socket:["):
            inodes.add(link[8:-1])
    return inodes


def table(files=TCP_FILES):
    """(local port, remote port, state, inode) of every TCP socket."""
    rows = []
    for path in files:
        try:
            with open(path) as f:
                next(f, None)
                for line in f:
                    p = line.split()
                    if len(p) < 10:
                        continue
                    rows.append((int(p[1].rsplit(":", 1)[1], 16), int(p[2].rsplit(":", 1)[1], 16), p[3], p[9]))
        except OSError:
            continue
    return rows


def listening(port, files=TCP_FILES):
    return any(lp == port and st == LISTEN for lp, _, st, _ in table(files))


def classify(rows, own_inodes, port):
    """{("O"|"F", client port)} of the established connections to port: ours or somebody else's."""
    return {("O" if ino in own_inodes else "F", lp) for lp, rp, st, ino in rows if st == ESTABLISHED and rp == port}


def open_ends(port, own, files=TCP_FILES):
    """The client ports of own whose connection to port has not finished both ways yet."""
    return {lp for lp, rp, st, _ in table(files) if rp == port and lp in own and st not in DONE}


def wait_closed(port, own, deadline, files=TCP_FILES):
    """Wait (polling, until the monotonic deadline) for every connection of own to port to be
    closed both ways in the kernel; returns the client ports still open."""
    left = open_ends(port, own, files)
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = open_ends(port, own, files)
    return left


class Watch:
    """Polls while the process `pid` lives; extra: more of our processes (a link) that count as own."""

    def __init__(self, pid, port, extra=()):
        self.pid, self.port, self.extra = pid, port, list(extra)
        self.seen = set()
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _alive(self):
        try:
            with open("/proc/%d/stat" % self.pid) as f:
                return f.read().split(")")[-1].split()[0] != "Z"
        except OSError:
            return False

    def _run(self):
        while not self.done.is_set() and self._alive():
            own = set()
            for p in descendants([self.pid] + self.extra):
                own |= socket_inodes(p)
            self.seen |= classify(table(), own, self.port)
            self.done.wait(0.1)

    def stop(self):
        self.done.set()
        self.thread.join(timeout=5)
        return self.seen

    def write(self, path):
        with open(path, "w") as f:
            for kind, port in sorted(self.seen, key=lambda x: (x[0], str(x[1]))):
                f.write("%s %d\n" % (kind, port))
