/* SPDX-License-Identifier: MIT */
/* report.c - per-class round-trip accounting, totals and rendering (see report.h). */
#include "report.h"

#include "ops.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#ifdef FBW_HAVE_JANSSON
#include <jansson.h>
#endif

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

static double ratio(double a, double b) { return b > 0 ? a / b : 0.0; }

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

/* ---------------------------------------------------------------- text */

static const char *str(const char *s, const char *dflt) { return s && s[0] ? s : dflt; }

static const char *tri(int v) { return v < 0 ? "?" : v ? "on" : "off"; }

static void print_facts(FILE *f, const fbw_rep_run *run)
{
    const fbw_rep_facts *x = &run->facts;
    char proto[16] = "?";
    if (x->protocol > 0)
        snprintf(proto, sizeof proto, "%d", x->protocol);
    fprintf(f, "    connection:                          Firebird %s, protocol %s, auth %s, wire crypt %s,\n"
               "                                         compression %s, lazy send %s\n",
            str(x->server_version, "?"), proto, str(x->auth_plugin, "?"), str(x->wire_crypt, "?"),
            tri(x->compression), tri(x->lazy_send));
    if (x->note[0])
        fprintf(f, "    note:                                %s\n", x->note);
    if (x->socket_level)
        fprintf(f, "    note:                                wire crypt %s: the tap sees ciphertext, so round trips,\n"
                   "                                         packets (send/recv calls) and bytes are counted at the socket;\n"
                   "                                         op-level detail needs --%s-wire-crypt=disabled\n",
                str(x->wire_crypt, "?"), str(run->driver, "fbclient"));
}

static void print_classes(FILE *f, const fbw_rep_acc *a, int socket_level)
{
    fprintf(f, "\n    %-18s %10s %8s %9s %21s %12s %12s %12s\n", "statement class", "execs", "rt/exec",
            socket_level ? "calls/exec" : "pkts/exec", "bytes/exec out/in", "wait mean ms",
            "wait p95 ms", "cpu us/exec");
    fbw_rep_cls sum;
    memset(&sum, 0, sizeof sum);
    for (int k = 0; k < FBW_CLS_COUNT; k++) {
        const fbw_rep_cls *c = &a->cls[k];
        if (c->executions == 0)
            continue;
        double n = (double)c->executions;
        char bytes[32];
        snprintf(bytes, sizeof bytes, "%.0f / %.0f", (double)c->bytes_sent / n,
                 (double)c->bytes_received / n);
        char cpu[16] = "-"; /* a class none of whose calls was timed has no figure */
        if (fbw_cpu_measured_calls(&c->cpu) > 0 || fbw_cpu_calls(&c->cpu) == 0)
            snprintf(cpu, sizeof cpu, "%.2f", (double)c->cpu_ns / n / 1e3);
        fprintf(f, "    %-18s %10llu %8.3f %9.2f %21s %12.3f %12.3f %12s\n", fbw_class_label(k),
                (unsigned long long)c->executions, (double)c->round_trips / n,
                (double)(c->packets_sent + c->packets_received) / n, bytes,
                (double)c->wait_ns / n / 1e6, (double)fbw_rep_percentile(c, 95) / 1e6, cpu);
        sum.round_trips += c->round_trips;
        sum.packets_sent += c->packets_sent + c->packets_received;
        sum.bytes_sent += c->bytes_sent;
        sum.bytes_received += c->bytes_received;
    }
    fprintf(f, "    %-18s %10s %8llu %9llu %21s\n", "sum (all classes)",
            socket_level ? "rt, calls:" : "rt, pkts:",
            (unsigned long long)sum.round_trips, (unsigned long long)sum.packets_sent, "");
}

static void print_ops(FILE *f, const fbw_rep_acc *a, const fbw_rep_run *run)
{
    if (run->facts.socket_level) {
        fprintf(f, "\n    op codes:                            not available (encrypted session)\n");
        return;
    }
    fprintf(f, "\n    %-24s %11s %11s %12s %12s %11s\n", "op code", "pkts sent", "pkts recv",
            "bytes sent", "bytes recv", "sent/event");
    for (int op = 0; op <= FBW_OP_MAX; op++) {
        const fbw_op_stats *o = &a->ops.op[op];
        if (o->packets_sent == 0 && o->packets_received == 0)
            continue;
        char name[40];
        fprintf(f, "    %-24s %11llu %11llu %12llu %12llu %11.3f\n", fbw_op_name(op, name, sizeof name),
                (unsigned long long)o->packets_sent, (unsigned long long)o->packets_received,
                (unsigned long long)o->bytes_sent, (unsigned long long)o->bytes_received,
                ratio((double)o->packets_sent, (double)run->events));
    }
    fprintf(f, "    %-24s %11llu %11llu %12llu %12llu\n", "total",
            (unsigned long long)a->ops.packets_sent, (unsigned long long)a->ops.packets_received,
            (unsigned long long)a->ops.bytes_sent, (unsigned long long)a->ops.bytes_received);
}

static void print_server_cpu(FILE *f, const fbw_rep_run *run, const fbw_rep_totals *t)
{
    const fbw_rep_server_cpu *sc = &run->server_cpu;
    if (!sc->available) {
        fprintf(f, "    server CPU:                          not available (%s)\n",
                str(sc->why, "not measured"));
        return;
    }
    fprintf(f, "    server CPU:                          %.2f us per event, %.2f us per statement "
               "(pid %d, %d child processes)\n",
            t->server_us_per_event, t->server_us_per_execution, sc->pid, sc->children);
}

/* How the client CPU figures were taken, so an estimate never reads as a measurement. */
static void print_cpu_method(FILE *f, const fbw_rep_run *run, const fbw_rep_totals *t)
{
    if (t->cpu_measured_calls == t->cpu_calls)
        fprintf(f, "    client CPU taken:                    thread CPU clock around every call (%s)\n",
                str(run->cpu_method, "every-call"));
    else
        fprintf(f, "    client CPU taken:                    sampled: clock read around %llu of %llu calls\n"
                   "                                         (1 in %u at random), the rest estimated per class\n",
                (unsigned long long)t->cpu_measured_calls, (unsigned long long)t->cpu_calls,
                run->cpu_sample_every ? run->cpu_sample_every : FBW_CPU_SAMPLE_EVERY);
}

void fbw_rep_print(FILE *f, const fbw_rep_acc *a, const fbw_rep_run *run)
{
    fbw_rep_totals t;
    fbw_rep_totals_of(a, run, &t);
    fprintf(f, "Firebird wire statistics (%s driver, autocommit %s):\n", str(run->driver, "?"),
            str(run->autocommit, "?"));
    fprintf(f, "    pipeline:                            %s\n", str(run->pipeline, "off"));
    print_facts(f, run);
    if (run->facts.unmeasured) { /* zeros here would read as measured figures */
        fprintf(f, "    round trips, packets, bytes:         not available (no wire statistics for this run)\n"
                   "    client CPU in the driver:            %.2f us per event, %.2f us per statement\n",
                t.cpu_us_per_event, t.cpu_us_per_execution);
        print_cpu_method(f, run, &t);
        fputc('\n', f);
        return;
    }
    fprintf(f, "    round trips per event:               %.3f\n", t.rt_per_event);
    if (run->facts.socket_level) /* op_transaction is inside the ciphertext */
        fprintf(f, "    round trips per transaction:         not available (encrypted session)\n");
    else
        fprintf(f, "    round trips per transaction:         %.3f (%llu transactions started)\n",
                t.rt_per_transaction, (unsigned long long)t.transactions);
    fprintf(f, "    round trips per second:              %.2f\n", t.rt_per_second);
    fprintf(f, "    time waiting on the server:          %.1f%% of thread time\n", t.wait_share * 100);
    fprintf(f, "    round trips (statements / all):      %llu / %llu\n",
            (unsigned long long)t.round_trips, (unsigned long long)t.round_trips_all);
    fprintf(f, "    client CPU in the driver:            %.2f us per event, %.2f us per statement\n",
            t.cpu_us_per_event, t.cpu_us_per_execution);
    print_cpu_method(f, run, &t);
    fprintf(f, "    statements per round trip:           %.2f\n", t.statements_per_round_trip);
    print_server_cpu(f, run, &t);
    print_classes(f, a, run->facts.socket_level);
    print_ops(f, a, run);
    fputc('\n', f);
}

void fbw_rep_interval_line(char *buf, size_t cap, const char *driver, const fbw_rep_interval *iv,
                           unsigned threads)
{
    double secs = iv->seconds > 0 ? iv->seconds : 1;
    snprintf(buf, cap, "[ %.0fs ] %s wire: rt/event: %.3f rt/s: %.2f wait: %.1f%%", iv->t,
             str(driver, "?"), ratio((double)iv->round_trips, (double)iv->events),
             (double)iv->round_trips / secs,
             100.0 * ratio((double)iv->wait_ns / 1e9, secs * (threads ? threads : 1)));
}

/* ---------------------------------------------------------------- JSON */

#ifdef FBW_HAVE_JANSSON

static json_t *jstr(const char *s) { return s ? json_string(s) : json_null(); }

/* True when the option name (the text before '=') mentions a password. */
static int secret_option(const char *a, size_t name_len)
{
    static const char word[] = "password";
    for (size_t i = 0; i + sizeof word - 1 <= name_len; i++)
        if (strncasecmp(a + i, word, sizeof word - 1) == 0)
            return 1;
    return 0;
}

/* Option text as given, with the value of any password option replaced by "***". */
static json_t *options_json(const fbw_rep_run *run)
{
    json_t *arr = json_array();
    for (int i = 0; arr && i < run->argc; i++) {
        const char *a = run->argv[i];
        const char *eq = a ? strchr(a, '=') : NULL;
        if (a && eq && secret_option(a, (size_t)(eq - a)))
            json_array_append_new(arr, json_sprintf("%.*s=***", (int)(eq - a), a));
        else if (a)
            json_array_append_new(arr, json_string(a));
    }
    return arr;
}

static json_t *class_json(int k, const fbw_rep_cls *c)
{
    double n = (double)c->executions;
    json_t *o = json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:f, s:f, s:f, s:f, s:f}",
                     "class", fbw_class_id(k), "label", fbw_class_label(k),
                     "executions", (json_int_t)c->executions, "round_trips", (json_int_t)c->round_trips,
                     "packets_sent", (json_int_t)c->packets_sent,
                     "packets_received", (json_int_t)c->packets_received,
                     "bytes_sent", (json_int_t)c->bytes_sent, "bytes_received", (json_int_t)c->bytes_received,
                     "wait_ns", (json_int_t)c->wait_ns, "cpu_ns", (json_int_t)c->cpu_ns,
                     "round_trips_per_execution", ratio((double)c->round_trips, n),
                     "packets_per_execution", ratio((double)(c->packets_sent + c->packets_received), n),
                     "bytes_per_execution", ratio((double)(c->bytes_sent + c->bytes_received), n),
                     "wait_mean_ms", ratio((double)c->wait_ns / 1e6, n),
                     "wait_p95_ms", (double)fbw_rep_percentile(c, 95) / 1e6,
                     "cpu_us_per_execution", ratio((double)c->cpu_ns / 1e3, n));
    json_object_set_new(o, "cpu_calls", json_integer((json_int_t)fbw_cpu_calls(&c->cpu)));
    json_object_set_new(o, "cpu_measured_calls",
                        json_integer((json_int_t)fbw_cpu_measured_calls(&c->cpu)));
    return o;
}

static json_t *ops_json(const fbw_rep_acc *a)
{
    json_t *arr = json_array();
    for (int op = 0; op <= FBW_OP_MAX; op++) {
        const fbw_op_stats *o = &a->ops.op[op];
        if (o->packets_sent == 0 && o->packets_received == 0)
            continue;
        char name[40];
        json_array_append_new(arr, json_pack("{s:i, s:s, s:I, s:I, s:I, s:I}", "op", op, "name",
                                             fbw_op_name(op, name, sizeof name),
                                             "packets_sent", (json_int_t)o->packets_sent,
                                             "packets_received", (json_int_t)o->packets_received,
                                             "bytes_sent", (json_int_t)o->bytes_sent,
                                             "bytes_received", (json_int_t)o->bytes_received));
    }
    return arr;
}

static json_t *intervals_json(const fbw_rep_run *run)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < run->nintervals; i++) {
        const fbw_rep_interval *iv = &run->intervals[i];
        json_array_append_new(arr, json_pack("{s:f, s:f, s:I, s:I, s:I, s:I, s:f}", "t", iv->t,
                                             "seconds", iv->seconds, "events", (json_int_t)iv->events,
                                             "round_trips", (json_int_t)iv->round_trips,
                                             "wait_ns", (json_int_t)iv->wait_ns,
                                             "executions", (json_int_t)iv->executions,
                                             "round_trips_per_event",
                                             ratio((double)iv->round_trips, (double)iv->events)));
    }
    return arr;
}

static json_t *tri_json(int v) { return v < 0 ? json_null() : json_boolean(v); }

/* Server CPU: figures when measured, else available false and the reason (never 0 CPU). */
static json_t *server_cpu_json(const fbw_rep_run *run, const fbw_rep_totals *t)
{
    const fbw_rep_server_cpu *sc = &run->server_cpu;
    if (!sc->available)
        return json_pack("{s:b, s:s}", "available", 0, "why", str(sc->why, "not measured"));
    return json_pack("{s:b, s:i, s:i, s:I, s:f, s:f}", "available", 1, "pid", sc->pid,
                     "children", sc->children, "cpu_ns", (json_int_t)sc->cpu_ns,
                     "us_per_event", t->server_us_per_event,
                     "us_per_execution", t->server_us_per_execution);
}

static json_t *document(const fbw_rep_acc *a, const fbw_rep_run *run)
{
    fbw_rep_totals t;
    fbw_rep_totals_of(a, run, &t);
    const fbw_rep_facts *x = &run->facts;
    json_t *classes = json_array();
    for (int k = 0; k < FBW_CLS_COUNT; k++)
        if (a->cls[k].executions)
            json_array_append_new(classes, class_json(k, &a->cls[k]));
    json_t *runj = json_pack("{s:o, s:o, s:o, s:o, s:i, s:f, s:I, s:{s:I, s:I, s:I, s:I}, s:I, s:I, s:f, s:f}",
                             "sysbench_version", jstr(run->sysbench_version), "script", jstr(run->script),
                             "command", jstr(run->command), "options", options_json(run),
                             "threads", (int)run->threads, "duration_s", run->duration_s,
                             "events", (json_int_t)run->events, "queries",
                             "read", (json_int_t)run->reads, "write", (json_int_t)run->writes,
                             "other", (json_int_t)run->other,
                             "total", (json_int_t)(run->reads + run->writes + run->other),
                             "errors", (json_int_t)run->errors, "reconnects", (json_int_t)run->reconnects,
                             "tps", t.tps, "qps", t.qps);
    json_t *conn = json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:s}",
                             "server_version", x->server_version[0] ? json_string(x->server_version) : json_null(),
                             "protocol", x->protocol > 0 ? json_integer(x->protocol) : json_null(),
                             "auth_plugin", x->auth_plugin[0] ? json_string(x->auth_plugin) : json_null(),
                             "wire_crypt", x->wire_crypt[0] ? json_string(x->wire_crypt) : json_null(),
                             "compression", tri_json(x->compression), "lazy_send", tri_json(x->lazy_send),
                             "autocommit", jstr(run->autocommit), "isolation", jstr(run->isolation),
                             "pipeline", json_string(str(run->pipeline, "off")),
                             "note", x->note[0] ? json_string(x->note) : json_null(),
                             "counted_at", x->unmeasured ? "none" : x->socket_level ? "socket" : "packets");
    int sock = x->socket_level; /* op_transaction is inside the ciphertext then */
    json_t *tot = json_pack("{s:I, s:I, s:I, s:I, s:I, s:o, s:f, s:o, s:f, s:f, s:f, s:f, s:I, s:I, s:I, s:I, s:I, s:I}",
                            "round_trips", (json_int_t)t.round_trips,
                            "round_trips_all", (json_int_t)t.round_trips_all,
                            "executions", (json_int_t)t.executions, "wait_ns", (json_int_t)t.wait_ns,
                            "cpu_ns", (json_int_t)t.cpu_ns,
                            "transactions", sock ? json_null() : json_integer((json_int_t)t.transactions),
                            "round_trips_per_event", t.rt_per_event,
                            "round_trips_per_transaction",
                            sock ? json_null() : json_real(t.rt_per_transaction),
                            "round_trips_per_second", t.rt_per_second, "wait_share", t.wait_share,
                            "cpu_us_per_event", t.cpu_us_per_event,
                            "cpu_us_per_execution", t.cpu_us_per_execution,
                            "packets_sent", (json_int_t)a->ops.packets_sent,
                            "packets_received", (json_int_t)a->ops.packets_received,
                            "bytes_sent", (json_int_t)a->ops.bytes_sent,
                            "bytes_received", (json_int_t)a->ops.bytes_received,
                            "wire_bytes_sent", (json_int_t)a->ops.wire_bytes_sent,
                            "wire_bytes_received", (json_int_t)a->ops.wire_bytes_received);
    json_object_set_new(tot, "statements_per_round_trip", json_real(t.statements_per_round_trip));
    json_object_set_new(tot, "cpu_method", json_string(str(run->cpu_method, "every-call")));
    json_object_set_new(tot, "cpu_sample_every",
                        json_integer(run->cpu_sample_every ? run->cpu_sample_every : 1));
    json_object_set_new(tot, "cpu_calls", json_integer((json_int_t)t.cpu_calls));
    json_object_set_new(tot, "cpu_measured_calls", json_integer((json_int_t)t.cpu_measured_calls));
    return json_pack("{s:s, s:o, s:o, s:o, s:o, s:f, s:f, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
                     "format", "fbwire-report/1", "driver", jstr(run->driver),
                     "server_version", x->server_version[0] ? json_string(x->server_version) : json_null(),
                     "protocol", x->protocol > 0 ? json_integer(x->protocol) : json_null(),
                     "round_trips_per_event", x->unmeasured ? json_null() : json_real(t.rt_per_event),
                     "tps", t.tps, "qps", t.qps,
                     "run", runj, "connection", conn, "totals", tot,
                     "server_cpu", server_cpu_json(run, &t), "classes", classes,
                     "ops", ops_json(a), "intervals", intervals_json(run));
}

int fbw_rep_write_json(const char *path, const fbw_rep_acc *a, const fbw_rep_run *run, fbw_err *err)
{
    json_t *doc = document(a, run);
    if (!doc)
        return fbw_err_set(err, FBW_E_NOMEM, "report: cannot build the JSON document");
    int rc = json_dump_file(doc, path, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
    json_decref(doc);
    return rc == 0 ? FBW_OK : fbw_err_set(err, FBW_E_IO, "report: cannot write %s", path);
}

#else

int fbw_rep_write_json(const char *path, const fbw_rep_acc *a, const fbw_rep_run *run, fbw_err *err)
{
    (void)a;
    (void)run;
    return fbw_err_set(err, FBW_E_UNSUPPORTED, "report: built without jansson, cannot write %s", path);
}

#endif
