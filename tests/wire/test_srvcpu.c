/* SPDX-License-Identifier: MIT */
/* test_srvcpu.c - finding a local server's process by its port and reading its CPU, with
 * listeners and children made here (no database server needed). */
#include <criterion/criterion.h>

#include "srvcpu.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* A listening socket on 127.0.0.1 with an ephemeral port; returns the fd, *port the port. */
static int listen_loopback(unsigned *port)
{
    struct sockaddr_in a;
    socklen_t len = sizeof a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    cr_assert(fd >= 0);
    cr_assert(bind(fd, (struct sockaddr *)&a, sizeof a) == 0);
    cr_assert(listen(fd, 4) == 0);
    cr_assert(getsockname(fd, (struct sockaddr *)&a, &len) == 0);
    *port = ntohs(a.sin_port);
    return fd;
}

/* Spend ms of this thread's CPU; returns a value so the loop is not optimized away. */
static unsigned burn_ms(int ms)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    unsigned x = 0;
    do {
        for (int i = 0; i < 100000; i++)
            x = x * 31u + (unsigned)i;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    } while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
    return x;
}

Test(srvcpu, finds_the_listener_of_a_port)
{
    unsigned port;
    int fd = listen_loopback(&port);
    srvcpu s;
    fbw_err err;
    cr_assert_eq(srvcpu_find_port(&s, port, &err), FBW_OK, "%s", err.msg);
    cr_assert_eq(s.pid, getpid());
    cr_assert_eq(s.port, port);
    close(fd);
}

Test(srvcpu, finds_the_server_of_a_connection)
{
    unsigned port;
    int lfd = listen_loopback(&port);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons((uint16_t)port);
    int cfd = socket(AF_INET, SOCK_STREAM, 0);
    cr_assert(connect(cfd, (struct sockaddr *)&a, sizeof a) == 0);
    srvcpu s;
    fbw_err err;
    cr_assert_eq(srvcpu_find_peer(&s, cfd, &err), FBW_OK, "%s", err.msg);
    cr_assert_eq(s.pid, getpid());
    close(cfd);
    close(lfd);
}

Test(srvcpu, no_listener_is_reported_not_zero)
{
    unsigned port;
    int fd = listen_loopback(&port);
    close(fd); /* the port is free now */
    srvcpu s;
    fbw_err err;
    cr_assert_lt(srvcpu_find_port(&s, port, &err), 0);
    cr_assert_eq(s.pid, 0);
    cr_assert(strstr(s.why, "listens on port"), "%s", s.why);
    uint64_t ns = 1;
    cr_assert_lt(srvcpu_read(&s, &ns, &err), 0);
    cr_assert_eq(ns, 0);
}

/* A forking server does its work in children: their CPU counts, live and after they are reaped. */
Test(srvcpu, counts_the_server_and_its_children)
{
    unsigned port;
    int fd = listen_loopback(&port);
    srvcpu s;
    uint64_t t0, t1, t2, t3;
    cr_assert_eq(srvcpu_find_port(&s, port, NULL), FBW_OK);
    cr_assert_eq(srvcpu_read(&s, &t0, NULL), FBW_OK);
    cr_assert_neq(burn_ms(200), 1u); /* any value; the CPU spent is what counts */
    cr_assert_eq(srvcpu_read(&s, &t1, NULL), FBW_OK);
    cr_assert_geq(t1 - t0, 150000000ull, "own CPU: %llu ns", (unsigned long long)(t1 - t0));

    int pipefd[2];
    cr_assert(pipe(pipefd) == 0);
    pid_t child = fork();
    cr_assert(child >= 0);
    if (child == 0) {
        char c = (char)burn_ms(300);
        (void)!write(pipefd[1], &c, 1);
        pause(); /* stay alive until killed: counted as a live descendant */
        _exit(0);
    }
    char c;
    cr_assert(read(pipefd[0], &c, 1) == 1);
    cr_assert_eq(srvcpu_read(&s, &t2, NULL), FBW_OK);
    cr_assert_geq(s.children, 1);
    cr_assert_geq(t2 - t1, 250000000ull, "live child's CPU: %llu ns", (unsigned long long)(t2 - t1));
    kill(child, SIGKILL);
    cr_assert(waitpid(child, NULL, 0) == child);
    cr_assert_eq(srvcpu_read(&s, &t3, NULL), FBW_OK);
    cr_assert_geq(t3, t2, "a reaped child's CPU stays counted (cutime)");
    close(fd);
}

/* Milliseconds since t0 on the monotonic clock. */
static long ms_since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* A forking server's children end and are reaped while it is read, as PostgreSQL's backends are
 * when a run's connections close. Each reading must be a snapshot: a child read just after its
 * parent reaped it was once in neither the live processes nor the parent's reaped total, so a
 * reading went down (a PostgreSQL run measured 0 s), and one read just before counted it twice. */
Test(srvcpu, readings_never_go_down_while_children_come_and_go)
{
    unsigned port;
    int fd = listen_loopback(&port);
    srvcpu s;
    cr_assert_eq(srvcpu_find_port(&s, port, NULL), FBW_OK);
    pid_t server = fork();
    cr_assert(server >= 0);
    if (server == 0) { /* workers, as connections: each burns 2 ticks and ends, and is reaped */
        for (int live = 0;; live--) {
            for (; live < 3; live++)
                if (fork() == 0)
                    _exit((int)(burn_ms(20) & 1));
            wait(NULL);
        }
    }
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    uint64_t prev = 0, now, worst = 0;
    int reads = 0, drops = 0;
    while (ms_since(&t0) < 3000) {
        cr_assert_eq(srvcpu_read(&s, &now, NULL), FBW_OK);
        if (now < prev) {
            drops++;
            if (prev - now > worst)
                worst = prev - now;
        }
        prev = now;
        reads++;
    }
    kill(server, SIGKILL);
    cr_assert(waitpid(server, NULL, 0) == server);
    close(fd);
    cr_assert_gt(reads, 20, "only %d readings in 3 s", reads);
    cr_assert_eq(drops, 0, "%d of %d readings went down (by up to %llu ns)", drops, reads,
                 (unsigned long long)worst);
}

Test(srvcpu, local_addresses)
{
    struct sockaddr_in a4;
    memset(&a4, 0, sizeof a4);
    a4.sin_family = AF_INET;
    inet_pton(AF_INET, "127.3.4.5", &a4.sin_addr);
    cr_assert(srvcpu_addr_is_local(&a4, sizeof a4));
    inet_pton(AF_INET, "192.0.2.7", &a4.sin_addr); /* TEST-NET-1: never an interface here */
    cr_assert_not(srvcpu_addr_is_local(&a4, sizeof a4));
    struct sockaddr_in6 a6;
    memset(&a6, 0, sizeof a6);
    a6.sin6_family = AF_INET6;
    inet_pton(AF_INET6, "::1", &a6.sin6_addr);
    cr_assert(srvcpu_addr_is_local(&a6, sizeof a6));
    inet_pton(AF_INET6, "::ffff:127.0.0.1", &a6.sin6_addr);
    cr_assert(srvcpu_addr_is_local(&a6, sizeof a6));
    inet_pton(AF_INET6, "2001:db8::1", &a6.sin6_addr);
    cr_assert_not(srvcpu_addr_is_local(&a6, sizeof a6));
    cr_assert_not(srvcpu_addr_is_local(&a4, 3), "short address");
}
