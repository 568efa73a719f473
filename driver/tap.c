/* SPDX-License-Identifier: MIT */
/* tap.c - in-process socket tap decoded by fbw_dec (see tap.h).
 *
 * The socket calls reach it from interpose.c (connect, send, recv and close of the whole process
 * pass through there), to which the first arming subscribes (SOCKET_HOOKS below): a socket
 * connected while the thread is armed is adopted, the bytes of each call on it are fed to its
 * tap, a close lets go of it. Process-wide state, which calls without a context cannot avoid:
 * a table from descriptor to tap, allocated once (pthread_once) on first arming; the table never
 * shrinks or moves. Each table slot is written by the thread that owns the socket (connect,
 * close, free) and read by the socket calls; the decoder of a tap is only ever fed by the thread
 * using its connection. Arming is per thread (_Thread_local).
 *
 * In session mode the socket calls only copy the bytes and their time into a pending log; they
 * are decoded when the accounting asks (sbdrv_tap_stats and friends), after sbreport.c has read the
 * thread's CPU clock for the operation. So the client CPU charged to fbclient holds a memcpy per
 * socket call, not our decoder. The handshake tap decodes at once: it must know when to let go. */
#include "tap.h"

#include "dec.h"
#include "interpose.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define MAX_ARMED 4           /* sockets one attach may try (address fallbacks) */
#define MIN_FDS 1024u
#define MAX_FDS (1u << 20)
#define MAX_PENDING ((size_t)64 * 1024 * 1024) /* past this, decode in the wrapper */

/* One socket call's bytes in the pending log: header, then n bytes, padded to 8. */
typedef struct chunk {
    uint64_t ts_ns;
    uint32_t n;
    uint32_t from_client;
} chunk;

struct sbdrv_tap {
    int fd;                   /* -1 once closed or let go */
    int adopted_fd;           /* the socket it watched, kept after letting go */
    int closed;               /* the socket was closed (a failed attempt, or detached) */
    int mode;
    int release;              /* handshake over: let go after this call */
    fbw_dec *dec;
    fbw_stats sock;           /* the socket's own count (fbw_stats_turn), from the first byte */
    fbw_turn turn;
    fbw_stats view;           /* what sbdrv_tap_stats returns for an encrypted session */
    sbdrv_rep_facts facts;
    unsigned char *pending;   /* chunks not decoded yet (session mode) */
    size_t npending, cap;
};

typedef struct armed {
    int on, mode, n;
    sbdrv_tap *taps[MAX_ARMED];
} armed;

static _Thread_local armed ARM;
static _Atomic(sbdrv_tap *) *_Atomic FDS;
static _Atomic size_t NFDS;
static pthread_once_t TABLE_ONCE = PTHREAD_ONCE_INIT;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---------------------------------------------------------------- descriptor table */

static _Atomic(sbdrv_tap *) *table(size_t *n)
{
    *n = atomic_load_explicit(&NFDS, memory_order_acquire);
    return atomic_load_explicit(&FDS, memory_order_acquire);
}

/* What the socket calls do here (interpose.h), subscribed with the table. */
static void on_connected(int fd);
static sbdrv_tap *lookup(int fd);
static void feed(sbdrv_tap *t, int from_client, const void *p, size_t n);
static void on_closing(sbdrv_tap *t);
static const sbdrv_ip_socket_hooks SOCKET_HOOKS = {on_connected, lookup, feed, on_closing};

static void init_table(void)
{
    struct rlimit rl;
    size_t want = MIN_FDS;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur > want)
        want = rl.rlim_cur > MAX_FDS ? MAX_FDS : (size_t)rl.rlim_cur;
    _Atomic(sbdrv_tap *) *t = calloc(want, sizeof *t);
    if (!t)
        return;
    atomic_store_explicit(&NFDS, want, memory_order_release);
    atomic_store_explicit(&FDS, t, memory_order_release);
    sbdrv_ip_set_socket_hooks(&SOCKET_HOOKS); /* from now on the socket calls come here */
}

static int ensure_table(void)
{
    size_t n;
    pthread_once(&TABLE_ONCE, init_table);
    return table(&n) != NULL;
}

static sbdrv_tap *lookup(int fd)
{
    size_t n;
    _Atomic(sbdrv_tap *) *t = table(&n);
    if (!t || fd < 0 || (size_t)fd >= n)
        return NULL;
    return atomic_load_explicit(&t[fd], memory_order_acquire);
}

/* Remove t from the table if it is still there. */
static void let_go(sbdrv_tap *t)
{
    size_t n;
    _Atomic(sbdrv_tap *) *tbl = table(&n);
    if (tbl && t->fd >= 0 && (size_t)t->fd < n) {
        sbdrv_tap *expect = t;
        atomic_compare_exchange_strong(&tbl[t->fd], &expect, NULL);
    }
    t->fd = -1;
}

/* ---------------------------------------------------------------- decoding */

static void copy_bytes(char *dst, size_t cap, fbw_bytes b)
{
    snprintf(dst, cap, "%.*s", (int)(b.n < cap ? b.n : cap - 1), (const char *)b.p);
}

/* What the handshake tells about the connection. */
static void on_packet(void *arg, int from_client, const fbw_pkt *p, size_t bytes, uint64_t ts)
{
    sbdrv_tap *t = arg;
    (void)bytes;
    (void)ts;
    if (from_client) {
        if (p->op == FBW_OP_CRYPT) {
            copy_bytes(t->facts.wire_crypt, sizeof t->facts.wire_crypt, p->u.crypt.plugin);
            if (t->mode == SBDRV_TAP_HANDSHAKE)
                t->release = 1; /* nothing readable follows */
        }
        return;
    }
    switch (p->op) {
    case FBW_OP_ACCEPT: case FBW_OP_COND_ACCEPT: case FBW_OP_ACCEPT_DATA:
        t->facts.protocol = fbw_protocol_from_wire(p->u.acpt.version);
        t->facts.lazy_send = (p->u.acpt.type & FBW_PTYPE_MASK) == FBW_PTYPE_LAZY_SEND;
        t->facts.compression = (p->u.acpt.type & FBW_PFLAG_COMPRESS) && t->facts.protocol >= 13;
        if (p->op != FBW_OP_ACCEPT && p->u.acpt.plugin.n)
            copy_bytes(t->facts.auth_plugin, sizeof t->facts.auth_plugin, p->u.acpt.plugin);
        if (!t->facts.wire_crypt[0])
            snprintf(t->facts.wire_crypt, sizeof t->facts.wire_crypt, "none");
        break;
    case FBW_OP_CONT_AUTH:
        if (p->u.auth.name.n)
            copy_bytes(t->facts.auth_plugin, sizeof t->facts.auth_plugin, p->u.auth.name);
        break;
    default: {
        int32_t req = fbw_dec_answering(t->dec);
        if (t->mode == SBDRV_TAP_HANDSHAKE && (req == FBW_OP_ATTACH || req == FBW_OP_CREATE))
            t->release = 1;
        break;
    }
    }
}

static void decode(sbdrv_tap *t, int from_client, const void *p, size_t n, uint64_t ts)
{
    fbw_stats_turn(&t->sock, &t->turn, from_client, n, ts);
    (void)fbw_dec_feed(t->dec, from_client, p, n, ts); /* errors stay in the decoder */
    if (t->release || (t->mode == SBDRV_TAP_HANDSHAKE && fbw_dec_error(t->dec)->code != FBW_OK))
        let_go(t);
}

/* Decode the pending log, in the order the calls were made. */
static void drain(sbdrv_tap *t)
{
    size_t off = 0;
    while (off + sizeof(chunk) <= t->npending) {
        chunk h;
        memcpy(&h, t->pending + off, sizeof h);
        off += sizeof h;
        decode(t, (int)h.from_client, t->pending + off, h.n, h.ts_ns);
        off += ((size_t)h.n + 7u) & ~(size_t)7u;
    }
    t->npending = 0;
}

/* Append to the pending log; 0 when it cannot (then the caller decodes at once). */
static int defer(sbdrv_tap *t, int from_client, const void *p, size_t n, uint64_t ts)
{
    size_t need = sizeof(chunk) + ((n + 7u) & ~(size_t)7u);
    if (n > UINT32_MAX || t->npending + need > MAX_PENDING)
        return 0;
    if (t->npending + need > t->cap) {
        size_t cap = t->cap ? t->cap : 4096;
        while (cap < t->npending + need)
            cap *= 2;
        unsigned char *q = realloc(t->pending, cap);
        if (!q)
            return 0;
        t->pending = q;
        t->cap = cap;
    }
    chunk h = {ts, (uint32_t)n, (uint32_t)from_client};
    memcpy(t->pending + t->npending, &h, sizeof h);
    memcpy(t->pending + t->npending + sizeof h, p, n);
    t->npending += need;
    return 1;
}

static void feed(sbdrv_tap *t, int from_client, const void *p, size_t n)
{
    uint64_t ts = now_ns();
    if (t->mode == SBDRV_TAP_SESSION && defer(t, from_client, p, n, ts))
        return;
    drain(t); /* keep the order */
    decode(t, from_client, p, n, ts);
}

static sbdrv_tap *tap_new(int fd, int mode)
{
    sbdrv_tap *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->fd = fd;
    t->adopted_fd = fd;
    t->mode = mode;
    sbdrv_rep_facts_init(&t->facts);
    if (fbw_dec_new(on_packet, t, &t->dec) != FBW_OK) {
        free(t);
        return NULL;
    }
    return t;
}

void sbdrv_tap_free(sbdrv_tap *t)
{
    if (!t)
        return;
    let_go(t);
    fbw_dec_free(t->dec);
    free(t->pending);
    free(t);
}

/* ---------------------------------------------------------------- arming */

void sbdrv_tap_arm(int mode)
{
    if (!ensure_table())
        return;
    ARM.on = 1;
    ARM.mode = mode;
}

sbdrv_tap *sbdrv_tap_disarm(void)
{
    sbdrv_tap *keep = NULL;
    for (int i = ARM.n - 1; i >= 0; i--) {
        if (keep == NULL && !ARM.taps[i]->closed)
            keep = ARM.taps[i];
        else
            sbdrv_tap_free(ARM.taps[i]);
    }
    ARM.on = 0;
    ARM.n = 0;
    return keep;
}

/* A socket connected while armed. */
static void adopt(int fd)
{
    size_t n;
    _Atomic(sbdrv_tap *) *tbl = table(&n);
    if (!tbl || fd < 0 || (size_t)fd >= n)
        return;
    if (ARM.n == MAX_ARMED) { /* drop the oldest attempt */
        sbdrv_tap_free(ARM.taps[0]);
        memmove(ARM.taps, ARM.taps + 1, (MAX_ARMED - 1) * sizeof ARM.taps[0]);
        ARM.n--;
    }
    sbdrv_tap *t = tap_new(fd, ARM.mode);
    if (!t)
        return;
    ARM.taps[ARM.n++] = t;
    atomic_store_explicit(&tbl[fd], t, memory_order_release);
}

/* Past op_crypt the decoder sees ciphertext and stops; the socket's count goes on. It is used
 * for the whole session (counted from the first byte, so differences between two calls stay
 * right): round trips and waits by the decoder's own rule, socket calls as packets, socket bytes
 * as bytes, no op codes. */
const fbw_stats *sbdrv_tap_stats(sbdrv_tap *t)
{
    drain(t);
    if (!sbdrv_tap_socket_level(t))
        return fbw_dec_stats(t->dec);
    fbw_stats_reset(&t->view);
    t->view.round_trips = t->sock.round_trips;
    t->view.waits = t->sock.waits;
    t->view.wait_ns = t->sock.wait_ns;
    t->view.packets_sent = t->view.wire_chunks_sent = t->sock.wire_chunks_sent;
    t->view.packets_received = t->view.wire_chunks_received = t->sock.wire_chunks_received;
    t->view.bytes_sent = t->view.wire_bytes_sent = t->sock.wire_bytes_sent;
    t->view.bytes_received = t->view.wire_bytes_received = t->sock.wire_bytes_received;
    return &t->view;
}

int sbdrv_tap_socket_level(sbdrv_tap *t)
{
    return fbw_dec_error(t->dec)->code == FBW_E_CRYPT;
}

void sbdrv_tap_facts(sbdrv_tap *t, sbdrv_rep_facts *f)
{
    drain(t);
    f->protocol = t->facts.protocol;
    f->lazy_send = t->facts.lazy_send;
    f->compression = t->facts.compression;
    snprintf(f->auth_plugin, sizeof f->auth_plugin, "%s", t->facts.auth_plugin);
    snprintf(f->wire_crypt, sizeof f->wire_crypt, "%s", t->facts.wire_crypt);
    const fbw_err *e = fbw_dec_error(t->dec);
    /* Past the handshake an encrypted session cannot be decoded: expected, and the session tap
     * then counts at the socket (sbdrv_tap_stats). */
    if (t->mode == SBDRV_TAP_SESSION && e->code == FBW_E_CRYPT)
        f->socket_level = 1;
    else if (e->code != FBW_OK && e->code != FBW_E_CRYPT)
        snprintf(f->note, sizeof f->note, "tap decoder stopped: %.130s", e->msg);
}

/* ---------------------------------------------------------------- the socket calls (interpose.c) */

static void on_connected(int fd)
{
    if (ARM.on)
        adopt(fd);
}

static void on_closing(sbdrv_tap *t)
{
    let_go(t);
    t->closed = 1;
}

int sbdrv_tap_fd(const sbdrv_tap *t) { return t ? t->adopted_fd : -1; }
