/* SPDX-License-Identifier: MIT */
/* report.c - per-class round-trip accounting and totals (see report.h); the rendering is in
 * report_text.c and report_json.c (report_int.h lists the parts). */
#include "report_int.h"

#include "ops.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define STMT_CLASSES FBW_CLS_PREPARE /* classes below this one are statement executions */

struct fbw_rep_conn {
    fbw_rep_acc acc;       /* acc.ops unused here: done + last is the per-op total */
    /* The source's cumulative stats at the previous charge. Its totals (the fields after the
     * per-op table) are always current; the ~4 KB per-op table is copied only every
     * OPS_COPY_EVERY charges and at fbw_rep_conn_snapshot: copying it on every call was a
     * measurable part of what the report costs (docs/report.md). */
    fbw_stats last;
    fbw_stats now;         /* scratch of fbw_rep_conn_now */
    unsigned since_copy;   /* charges since last's per-op table was copied */
    fbw_stats done;        /* stats of earlier attachments (before a restart) */
    fbw_rep_live mine;     /* owner's running totals, published through `live` */
    _Atomic uint64_t live_rt, live_wait, live_exec;
};

#define OPS_COPY_EVERY 256u
#define TOTALS_AT offsetof(fbw_stats, packets_sent) /* the totals follow the per-op table */
_Static_assert(offsetof(fbw_stats, op) == 0 && TOTALS_AT == sizeof(((fbw_stats *)0)->op),
               "fbw_stats: the per-op table first, then only totals (copied per charge)");

struct fbw_rep {
    pthread_mutex_t lock;  /* guards the list, never taken on the statement path */
    fbw_rep_conn **conns;
    unsigned n, cap;
};

int fbw_rep_new(fbw_rep **out)
{
    fbw_rep *r = calloc(1, sizeof *r);
    if (!r)
        return FBW_E_NOMEM;
    pthread_mutex_init(&r->lock, NULL);
    *out = r;
    return FBW_OK;
}

void fbw_rep_free(fbw_rep *r)
{
    if (!r)
        return;
    for (unsigned i = 0; i < r->n; i++)
        free(r->conns[i]);
    free(r->conns);
    pthread_mutex_destroy(&r->lock);
    free(r);
}

int fbw_rep_conn_new(fbw_rep *r, fbw_rep_conn **out)
{
    int rc = FBW_OK;
    fbw_rep_conn *c = calloc(1, sizeof *c);
    if (!c)
        return FBW_E_NOMEM;
    pthread_mutex_lock(&r->lock);
    if (r->n == r->cap) {
        unsigned cap = r->cap ? r->cap * 2 : 16;
        fbw_rep_conn **n = realloc(r->conns, cap * sizeof *n);
        if (n) {
            r->conns = n;
            r->cap = cap;
        } else {
            rc = FBW_E_NOMEM;
        }
    }
    if (rc == FBW_OK)
        r->conns[r->n++] = c;
    pthread_mutex_unlock(&r->lock);
    if (rc != FBW_OK)
        free(c);
    else
        *out = c;
    return rc;
}

fbw_stats *fbw_rep_conn_now(fbw_rep_conn *c) { return &c->now; }

unsigned fbw_rep_bucket(uint64_t ns)
{
    if (ns < 8)
        return (unsigned)ns;
    unsigned oct = 63u - (unsigned)__builtin_clzll(ns); /* >= 3 */
    unsigned sub = (unsigned)(ns >> (oct - 3)) & 7u;
    unsigned b = 8u + (oct - 3u) * 8u + sub;
    return b < FBW_REP_HIST ? b : FBW_REP_HIST - 1;
}

uint64_t fbw_rep_bucket_upper(unsigned b)
{
    if (b < 8)
        return b;
    unsigned oct = (b - 8u) / 8u + 3u, sub = (b - 8u) % 8u;
    return (((uint64_t)8 + sub + 1) << (oct - 3)) - 1;
}

uint64_t fbw_rep_percentile(const fbw_rep_cls *c, double p)
{
    uint64_t total = 0;
    for (unsigned b = 0; b < FBW_REP_HIST; b++)
        total += c->hist[b];
    if (total == 0)
        return 0;
    double want = p / 100.0 * (double)total;
    uint64_t seen = 0;
    for (unsigned b = 0; b < FBW_REP_HIST; b++) {
        seen += c->hist[b];
        if ((double)seen >= want && seen > 0)
            return fbw_rep_bucket_upper(b);
    }
    return fbw_rep_bucket_upper(FBW_REP_HIST - 1);
}

/* Charge a - last to cls; a NULL: nothing new (no traffic). */
static void charge(fbw_rep_conn *c, const fbw_stats *a, int cls, fbw_cpu_how how, uint64_t cpu_ns,
                   int execution)
{
    if (cls < 0 || cls >= FBW_CLS_COUNT)
        cls = FBW_CLS_OTHER;
    const fbw_stats *b = &c->last;
    if (!a)
        a = b;
    fbw_rep_cls *k = &c->acc.cls[cls];
    uint64_t rt = a->round_trips - b->round_trips, wait = a->wait_ns - b->wait_ns;
    k->executions += (uint64_t)execution;
    k->round_trips += rt;
    k->packets_sent += a->packets_sent - b->packets_sent;
    k->packets_received += a->packets_received - b->packets_received;
    k->bytes_sent += a->bytes_sent - b->bytes_sent;
    k->bytes_received += a->bytes_received - b->bytes_received;
    k->wait_ns += wait;
    fbw_cpu_add(&k->cpu, how, cpu_ns);
    if (execution)
        k->hist[fbw_rep_bucket(wait)]++;
    if (a != b) {
        memcpy((char *)&c->last + TOTALS_AT, (const char *)a + TOTALS_AT, sizeof *a - TOTALS_AT);
        if (++c->since_copy >= OPS_COPY_EVERY) {
            memcpy(c->last.op, a->op, sizeof a->op);
            c->since_copy = 0;
        }
    }
    if (cls < STMT_CLASSES) {
        c->mine.round_trips += rt;
        c->mine.wait_ns += wait;
        c->mine.executions += (uint64_t)execution;
        atomic_store_explicit(&c->live_rt, c->mine.round_trips, memory_order_relaxed);
        atomic_store_explicit(&c->live_wait, c->mine.wait_ns, memory_order_relaxed);
        atomic_store_explicit(&c->live_exec, c->mine.executions, memory_order_relaxed);
    }
}

/* The scratch API copies in full each time, as before (tests, callers without a live source). */
static void charge_now(fbw_rep_conn *c, int cls, uint64_t cpu_ns, int execution)
{
    charge(c, &c->now, cls, FBW_CPU_READ, cpu_ns, execution);
    c->last = c->now;
    c->since_copy = 0;
}

void fbw_rep_conn_charge(fbw_rep_conn *c, int cls, uint64_t cpu_ns) { charge_now(c, cls, cpu_ns, 1); }

void fbw_rep_conn_charge_more(fbw_rep_conn *c, int cls, uint64_t cpu_ns)
{
    charge_now(c, cls, cpu_ns, 0);
}

void fbw_rep_conn_charge_src(fbw_rep_conn *c, const fbw_stats *src, int cls, int execution,
                             fbw_cpu_how how, uint64_t cpu_ns)
{
    charge(c, src, cls, how, cpu_ns, execution != 0);
}

void fbw_rep_conn_snapshot(fbw_rep_conn *c, const fbw_stats *src)
{
    if (src) {
        c->last = *src;
        c->since_copy = 0;
    }
}

void fbw_rep_conn_restart(fbw_rep_conn *c)
{
    fbw_stats_add(&c->done, &c->last);
    fbw_stats_reset(&c->last);
    fbw_stats_reset(&c->now); /* a charge without new stats then adds nothing */
    c->since_copy = 0;
}

void fbw_rep_merge(fbw_rep *r, fbw_rep_acc *out)
{
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&r->lock);
    for (unsigned i = 0; i < r->n; i++) {
        const fbw_rep_conn *c = r->conns[i];
        for (int k = 0; k < FBW_CLS_COUNT; k++) {
            const fbw_rep_cls *s = &c->acc.cls[k];
            fbw_rep_cls *d = &out->cls[k];
            d->executions += s->executions;
            d->round_trips += s->round_trips;
            d->packets_sent += s->packets_sent;
            d->packets_received += s->packets_received;
            d->bytes_sent += s->bytes_sent;
            d->bytes_received += s->bytes_received;
            d->wait_ns += s->wait_ns;
            fbw_cpu_sum(&d->cpu, &s->cpu);
            for (unsigned b = 0; b < FBW_REP_HIST; b++)
                d->hist[b] += s->hist[b];
        }
        fbw_stats_add(&out->ops, &c->done);
        fbw_stats_add(&out->ops, &c->last);
    }
    pthread_mutex_unlock(&r->lock);
    for (int k = 0; k < FBW_CLS_COUNT; k++) /* a ratio of sums: every connection's sample counts */
        out->cls[k].cpu_ns = fbw_cpu_estimate(&out->cls[k].cpu);
}

unsigned fbw_rep_connections(fbw_rep *r)
{
    pthread_mutex_lock(&r->lock);
    unsigned n = r->n;
    pthread_mutex_unlock(&r->lock);
    return n;
}

void fbw_rep_live_sum(fbw_rep *r, fbw_rep_live *out)
{
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&r->lock);
    for (unsigned i = 0; i < r->n; i++) {
        fbw_rep_conn *c = r->conns[i];
        out->round_trips += atomic_load_explicit(&c->live_rt, memory_order_relaxed);
        out->wait_ns += atomic_load_explicit(&c->live_wait, memory_order_relaxed);
        out->executions += atomic_load_explicit(&c->live_exec, memory_order_relaxed);
    }
    pthread_mutex_unlock(&r->lock);
}

void fbw_rep_facts_init(fbw_rep_facts *f)
{
    memset(f, 0, sizeof *f);
    f->compression = -1;
    f->lazy_send = -1;
}

/* ---------------------------------------------------------------- totals */

void fbw_rep_totals_of(const fbw_rep_acc *a, const fbw_rep_run *run, fbw_rep_totals *t)
{
    memset(t, 0, sizeof *t);
    for (int k = 0; k < FBW_CLS_COUNT; k++) {
        t->round_trips_all += a->cls[k].round_trips;
        if (k < STMT_CLASSES) {
            t->round_trips += a->cls[k].round_trips;
            t->executions += a->cls[k].executions;
            t->wait_ns += a->cls[k].wait_ns;
            t->cpu_ns += a->cls[k].cpu_ns;
            t->cpu_calls += fbw_cpu_calls(&a->cls[k].cpu);
            t->cpu_measured_calls += fbw_cpu_measured_calls(&a->cls[k].cpu);
        }
    }
    t->transactions = a->ops.op[FBW_OP_TRANSACTION].packets_sent;
    t->rt_per_event = ratio((double)t->round_trips, (double)run->events);
    t->rt_per_transaction = ratio((double)t->round_trips, (double)t->transactions);
    t->rt_per_second = ratio((double)t->round_trips, run->duration_s);
    t->wait_share = ratio((double)t->wait_ns / 1e9, run->duration_s * (run->threads ? run->threads : 1));
    t->tps = ratio((double)run->events, run->duration_s);
    t->qps = ratio((double)(run->reads + run->writes + run->other), run->duration_s);
    t->cpu_us_per_event = ratio((double)t->cpu_ns / 1e3, (double)run->events);
    t->cpu_us_per_execution = ratio((double)t->cpu_ns / 1e3, (double)t->executions);
    t->statements_per_round_trip = ratio((double)t->executions, (double)t->round_trips);
    if (run->server_cpu.available) {
        double us = (double)run->server_cpu.cpu_ns / 1e3;
        t->server_us_per_event = ratio(us, (double)run->events);
        t->server_us_per_execution = ratio(us, (double)t->executions);
    }
}
