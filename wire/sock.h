/* SPDX-License-Identifier: MIT */
/* sock.h - small blocking TCP layer with deadlines for the blocking client (client.c).
 *
 * Resolve + connect with a timeout, send-all and receive-some with deadlines, the monotonic
 * clock and the local host/user names for op_connect. This is the only file that includes the
 * socket headers; the protocol core never calls it. No protocol knowledge, no buffering, no TLS. */
#ifndef FBW_SOCK_H
#define FBW_SOCK_H

#include "err.h"

#include <stddef.h>
#include <stdint.h>

typedef struct fbw_sock {
    int fd;         /* -1 when closed */
    int recv_timeout_ms; /* SO_RCVTIMEO as set, 0 = none */
    char peer[128]; /* "host:port" as connected, for messages */
} fbw_sock;

#define FBW_DEFAULT_PORT "3050"

/* Mark the socket closed (fd -1). Never fails. */
void fbw_sock_init(fbw_sock *s);

/* Resolve host (name, IPv4 or IPv6 literal without brackets) and port (number or service name;
 * "gds_db" missing from /etc/services falls back to 3050 like fbclient) and try each address in
 * turn, each with a non-blocking connect bounded by timeout_ms (< 0: no limit). The connected
 * socket is blocking (waits are bounded by SO_RCVTIMEO and poll), with TCP_NODELAY and
 * SO_KEEPALIVE set.
 * Returns FBW_OK; FBW_E_USAGE (already open, bad host or service name; the resolver's text is in
 * the message), FBW_E_IO (errno kept; "connection refused to 127.0.0.1:3059"), FBW_E_TIMEOUT. */
int fbw_sock_connect(fbw_sock *s, const char *host, const char *port, int timeout_ms, fbw_err *err);

/* Send all n bytes without SIGPIPE; timeout_ms (< 0: no limit) bounds each wait for the peer to
 * take more: a send that keeps making progress (a slow link) goes on, a peer that takes nothing
 * for timeout_ms ends it.
 * Returns FBW_OK; FBW_E_EOF (peer reset/closed: "connection lost"), FBW_E_IO, FBW_E_TIMEOUT,
 * FBW_E_USAGE (socket closed). */
int fbw_sock_send_all(fbw_sock *s, const void *p, size_t n, int timeout_ms, fbw_err *err);
/* The same, but when sending would block while the peer has something for us, stop with FBW_WAIT
 * (*sent bytes went): the caller reads, then sends the rest. A client that only wrote while the
 * server's replies filled both socket buffers would deadlock with a server that stops reading
 * while it cannot write (pipelined requests with large replies). */
int fbw_sock_send_or_read(fbw_sock *s, const void *p, size_t n, int timeout_ms, size_t *sent,
                          fbw_err *err);

/* Wait up to timeout_ms (< 0: forever) for data and read what is there, 1..cap bytes, into p;
 * *got is the count (0 on error). Returns FBW_OK; FBW_E_EOF (peer closed or reset),
 * FBW_E_TIMEOUT (nothing arrived), FBW_E_IO, FBW_E_USAGE (socket closed or cap 0). */
int fbw_sock_recv(fbw_sock *s, void *p, size_t cap, int timeout_ms, size_t *got, fbw_err *err);

/* The connected socket's two ends as "127.0.0.1:41234" / "[::1]:3050" (the form fbwire-pcap
 * prints); IPv4-mapped IPv6 addresses are written as IPv4. FBW_E_IO when not connected. */
int fbw_sock_endpoints(const fbw_sock *s, char *local, size_t local_size, char *peer,
                       size_t peer_size, fbw_err *err);

/* Close if open; safe to call twice. */
void fbw_sock_close(fbw_sock *s);

/* CLOCK_MONOTONIC in nanoseconds; the protocol core gets time only from its callers. */
uint64_t fbw_now_ns(void);

/* Local host name and effective OS user name for the op_connect user-id block. Both are always
 * NUL-terminated within their sizes (truncated if needed); "unknown" when the system has none. */
void fbw_sock_local_identity(char *host, size_t host_size, char *user, size_t user_size);

#endif
