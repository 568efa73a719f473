/* SPDX-License-Identifier: MIT */
/* test_sock.c - fbw_sock over loopback listeners made here (127.0.0.1 and ::1 only). */
#include <criterion/criterion.h>

#include "sock.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Listening socket on the loopback of `family`, ephemeral port written to port_text.
 * Returns the fd or -1 (family unavailable). */
static int listener(int family, char *port_text, size_t size)
{
    struct sockaddr_storage ss;
    socklen_t len;
    memset(&ss, 0, sizeof ss);
    if (family == AF_INET6) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
        a->sin6_family = AF_INET6;
        a->sin6_addr = in6addr_loopback;
        len = sizeof *a;
    } else {
        struct sockaddr_in *a = (struct sockaddr_in *)&ss;
        a->sin_family = AF_INET;
        a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        len = sizeof *a;
    }
    int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    if (bind(fd, (struct sockaddr *)&ss, len) != 0 || listen(fd, 4) != 0) {
        close(fd);
        return -1;
    }
    len = sizeof ss;
    cr_assert_eq(getsockname(fd, (struct sockaddr *)&ss, &len), 0);
    unsigned port = family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
                                       : ntohs(((struct sockaddr_in *)&ss)->sin_port);
    snprintf(port_text, size, "%u", port);
    return fd;
}

static void echo_round_trip(const char *host, int family)
{
    char port[16];
    int lfd = listener(family, port, sizeof port);
    if (lfd < 0) {
        cr_skip_test("no loopback listener for family %d", family);
        return;
    }
    fbw_sock s;
    fbw_err err;
    fbw_sock_init(&s);
    int rc = fbw_sock_connect(&s, host, port, 2000, &err);
    cr_assert_eq(rc, FBW_OK, "%s: %s", fbw_rc_name(rc), err.msg);
    cr_assert_geq(s.fd, 0);
    cr_assert(strstr(s.peer, port) != NULL, "peer %s", s.peer);
    int afd = accept(lfd, NULL, NULL);
    cr_assert_geq(afd, 0);

    cr_assert_eq(fbw_sock_send_all(&s, "hello", 5, 1000, &err), FBW_OK, "%s", err.msg);
    char in[16] = {0};
    size_t have = 0;
    while (have < 5) {
        ssize_t k = read(afd, in + have, sizeof in - have);
        cr_assert_gt(k, 0);
        have += (size_t)k;
    }
    cr_assert_str_eq(in, "hello");

    cr_assert_eq(write(afd, "world!", 6), 6);
    char out[64];
    size_t got = 0;
    have = 0;
    while (have < 6) {
        rc = fbw_sock_recv(&s, out + have, sizeof out - have, 1000, &got, &err);
        cr_assert_eq(rc, FBW_OK, "%s: %s", fbw_rc_name(rc), err.msg);
        cr_assert_gt(got, 0);
        have += got;
    }
    cr_assert_eq(have, 6);
    cr_assert_eq(memcmp(out, "world!", 6), 0);

    fbw_sock_close(&s);
    cr_assert_eq(s.fd, -1);
    fbw_sock_close(&s); /* twice is harmless */
    close(afd);
    close(lfd);
}

Test(sock, connect_send_recv_ipv4)
{
    echo_round_trip("127.0.0.1", AF_INET);
}

Test(sock, connect_by_name_localhost)
{
    /* "localhost" may resolve to ::1 first; listen on v4 and rely on address failover. */
    echo_round_trip("localhost", AF_INET);
}

Test(sock, connect_ipv6_loopback)
{
    echo_round_trip("::1", AF_INET6);
}

Test(sock, refused_port_is_io_error)
{
    char port[16];
    int lfd = listener(AF_INET, port, sizeof port);
    cr_assert_geq(lfd, 0);
    close(lfd); /* nothing listens there any more */
    fbw_sock s;
    fbw_err err;
    fbw_sock_init(&s);
    int rc = fbw_sock_connect(&s, "127.0.0.1", port, 2000, &err);
    cr_assert_eq(rc, FBW_E_IO, "%s: %s", fbw_rc_name(rc), err.msg);
    cr_assert_eq(err.code, FBW_E_IO);
    cr_assert_eq(err.sys_errno, ECONNREFUSED);
    cr_assert(strstr(err.msg, "refused") != NULL, "%s", err.msg);
    char expect[64];
    snprintf(expect, sizeof expect, "127.0.0.1:%s", port);
    cr_assert(strstr(err.msg, expect) != NULL, "%s", err.msg);
    cr_assert_eq(s.fd, -1);
}

Test(sock, recv_timeout_when_listener_never_accepts)
{
    char port[16];
    int lfd = listener(AF_INET, port, sizeof port);
    cr_assert_geq(lfd, 0);
    fbw_sock s;
    fbw_err err;
    fbw_sock_init(&s);
    cr_assert_eq(fbw_sock_connect(&s, "127.0.0.1", port, 2000, &err), FBW_OK, "%s", err.msg);
    char buf[8];
    size_t got = 99;
    uint64_t t0 = fbw_now_ns();
    int rc = fbw_sock_recv(&s, buf, sizeof buf, 200, &got, &err);
    uint64_t ms = (fbw_now_ns() - t0) / 1000000u;
    cr_assert_eq(rc, FBW_E_TIMEOUT, "%s: %s", fbw_rc_name(rc), err.msg);
    cr_assert_eq(got, 0);
    cr_assert_geq(ms, 195);
    cr_assert_lt(ms, 1000);
    fbw_sock_close(&s);
    close(lfd);
}

/* s connected to a fresh IPv4 loopback listener (*lfd) whose accepted end is *afd. */
static void connected_pair(fbw_sock *s, int *lfd, int *afd)
{
    char port[16];
    fbw_err err;
    *lfd = listener(AF_INET, port, sizeof port);
    cr_assert_geq(*lfd, 0);
    fbw_sock_init(s);
    cr_assert_eq(fbw_sock_connect(s, "127.0.0.1", port, 2000, &err), FBW_OK, "%s", err.msg);
    *afd = accept(*lfd, NULL, NULL);
    cr_assert_geq(*afd, 0);
}

Test(sock, peer_close_gives_eof)
{
    fbw_sock s;
    fbw_err err;
    int lfd, afd;
    connected_pair(&s, &lfd, &afd);
    cr_assert_eq(write(afd, "x", 1), 1);
    close(afd);

    char buf[8];
    size_t got = 0;
    cr_assert_eq(fbw_sock_recv(&s, buf, sizeof buf, 1000, &got, &err), FBW_OK);
    cr_assert_eq(got, 1);
    int rc = fbw_sock_recv(&s, buf, sizeof buf, 1000, &got, &err);
    cr_assert_eq(rc, FBW_E_EOF, "%s: %s", fbw_rc_name(rc), err.msg);
    cr_assert_eq(got, 0);

    /* Sending into the closed connection: the first send may still be accepted, then the RST
     * turns into EPIPE/ECONNRESET, which must be reported as a lost connection. */
    rc = FBW_OK;
    for (int i = 0; i < 50 && rc == FBW_OK; i++) {
        rc = fbw_sock_send_all(&s, "ping", 4, 1000, &err);
        if (rc == FBW_OK) {
            struct timespec ts = {0, 10 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
    }
    cr_assert_eq(rc, FBW_E_EOF, "%s: %s", fbw_rc_name(rc), err.msg);
    cr_assert(strstr(err.msg, "connection lost") != NULL, "%s", err.msg);
    fbw_sock_close(&s);
    close(lfd);
}

Test(sock, send_timeout_when_peer_never_reads)
{
    char port[16];
    int lfd = listener(AF_INET, port, sizeof port);
    cr_assert_geq(lfd, 0);
    fbw_sock s;
    fbw_err err;
    fbw_sock_init(&s);
    cr_assert_eq(fbw_sock_connect(&s, "127.0.0.1", port, 2000, &err), FBW_OK, "%s", err.msg);
    size_t n = 64u << 20; /* far more than loopback socket buffers hold */
    uint8_t *big = calloc(1, n);
    cr_assert_not_null(big);
    uint64_t t0 = fbw_now_ns();
    int rc = fbw_sock_send_all(&s, big, n, 200, &err);
    uint64_t ms = (fbw_now_ns() - t0) / 1000000u;
    cr_assert_eq(rc, FBW_E_TIMEOUT, "%s: %s", fbw_rc_name(rc), err.msg);
    cr_assert_lt(ms, 2000);
    free(big);
    fbw_sock_close(&s);
    close(lfd);
}

/* A peer that stopped reading but has answered something: send_or_read stops with FBW_WAIT
 * (after what fitted) so the caller can read, where send_all would wait until its timeout. */
Test(sock, send_or_read_stops_when_peer_has_data)
{
    fbw_sock s;
    fbw_err err;
    int lfd, afd;
    connected_pair(&s, &lfd, &afd);
    cr_assert_eq(write(afd, "reply", 5), 5);
    size_t n = 64u << 20;
    uint8_t *big = calloc(1, n);
    cr_assert_not_null(big);
    size_t sent = 0;
    int rc = fbw_sock_send_or_read(&s, big, n, 5000, &sent, &err);
    cr_assert_eq(rc, FBW_WAIT, "%s: %s", fbw_rc_name(rc), err.msg);
    cr_assert(sent > 0 && sent < n, "sent %zu of %zu", sent, n);
    char in[8];
    size_t got = 0;
    cr_assert_eq(fbw_sock_recv(&s, in, sizeof in, 1000, &got, &err), FBW_OK, "%s", err.msg);
    cr_assert_eq(got, 5);
    /* Nothing to read any more: with the peer still not reading, the send times out instead. */
    rc = fbw_sock_send_or_read(&s, big + sent, n - sent, 200, &sent, &err);
    cr_assert_eq(rc, FBW_E_TIMEOUT, "%s: %s", fbw_rc_name(rc), err.msg);
    free(big);
    fbw_sock_close(&s);
    close(afd);
    close(lfd);
}

Test(sock, bad_port_and_service_are_usage_errors)
{
    fbw_sock s;
    fbw_err err;
    fbw_sock_init(&s);
    cr_assert_eq(fbw_sock_connect(&s, "127.0.0.1", "99999", 500, &err), FBW_E_USAGE);
    cr_assert_eq(fbw_sock_connect(&s, "127.0.0.1", "0", 500, &err), FBW_E_USAGE);
    cr_assert_eq(fbw_sock_connect(&s, "127.0.0.1", "no-such-service-fbw", 500, &err), FBW_E_USAGE);
    cr_assert(strstr(err.msg, "no-such-service-fbw") != NULL, "%s", err.msg);
    cr_assert_eq(fbw_sock_connect(&s, "", "3050", 500, &err), FBW_E_USAGE);
    cr_assert_eq(s.fd, -1);
}

Test(sock, gds_db_service_resolves_even_without_services_entry)
{
    /* Whether or not a server listens on 3050, the name must resolve (not FBW_E_USAGE). */
    fbw_sock s;
    fbw_err err;
    fbw_sock_init(&s);
    int rc = fbw_sock_connect(&s, "127.0.0.1", "gds_db", 500, &err);
    cr_assert_neq(rc, FBW_E_USAGE, "%s", err.msg);
    fbw_sock_close(&s);
}

Test(sock, closed_socket_is_usage_error)
{
    fbw_sock s;
    fbw_err err;
    size_t got = 5;
    char buf[4];
    fbw_sock_init(&s);
    cr_assert_eq(fbw_sock_send_all(&s, "a", 1, 100, &err), FBW_E_USAGE);
    cr_assert_eq(fbw_sock_recv(&s, buf, sizeof buf, 100, &got, &err), FBW_E_USAGE);
    cr_assert_eq(got, 0);
}

Test(sock, monotonic_clock_advances)
{
    uint64_t a = fbw_now_ns();
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
    uint64_t b = fbw_now_ns();
    cr_assert_geq(b - a, 19u * 1000 * 1000);
    cr_assert_lt(b - a, 2000u * 1000 * 1000);
}

Test(sock, local_identity_bounded)
{
    char host[256], user[64];
    memset(host, 'X', sizeof host);
    memset(user, 'X', sizeof user);
    fbw_sock_local_identity(host, sizeof host, user, sizeof user);
    cr_assert_gt(strlen(host), 0);
    cr_assert_lt(strlen(host), sizeof host);
    cr_assert_gt(strlen(user), 0);
    cr_assert_lt(strlen(user), sizeof user);

    char h3[3], u2[2];
    fbw_sock_local_identity(h3, sizeof h3, u2, sizeof u2);
    cr_assert_eq(strlen(h3), 2);
    cr_assert_eq(strncmp(h3, host, 2), 0);
    cr_assert_eq(strlen(u2), 1);
    cr_assert_eq(u2[0], user[0]);
}
