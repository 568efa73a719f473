/* SPDX-License-Identifier: MIT */
/* loop.c - fbwire-link's I/O: one epoll loop over the listening socket, every connection's two
 * sockets, a timerfd armed at the earliest due chunk, and a signalfd. All timing decisions are
 * the lines' (line.c) and the fault rules' (fault.c); this file only moves bytes when told. */
#define _GNU_SOURCE /* accept4 */
#include "loop.h"

#include "lead.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

enum { CLIENT = 0, SERVER = 1 }; /* a side's index is the line it feeds: client feeds FBL_UP */
#define READ_MAX 65536

typedef struct conn conn;

typedef struct end {
    conn *c; /* NULL: the listening socket, timer or signals */
    int side;
    int fd;
    uint32_t ev; /* events registered, 0 = not in the epoll set */
} end;

struct conn {
    uint32_t id, slot, gen;
    end e[2];
    fbl_line line[2];
    fbl_faults faults;
    int connecting;
    int eof_in[2];     /* side s ended its stream */
    int shut[2];       /* line d's destination write half is closed */
    int blocked[2];    /* line d waits for its destination to take more */
    uint64_t sched[2]; /* due time the timer heap holds for line d, 0 = none */
    uint64_t dropped[2];
    uint32_t nfaults;
    uint64_t t0;
    char client[64];
    int dead; /* closed; freed after the current batch of events */
    conn *next_dead;
};

typedef struct tmr {
    uint64_t due;
    uint32_t slot, gen;
    int d;
} tmr;

typedef struct loop {
    const fbl_opts *o;
    int ep;
    end lst, tim, sig;
    struct sockaddr_storage to;
    unsigned tolen;
    conn **slots;
    uint32_t nslots, *free_slots, nfree, gen;
    tmr *heap;
    size_t nheap, capheap;
    uint64_t armed; /* the time the timerfd is set for, 0 = not set */
    fbl_lead lead;
    unsigned char *buf;
    FILE *flog;
    fbl_summary *sum;
    uint32_t next_id;
    uint64_t open, t_start;
    conn *dead;
    int stop;
} loop;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- addresses ---- */

int fbl_resolve(const char *spec, int passive, struct sockaddr_storage *sa, unsigned *salen)
{
    char host[256];
    const char *colon = strrchr(spec, ':');
    size_t hlen = colon ? (size_t)(colon - spec) : 0;
    if (!colon || !colon[1] || hlen >= sizeof host) {
        fprintf(stderr, "fbwire-link: \"%s\" is not ADDR:PORT\n", spec);
        return -1;
    }
    memcpy(host, spec, hlen);
    host[hlen] = 0;
    char *h = host;
    if (hlen >= 2 && host[0] == '[' && host[hlen - 1] == ']') {
        host[hlen - 1] = 0;
        h++;
    }
    struct addrinfo hints = {0}, *res;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0);
    int rc = getaddrinfo(*h ? h : NULL, colon + 1, &hints, &res);
    if (rc) {
        fprintf(stderr, "fbwire-link: %s: %s\n", spec, gai_strerror(rc));
        return -1;
    }
    memcpy(sa, res->ai_addr, res->ai_addrlen);
    *salen = (unsigned)res->ai_addrlen;
    freeaddrinfo(res);
    return 0;
}

int fbl_listen(const char *spec)
{
    struct sockaddr_storage sa;
    unsigned len;
    if (fbl_resolve(spec, 1, &sa, &len))
        return -1;
    int fd = socket(sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) ||
        bind(fd, (struct sockaddr *)&sa, len) || listen(fd, 1024)) {
        fprintf(stderr, "fbwire-link: listen on %s: %s\n", spec, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

static void name_local(const struct sockaddr_storage *sa, char *out, size_t outlen)
{
    char host[INET6_ADDRSTRLEN] = "?";
    unsigned port = 0;
    if (sa->ss_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
        inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
        port = ntohs(in->sin_port);
    } else if (sa->ss_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
        inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
        port = ntohs(in6->sin6_port);
    }
    snprintf(out, outlen, sa->ss_family == AF_INET6 ? "[%s]:%u" : "%s:%u", host, port);
}

static void name_peer(int fd, char *out, size_t outlen)
{
    struct sockaddr_storage sa = {0};
    socklen_t len = sizeof sa;
    getpeername(fd, (struct sockaddr *)&sa, &len);
    name_local(&sa, out, outlen);
}

/* ---- the timer heap: (due, connection slot, generation, line); stale entries are skipped ---- */

static int heap_push(loop *lp, tmr t)
{
    if (lp->nheap == lp->capheap) {
        size_t cap = lp->capheap ? lp->capheap * 2 : 256;
        tmr *h = realloc(lp->heap, cap * sizeof *h);
        if (!h)
            return -1;
        lp->heap = h;
        lp->capheap = cap;
    }
    size_t i = lp->nheap++;
    for (; i && lp->heap[(i - 1) / 2].due > t.due; i = (i - 1) / 2)
        lp->heap[i] = lp->heap[(i - 1) / 2];
    lp->heap[i] = t;
    return 0;
}

static tmr heap_pop(loop *lp)
{
    tmr top = lp->heap[0], last = lp->heap[--lp->nheap];
    size_t i = 0, n = lp->nheap;
    for (;;) {
        size_t k = 2 * i + 1;
        if (k >= n)
            break;
        if (k + 1 < n && lp->heap[k + 1].due < lp->heap[k].due)
            k++;
        if (lp->heap[k].due >= last.due)
            break;
        lp->heap[i] = lp->heap[k];
        i = k;
    }
    if (n)
        lp->heap[i] = last;
    return top;
}

/* The timerfd goes off at the earliest due time less the lead (lead.h); re-armed only when that
 * changes. Returns the epoll timeout: 0 while polling through the lead, else -1. */
static int arm_timer(loop *lp, uint64_t now)
{
    uint64_t at = lp->nheap ? lp->heap[0].due : 0, lead = fbl_lead_ns(&lp->lead);
    if (at && at <= now + lead)
        return 0;
    if (at)
        at -= lead;
    if (at == lp->armed)
        return -1;
    struct itimerspec its = {0};
    its.it_value.tv_sec = (time_t)(at / 1000000000ull);
    its.it_value.tv_nsec = (long)(at % 1000000000ull);
    timerfd_settime(lp->tim.fd, TFD_TIMER_ABSTIME, &its, NULL);
    lp->armed = at;
    return -1;
}

/* ---- connections ---- */

static void set_events(loop *lp, end *e, uint32_t want)
{
    if (want == e->ev || e->fd < 0)
        return;
    /* A socket with nothing to wait for leaves the set: epoll reports a hang-up even with no
     * events asked, and a hung-up socket would wake the loop until its delayed bytes are out. */
    struct epoll_event ev = {.events = want, .data.ptr = e};
    int op = !want ? EPOLL_CTL_DEL : !e->ev ? EPOLL_CTL_ADD : EPOLL_CTL_MOD;
    epoll_ctl(lp->ep, op, e->fd, &ev);
    e->ev = want;
}

static void update_events(loop *lp, conn *c)
{
    for (int s = 0; s < 2; s++) {
        uint32_t want = 0;
        if (!c->eof_in[s] && c->line[s].queued < lp->o->queue_max)
            want |= EPOLLIN; /* backpressure: a full line stops reading its source */
        if (c->blocked[1 - s] || (s == SERVER && c->connecting))
            want |= EPOLLOUT;
        set_events(lp, &c->e[s], want);
    }
}

static void record(loop *lp, conn *c, const char *how)
{
    fbl_summary *s = lp->sum;
    s->conns++;
    s->faults += c->nfaults;
    for (int d = 0; d < 2; d++) {
        s->bytes[d] += c->line[d].bytes_in;
        s->chunks[d] += c->line[d].chunks_in;
        s->writes[d] += c->line[d].writes_out;
    }
    if (s->nconn == FBL_MAX_DETAIL)
        return;
    if (s->nconn == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        fbl_conn_stats *n = realloc(s->conn, cap * sizeof *n);
        if (!n)
            return;
        s->conn = n;
        s->cap = cap;
    }
    fbl_conn_stats *st = &s->conn[s->nconn++];
    memset(st, 0, sizeof *st);
    st->id = c->id;
    snprintf(st->client, sizeof st->client, "%s", c->client);
    for (int d = 0; d < 2; d++) {
        st->bytes[d] = c->line[d].bytes_in;
        st->chunks[d] = c->line[d].chunks_in;
        st->writes[d] = c->line[d].writes_out;
        st->dropped[d] = c->dropped[d];
    }
    st->faults = c->nfaults;
    st->seconds = (double)(now_ns() - c->t0) / 1e9;
    snprintf(st->end, sizeof st->end, "%s", how);
}

/* Close both sockets; with `reset`, as a TCP reset (SO_LINGER 0) rather than an orderly close. */
static void close_conn(loop *lp, conn *c, const char *how, int reset)
{
    record(lp, c, how);
    for (int s = 0; s < 2; s++) {
        if (c->e[s].fd < 0)
            continue;
        if (reset) {
            struct linger lg = {.l_onoff = 1, .l_linger = 0};
            setsockopt(c->e[s].fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
        }
        close(c->e[s].fd);
    }
    fbl_line_free(&c->line[0]);
    fbl_line_free(&c->line[1]);
    lp->slots[c->slot] = NULL;
    lp->free_slots[lp->nfree++] = c->slot;
    lp->open--;
    /* epoll may still hold events for its ends in the batch being handled: free it after. */
    c->dead = 1;
    c->e[0].fd = c->e[1].fd = -1;
    c->next_dead = lp->dead;
    lp->dead = c;
}

static void bury(loop *lp)
{
    while (lp->dead) {
        conn *c = lp->dead;
        lp->dead = c->next_dead;
        free(c);
    }
}

static const char *const kind_names[] = {"", "data", "eof", "reset", "shutdown", "stall"};

static void log_fault(loop *lp, conn *c, int rule, int d, fbl_kind k)
{
    c->nfaults++;
    if (!lp->flog)
        return;
    char spec[160];
    fbl_rule_format(&lp->o->sched.rule[rule], spec, sizeof spec);
    json_t *line = json_pack("{s:f,s:i,s:i,s:s,s:s,s:{s:I,s:I},s:s}", "t_ms",
                             (double)(now_ns() - lp->t_start) / 1e6, "conn", (int)c->id, "rule",
                             rule, "fault", kind_names[k], "dir", d == FBL_UP ? "up" : "down",
                             "delivered", "up", (json_int_t)c->line[FBL_UP].bytes_out, "down",
                             (json_int_t)c->line[FBL_DOWN].bytes_out, "spec", spec);
    if (line) /* one object a line (JSON Lines) */
        (void)json_dumpf(line, lp->flog, JSON_COMPACT | JSON_REAL_PRECISION(10));
    json_decref(line);
    fputc('\n', lp->flog);
    fflush(lp->flog);
}

static void note_late(fbl_summary *s, uint64_t ns)
{
    uint64_t us = ns / 1000;
    s->late_hist[us < FBL_LATE_BUCKETS - 1 ? us : FBL_LATE_BUCKETS - 1]++;
    if (ns > s->late_max_ns)
        s->late_max_ns = ns;
}

/* Carry out the marks and writes of line d that are due. Returns -1 when the connection ended. */
static int service(loop *lp, conn *c, int d, uint64_t now)
{
    int fd = c->e[1 - d].fd;
    if (d == FBL_UP && c->connecting)
        return 0;
    while (!c->blocked[d]) {
        const unsigned char *p;
        size_t len;
        uint64_t arg;
        int rule;
        fbl_kind k = fbl_line_peek(&c->line[d], now, &p, &len, &arg, &rule);
        if (k == FBL_NONE)
            return 0;
        if (k == FBL_DATA && c->shut[d]) { /* after a shutdown fault: nowhere to go */
            c->dropped[d] += len;
            fbl_line_consume(&c->line[d], len);
        } else if (k == FBL_DATA) {
            if (c->line[d].head->off == 0)
                note_late(lp->sum, now - fbl_line_next_due(&c->line[d]));
            ssize_t w = send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
                w = 0;
            if (w < 0) {
                close_conn(lp, c, d == FBL_UP ? "reset: server gone" : "reset: client gone", 1);
                return -1;
            }
            fbl_line_consume(&c->line[d], (size_t)w);
            c->blocked[d] = (size_t)w < len;
        } else if (k == FBL_EOF || k == FBL_SHUTDOWN) {
            if (k == FBL_SHUTDOWN)
                log_fault(lp, c, rule, d, k);
            shutdown(fd, SHUT_WR);
            c->shut[d] = 1;
        } else if (k == FBL_STALL) {
            log_fault(lp, c, rule, d, k);
        } else if (k == FBL_RESET) {
            log_fault(lp, c, rule, d, k);
            close_conn(lp, c, "reset (fault)", 1);
            return -1;
        }
    }
    return 0;
}

/* After anything happened to a connection: write what is due, close it when both directions
 * are done, and ask epoll and the timer for what it waits for next. */
static void settle(loop *lp, conn *c, uint64_t now)
{
    for (int d = 0; d < 2; d++)
        if (service(lp, c, d, now) < 0)
            return;
    if (c->shut[0] && c->shut[1] && !c->line[0].head && !c->line[1].head) {
        close_conn(lp, c, "closed", 0);
        return;
    }
    update_events(lp, c);
    for (int d = 0; d < 2; d++) {
        uint64_t due = fbl_line_next_due(&c->line[d]);
        /* A blocked line waits for EPOLLOUT, and so does the up line until the server answers
         * the connect; the timer is only for lines that wait for their time. */
        if (c->blocked[d] || (d == FBL_UP && c->connecting) || due == FBL_NEVER ||
            due == c->sched[d])
            continue;
        tmr t = {.due = due, .slot = c->slot, .gen = c->gen, .d = d};
        if (!heap_push(lp, t))
            c->sched[d] = due;
    }
}

static void inject(loop *lp, conn *c, int rule, int side, uint64_t now)
{
    const fbl_rule *r = &lp->o->sched.rule[rule];
    int dir = fbl_rule_dir(r, side);
    if (r->action == FBL_RESET) /* one reset, right behind the bytes that fired it */
        dir = dir == FBL_BOTH ? side : dir;
    for (int d = 0; d < 2; d++)
        if (dir == d || dir == FBL_BOTH)
            fbl_line_push_mark(&c->line[d], now, r->action, r->stall_ns, rule);
}

/* Bytes read from `side` pass the fault stage, which may split them, into the side's line. */
static int feed(loop *lp, conn *c, int side, uint64_t now, const unsigned char *p, size_t n)
{
    int hits[FBL_MAX_RULES];
    for (;;) {
        int hit;
        size_t k = fbl_faults_bytes(&c->faults, &lp->o->sched, side, n, &hit);
        if (fbl_line_push(&c->line[side], now, p, k))
            return -1;
        p += k;
        n -= k;
        if (hit < 0)
            break;
        inject(lp, c, hit, side, now);
    }
    int m = fbl_faults_chunk(&c->faults, &lp->o->sched, side, hits);
    for (int i = 0; i < m; i++)
        inject(lp, c, hits[i], side, now);
    return 0;
}

/* One read from `side`. Returns -1 when the connection ended. */
/* When the kernel received the bytes (SO_TIMESTAMPNS, on the real-time clock), moved to the
 * monotonic clock: the delay counts from there, so the time this process took to wake up and
 * read is not added to it. `now` when there is no stamp, or a clock step made it look later. */
static uint64_t arrival(struct msghdr *m, uint64_t now)
{
    for (struct cmsghdr *cm = CMSG_FIRSTHDR(m); cm; cm = CMSG_NXTHDR(m, cm)) {
        if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_TIMESTAMPNS)
            continue;
        struct timespec rx, real, mono;
        memcpy(&rx, CMSG_DATA(cm), sizeof rx);
        clock_gettime(CLOCK_REALTIME, &real);
        clock_gettime(CLOCK_MONOTONIC, &mono);
        int64_t ago =
            ((int64_t)real.tv_sec - rx.tv_sec) * 1000000000ll + (real.tv_nsec - rx.tv_nsec);
        uint64_t m_now = (uint64_t)mono.tv_sec * 1000000000ull + (uint64_t)mono.tv_nsec;
        if (ago < 0 || (uint64_t)ago > m_now || m_now - (uint64_t)ago > now)
            return now;
        return m_now - (uint64_t)ago;
    }
    return now;
}

static int do_read(loop *lp, conn *c, int side, uint64_t now)
{
    union {
        char buf[CMSG_SPACE(sizeof(struct timespec))];
        struct cmsghdr align;
    } ctl;
    struct iovec iov = {.iov_base = lp->buf, .iov_len = READ_MAX};
    struct msghdr m = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof ctl.buf};
    ssize_t n = recvmsg(c->e[side].fd, &m, MSG_DONTWAIT);
    if (n > 0) {
        now = arrival(&m, now);
        if (feed(lp, c, side, now, lp->buf, (size_t)n) == 0)
            return 0;
        close_conn(lp, c, "reset: out of memory", 1);
        return -1;
    }
    if (n == 0) {
        c->eof_in[side] = 1;
        fbl_line_push_mark(&c->line[side], now, FBL_EOF, 0, -1);
        return 0;
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
        return 0;
    /* The peer reset its connection: the other side sees a reset too. */
    close_conn(lp, c, side == CLIENT ? "reset by client" : "reset by server", 1);
    return -1;
}

static void on_conn_event(loop *lp, end *e, uint32_t ev, uint64_t now)
{
    conn *c = e->c;
    int s = e->side;
    if (s == SERVER && c->connecting && (ev & (EPOLLOUT | EPOLLERR | EPOLLHUP))) {
        int err = 0;
        socklen_t len = sizeof err;
        getsockopt(e->fd, SOL_SOCKET, SO_ERROR, &err, &len);
        if (err) {
            fprintf(stderr, "fbwire-link: connection %u: connect to %s: %s\n", c->id, lp->o->to,
                    strerror(err));
            close_conn(lp, c, "connect failed", 1);
            return;
        }
        c->connecting = 0;
    }
    if (ev & EPOLLOUT)
        c->blocked[1 - s] = 0;
    if ((ev & (EPOLLIN | EPOLLHUP | EPOLLERR)) && (e->ev & EPOLLIN) && do_read(lp, c, s, now))
        return;
    settle(lp, c, now);
}

static void tune_socket(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one);
}

static void new_conn(loop *lp, int cfd, uint64_t now)
{
    conn *c = calloc(1, sizeof *c);
    int sfd = socket(lp->to.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (!c || sfd < 0 || !lp->nfree) {
        fprintf(stderr, "fbwire-link: cannot take a connection: %s\n",
                c && sfd < 0 ? strerror(errno) : "no room");
        free(c);
        if (sfd >= 0)
            close(sfd);
        close(cfd);
        lp->sum->refused++;
        return;
    }
    tune_socket(cfd);
    tune_socket(sfd);
    c->id = ++lp->next_id;
    c->slot = lp->free_slots[--lp->nfree];
    c->gen = ++lp->gen;
    c->t0 = now;
    lp->slots[c->slot] = c;
    if (++lp->open > lp->sum->max_open)
        lp->sum->max_open = lp->open;
    name_peer(cfd, c->client, sizeof c->client);
    /* Each connection's draws come from the seed and its number alone: the same run repeats. */
    uint64_t seed = lp->o->seed * 0x9e3779b97f4a7c15ull + c->id;
    for (int d = 0; d < 2; d++)
        fbl_line_init(&c->line[d], &lp->o->line[d], fbl_rand(&seed));
    fbl_faults_init(&c->faults, c->id, fbl_rand(&seed));
    c->e[CLIENT] = (end){.c = c, .side = CLIENT, .fd = cfd};
    c->e[SERVER] = (end){.c = c, .side = SERVER, .fd = sfd};
    if (connect(sfd, (struct sockaddr *)&lp->to, lp->tolen) && errno != EINPROGRESS) {
        fprintf(stderr, "fbwire-link: connection %u: connect to %s: %s\n", c->id, lp->o->to,
                strerror(errno));
        close_conn(lp, c, "connect failed", 1);
        return;
    }
    c->connecting = 1; /* done when the socket turns writable (even if connect returned 0) */
    settle(lp, c, now);
}

static void on_accept(loop *lp, uint64_t now)
{
    for (;;) {
        int cfd = accept4(lp->lst.fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (cfd < 0)
            return; /* EAGAIN, or out of descriptors: the next connection tries again */
        if (lp->open >= lp->nslots) {
            close(cfd);
            lp->sum->refused++;
            continue;
        }
        new_conn(lp, cfd, now);
    }
}

static void run_timers(loop *lp, uint64_t now)
{
    while (lp->nheap && lp->heap[0].due <= now) {
        tmr t = heap_pop(lp);
        conn *c = lp->slots[t.slot];
        if (!c || c->gen != t.gen || c->sched[t.d] != t.due)
            continue; /* the connection or that due time is gone */
        c->sched[t.d] = 0;
        settle(lp, c, now);
    }
}

static void on_signal(loop *lp, uint64_t now)
{
    struct signalfd_siginfo si;
    while (read(lp->sig.fd, &si, sizeof si) == (ssize_t)sizeof si) {
        if (si.ssi_signo != SIGUSR1) {
            lp->stop = 1;
            continue;
        }
        for (uint32_t i = 0; i < lp->nslots; i++) {
            conn *c = lp->slots[i];
            if (!c)
                continue;
            fbl_line_release(&c->line[0]);
            fbl_line_release(&c->line[1]);
            settle(lp, c, now);
        }
    }
}

/* ---- setup ---- */

/* Room for two descriptors per connection plus a few: the soft limit is raised as far as the
 * hard one allows, and the connection limit lowered (with a note) when that is not enough. */
static uint32_t raise_nofile(int conns)
{
    struct rlimit rl;
    rlim_t need = (rlim_t)conns * 2 + 32;
    if (getrlimit(RLIMIT_NOFILE, &rl))
        return (uint32_t)conns;
    if (rl.rlim_cur < need) {
        rl.rlim_cur = rl.rlim_max < need ? rl.rlim_max : need;
        setrlimit(RLIMIT_NOFILE, &rl);
        getrlimit(RLIMIT_NOFILE, &rl);
    }
    if (rl.rlim_cur >= need)
        return (uint32_t)conns;
    uint32_t fit = rl.rlim_cur > 64 ? (uint32_t)((rl.rlim_cur - 32) / 2) : 16;
    fprintf(stderr,
            "fbwire-link: the open-file limit (%llu) allows %u connections at once, not %d\n",
            (unsigned long long)rl.rlim_cur, fit, conns);
    return fit;
}

static int add_fd(loop *lp, end *e, int fd)
{
    *e = (end){.c = NULL, .side = -1, .fd = fd};
    if (fd < 0)
        return -1;
    set_events(lp, e, EPOLLIN);
    return 0;
}

static int setup(loop *lp, const fbl_opts *o, int listen_fd)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGUSR1);
    sigprocmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    /* The default timer slack (50 us) would be the largest error of a short delay. */
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    fbl_lead_init(&lp->lead, o->spin_auto, o->spin_ns);
    if (fbl_resolve(o->to, 0, &lp->to, &lp->tolen))
        return -1;
    lp->nslots = raise_nofile(o->max_conns);
    lp->slots = calloc(lp->nslots, sizeof *lp->slots);
    lp->free_slots = malloc(lp->nslots * sizeof *lp->free_slots);
    lp->buf = malloc(READ_MAX);
    if (!lp->slots || !lp->free_slots || !lp->buf)
        return -1;
    for (uint32_t i = 0; i < lp->nslots; i++)
        lp->free_slots[lp->nfree++] = lp->nslots - 1 - i;
    if (o->fault_log && !(lp->flog = fopen(o->fault_log, "w"))) {
        fprintf(stderr, "fbwire-link: %s: %s\n", o->fault_log, strerror(errno));
        return -1;
    }
    lp->ep = epoll_create1(EPOLL_CLOEXEC);
    if (listen_fd < 0) {
        if ((listen_fd = fbl_listen(o->listen)) < 0)
            return -1;
        char where[64];
        struct sockaddr_storage sa;
        socklen_t len = sizeof sa;
        getsockname(listen_fd, (struct sockaddr *)&sa, &len);
        name_local(&sa, where, sizeof where);
        /* The port is what a caller that asked for port 0 needs to know. */
        fprintf(stderr, "fbwire-link: listening on %s, relaying to %s\n", where, o->to);
    }
    if (lp->ep < 0 || add_fd(lp, &lp->lst, listen_fd) ||
        add_fd(lp, &lp->tim, timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC)) ||
        add_fd(lp, &lp->sig, signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC))) {
        fprintf(stderr, "fbwire-link: setup: %s\n", strerror(errno));
        return -1;
    }
    return 0;
}

static void teardown(loop *lp)
{
    for (uint32_t i = 0; lp->slots && i < lp->nslots; i++)
        if (lp->slots[i])
            close_conn(lp, lp->slots[i], "stopped", 0);
    bury(lp);
    for (end *e = &lp->lst; e <= &lp->sig; e++)
        if (e->fd >= 0)
            close(e->fd);
    if (lp->ep >= 0)
        close(lp->ep);
    if (lp->flog)
        fclose(lp->flog);
    free(lp->slots);
    free(lp->free_slots);
    free(lp->heap);
    free(lp->buf);
}

static void dispatch(loop *lp, end *e, uint32_t ev, uint64_t now)
{
    if (e->c) {
        on_conn_event(lp, e, ev, now);
    } else if (e == &lp->lst) {
        on_accept(lp, now);
    } else if (e == &lp->tim) {
        uint64_t ticks;
        if (read(lp->tim.fd, &ticks, sizeof ticks) < 0)
            ticks = 0;
        if (lp->armed && now > lp->armed) /* how late the timer woke us: what the lead learns */
            fbl_lead_note(&lp->lead, now - lp->armed);
        lp->armed = 0; /* expired: arm_timer sets it again */
    } else {
        on_signal(lp, now);
    }
}

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

int fbl_run(const fbl_opts *o, int listen_fd, fbl_summary *sum)
{
    loop L = {.o = o, .ep = -1, .sum = sum, .t_start = now_ns()};
    L.lst.fd = L.tim.fd = L.sig.fd = -1;
    memset(sum, 0, sizeof *sum);
    int rc = setup(&L, o, listen_fd);
    sum->setup_cpu_s = cpu_s();
    struct epoll_event evs[64];
    while (!rc && !L.stop) {
        uint64_t t = now_ns();
        run_timers(&L, t);
        int timeout = arm_timer(&L, t);
        /* Polling through the lead: let a process this loop has just woken (a write wakes its
         * reader, often on this CPU) run first, or it waits until the polling ends. */
        if (timeout == 0)
            sched_yield();
        int n = epoll_wait(L.ep, evs, 64, timeout);
        if (n < 0 && errno != EINTR) {
            fprintf(stderr, "fbwire-link: epoll_wait: %s\n", strerror(errno));
            rc = -1;
        }
        uint64_t now = now_ns();
        for (int i = 0; i < n; i++) {
            end *e = evs[i].data.ptr;
            /* A connection closed earlier in this batch has left its ends in evs[]: skip them. */
            if (!e->c || !e->c->dead)
                dispatch(&L, e, evs[i].events, now);
        }
        bury(&L);
    }
    sum->lead_ns = fbl_lead_ns(&L.lead);
    teardown(&L);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    sum->user_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
    sum->sys_s = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
    sum->wall_s = (double)(now_ns() - L.t_start) / 1e9;
    return rc;
}
