/* SPDX-License-Identifier: MIT */
/* line.c - one direction of fbwire-link: rate, delay, order, stall and slice stages (line.h). */
#include "line.h"

#include <stdlib.h>
#include <string.h>

#define NS_PER_S 1000000000ull

uint64_t fbl_rand(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* len*8*1e9/rate without overflow for rate <= 1e10 (opts.c caps it): whole seconds first, then
 * the rest, whose remainder is kept so that a stream of chunks sums to the exact total. */
uint64_t fbl_tx_ns(uint64_t len, uint64_t rate_bps, uint64_t *rem)
{
    uint64_t bits = len * 8;
    uint64_t secs = bits / rate_bps;
    uint64_t part = (bits % rate_bps) * NS_PER_S + *rem;
    *rem = part % rate_bps;
    return secs * NS_PER_S + part / rate_bps;
}

void fbl_line_init(fbl_line *l, const fbl_line_cfg *cfg, uint64_t seed)
{
    memset(l, 0, sizeof *l);
    l->cfg = *cfg;
    l->rng = seed;
}

void fbl_line_free(fbl_line *l)
{
    while (l->head) {
        fbl_chunk *c = l->head;
        l->head = c->next;
        free(c);
    }
    l->tail = NULL;
    l->queued = 0;
}

/* The rate stage: when the link has sent the last of `len` bytes accepted at `now`. An idle link
 * holds at most burst_bytes of credit, so the backlog clock never falls further behind `now` than
 * the time the burst takes at the rate. */
static uint64_t rate_leave(fbl_line *l, uint64_t now, size_t len)
{
    if (!l->cfg.rate_bps)
        return now;
    uint64_t unused = 0;
    uint64_t credit_ns = fbl_tx_ns(l->cfg.burst_bytes, l->cfg.rate_bps, &unused);
    uint64_t start = now > credit_ns ? now - credit_ns : 0;
    if (l->free_at > start)
        start = l->free_at;
    l->free_at = start + fbl_tx_ns(len, l->cfg.rate_bps, &l->rate_rem);
    return l->free_at > now ? l->free_at : now;
}

/* The delay and order stages. */
static uint64_t due_time(fbl_line *l, uint64_t leave)
{
    uint64_t extra = l->cfg.jitter_ns ? fbl_rand(&l->rng) % (l->cfg.jitter_ns + 1) : 0;
    uint64_t due = leave + l->cfg.delay_ns + extra;
    if (due < l->last_due)
        due = l->last_due;
    l->last_due = due;
    return due;
}

static void append(fbl_line *l, fbl_chunk *c)
{
    c->next = NULL;
    if (l->tail)
        l->tail->next = c;
    else
        l->head = c;
    l->tail = c;
}

int fbl_line_push(fbl_line *l, uint64_t now, const void *buf, size_t len)
{
    if (!len)
        return 0;
    fbl_chunk *c = malloc(sizeof *c + len);
    if (!c)
        return -1;
    memcpy(c->data, buf, len);
    c->len = len;
    c->off = 0;
    c->kind = FBL_DATA;
    c->arg = 0;
    c->rule = -1;
    c->due = due_time(l, rate_leave(l, now, len));
    append(l, c);
    l->queued += len;
    l->bytes_in += len;
    l->chunks_in++;
    return 0;
}

int fbl_line_push_mark(fbl_line *l, uint64_t now, fbl_kind kind, uint64_t arg, int rule)
{
    fbl_chunk *c = malloc(sizeof *c);
    if (!c)
        return -1;
    c->len = c->off = 0;
    c->kind = kind;
    c->arg = arg;
    c->rule = rule;
    /* No jitter and no bucket: a mark is no bytes on the wire, it follows what is ahead of it. */
    uint64_t due = now + l->cfg.delay_ns;
    c->due = due > l->last_due ? due : l->last_due;
    l->last_due = c->due;
    append(l, c);
    return 0;
}

uint64_t fbl_line_next_due(const fbl_line *l)
{
    if (!l->head)
        return FBL_NEVER;
    return l->head->due > l->stall_until ? l->head->due : l->stall_until;
}

fbl_kind fbl_line_peek(fbl_line *l, uint64_t now, const unsigned char **buf, size_t *len,
                       uint64_t *arg, int *rule)
{
    fbl_chunk *c = l->head;
    if (!c || fbl_line_next_due(l) > now)
        return FBL_NONE;
    *rule = c->rule;
    *arg = c->arg;
    if (c->kind != FBL_DATA) {
        fbl_kind k = c->kind;
        if (k == FBL_STALL)
            l->stall_until = c->arg == FBL_NEVER ? FBL_NEVER : now + c->arg;
        l->head = c->next;
        if (!l->head)
            l->tail = NULL;
        free(c);
        return k;
    }
    size_t n = c->len - c->off;
    if (l->cfg.slice && n > l->cfg.slice)
        n = l->cfg.slice;
    *buf = c->data + c->off;
    *len = n;
    return FBL_DATA;
}

void fbl_line_consume(fbl_line *l, size_t n)
{
    fbl_chunk *c = l->head;
    if (!c || c->kind != FBL_DATA || n == 0)
        return;
    if (n > c->len - c->off)
        n = c->len - c->off;
    c->off += n;
    l->queued -= n;
    l->bytes_out += n;
    l->writes_out++;
    if (c->off == c->len) {
        l->head = c->next;
        if (!l->head)
            l->tail = NULL;
        free(c);
    }
}

void fbl_line_release(fbl_line *l)
{
    l->stall_until = 0;
}
