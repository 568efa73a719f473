/* SPDX-License-Identifier: MIT */
/* tcp.c - per-connection TCP reassembly: in-order bytes per direction, out-of-order segments held
 * until the hole before them fills, retransmitted bytes trimmed, holes that never fill reported.
 * Sequence numbers compare modulo 2^32. */
#include "pcaptool.h"

#include <stdlib.h>
#include <string.h>

#define MAX_CONNS 65536            /* connections tracked in one capture */
#define MAX_HELD_BYTES (16u << 20) /* out-of-order bytes held per direction before giving up */
#define MAX_HELD_SEGS 4096

typedef struct held {
    struct held *next;
    uint32_t seq;
    size_t n;
    uint64_t ts_ns, frame;
    uint8_t data[];
} held;

typedef struct half {
    int seq_known;
    uint32_t next;   /* sequence number of the next byte to deliver */
    uint64_t offset; /* bytes delivered */
    held *held;      /* sorted by seq */
    size_t held_bytes, held_segs;
    int fin;
    int acked_known;
    uint32_t acked; /* highest sequence number the peer acknowledged */
} half;

typedef struct conn {
    int family;
    uint8_t caddr[16], saddr[16];
    uint16_t cport, sport;
    half h[2];  /* [1] client->server, [0] server->client */
    void *user; /* from sink.open; NULL: ignored connection */
    int open, broken;
} conn;

struct pcaptool_tcp {
    pcaptool_tcp_sink sink;
    uint16_t *ports;
    size_t nports;
    conn **conns;
    size_t nconns, cap;
};

static int seq_before(uint32_t a, uint32_t b)
{
    return (int32_t)(a - b) < 0;
}

static int is_port(const pcaptool_tcp *t, uint16_t p)
{
    for (size_t i = 0; i < t->nports; i++)
        if (t->ports[i] == p)
            return 1;
    return 0;
}

static void free_held(half *h)
{
    for (held *x = h->held, *n; x; x = n) {
        n = x->next;
        free(x);
    }
    h->held = NULL;
    h->held_bytes = h->held_segs = 0;
}

/* Which side of c the segment comes from: 1 client, 0 server, -1 another connection. */
static int side(const conn *c, const pcaptool_seg *s)
{
    size_t al = s->family == 6 ? 16 : 4;
    if (c->family != s->family)
        return -1;
    if (s->sport == c->cport && s->dport == c->sport && !memcmp(s->src, c->caddr, al) &&
        !memcmp(s->dst, c->saddr, al))
        return 1;
    if (s->sport == c->sport && s->dport == c->cport && !memcmp(s->src, c->saddr, al) &&
        !memcmp(s->dst, c->caddr, al))
        return 0;
    return -1;
}

/* Newest connection with this 4-tuple (port reuse makes older closed ones irrelevant). */
static conn *find(pcaptool_tcp *t, const pcaptool_seg *s, int *from_client)
{
    for (size_t i = t->nconns; i-- > 0;) {
        int d = side(t->conns[i], s);
        if (d >= 0) {
            *from_client = d;
            return t->conns[i];
        }
    }
    return NULL;
}

static void end_conn(pcaptool_tcp *t, conn *c, enum pcaptool_tcp_end how)
{
    if (!c->open)
        return;
    c->open = 0;
    if (c->user)
        t->sink.close(c->user, how);
    free_held(&c->h[0]);
    free_held(&c->h[1]);
}

static void break_conn(pcaptool_tcp *t, conn *c, const char *why)
{
    if (c->broken)
        return;
    c->broken = 1;
    if (c->user)
        t->sink.broken(c->user, why);
    free_held(&c->h[0]);
    free_held(&c->h[1]);
}

static conn *add_conn(pcaptool_tcp *t, const pcaptool_seg *s, int from_client, int saw_syn)
{
    if (t->nconns == MAX_CONNS)
        return NULL;
    if (t->nconns == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 16;
        conn **n = realloc(t->conns, cap * sizeof *n);
        if (!n)
            return NULL;
        t->conns = n;
        t->cap = cap;
    }
    conn *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    size_t al = s->family == 6 ? 16 : 4;
    c->family = s->family;
    memcpy(c->caddr, from_client ? s->src : s->dst, al);
    memcpy(c->saddr, from_client ? s->dst : s->src, al);
    c->cport = from_client ? s->sport : s->dport;
    c->sport = from_client ? s->dport : s->sport;
    c->open = 1;
    t->conns[t->nconns++] = c;
    char cl[64], sv[64];
    pcaptool_cap_endpoint(c->family, c->caddr, c->cport, cl, sizeof cl);
    pcaptool_cap_endpoint(c->family, c->saddr, c->sport, sv, sizeof sv);
    c->user = t->sink.open(t->sink.arg, cl, sv, saw_syn, s->frame);
    return c;
}

static void deliver(pcaptool_tcp *t, conn *c, int d, const uint8_t *p, size_t n, uint64_t ts,
                    uint64_t frame)
{
    half *h = &c->h[d];
    h->next += (uint32_t)n;
    h->offset += n;
    if (c->user && n)
        t->sink.data(c->user, d, p, n, ts, frame);
}

/* Deliver the part of [seq, seq+n) at or after h->next; returns 0 when it starts after a hole. */
static int take(pcaptool_tcp *t, conn *c, int d, uint32_t seq, const uint8_t *p, size_t n,
                uint64_t ts, uint64_t frame)
{
    half *h = &c->h[d];
    if (seq_before(h->next, seq))
        return 0;
    size_t skip = (size_t)(h->next - seq); /* retransmitted bytes already delivered */
    if (skip < n)
        deliver(t, c, d, p + skip, n - skip, ts, frame);
    return 1;
}

static void drain(pcaptool_tcp *t, conn *c, int d)
{
    half *h = &c->h[d];
    while (h->held && !c->broken && !seq_before(h->next, h->held->seq)) {
        held *x = h->held;
        h->held = x->next;
        h->held_bytes -= x->n;
        h->held_segs--;
        take(t, c, d, x->seq, x->data, x->n, x->ts_ns, x->frame);
        free(x);
    }
}

static void hold(pcaptool_tcp *t, conn *c, int d, const pcaptool_seg *s, size_t n)
{
    half *h = &c->h[d];
    /* The peer already acknowledged bytes before this segment that the capture never had: they
     * reached the peer, so no retransmission will fill the hole. */
    int lost = h->acked_known && seq_before(h->next, h->acked);
    if (lost || h->held_bytes + n > MAX_HELD_BYTES || h->held_segs >= MAX_HELD_SEGS) {
        char why[200];
        snprintf(why, sizeof why,
                 "gap in the %s stream after byte %llu (frame %llu): the capture lost packets",
                 d ? "client" : "server", (unsigned long long)h->offset,
                 (unsigned long long)s->frame);
        break_conn(t, c, why);
        return;
    }
    held *x = malloc(sizeof *x + n);
    if (!x) {
        break_conn(t, c, "out of memory holding out-of-order segments");
        return;
    }
    x->seq = s->seq;
    x->n = n;
    x->ts_ns = s->ts_ns;
    x->frame = s->frame;
    memcpy(x->data, s->data, n);
    held **pp = &h->held;
    while (*pp && !seq_before(s->seq, (*pp)->seq))
        pp = &(*pp)->next;
    x->next = *pp;
    *pp = x;
    h->held_bytes += n;
    h->held_segs++;
}

static void payload(pcaptool_tcp *t, conn *c, int d, const pcaptool_seg *s)
{
    half *h = &c->h[d];
    uint32_t seq = s->seq + ((s->flags & PCAPTOOL_TCP_SYN) ? 1u : 0u);
    if (!h->seq_known) { /* capture started mid-connection: take the stream from here */
        h->seq_known = 1;
        h->next = seq;
    }
    if (s->len) {
        pcaptool_seg copy = *s;
        copy.seq = seq;
        if (!take(t, c, d, seq, s->data, s->len, s->ts_ns, s->frame))
            hold(t, c, d, &copy, s->len);
        else
            drain(t, c, d);
    }
    if (!c->broken && s->wire_len > s->len) {
        char why[200];
        snprintf(
            why, sizeof why,
            "frame %llu was cut by the capture's snaplen (%zu of %zu payload bytes kept): the %s "
            "stream is lost after byte %llu",
            (unsigned long long)s->frame, s->len, s->wire_len, d ? "client" : "server",
            (unsigned long long)(h->offset));
        break_conn(t, c, why);
    }
}

void pcaptool_tcp_segment(pcaptool_tcp *t, const pcaptool_seg *s)
{
    int cs = is_port(t, s->sport), cd = is_port(t, s->dport);
    if (t->nports && !cs && !cd)
        return;
    int d = 0;
    conn *c = find(t, s, &d);
    int syn_only = (s->flags & (PCAPTOOL_TCP_SYN | PCAPTOOL_TCP_ACK)) == PCAPTOOL_TCP_SYN;
    if (syn_only && (!c || !c->open || d == 0)) {
        if (c && c->open) /* a new SYN on a live 4-tuple: the old connection is gone */
            end_conn(t, c, PCAPTOOL_TCP_END_CAPTURE);
        c = add_conn(t, s, 1, 1);
        d = 1;
    } else if (!c) {
        if (s->len == 0 && !(s->flags & PCAPTOOL_TCP_SYN))
            return; /* a bare ACK/FIN/RST of a connection the capture did not see start */
        /* No SYN seen: the side on a listed port is the server, else the lower port. */
        d = cd != cs ? cd : s->dport < s->sport;
        c = add_conn(t, s, d, 0);
    }
    if (!c || !c->open)
        return;
    half *h = &c->h[d];
    if (s->flags & PCAPTOOL_TCP_SYN) {
        if (!h->seq_known) {
            h->seq_known = 1;
            h->next = s->seq + 1;
        }
    }
    half *peer = &c->h[!d];
    if ((s->flags & PCAPTOOL_TCP_ACK) && peer->seq_known &&
        (!peer->acked_known || seq_before(peer->acked, s->ack))) {
        peer->acked_known = 1;
        peer->acked = s->ack;
    }
    if (!c->broken)
        payload(t, c, d, s);
    if (s->flags & PCAPTOOL_TCP_RST) {
        end_conn(t, c, PCAPTOOL_TCP_END_RST);
        return;
    }
    if (s->flags & PCAPTOOL_TCP_FIN)
        h->fin = 1;
    if (c->h[0].fin && c->h[1].fin && !c->h[0].held && !c->h[1].held)
        end_conn(t, c, PCAPTOOL_TCP_END_FIN);
}

void pcaptool_tcp_finish(pcaptool_tcp *t)
{
    for (size_t i = 0; i < t->nconns; i++) {
        conn *c = t->conns[i];
        if (!c->open)
            continue;
        for (int d = 1; d >= 0 && !c->broken; d--)
            if (c->h[d].held) {
                char why[200];
                snprintf(why, sizeof why,
                         "gap in the %s stream after byte %llu: %u bytes missing before frame %llu "
                         "(the capture lost packets)",
                         d ? "client" : "server", (unsigned long long)c->h[d].offset,
                         (unsigned)(c->h[d].held->seq - c->h[d].next),
                         (unsigned long long)c->h[d].held->frame);
                break_conn(t, c, why);
            }
        end_conn(t, c, (c->h[0].fin && c->h[1].fin) ? PCAPTOOL_TCP_END_FIN : PCAPTOOL_TCP_END_CAPTURE);
    }
}

int pcaptool_tcp_new(const pcaptool_tcp_sink *sink, const uint16_t *ports, size_t nports,
                     pcaptool_tcp **out)
{
    pcaptool_tcp *t = calloc(1, sizeof *t);
    if (!t)
        return FBW_E_NOMEM;
    t->sink = *sink;
    t->ports = malloc((nports ? nports : 1) * sizeof *t->ports);
    if (!t->ports) {
        free(t);
        return FBW_E_NOMEM;
    }
    memcpy(t->ports, ports, nports * sizeof *ports);
    t->nports = nports;
    *out = t;
    return FBW_OK;
}

void pcaptool_tcp_free(pcaptool_tcp *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->nconns; i++) {
        free_held(&t->conns[i]->h[0]);
        free_held(&t->conns[i]->h[1]);
        free(t->conns[i]);
    }
    free(t->conns);
    free(t->ports);
    free(t);
}
