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

#define STMT_CLASSES SBDRV_CLS_PREPARE /* classes below this one are statement executions */

struct sbdrv_rep_conn {
    sbdrv_rep_acc acc;       /* acc.ops unused here: done + last is the per-op total */
    /* The source's cumulative stats at the previous charge. Its totals (the fields after the
     * per-op table) are always current; the ~4 KB per-op table is copied only every
     * OPS_COPY_EVERY charges and at sbdrv_rep_conn_snapshot: copying it on every call was a
     * measurable part of what the report costs (docs/report.md). */
    fbw_stats last;
    fbw_stats now;         /* scratch of sbdrv_rep_conn_now */
    unsigned since_copy;   /* charges since last's per-op table was copied */
    fbw_stats done;        /* stats of earlier attachments (before a restart) */
    sbdrv_rep_live mine;     /* owner's running totals, published through `live` */
    _Atomic uint64_t live_rt, live_wait, live_exec;
};

#define OPS_COPY_EVERY 256u
#define TOTALS_AT offsetof(fbw_stats, packets_sent) /* the totals follow the per-op table */
_Static_assert(offsetof(fbw_stats, op) == 0 && TOTALS_AT == sizeof(((fbw_stats *)0)->op),
               "fbw_stats: the per-op table first, then only totals (copied per charge)");

struct sbdrv_rep {
    pthread_mutex_t lock;  /* guards the list, never taken on the statement path */
    sbdrv_rep_conn **conns;
    unsigned n, cap;
};

int sbdrv_rep_new(sbdrv_rep **out)
{
    sbdrv_rep *r = calloc(1, sizeof *r);
    if (!r)
        return FBW_E_NOMEM;
    pthread_mutex_init(&r->lock, NULL);
    *out = r;
    return FBW_OK;
}

void sbdrv_rep_free(sbdrv_rep *r)
{
    if (!r)
        return;
    for (unsigned i = 0; i < r->n; i++)
        free(r->conns[i]);
    free(r->conns);
    pthread_mutex_destroy(&r->lock);
    free(r);
}

int sbdrv_rep_conn_new(sbdrv_rep *r, sbdrv_rep_conn **out)
{
    int rc = FBW_OK;
    sbdrv_rep_conn *c = calloc(1, sizeof *c);
    if (!c)
        return FBW_E_NOMEM;
    pthread_mutex_lock(&r->lock);
    if (r->n == r->cap) {
        unsigned cap = r->cap ? r->cap * 2 : 16;
        sbdrv_rep_conn **n = realloc(r->conns, cap * sizeof *n);
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

fbw_stats *sbdrv_rep_conn_now(sbdrv_rep_conn *c) { return &c->now; }

unsigned sbdrv_rep_bucket(uint64_t ns)
{
    if (ns < 8)
        return (unsigned)ns;
    unsigned oct = 63u - (unsigned)__builtin_clzll(ns); /* >= 3 */
    unsigned sub = (unsigned)(ns >> (oct - 3)) & 7u;
    unsigned b = 8u + (oct - 3u) * 8u + sub;
    return b < SBDRV_REP_HIST ? b : SBDRV_REP_HIST - 1;
}

uint64_t sbdrv_rep_bucket_upper(unsigned b)
{
    if (b < 8)
        return b;
    unsigned oct = (b - 8u) / 8u + 3u, sub = (b - 8u) % 8u;
    return (((uint64_t)8 + sub + 1) << (oct - 3)) - 1;
}

uint64_t sbdrv_rep_percentile(const sbdrv_rep_cls *c, double p)
{
    uint64_t total = 0;
    for (unsigned b = 0; b < SBDRV_REP_HIST; b++)
        total += c->hist[b];
    if (total == 0)
        return 0;
    double want = p / 100.0 * (double)total;
    uint64_t seen = 0;
    for (unsigned b = 0; b < SBDRV_REP_HIST; b++) {
        seen += c->hist[b];
        if ((double)seen >= want && seen > 0)
            return sbdrv_rep_bucket_upper(b);
    }
    return sbdrv_rep_bucket_upper(SBDRV_REP_HIST - 1);
}

/* Charge a - last to cls; a NULL: nothing new (no traffic). */
static void charge(sbdrv_rep_conn *c, const fbw_stats *a, int cls, sbdrv_cpu_how how, uint64_t cpu_ns,
                   int execution)
{
    if (cls < 0 || cls >= SBDRV_CLS_COUNT)
        cls = SBDRV_CLS_OTHER;
    const fbw_stats *b = &c->last;
    if (!a)
        a = b;
    sbdrv_rep_cls *k = &c->acc.cls[cls];
    uint64_t rt = a->round_trips - b->round_trips, wait = a->wait_ns - b->wait_ns;
    k->executions += (uint64_t)execution;
    k->round_trips += rt;
    k->packets_sent += a->packets_sent - b->packets_sent;
    k->packets_received += a->packets_received - b->packets_received;
    k->bytes_sent += a->bytes_sent - b->bytes_sent;
    k->bytes_received += a->bytes_received - b->bytes_received;
    k->wait_ns += wait;
    sbdrv_cpu_add(&k->cpu, how, cpu_ns);
    if (execution)
        k->hist[sbdrv_rep_bucket(wait)]++;
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
static void charge_now(sbdrv_rep_conn *c, int cls, uint64_t cpu_ns, int execution)
{
    charge(c, &c->now, cls, SBDRV_CPU_READ, cpu_ns, execution);
    c->last = c->now;
    c->since_copy = 0;
}

void sbdrv_rep_conn_charge(sbdrv_rep_conn *c, int cls, uint64_t cpu_ns) { charge_now(c, cls, cpu_ns, 1); }

void sbdrv_rep_conn_charge_more(sbdrv_rep_conn *c, int cls, uint64_t cpu_ns)
{
    charge_now(c, cls, cpu_ns, 0);
}

void sbdrv_rep_conn_charge_src(sbdrv_rep_conn *c, const fbw_stats *src, int cls, int execution,
                             sbdrv_cpu_how how, uint64_t cpu_ns)
{
    charge(c, src, cls, how, cpu_ns, execution != 0);
}

void sbdrv_rep_conn_snapshot(sbdrv_rep_conn *c, const fbw_stats *src)
{
    if (src) {
        c->last = *src;
        c->since_copy = 0;
    }
}

void sbdrv_rep_conn_restart(sbdrv_rep_conn *c)
{
    fbw_stats_add(&c->done, &c->last);
    fbw_stats_reset(&c->last);
    fbw_stats_reset(&c->now); /* a charge without new stats then adds nothing */
    c->since_copy = 0;
}

void sbdrv_rep_merge(sbdrv_rep *r, sbdrv_rep_acc *out)
{
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&r->lock);
    for (unsigned i = 0; i < r->n; i++) {
        const sbdrv_rep_conn *c = r->conns[i];
        for (int k = 0; k < SBDRV_CLS_COUNT; k++) {
            const sbdrv_rep_cls *s = &c->acc.cls[k];
            sbdrv_rep_cls *d = &out->cls[k];
            d->executions += s->executions;
            d->round_trips += s->round_trips;
            d->packets_sent += s->packets_sent;
            d->packets_received += s->packets_received;
            d->bytes_sent += s->bytes_sent;
            d->bytes_received += s->bytes_received;
            d->wait_ns += s->wait_ns;
            sbdrv_cpu_sum(&d->cpu, &s->cpu);
            for (unsigned b = 0; b < SBDRV_REP_HIST; b++)
                d->hist[b] += s->hist[b];
        }
        fbw_stats_add(&out->ops, &c->done);
        fbw_stats_add(&out->ops, &c->last);
    }
    pthread_mutex_unlock(&r->lock);
    for (int k = 0; k < SBDRV_CLS_COUNT; k++) /* a ratio of sums: every connection's sample counts */
        out->cls[k].cpu_ns = sbdrv_cpu_estimate(&out->cls[k].cpu);
}

unsigned sbdrv_rep_connections(sbdrv_rep *r)
{
    pthread_mutex_lock(&r->lock);
    unsigned n = r->n;
    pthread_mutex_unlock(&r->lock);
    return n;
}

void sbdrv_rep_live_sum(sbdrv_rep *r, sbdrv_rep_live *out)
{
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&r->lock);
    for (unsigned i = 0; i < r->n; i++) {
        sbdrv_rep_conn *c = r->conns[i];
        out->round_trips += atomic_load_explicit(&c->live_rt, memory_order_relaxed);
        out->wait_ns += atomic_load_explicit(&c->live_wait, memory_order_relaxed);
        out->executions += atomic_load_explicit(&c->live_exec, memory_order_relaxed);
    }
    pthread_mutex_unlock(&r->lock);
}

void sbdrv_rep_facts_init(sbdrv_rep_facts *f)
{
    memset(f, 0, sizeof *f);
    f->compression = -1;
    f->lazy_send = -1;
}

/* ---------------------------------------------------------------- totals */

void sbdrv_rep_totals_of(const sbdrv_rep_acc *a, const sbdrv_rep_run *run, sbdrv_rep_totals *t)
{
    memset(t, 0, sizeof *t);
    for (int k = 0; k < SBDRV_CLS_COUNT; k++) {
        t->round_trips_all += a->cls[k].round_trips;
        if (k < STMT_CLASSES) {
            t->round_trips += a->cls[k].round_trips;
            t->executions += a->cls[k].executions;
            t->wait_ns += a->cls[k].wait_ns;
            t->cpu_ns += a->cls[k].cpu_ns;
            t->cpu_calls += sbdrv_cpu_calls(&a->cls[k].cpu);
            t->cpu_measured_calls += sbdrv_cpu_measured_calls(&a->cls[k].cpu);
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
