/* SPDX-License-Identifier: MIT */
/* srvcpu.h - CPU time of a database server that runs on this machine, found from its TCP port.
 *
 * A round trip costs the server CPU (wake-ups, scheduling) as well as the client, so the reports
 * put the server's CPU next to the client's. The server is the process that owns the listening
 * socket of the port the client connected to: /proc/net/tcp and /proc/net/tcp6 give the inode of
 * that socket in state LISTEN, /proc/PID/fd names the process holding it. Its CPU is user+system
 * time of the whole process (every thread), of its reaped children (cutime/cstime) and of its
 * live descendants: a server that forks per connection (Firebird Classic, PostgreSQL) does the
 * work in children. A server in a chroot is found alike (the kernel's view is global); one in
 * another network namespace or on another host is not, and is reported so, never as 0 CPU.
 *
 * Blocking-layer module: reads /proc, never touches the protocol. Linux only. No state outside
 * the caller's struct. The figure includes all of the server's work in the interval, not only
 * the measured client's: measure on an otherwise idle server. */
#ifndef SRVCPU_H
#define SRVCPU_H

#include "err.h"

#include <stddef.h>
#include <stdint.h>

typedef struct srvcpu {
    int pid;        /* the listening process; 0 when not found */
    int children;   /* live descendants counted by the last srvcpu_read() */
    unsigned port;  /* the server's TCP port */
    unsigned long long start; /* the process's start time: a restarted server is not the one found */
    char why[200];  /* when not available: the reason, e.g. "server 10.0.0.5:3050 is not on this
                       machine" ("" when found) */
} srvcpu;

/* Find the process on this machine listening on the port of the connected socket fd's peer.
 * The peer must be a loopback address or one of this machine's own interface addresses.
 * Returns FBW_OK, or (with s->why set and an error in err, which may be NULL) FBW_E_UNSUPPORTED
 * (remote server, no listener in this network namespace) or FBW_E_IO (/proc unreadable, no
 * permission to see the owning process). */
int srvcpu_find_peer(srvcpu *s, int fd, fbw_err *err);

/* Find the process on this machine listening on TCP `port` (any local address, IPv4 or IPv6).
 * Same returns as srvcpu_find_peer. */
int srvcpu_find_port(srvcpu *s, unsigned port, fbw_err *err);

/* CPU time in nanoseconds (user+system) of the found process, its reaped children and its live
 * descendants, into *cpu_ns; s->children is updated. The resolution is the kernel's clock tick
 * (sysconf(_SC_CLK_TCK), 10 ms on usual kernels): compare readings over whole runs.
 * The reading is a snapshot: when a process of the tree ends and is reaped while /proc is being
 * read, it is read again (at most 50 times, 1 ms apart), so no child is lost or counted twice.
 * Returns FBW_OK; FBW_E_USAGE (nothing found), FBW_E_IO (the process is gone or unreadable, or
 * its processes kept ending through every try; s->why says which). */
int srvcpu_read(srvcpu *s, uint64_t *cpu_ns, fbw_err *err);

/* Whether the socket address (struct sockaddr_in or sockaddr_in6, len bytes) is on this machine:
 * loopback (127.0.0.0/8, ::1, v4-mapped loopback) or an address of one of its interfaces.
 * 1 yes, 0 no or unknown family. */
int srvcpu_addr_is_local(const void *sa, size_t len);

#endif
