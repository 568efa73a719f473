/* SPDX-License-Identifier: MIT */
/* selftest.c - `fbwire-link --self-test`: the link's accuracy, measured. An echo server and, per
 * asked RTT, a link run as child processes on loopback; this process pings through the link one
 * message at a time and compares the round trips it sees with the one asked for. The link child
 * reports its own CPU and chunk count through a pipe when it is stopped. */
#include "loop.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PING_BYTES 64

typedef struct link_figures {
    double cpu_s;
    uint64_t chunks;
    unsigned late_p50_us, late_p99_us; /* the link's own lateness (loop.h) */
} link_figures;

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int port_of(int fd)
{
    struct sockaddr_in sa;
    socklen_t len = sizeof sa;
    return getsockname(fd, (struct sockaddr *)&sa, &len) ? -1 : ntohs(sa.sin_port);
}

static void nodelay(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/* The echo server: one connection after the other, every byte straight back. */
static void echo_child(int lfd)
{
    char buf[4096];
    for (;;) {
        int fd = accept(lfd, NULL, NULL);
        if (fd < 0)
            continue;
        nodelay(fd);
        ssize_t n;
        while ((n = read(fd, buf, sizeof buf)) > 0)
            if (write(fd, buf, (size_t)n) != n)
                break;
        close(fd);
    }
}

static pid_t start_echo(int *port)
{
    int lfd = fbl_listen("127.0.0.1:0");
    if (lfd < 0)
        return -1;
    /* fbl_listen makes it non-blocking (for the loop); the echo child blocks in accept. */
    fcntl(lfd, F_SETFL, fcntl(lfd, F_GETFL) & ~O_NONBLOCK);
    *port = port_of(lfd);
    pid_t pid = fork();
    if (pid == 0)
        echo_child(lfd);
    close(lfd);
    return pid;
}

/* A link with RTT `rtt` (plus the other shaping options given) in a child process. */
static pid_t start_link(const fbl_opts *base, uint64_t rtt, int echo_port, int *port, int *pipe_rd)
{
    int lfd = fbl_listen("127.0.0.1:0"), pfd[2];
    if (lfd < 0 || pipe(pfd))
        return -1;
    *port = port_of(lfd);
    pid_t pid = fork();
    if (pid == 0) {
        close(pfd[0]);
        char to[32];
        snprintf(to, sizeof to, "127.0.0.1:%d", echo_port);
        fbl_opts o = *base;
        o.to = to;
        o.max_conns = 8;
        o.json = o.fault_log = NULL;
        o.line[FBL_UP].delay_ns = rtt / 2;
        o.line[FBL_DOWN].delay_ns = rtt - rtt / 2;
        fbl_summary s;
        int rc = fbl_run(&o, lfd, &s);
        link_figures fig = {s.user_s + s.sys_s - s.setup_cpu_s, s.chunks[0] + s.chunks[1],
                            fbl_late_us(&s, 0.5), fbl_late_us(&s, 0.99)};
        if (write(pfd[1], &fig, sizeof fig) != (ssize_t)sizeof fig)
            rc = -1;
        _exit(rc ? 2 : 0);
    }
    close(lfd);
    close(pfd[1]);
    *pipe_rd = pfd[0];
    return pid;
}

static int connect_to(int port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct timeval tv = {.tv_sec = 10};
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) ||
        connect(fd, (struct sockaddr *)&sa, sizeof sa)) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    nodelay(fd);
    return fd;
}

/* One ping: PING_BYTES out, the same back. The round trip in ns, 0 on failure. */
static uint64_t ping(int fd, unsigned seq)
{
    unsigned char out[PING_BYTES], in[PING_BYTES];
    memset(out, (int)(seq & 0xff), sizeof out);
    uint64_t t0 = mono_ns();
    if (write(fd, out, sizeof out) != (ssize_t)sizeof out)
        return 0;
    for (size_t got = 0; got < sizeof in;) {
        ssize_t n = read(fd, in + got, sizeof in - got);
        if (n <= 0)
            return 0;
        got += (size_t)n;
    }
    uint64_t t1 = mono_ns();
    return memcmp(in, out, sizeof in) ? 0 : t1 - t0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

typedef struct figures {
    double median_ms, p99_ms;
} figures;

static void summarise(uint64_t *rtt, int count, figures *f)
{
    qsort(rtt, (size_t)count, sizeof *rtt, cmp_u64);
    f->median_ms = (double)(rtt[(count - 1) / 2] + rtt[count / 2]) / 2e6;
    f->p99_ms = (double)rtt[(count * 99 + 99) / 100 - 1] / 1e6;
}

/* A non-blocking read of what is there, up to `cap`: bytes read, 0 when none, -1 at an end. */
static ssize_t take_some(int fd, unsigned char *buf, size_t cap)
{
    ssize_t n = recv(fd, buf, cap, MSG_DONTWAIT);
    if (n > 0)
        return n;
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) ? 0 : -1;
}

/* Sleep until CLOCK_MONOTONIC time `t` (ns), if it is still ahead. */
static void sleep_until(uint64_t t)
{
    if (t <= mono_ns())
        return;
    struct timespec ts = {.tv_sec = (time_t)(t / 1000000000ull),
                          .tv_nsec = (long)(t % 1000000000ull)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

/* The same pings with both ends in this process, awake when the bytes arrive: it sleeps until
 * POLL_LEAD_NS before the echo's bytes are due (half the asked RTT), polls the echo's socket and
 * sends them back, then does the same for the answer. What it times is the link and loopback
 * alone, not how long this machine takes to wake an endpoint that sleeps the whole wait (which
 * the sleeping series shows). It polls only near the due times: a process that polls all the
 * time is, on a virtual machine whose host is busy, the one the host takes the CPU from.
 * Gives up after 10 s per ping. */
#define POLL_LEAD_NS 250000ull

static uint64_t ping_polling(int cfd, int efd, unsigned seq, uint64_t rtt)
{
    unsigned char out[PING_BYTES], in[PING_BYTES], echo[PING_BYTES];
    memset(out, (int)(seq & 0xff), sizeof out);
    uint64_t t0 = mono_ns(), give_up = t0 + 10000000000ull;
    if (write(cfd, out, sizeof out) != (ssize_t)sizeof out)
        return 0;
    size_t echoed = 0, got = 0;
    while (got < sizeof in) {
        uint64_t due = echoed < sizeof echo ? t0 + rtt / 2 : t0 + rtt;
        if (due > POLL_LEAD_NS)
            sleep_until(due - POLL_LEAD_NS);
        ssize_t e = echoed < sizeof echo ? take_some(efd, echo, sizeof echo - echoed) : 0, n;
        if (e < 0 || (e > 0 && write(efd, echo, (size_t)e) != e))
            return 0;
        echoed += (size_t)e;
        if ((n = take_some(cfd, in + got, sizeof in - got)) < 0 || mono_ns() > give_up)
            return 0;
        got += (size_t)n;
        if (!n && !e) /* nothing yet: let the link run if it shares this CPU */
            sched_yield();
    }
    uint64_t t1 = mono_ns();
    return memcmp(in, out, sizeof in) ? 0 : t1 - t0;
}

/* The echo's end of a polling series: the link's connection to `lfd`, within 10 s. */
static int accept_within(int lfd)
{
    struct pollfd p = {.fd = lfd, .events = POLLIN};
    if (poll(&p, 1, 10000) != 1)
        return -1;
    int fd = accept(lfd, NULL, NULL);
    if (fd >= 0)
        nodelay(fd);
    return fd;
}

/* One connection to ping through: with efd < 0 an echo elsewhere answers (ping); else this process
 * holds the echo's end too and both are awake at the due times (ping_polling, RTT rtt). */
typedef struct pinger {
    int cfd, efd;
    uint64_t rtt;
} pinger;

/* `count` pings after 5 unmeasured ones, summarised into *f; 0 or -1. */
static int time_pings(const pinger *p, int count, figures *f)
{
    uint64_t *times = malloc((size_t)count * sizeof *times);
    int ok = times != NULL;
    for (int i = 0; ok && i < count + 5; i++) {
        uint64_t t = p->efd < 0 ? ping(p->cfd, (unsigned)i)
                                : ping_polling(p->cfd, p->efd, (unsigned)i, p->rtt);
        ok = t != 0;
        if (i >= 5)
            times[i - 5] = t;
    }
    if (ok)
        summarise(times, count, f);
    free(times);
    return ok ? 0 : -1;
}

/* `count` pings to the echo at `port` (directly or through a link); 0 or -1. */
static int ping_series(int port, int count, figures *f)
{
    pinger p = {connect_to(port), -1, 0};
    int rc = p.cfd >= 0 ? time_pings(&p, count, f) : -1;
    if (p.cfd >= 0)
        close(p.cfd);
    return rc;
}

/* `count` awake pings through the link of RTT `rtt` at `port`, whose far end is `lfd`; 0 or -1. */
static int polling_series(int port, int lfd, uint64_t rtt, int count, figures *f)
{
    pinger p = {connect_to(port), -1, rtt};
    if (p.cfd >= 0)
        p.efd = accept_within(lfd);
    int rc = p.efd >= 0 ? time_pings(&p, count, f) : -1;
    if (p.cfd >= 0)
        close(p.cfd);
    if (p.efd >= 0)
        close(p.efd);
    return rc;
}

/* Stop the link child and read what it counted (within 10 s, else it is killed). */
static int stop_link(pid_t pid, int pipe_rd, link_figures *fig)
{
    kill(pid, SIGTERM);
    struct pollfd p = {.fd = pipe_rd, .events = POLLIN};
    int ok = poll(&p, 1, 10000) == 1 && read(pipe_rd, fig, sizeof *fig) == (ssize_t)sizeof *fig;
    if (!ok)
        kill(pid, SIGKILL);
    close(pipe_rd);
    int st;
    waitpid(pid, &st, 0);
    return ok && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static int pings_for(const fbl_opts *o, uint64_t rtt)
{
    if (o->self_count)
        return o->self_count;
    uint64_t n = rtt ? 1000000000ull / rtt : 2000;
    return n < 20 ? 20 : n > 2000 ? 2000 : (int)n;
}

typedef struct point {
    double asked_ms, median_ms, p99_ms, err_us, limit_us, cpu_us_per_chunk;
    double sleeping_median_ms, sleeping_p99_ms; /* the same through an echo that sleeps */
    double judged_ms;                           /* the smaller median: what the verdict is on */
    int pings, within;
    unsigned late_p50_us, late_p99_us;
} point;

/* The pings through a link of RTT `rtt` to `to_port`: polling ones with their far end on `lfd`
 * (lfd >= 0), else ordinary ones to the echo child. The link's own figures into *lf. */
static int series_through_link(const fbl_opts *o, uint64_t rtt, int to_port, int lfd, int count,
                               figures *f, link_figures *lf)
{
    int port, pipe_rd;
    pid_t pid = start_link(o, rtt, to_port, &port, &pipe_rd);
    if (pid < 0)
        return -1;
    int ok =
        (lfd >= 0 ? polling_series(port, lfd, rtt, count, f) : ping_series(port, count, f)) == 0;
    if (stop_link(pid, pipe_rd, lf) || !ok) {
        fprintf(stderr, "fbwire-link: self-test at %.3f ms (%s endpoints) failed\n",
                (double)rtt / 1e6, lfd >= 0 ? "polling" : "sleeping");
        return -1;
    }
    return 0;
}

/* One asked RTT, measured both ways: the awake ends time the link alone on an idle machine; the
 * sleeping ones show what an endpoint that sleeps while it waits sees on this machine. The verdict
 * is on the smaller median. */
static int measure(const fbl_opts *o, uint64_t rtt, int lfd, int echo_port, point *pt)
{
    figures f, sf;
    link_figures lf = {0, 0, 0, 0}, slf;
    pt->pings = pings_for(o, rtt);
    if (series_through_link(o, rtt, port_of(lfd), lfd, pt->pings, &f, &lf) ||
        series_through_link(o, rtt, echo_port, -1, pt->pings, &sf, &slf))
        return -1;
    pt->asked_ms = (double)rtt / 1e6;
    pt->median_ms = f.median_ms;
    pt->p99_ms = f.p99_ms;
    pt->sleeping_median_ms = sf.median_ms;
    pt->sleeping_p99_ms = sf.p99_ms;
    /* Each way of timing adds its own delay to the link's and never takes any away (a median is
     * never below the asked RTT), so the smaller median is the closer bound on the link's RTT. The
     * awake ends are closer on an idle machine (no wake-up), the sleeping ones on a loaded one
     * (their polling competes with the link for the CPU). */
    pt->judged_ms = f.median_ms < sf.median_ms ? f.median_ms : sf.median_ms;
    pt->err_us = (pt->judged_ms - pt->asked_ms) * 1e3;
    pt->limit_us = (double)rtt * (double)o->tol_ppm / 1e9 + (double)o->tol_ns / 1e3;
    pt->within = pt->err_us <= pt->limit_us && -pt->err_us <= pt->limit_us;
    pt->cpu_us_per_chunk = lf.chunks ? lf.cpu_s * 1e6 / (double)lf.chunks : 0.0;
    pt->late_p50_us = lf.late_p50_us;
    pt->late_p99_us = lf.late_p99_us;
    return 0;
}

static void print_point(const point *pt)
{
    char late[24];
    snprintf(late, sizeof late, "%u/%u", pt->late_p50_us, pt->late_p99_us);
    printf("%9.3f %10.3f %8.3f %+9.1f %9.1f %12.2f %12s %11.3f %6d  %s\n", pt->asked_ms,
           pt->median_ms, pt->p99_ms, pt->err_us, pt->limit_us, pt->cpu_us_per_chunk, late,
           pt->sleeping_median_ms, pt->pings, pt->within ? "ok" : "OFF");
    fflush(stdout);
}

static json_t *point_json(const point *pt)
{
    return json_pack("{s:f,s:f,s:f,s:f,s:f,s:f,s:{s:i,s:i},s:{s:f,s:f},s:f,s:i,s:b}", "asked_ms",
                     pt->asked_ms, "median_ms", pt->median_ms, "p99_ms", pt->p99_ms, "error_us",
                     pt->err_us, "limit_us", pt->limit_us, "cpu_us_per_chunk", pt->cpu_us_per_chunk,
                     "late_us", "p50", (int)pt->late_p50_us, "p99", (int)pt->late_p99_us,
                     "sleeping", "median_ms", pt->sleeping_median_ms, "p99_ms", pt->sleeping_p99_ms,
                     "judged_median_ms", pt->judged_ms, "pings", pt->pings, "within", pt->within);
}

/* --json FILE: the same figures, for tools that put the link's measured RTT next to theirs. */
static int write_json(const char *path, const fbl_opts *o, const figures *direct,
                      const figures *direct_polling, const point *pts, int n)
{
    json_t *points = json_array();
    for (int i = 0; points && i < n; i++) {
        json_t *p = point_json(&pts[i]);
        if (!p || json_array_append_new(points, p)) {
            json_decref(points);
            points = NULL;
        }
    }
    return fbl_json_file(json_pack("{s:{s:f,s:f},s:{s:f,s:f},s:b,s:I,s:o}", "direct", "median_ms",
                                   direct->median_ms, "p99_ms", direct->p99_ms, "direct_polling",
                                   "median_ms", direct_polling->median_ms, "p99_ms",
                                   direct_polling->p99_ms, "spin_auto", o->spin_auto, "spin_ns",
                                   (json_int_t)o->spin_ns, "points", points),
                         path);
}

int fbl_self_test(const fbl_opts *o)
{
    int echo_port;
    signal(SIGPIPE, SIG_IGN);
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0); /* the polling pings' sleeps end on time */
    /* lfd: the far end of the polling pings, in this process */
    int lfd = fbl_listen("127.0.0.1:0");
    pid_t echo = lfd >= 0 ? start_echo(&echo_port) : -1;
    if (echo < 0)
        return 2;
    figures direct, direct_polling;
    int status = 0;
    if (ping_series(echo_port, 1000, &direct) ||
        polling_series(port_of(lfd), lfd, 0, 1000, &direct_polling)) {
        fprintf(stderr, "fbwire-link: self-test: the echo server does not answer\n");
        status = 2;
    } else {
        printf(
            "fbwire-link self-test: ping-pong of %d bytes over loopback through a link per asked "
            "RTT,\n"
            "timed by ends that are awake when the bytes are due (they sleep until 250 us before,\n"
            "then poll): the link alone; and, for comparison, by a client and an echo server that\n"
            "sleep while they wait (sleeping_ms: what such a program sees on this machine)\n"
            "direct loopback (no link): awake: median %.3f ms, p99 %.3f ms; sleeping: median "
            "%.3f ms, p99 %.3f ms\n"
            "error_us: of the smaller of the two medians (each timing only adds delay); tolerance "
            "%.1f%% + %.0f us; --spin %s%.0f us\n",
            PING_BYTES, direct_polling.median_ms, direct_polling.p99_ms, direct.median_ms,
            direct.p99_ms, (double)o->tol_ppm / 1e4, (double)o->tol_ns / 1e3,
            o->spin_auto ? "auto, at most " : "", (double)o->spin_ns / 1e3);
        printf("%9s %10s %8s %9s %9s %12s %12s %11s %6s  %s\n", "asked_ms", "median_ms", "p99_ms",
               "error_us", "limit_us", "cpu_us/chunk", "late_us50/99", "sleeping_ms", "pings",
               "result");
        fflush(stdout);
    }
    point pts[sizeof o->self_rtt / sizeof o->self_rtt[0]];
    int n = 0;
    for (; status != 2 && n < o->self_n; n++) {
        if (measure(o, o->self_rtt[n], lfd, echo_port, &pts[n])) {
            status = 2;
            break;
        }
        print_point(&pts[n]);
        if (!pts[n].within)
            status = 1;
    }
    if (status != 2 && o->json && write_json(o->json, o, &direct, &direct_polling, pts, n))
        status = 2;
    kill(echo, SIGKILL);
    waitpid(echo, NULL, 0);
    close(lfd);
    return status;
}
