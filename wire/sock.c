/* SPDX-License-Identifier: MIT */
/* sock.c - resolve, connect with timeout, send/recv with deadlines (see sock.h).
 * Socket options follow fbclient (src/remote/inet.cpp INET_connect): SO_KEEPALIVE and TCP_NODELAY
 * on every client socket, "gds_db" mapped to 3050 when /etc/services lacks it. */
#include "sock.h"

#include <errno.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/time.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define NS_PER_MS 1000000ull
#define PW_BUF_MAX (64 * 1024)

uint64_t fbw_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void fbw_sock_init(fbw_sock *s)
{
    s->fd = -1;
    s->recv_timeout_ms = 0;
    s->peer[0] = '\0';
}

void fbw_sock_close(fbw_sock *s)
{
    if (s->fd >= 0)
        close(s->fd);
    s->fd = -1;
}

/* Absolute deadline for a relative timeout; 0 means "none". */
static uint64_t deadline_after(int timeout_ms)
{
    if (timeout_ms < 0)
        return 0;
    return fbw_now_ns() + (uint64_t)timeout_ms * NS_PER_MS;
}

/* Milliseconds left until the deadline for poll(): -1 without deadline, 0 when passed.
 * Rounded up so that poll never returns just before the deadline and loops with 0. */
static int ms_left(uint64_t deadline)
{
    if (deadline == 0)
        return -1;
    uint64_t now = fbw_now_ns();
    if (now >= deadline)
        return 0;
    uint64_t ms = (deadline - now + NS_PER_MS - 1) / NS_PER_MS;
    return ms > 0x7fffffff ? 0x7fffffff : (int)ms;
}

/* poll one fd for `events` until the deadline, retrying on EINTR.
 * Returns 1 when ready, 0 on timeout, -1 with errno on error. */
static int wait_fd(int fd, short events, uint64_t deadline)
{
    for (;;) {
        struct pollfd pfd = {.fd = fd, .events = events, .revents = 0};
        int n = poll(&pfd, 1, ms_left(deadline));
        if (n > 0)
            return 1;
        if (n == 0) {
            if (ms_left(deadline) == 0)
                return 0;
            continue;
        }
        if (errno != EINTR)
            return -1;
    }
}

/* A numeric port must be 1..65535; a name is left to the resolver. Returns 1 if acceptable. */
static int port_ok(const char *port)
{
    if (port[0] == '\0')
        return 0;
    if (strspn(port, "0123456789") != strlen(port))
        return 1;
    if (strlen(port) > 5)
        return 0;
    long v = strtol(port, NULL, 10);
    return v >= 1 && v <= 65535;
}

static int resolve(const char *host, const char *port, struct addrinfo **res, fbw_err *err)
{
    struct addrinfo hints;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_protocol = IPPROTO_TCP;
    /* No AI_ADDRCONFIG: it hides ::1 on hosts with only loopback IPv6, and a family that cannot
     * connect just fails over to the next address. */
    int rc = getaddrinfo(host, port, &hints, res);
    if (rc == EAI_SERVICE && strcmp(port, "gds_db") == 0)
        rc = getaddrinfo(host, FBW_DEFAULT_PORT, &hints, res);
    if (rc == 0)
        return FBW_OK;
    *res = NULL;
    if (rc == EAI_SYSTEM)
        return fbw_err_set_errno(err, errno, "cannot resolve %s port %s", host, port);
    if (rc == EAI_AGAIN)
        return fbw_err_set(err, FBW_E_IO, "cannot resolve %s port %s: %s", host, port,
                           gai_strerror(rc));
    return fbw_err_set(err, FBW_E_USAGE, "cannot resolve %s port %s: %s", host, port,
                       gai_strerror(rc));
}

static void set_options(int fd)
{
    int one = 1;
    /* Failures only cost latency or dead-peer detection; fbclient logs and carries on too. */
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    (void)setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
}

/* One non-blocking connect attempt. Returns the fd, or -1 with *sys_errno set (ETIMEDOUT when the
 * deadline passed). */
static int connect_one(const struct addrinfo *ai, int timeout_ms, int *sys_errno)
{
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
        *sys_errno = errno;
        return -1;
    }
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
        return fd;
    if (errno != EINPROGRESS && errno != EINTR) {
        *sys_errno = errno;
        goto fail;
    }
    int w = wait_fd(fd, POLLOUT, deadline_after(timeout_ms));
    if (w <= 0) {
        *sys_errno = w == 0 ? ETIMEDOUT : errno;
        goto fail;
    }
    int soerr = 0;
    socklen_t len = sizeof soerr;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) != 0)
        soerr = errno;
    if (soerr == 0)
        return fd;
    *sys_errno = soerr;
fail:
    close(fd);
    return -1;
}

int fbw_sock_connect(fbw_sock *s, const char *host, const char *port, int timeout_ms, fbw_err *err)
{
    struct addrinfo *res = NULL;
    int rc;
    if (s->fd >= 0)
        return fbw_err_set(err, FBW_E_USAGE, "socket already connected to %s", s->peer);
    if (!host || !host[0])
        return fbw_err_set(err, FBW_E_USAGE, "empty host name");
    if (!port || !port[0])
        port = FBW_DEFAULT_PORT;
    if (!port_ok(port))
        return fbw_err_set(err, FBW_E_USAGE, "bad port \"%s\" (1..65535 or a service name)", port);
    snprintf(s->peer, sizeof s->peer, strchr(host, ':') ? "[%s]:%s" : "%s:%s", host, port);
    rc = resolve(host, port, &res, err);
    if (rc != FBW_OK)
        goto done;
    int last_errno = EHOSTUNREACH;
    for (const struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        int fd = connect_one(ai, timeout_ms, &last_errno);
        if (fd >= 0) {
            set_options(fd);
            /* Blocking from here on: recv waits with SO_RCVTIMEO, send uses MSG_DONTWAIT and
             * poll. A failure leaves it non-blocking, which recv's loop also handles. */
            int fl = fcntl(fd, F_GETFL);
            if (fl >= 0)
                (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
            s->fd = fd;
            s->recv_timeout_ms = 0;
            rc = FBW_OK;
            goto done;
        }
    }
    if (last_errno == ETIMEDOUT)
        rc = fbw_err_set(err, FBW_E_TIMEOUT, "connect to %s timed out after %d ms", s->peer,
                         timeout_ms);
    else if (last_errno == ECONNREFUSED)
        rc = fbw_err_set(err, FBW_E_IO, "connection refused to %s", s->peer);
    else
        rc = fbw_err_set_errno(err, last_errno, "cannot connect to %s", s->peer);
    if (err)
        err->sys_errno = last_errno;
done:
    if (res)
        freeaddrinfo(res);
    return rc;
}

static int lost(fbw_sock *s, int sys_errno, const char *what, fbw_err *err)
{
    int rc = fbw_err_set(err, FBW_E_EOF, "connection lost to %s (%s: %s)", s->peer, what,
                         strerror(sys_errno));
    if (err)
        err->sys_errno = sys_errno;
    return rc;
}

/* Send p[0..n); when sending would block and stop_if_readable is set, return FBW_WAIT as soon as
 * the socket is readable (the caller reads, then sends the rest). *sent counts what went. */
static int send_loop(fbw_sock *s, const uint8_t *q, size_t n, int timeout_ms, int stop_if_readable,
                     size_t *sent, fbw_err *err)
{
    uint64_t deadline = deadline_after(timeout_ms);
    *sent = 0;
    if (s->fd < 0)
        return fbw_err_set(err, FBW_E_USAGE, "send on a closed socket");
    while (n > 0) {
        ssize_t k = send(s->fd, q, n, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (k > 0) {
            q += k;
            n -= (size_t)k;
            *sent += (size_t)k;
            deadline = deadline_after(timeout_ms); /* progress: a slow link is not a dead one */
            continue;
        }
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            short ev = POLLOUT | (stop_if_readable ? POLLIN : 0);
            struct pollfd pfd = {.fd = s->fd, .events = ev, .revents = 0};
            int w = wait_fd(s->fd, ev, deadline);
            if (w == 0)
                return fbw_err_set(err, FBW_E_TIMEOUT, "send to %s: no progress for %d ms", s->peer,
                                   timeout_ms);
            if (w < 0)
                return fbw_err_set_errno(err, errno, "poll for send to %s", s->peer);
            if (stop_if_readable && poll(&pfd, 1, 0) > 0 && (pfd.revents & POLLIN))
                return FBW_WAIT;
            continue;
        }
        if (k < 0 && (errno == EPIPE || errno == ECONNRESET))
            return lost(s, errno, "send", err);
        return fbw_err_set_errno(err, k < 0 ? errno : EIO, "send to %s", s->peer);
    }
    return FBW_OK;
}

int fbw_sock_send_all(fbw_sock *s, const void *p, size_t n, int timeout_ms, fbw_err *err)
{
    size_t sent;
    return send_loop(s, p, n, timeout_ms, 0, &sent, err);
}

int fbw_sock_send_or_read(fbw_sock *s, const void *p, size_t n, int timeout_ms, size_t *sent,
                          fbw_err *err)
{
    return send_loop(s, p, n, timeout_ms, 1, sent, err);
}

/* SO_RCVTIMEO for a blocking recv: ms < 0 is no limit. Set only when it changes, which in steady
 * state it does not (the client passes the same timeout to every wait). */
static int set_recv_timeout(fbw_sock *s, int ms)
{
    if (ms < 0)
        ms = 0; /* a zero timeval means "no limit" */
    if (ms == s->recv_timeout_ms)
        return 0;
    struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
    if (setsockopt(s->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) != 0)
        return -1;
    s->recv_timeout_ms = ms;
    return 0;
}

/* The socket is blocking with SO_RCVTIMEO, so a wait is one recv() call rather than poll() and
 * recv(): one system call less per round trip, on the path every statement takes. */
int fbw_sock_recv(fbw_sock *s, void *p, size_t cap, int timeout_ms, size_t *got, fbw_err *err)
{
    uint64_t deadline = deadline_after(timeout_ms);
    *got = 0;
    if (s->fd < 0 || cap == 0)
        return fbw_err_set(err, FBW_E_USAGE, "recv on a closed socket or into an empty buffer");
    for (int first = 1;; first = 0) {
        int ms = ms_left(deadline);
        int flags = 0;
        if (ms == 0) {
            if (!first)
                return fbw_err_set(err, FBW_E_TIMEOUT, "no data from %s within %d ms", s->peer,
                                   timeout_ms);
            flags = MSG_DONTWAIT; /* timeout 0: take only what is already there */
        } else if (set_recv_timeout(s, ms) != 0) {
            return fbw_err_set_errno(err, errno, "setting the receive timeout for %s", s->peer);
        }
        ssize_t k = recv(s->fd, p, cap, flags);
        if (k > 0) {
            *got = (size_t)k;
            return FBW_OK;
        }
        if (k == 0)
            return fbw_err_set(err, FBW_E_EOF, "connection closed by %s", s->peer);
        if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)
            continue; /* the deadline decides; EAGAIN after SO_RCVTIMEO ends the loop above */
        if (errno == ECONNRESET || errno == EPIPE)
            return lost(s, errno, "recv", err);
        return fbw_err_set_errno(err, errno, "recv from %s", s->peer);
    }
}

static void copy_name(char *dst, size_t size, const char *src)
{
    if (size == 0)
        return;
    snprintf(dst, size, "%s", src && src[0] ? src : "unknown");
}

/* Effective user name via getpwuid_r (what fbclient's ISC_get_user reports, but thread-safe). */
static void user_name(char *user, size_t user_size)
{
    long hint = sysconf(_SC_GETPW_R_SIZE_MAX);
    size_t len = hint > 0 && hint < PW_BUF_MAX ? (size_t)hint : 4096;
    char *buf = malloc(len);
    struct passwd pw, *found = NULL;
    if (buf && getpwuid_r(geteuid(), &pw, buf, len, &found) == 0 && found)
        copy_name(user, user_size, found->pw_name);
    else
        copy_name(user, user_size, NULL);
    free(buf);
}

void fbw_sock_local_identity(char *host, size_t host_size, char *user, size_t user_size)
{
    char name[256];
    if (gethostname(name, sizeof name) != 0)
        name[0] = '\0';
    name[sizeof name - 1] = '\0'; /* POSIX leaves truncated names unterminated */
    copy_name(host, host_size, name);
    user_name(user, user_size);
}

/* One address as fbwire-pcap's pcaptool_cap_endpoint prints it, so key log lines match captures. */
static int format_endpoint(const struct sockaddr_storage *ss, char *buf, size_t size)
{
    char a[INET6_ADDRSTRLEN];
    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)ss;
        inet_ntop(AF_INET, &in->sin_addr, a, sizeof a);
        snprintf(buf, size, "%s:%u", a, ntohs(in->sin_port));
        return 0;
    }
    if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;
        if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
            inet_ntop(AF_INET, in6->sin6_addr.s6_addr + 12, a, sizeof a);
            snprintf(buf, size, "%s:%u", a, ntohs(in6->sin6_port));
        } else {
            inet_ntop(AF_INET6, &in6->sin6_addr, a, sizeof a);
            snprintf(buf, size, "[%s]:%u", a, ntohs(in6->sin6_port));
        }
        return 0;
    }
    return -1;
}

int fbw_sock_endpoints(const fbw_sock *s, char *local, size_t local_size, char *peer,
                       size_t peer_size, fbw_err *err)
{
    struct sockaddr_storage l, p;
    socklen_t ll = sizeof l, pl = sizeof p;
    if (s->fd < 0)
        return fbw_err_set(err, FBW_E_IO, "socket not connected");
    if (getsockname(s->fd, (struct sockaddr *)&l, &ll) || getpeername(s->fd, (struct sockaddr *)&p, &pl))
        return fbw_err_set_errno(err, errno, "cannot read the socket's addresses");
    if (format_endpoint(&l, local, local_size) || format_endpoint(&p, peer, peer_size))
        return fbw_err_set(err, FBW_E_IO, "socket is neither IPv4 nor IPv6");
    return FBW_OK;
}
