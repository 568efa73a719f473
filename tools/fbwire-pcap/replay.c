/* SPDX-License-Identifier: MIT */
/* replay.c - list a captured workload, or replay it through fbwire's blocking client and compare
 * results, latency and round trips (replay.h). Each step is queued the way an fbwire application
 * would: a transaction start is only queued (it rides with the next request), frees are deferred,
 * prepare, execute, fetch, commit and execute immediate wait for their replies because the next
 * step needs them.
 *
 * Concurrency is a thread per replayed connection, each with its own blocking fbwire client: a
 * captured connection is a sequential client that waits for every reply, so a thread that sleeps
 * its think time and blocks on its round trips is that client, and the blocking client already
 * owns every timeout. An event loop would need the same per-connection state machine plus timers,
 * for no gain at the tens to hundreds of connections a capture holds. Each thread takes its steps
 * from its queue (stream.h: the reader thread decodes the capture meanwhile) and writes only its
 * own rconn, read after it is joined; the fingerprint table is shared under a mutex, the progress
 * counters are atomic. Results and latency are counted as each execution ends, so nothing here
 * grows with the number of steps. Blob reads, op_exec_immediate2 and info requests run in
 * replay_ops.c on the same running state (replay_run.h). */
#include "replay.h"

#include "blob.h"
#include "stream.h"
#include "client.h"
#include "fpstats.h"
#include "stmt.h"
#include "value.h"
#include "workload.h"
#include "replay_run.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct kind_count {
    uint64_t steps, failed, round_trips;
} kind_count;

typedef struct failure {
    size_t step; /* 1-based */
    int kind;
    int stmt, tx;
    char message[FBW_ERR_MSG_MAX];
    char sqlstate[6];
} failure;

/* A result difference, kept for the report (text: the first MAX_DIFFS_SHOWN of a connection). */
typedef struct diff {
    size_t step;
    int stmt;
    int kind;             /* execute, execute immediate (with messages), blob_read */
    size_t read_exec;     /* blob_read: where its id came from */
    uint32_t read_row;
    uint16_t read_col;
    char *sql;
    fbw_result cap, rep;
} diff;

/* One captured connection: its workload (--list) and, after a replay, what happened. A replay
 * takes its steps from the streaming reader (stream.h) through its queue; a fan-out copy
 * (--connections) shares the captured one's steps (wl points to the captured one's workload, which
 * keeps only the counts of ops not replayed by then). */
typedef struct rconn {
    fbw_workload w;
    const fbw_workload *wl;
    fbw_stream_src src;   /* captured ones: what the reader feeds */
    fbw_stepq q;          /* its steps */
    int q_ready;
    uint64_t t_first, t_last, t_detach; /* capture times, from the validation pass */
    uint64_t compared, matched, different;
    diff *diffs;
    size_t ndiffs, diffs_cap, more_diffs;
    int id;               /* captured connection id */
    int copy;             /* 0 the first replay of it, 1.. the fan-out copies */
    int seen;
    int run;              /* to be replayed */
    atomic_int finished;  /* its replay thread is done */
    pthread_t thread;
    struct fbw_replay *rp;
    int replayed;         /* connected and ran its steps */
    char *not_run;        /* why it was not replayed (or stopped early), else NULL */
    fbw_stats stats;      /* the replay's, connect to detach */
    kind_count kinds[FBW_STEP_KINDS];
    failure *fail;
    size_t nfail, fail_cap;
    size_t more_fail;     /* failures past MAX_FAILURES_KEPT: counted, not kept */
} rconn;

struct fbw_replay {
    fbw_replay_opts o;
    rconn *c; /* by connection id - 1 */
    size_t n;
    rconn **jobs; /* the replayed connections: captured ones, then fan-out copies */
    size_t njobs;
    atomic_int nomem;
    uint64_t cap_t0, cap_t1;  /* capture time of the first and last packet of the replayed ones */
    uint64_t start_ns;        /* monotonic clock when the replay started */
    uint64_t wall_ns;         /* replay wall time */
    atomic_ulong steps_done, steps_failed;
    atomic_int open_conns, done_conns;
    fbw_stream st;            /* the reader */
    fbw_fpstats *f;           /* latency per fingerprint, filled as executions end */
    pthread_mutex_t f_mu;
};

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Sleep until the monotonic clock reads `until` (nanosleep, restarted after signals). */
static void sleep_until(uint64_t until)
{
    for (uint64_t t = now_ns(); t < until; t = now_ns()) {
        struct timespec ts = {(time_t)((until - t) / 1000000000u), (long)((until - t) % 1000000000u)};
        nanosleep(&ts, NULL);
    }
}

/* ---- text helpers ---- */

/* Text output goes into fbw_bufs (base/buf.h); an append that runs out of memory loses its text. */
#define put(b, s) ((void)fbw_buf_puts((b), (s)))
#define putf(b, ...) ((void)fbw_buf_printf((b), __VA_ARGS__))

static void quote(fbw_buf *b, const void *p, size_t n)
{
    fbw_pcap_quote(b, p, n, 0);
}

static void quote_cstr(fbw_buf *b, const char *s)
{
    if (s)
        quote(b, s, strlen(s));
    else
        put(b, "null");
}

static void flush(fbw_replay *rp, fbw_buf *b)
{
    if (fbw_buf_avail(b))
        fwrite(fbw_buf_head(b), 1, fbw_buf_avail(b), rp->o.out);
    fbw_buf_free(b);
    fbw_buf_init(b);
}

static char *dup_str(fbw_replay *rp, const char *s)
{
    char *d = strdup(s);
    if (!d)
        atomic_store(&rp->nomem, 1);
    return d;
}

/* ---- collecting the workloads ---- */

int fbw_replay_new(const fbw_replay_opts *o, fbw_replay **out)
{
    fbw_replay *rp = calloc(1, sizeof *rp);
    if (!rp)
        return FBW_E_NOMEM;
    rp->o = *o;
    if (pthread_mutex_init(&rp->f_mu, NULL)) {
        free(rp);
        return FBW_E_NOMEM;
    }
    *out = rp;
    return FBW_OK;
}

void fbw_replay_free(fbw_replay *rp)
{
    if (!rp)
        return;
    for (size_t i = 0; i < rp->njobs; i++) {
        rconn *c = rp->jobs[i];
        if (c->q_ready)
            fbw_stepq_destroy(&c->q);
        for (size_t k = 0; k < c->ndiffs; k++)
            free(c->diffs[k].sql);
        free(c->diffs);
        if (c->copy) {
            free(c->not_run);
            free(c->fail);
            free(c);
        }
    }
    free(rp->jobs);
    free(rp->st.src);
    free(rp->st.all);
    for (size_t i = 0; i < rp->n; i++) {
        fbw_workload_free(&rp->c[i].w);
        fbw_workload_free(&rp->c[i].src.w);
        free(rp->c[i].src.q);
        free(rp->c[i].not_run);
        free(rp->c[i].fail);
    }
    free(rp->c);
    fbw_fpstats_free(rp->f);
    pthread_mutex_destroy(&rp->f_mu);
    free(rp);
}

void fbw_replay_source(fbw_replay *rp, const char *file, const fbw_pcap_keys *keys,
                       const uint16_t *ports, size_t nports, int explicit_ports)
{
    rp->o.file = file;
    rp->o.keys = keys;
    rp->o.ports = ports;
    rp->o.nports = nports;
    rp->o.explicit_ports = explicit_ports;
}

static rconn *conn_at(fbw_replay *rp, int id)
{
    if (id < 1)
        return NULL;
    if ((size_t)id > rp->n) {
        rconn *c = realloc(rp->c, (size_t)id * sizeof *c);
        if (!c) {
            atomic_store(&rp->nomem, 1);
            return NULL;
        }
        memset(c + rp->n, 0, ((size_t)id - rp->n) * sizeof *c);
        for (size_t i = rp->n; i < (size_t)id; i++)
            fbw_workload_init(&c[i].w);
        rp->c = c;
        rp->n = (size_t)id;
    }
    return &rp->c[id - 1];
}

void fbw_replay_tap(void *arg, int conn_id, const struct fbw_dec *d, int from_client,
                    const struct fbw_pkt *p, uint64_t ts_ns)
{
    fbw_replay *rp = arg;
    if (rp->o.connection && conn_id != rp->o.connection)
        return;
    rconn *c = conn_at(rp, conn_id);
    if (!c)
        return;
    c->seen = 1;
    if (rp->o.list) {
        fbw_workload_packet(&c->w, d, from_client, p, ts_ns);
        return;
    }
    /* The validation pass of a replay: only what planning needs (the workload is streamed). */
    if (!c->t_first)
        c->t_first = ts_ns;
    c->t_last = ts_ns;
    if (from_client && (p->op == FBW_OP_DETACH || p->op == FBW_OP_DISCONNECT) && !c->t_detach)
        c->t_detach = ts_ns;
    c->src.packets++;
}

/* ---- --list ---- */

static int quoted_type(uint16_t type)
{
    switch (type) {
    case FBW_SQL_SHORT: case FBW_SQL_LONG: case FBW_SQL_INT64: case FBW_SQL_INT128:
    case FBW_SQL_FLOAT: case FBW_SQL_DOUBLE: case FBW_SQL_D_FLOAT: case FBW_SQL_DEC16:
    case FBW_SQL_DEC34: case FBW_SQL_BOOLEAN:
        return 0;
    default:
        return 1;
    }
}

/* Parameters in canonical text: numbers and booleans bare, everything else quoted, NULL. */
static void params_text(fbw_buf *b, const fbw_step *s)
{
    put(b, " params=(");
    for (uint16_t i = 0; i < s->nparams; i++) {
        const fbw_param *pa = &s->params[i];
        put(b, i ? ", " : "");
        if (pa->is_null || !pa->text)
            put(b, "NULL");
        else if (quoted_type(pa->col.type))
            quote(b, pa->text, pa->len);
        else
            fbw_buf_append(b, pa->text, pa->len);
    }
    put(b, ")");
}

static void hex(fbw_buf *b, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        putf(b, "%02x", p[i]);
}

static void step_text(fbw_buf *b, size_t i, const fbw_step *s)
{
    putf(b, "%5zu %s", i + 1, fbw_step_name(s->kind));
    if (s->stmt)
        putf(b, " s%d", s->stmt);
    if (s->tx)
        putf(b, " t%d", s->tx);
    switch (s->kind) {
    case FBW_STEP_START:
        put(b, " tpb=");
        if (s->len)
            hex(b, s->data, s->len);
        else
            put(b, "default");
        break;
    case FBW_STEP_PREPARE:
    case FBW_STEP_IMMEDIATE:
        put(b, " ");
        quote(b, s->data, s->len);
        break;
    case FBW_STEP_EXECUTE:
        if (s->nparams)
            params_text(b, s);
        break;
    case FBW_STEP_FETCH:
        putf(b, " op_fetch=%" PRIu32, s->fetches);
        break;
    case FBW_STEP_BLOB:
        putf(b, " bytes=%zu%s", s->len, s->cancelled ? " cancelled" : "");
        break;
    case FBW_STEP_BLOB_READ:
        if (s->read_exec)
            putf(b, " from step %zu row %" PRIu32 " col %u", s->read_exec, s->read_row + 1,
                 s->read_col + 1u);
        putf(b, " requests=%zu bytes=%" PRId64 "%s", s->nacts, s->result.rows,
             s->result.eof ? " (to its end)" : "");
        break;
    case FBW_STEP_INFO_SQL: case FBW_STEP_INFO_DATABASE: case FBW_STEP_INFO_TRANSACTION:
        put(b, " items=");
        hex(b, s->data, s->len);
        putf(b, " buffer=%" PRIu32, s->info_buflen);
        break;
    default:
        break;
    }
    if (s->kind == FBW_STEP_IMMEDIATE && s->imm2) {
        if (s->nparams)
            params_text(b, s);
        putf(b, " output=%u", s->out_n);
    }
    if (s->problem) {
        put(b, " [not replayable: ");
        put(b, s->problem);
        put(b, "]");
    }
    put(b, "\n");
}

static void step_json(fbw_buf *b, size_t i, const fbw_step *s)
{
    putf(b, "{\"step\":%zu,\"kind\":\"%s\",\"stmt\":%d,\"tx\":%d,\"packet\":%" PRIu64, i + 1,
         fbw_step_name(s->kind), s->stmt, s->tx, s->packet);
    if (s->kind == FBW_STEP_START) {
        put(b, ",\"tpb\":\"");
        hex(b, s->data, s->len);
        put(b, "\"");
    } else if (s->kind == FBW_STEP_PREPARE || s->kind == FBW_STEP_IMMEDIATE) {
        put(b, ",\"sql\":");
        quote(b, s->data, s->len);
    } else if (s->kind == FBW_STEP_EXECUTE) {
        put(b, ",\"params\":[");
        for (uint16_t k = 0; k < s->nparams; k++) {
            put(b, k ? "," : "");
            if (s->params[k].is_null || !s->params[k].text)
                put(b, "null");
            else
                quote(b, s->params[k].text, s->params[k].len);
        }
        put(b, "]");
    } else if (s->kind == FBW_STEP_FETCH) {
        putf(b, ",\"op_fetch\":%" PRIu32, s->fetches);
    } else if (s->kind == FBW_STEP_BLOB) {
        putf(b, ",\"bytes\":%zu,\"cancelled\":%s", s->len, s->cancelled ? "true" : "false");
    } else if (s->kind == FBW_STEP_BLOB_READ) {
        putf(b, ",\"from_step\":%zu,\"row\":%" PRIu32 ",\"col\":%u,\"requests\":%zu,\"bytes\":%" PRId64
                ",\"to_end\":%s",
             s->read_exec, s->read_row + 1, s->read_col + 1u, s->nacts, s->result.rows,
             s->result.eof ? "true" : "false");
    } else if (s->kind >= FBW_STEP_INFO_SQL && s->kind <= FBW_STEP_INFO_TRANSACTION) {
        put(b, ",\"items\":\"");
        hex(b, s->data, s->len);
        putf(b, "\",\"buffer\":%" PRIu32, s->info_buflen);
    }
    if (s->kind == FBW_STEP_IMMEDIATE && s->imm2) {
        put(b, ",\"params\":[");
        for (uint16_t k = 0; k < s->nparams; k++) {
            put(b, k ? "," : "");
            if (s->params[k].is_null || !s->params[k].text)
                put(b, "null");
            else
                quote(b, s->params[k].text, s->params[k].len);
        }
        putf(b, "],\"output\":%u", s->out_n);
    }
    put(b, ",\"problem\":");
    quote_cstr(b, s->problem);
    put(b, "}");
}

static void not_replayed_text(fbw_buf *b, const fbw_workload *w)
{
    int first = 1;
    for (int op = 0; op <= FBW_OP_MAX; op++) {
        char nb[24];
        if (!w->not_replayed[op])
            continue;
        put(b, first ? "not replayed:" : ",");
        putf(b, " %s %" PRIu64, fbw_op_name(op, nb, sizeof nb), w->not_replayed[op]);
        first = 0;
    }
    if (!first)
        put(b, "\n");
    for (size_t i = 0; i < w->nrequests; i++)
        putf(b, "request compiled at packet %" PRIu64 " (%zu bytes of BLR, %u messages) [not "
                "replayable: %s]\n", w->requests[i].packet, w->requests[i].blr_bytes,
             w->requests[i].messages, FBW_WL_REQUEST_WHY);
    if (w->requests_total > w->nrequests)
        putf(b, "requests compiled and not listed: %zu [not replayable: %s]\n",
             w->requests_total - w->nrequests, FBW_WL_REQUEST_WHY);
}

static void not_replayed_json(fbw_buf *b, const fbw_workload *w)
{
    put(b, "\"blr_requests\":{\"compiled\":");
    putf(b, "%zu,\"why\":\"%s\",\"listed\":[", w->requests_total, FBW_WL_REQUEST_WHY);
    for (size_t i = 0; i < w->nrequests; i++)
        putf(b, "%s{\"packet\":%" PRIu64 ",\"blr_bytes\":%zu,\"messages\":%u}", i ? "," : "",
             w->requests[i].packet, w->requests[i].blr_bytes, w->requests[i].messages);
    put(b, "]},");
    put(b, "\"not_replayed\":{");
    int first = 1;
    for (int op = 0; op <= FBW_OP_MAX; op++) {
        char nb[24];
        if (!w->not_replayed[op])
            continue;
        putf(b, "%s\"%s\":%" PRIu64, first ? "" : ",", fbw_op_name(op, nb, sizeof nb),
             w->not_replayed[op]);
        first = 0;
    }
    put(b, "}");
}

/* ---- running the steps ---- */

#define MAX_FAILURES_KEPT 1000 /* per connection */

/* Room for one more element in an array of n used of *cap (doubling from 8): 0, or -1 when out of
 * memory (the array is as it was). */
static int grow_for_one(void **a, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return 0;
    size_t c = *cap ? *cap * 2 : 8;
    void *p = realloc(*a, c * size);
    if (!p)
        return -1;
    *a = p;
    *cap = c;
    return 0;
}

void rp_add_failure(run *r, size_t step, const fbw_step *s, const fbw_err *e,
                        const char *fallback)
{
    rconn *rc = r->rc;
    if (rc->nfail >= MAX_FAILURES_KEPT) { /* memory stays bounded when every step fails */
        rc->more_fail++;
        rc->kinds[s->kind].failed++;
        if (step == r->step)
            r->step_ok = 0;
        atomic_fetch_add(&r->rp->steps_failed, 1);
        return;
    }
    if (grow_for_one((void **)&rc->fail, &rc->fail_cap, rc->nfail, sizeof *rc->fail)) {
        atomic_store(&r->rp->nomem, 1);
        return;
    }
    failure *f = &rc->fail[rc->nfail++];
    memset(f, 0, sizeof *f);
    f->step = step;
    f->kind = s->kind;
    f->stmt = s->stmt;
    f->tx = s->tx > 0 && r->tx_orig && (size_t)s->tx <= r->ntx && r->tx_orig[s->tx]
                ? r->tx_orig[s->tx] : s->tx; /* the capture's numbering, not the small one */
    snprintf(f->message, sizeof f->message, "%s", e && e->msg[0] ? e->msg : fallback);
    if (e)
        snprintf(f->sqlstate, sizeof f->sqlstate, "%s", e->sqlstate);
    rc->kinds[s->kind].failed++;
    if (step == r->step)
        r->step_ok = 0;
    atomic_fetch_add(&r->rp->steps_failed, 1);
}

fbw_tx *rp_tx_of(run *r, int slot)
{
    return slot ? r->tx[slot] : NULL;
}

static int q_prepare(void *arg)
{
    run *r = arg;
    return fbw_stmt_prepare(r->st[r->s->stmt], rp_tx_of(r, r->s->tx), (const char *)r->s->data,
                            r->s->len);
}

static int q_execute(void *arg)
{
    run *r = arg;
    return fbw_stmt_execute(r->st[r->s->stmt], rp_tx_of(r, r->s->tx), r->vals,
                            r->s->count_info ? FBW_EXEC_COUNT : 0);
}

static int q_fetch(void *arg)
{
    run *r = arg;
    return fbw_stmt_fetch(r->st[r->s->stmt]);
}

static int q_close(void *arg)
{
    run *r = arg;
    return fbw_stmt_close(r->st[r->s->stmt]);
}

static int q_immediate(void *arg)
{
    run *r = arg;
    return fbw_exec_immediate(r->c, rp_tx_of(r, r->s->tx), (const char *)r->s->data, r->s->len,
                              &r->res);
}

static int q_end(void *arg)
{
    run *r = arg;
    fbw_tx *t = r->tx[r->s->tx];
    switch (r->s->kind) {
    case FBW_STEP_COMMIT: return fbw_tx_commit(t);
    case FBW_STEP_COMMIT_RETAINING: return fbw_tx_commit_retaining(t);
    case FBW_STEP_ROLLBACK: return fbw_tx_rollback(t);
    default: return fbw_tx_rollback_retaining(t);
    }
}

/* Run queue(r) and wait. A fatal error ends the connection's replay (err: the client's error);
 * any other code is fbwire refusing the request, and the object's own error (stmt, tx) says more. */
int rp_run_step(run *r, int (*queue)(void *arg), fbw_err *err)
{
    int rc = fbw_client_run(r->cl, queue, r);
    if (rc == FBW_OK)
        return FBW_OK;
    if (fbw_is_fatal(rc) || fbw_conn_get_state(r->c) == FBW_CS_FAILED) {
        r->broken = 1;
        *err = *fbw_client_error(r->cl);
    }
    if (!err->msg[0])
        fbw_err_set(err, rc, "fbwire could not queue the request (%s)", fbw_rc_name(rc));
    return rc;
}

/* The step failed if the request could not run or the server refused it: obj is the request's
 * own error record (statement, transaction, execute immediate result). */
void rp_check(run *r, size_t i, int rc, const fbw_err *e, const fbw_err *obj, const char *what)
{
    if (obj->code)
        rp_add_failure(r, i, r->s, obj, what);
    else if (rc)
        rp_add_failure(r, i, r->s, e, what);
}

int rp_need_stmt(run *r, size_t i, int prepared)
{
    const fbw_step *s = r->s;
    if (s->stmt && r->st[s->stmt] && (!prepared || fbw_stmt_prepared(r->st[s->stmt])))
        return 1;
    char msg[96];
    snprintf(msg, sizeof msg, "statement s%d is not %s in the replay", s->stmt,
             prepared ? "prepared" : "allocated");
    rp_add_failure(r, i, s, NULL, msg);
    return 0;
}

static void do_prepare(run *r, size_t i)
{
    const fbw_step *s = r->s;
    fbw_err e;
    fbw_err_clear(&e);
    if (!r->st[s->stmt] && fbw_stmt_new(r->c, &r->st[s->stmt], &e)) {
        rp_add_failure(r, i, s, &e, "cannot allocate a statement");
        return;
    }
    int rc = rp_run_step(r, q_prepare, &e);
    rp_check(r, i, rc, &e, fbw_stmt_error(r->st[s->stmt]), "prepare failed");
}

/* The captured values in the format the client sent them (its own BLR): the server converts them
 * to the parameters' types as it did for the client, so a TIMESTAMP bound to a DATE parameter
 * replays exactly. */
int rp_decode_as_sent(run *r, size_t i)
{
    const fbw_step *s = r->s;
    fbw_msgfmt f = {s->msg_cols, s->msg_n, s->msg_n};
    free(r->vals);
    r->vals = calloc(f.n ? f.n : 1, sizeof *r->vals);
    if (!r->vals) {
        rp_add_failure(r, i, s, NULL, "out of memory");
        return -1;
    }
    fbw_err e;
    fbw_err_clear(&e);
    fbw_bytes raw = {s->msg, s->msg_len};
    if (fbw_msg_decode(raw, &f, s->msg_protocol, r->vals, &e) != FBW_OK) {
        rp_add_failure(r, i, s, &e, "the captured parameters cannot be decoded");
        return -1;
    }
    for (uint16_t k = 0; s->blob_steps && k < f.n; k++) {
        size_t b = s->blob_steps[k];
        if (!b)
            continue;
        const fbw_value *id = NULL;
        for (size_t j = 0; j < r->nblob_ids && !id; j++)
            if (r->blob_ids[j].step == b)
                id = &r->blob_ids[j].id;
        if (!id) {
            char msg[96];
            snprintf(msg, sizeof msg, "parameter %u: its blob (step %zu) was not created", k + 1, b);
            rp_add_failure(r, i, s, NULL, msg);
            return -1;
        }
        r->vals[k].u.quad = id->u.quad; /* the replay's blob, same contents */
    }
    return 0;
}

static int bind_as_sent(run *r, size_t i)
{
    const fbw_step *s = r->s;
    fbw_msgfmt f = {s->msg_cols, s->msg_n, s->msg_n};
    if (rp_decode_as_sent(r, i))
        return -1;
    if (fbw_stmt_set_input(r->st[s->stmt], &f) != FBW_OK) {
        rp_add_failure(r, i, s, fbw_stmt_error(r->st[s->stmt]), "cannot bind as the client did");
        return -1;
    }
    return 0;
}

/* Without the client's message (no parameters): nothing to bind. */
static int bind_params(run *r, size_t i)
{
    const fbw_step *s = r->s;
    if (s->msg_cols && s->msg_n)
        return bind_as_sent(r, i);
    const fbw_msgfmt *in = fbw_stmt_input(r->st[s->stmt]);
    if (in->n != s->nparams) {
        char msg[128];
        snprintf(msg, sizeof msg,
                 "the capture sends %u parameters, the replayed statement takes %u", s->nparams,
                 in->n);
        rp_add_failure(r, i, s, NULL, msg);
        return -1;
    }
    free(r->vals);
    r->vals = calloc(in->n ? in->n : 1, sizeof *r->vals);
    if (!r->vals) {
        rp_add_failure(r, i, s, NULL, "out of memory");
        return -1;
    }
    for (uint16_t k = 0; k < in->n; k++) {
        const fbw_param *pa = &s->params[k];
        r->vals[k].type = in->cols[k].type;
        if (pa->is_null || !pa->text) {
            r->vals[k].is_null = 1;
            continue;
        }
        fbw_err e;
        fbw_err_clear(&e);
        if (fbw_value_from_text(&in->cols[k], pa->text, pa->len, &r->vals[k], &e)) {
            fbw_err_prefix(&e, "parameter %u", k + 1);
            rp_add_failure(r, i, s, &e, "bad parameter");
            return -1;
        }
    }
    return 0;
}

/* Count and hash the buffered rows into the result of the statement's current execution; a
 * cursor the capture did not read to its end is hashed only as far as the capture read it. */
static void take_rows(run *r, fbw_stmt *st, int slot)
{
    size_t e = r->slot_exec[slot];
    if (!e || !r->ex[slot] || r->ex[slot]->step != e)
        return;
    fbw_result *res = &r->ex[slot]->rep;
    const fbw_result *cap = &r->ex[slot]->cap;
    const fbw_msgfmt *out = fbw_stmt_output(st);
    fbw_value *v = calloc(out->n ? out->n : 1, sizeof *v);
    if (!v) {
        atomic_store(&r->rp->nomem, 1);
        return;
    }
    for (size_t k = 0; k < fbw_stmt_row_count(st); k++) {
        if (!cap->eof && cap->rows >= 0 && res->rows >= cap->rows)
            break;
        fbw_err err;
        res->rows = res->rows < 0 ? 1 : res->rows + 1;
        if (fbw_stmt_row(st, k, v, &err) == FBW_OK) {
            res->hash += fbw_row_hash(v, out);
            rp_keep_row_blobs(r, e, (uint32_t)(res->rows - 1), v, out);
        } else {
            res->unknown = 1;
        }
    }
    free(v);
}

/* The same column as the client asked for it: type, scale, charset, length. */
static int same_col(const fbw_col *a, const fbw_col *b)
{
    return a->type == b->type && a->scale == b->scale && a->charset == b->charset &&
           a->length == b->length;
}

/* --row-format captured: rows in the format the captured client asked for (its fetch BLR), as the
 * server converted them for it (compact CHARs, time zones without _EX), so results hash alike. A
 * statement that returns other columns than the capture's keeps its own; the comparison says. */
static int ask_rows_as_captured(run *r, size_t i)
{
    const fbw_step *s = r->s;
    fbw_stmt *st = r->st[s->stmt];
    const fbw_msgfmt *cur = fbw_stmt_output(st);
    if (r->rp->o.row_format != FBW_REPLAY_ROWS_CAPTURED || !s->row_cols || cur->n != s->row_n)
        return 0;
    uint16_t k = 0;
    while (k < cur->n && same_col(&cur->cols[k], &s->row_cols[k]))
        k++;
    if (k == cur->n)
        return 0;
    fbw_msgfmt f = {s->row_cols, s->row_n, s->row_n};
    if (fbw_stmt_set_output(st, &f) != FBW_OK) {
        rp_add_failure(r, i, s, fbw_stmt_error(st), "cannot ask for rows as the client did");
        return -1;
    }
    return 0;
}

static void do_execute(run *r, size_t i)
{
    const fbw_step *s = r->s;
    if (!rp_need_stmt(r, i, 1) || bind_params(r, i) || ask_rows_as_captured(r, i))
        return;
    fbw_err e;
    fbw_err_clear(&e);
    fbw_stmt *st = r->st[s->stmt];
    r->slot_exec[s->stmt] = i;
    fbw_result *res = &r->ex[s->stmt]->rep;
    int rc = rp_run_step(r, q_execute, &e);
    rp_check(r, i, rc, &e, fbw_stmt_error(st), "execute failed");
    if (!rc && !fbw_stmt_error(st)->code) {
        if (fbw_stmt_has_cursor(st) || fbw_stmt_output(st)->n > 0)
            res->rows = 0;
        else if (s->count_info)
            res->affected = (int64_t)fbw_stmt_affected(st);
        take_rows(r, st, s->stmt);
    }
    fbw_stmt_clear_rows(st);
}

/* The capture fetched this cursor; the replay reads it to its end. */
static void do_fetch(run *r, size_t i)
{
    const fbw_step *s = r->s;
    if (!rp_need_stmt(r, i, 1))
        return;
    fbw_stmt *st = r->st[s->stmt];
    fbw_err e;
    fbw_err_clear(&e);
    while (!fbw_stmt_eof(st) && !fbw_stmt_error(st)->code) {
        fbw_stmt_clear_rows(st);
        int rc = rp_run_step(r, q_fetch, &e);
        if (!rc)
            take_rows(r, st, s->stmt);
        if (rc) {
            rp_check(r, i, rc, &e, fbw_stmt_error(st), "fetch failed");
            return;
        }
        if (!fbw_stmt_row_count(st) && !fbw_stmt_eof(st))
            break; /* nothing was fetched and no end: no open cursor */
    }
    if (fbw_stmt_error(st)->code)
        rp_add_failure(r, i, s, fbw_stmt_error(st), "fetch failed");
    fbw_stmt_clear_rows(st);
}

static int q_blob(void *arg)
{
    run *r = arg;
    const fbw_step *s = r->s;
    int rc = FBW_OK;
    if (r->blob_stage == 0 && (rc = fbw_blob_create(r->blob, rp_tx_of(r, s->tx), s->bpb, s->bpb_len)) == FBW_OK)
        r->blob_stage = 1;
    if (rc == FBW_OK && r->blob_stage == 1 && (rc = fbw_blob_write(r->blob, s->data, s->len)) == FBW_OK)
        r->blob_stage = 2;
    if (rc == FBW_OK && r->blob_stage == 2 && (rc = fbw_blob_close(r->blob)) == FBW_OK)
        r->blob_stage = 3;
    return rc;
}

/* Remember the id of the blob step i created (until its transaction ends). */
static int keep_blob_id(run *r, size_t i, const fbw_step *s)
{
    if (grow_for_one((void **)&r->blob_ids, &r->blob_ids_cap, r->nblob_ids, sizeof *r->blob_ids))
        return FBW_E_NOMEM;
    blobid *b = &r->blob_ids[r->nblob_ids];
    memset(b, 0, sizeof *b);
    b->step = i;
    b->tx = s->tx;
    int rc = fbw_blob_id(r->blob, &b->id);
    r->nblob_ids += rc == FBW_OK;
    return rc;
}

/* The client's blob written again from the captured segments (as one stream: fbwire cuts its own
 * segments); its new id replaces the captured one in the executes that send it. */
static void do_blob(run *r, size_t i)
{
    const fbw_step *s = r->s;
    fbw_err e;
    fbw_err_clear(&e);
    if (s->cancelled)
        return; /* the client discarded it: nothing uses its id */
    if (fbw_blob_new(r->c, &r->blob, &e)) {
        rp_add_failure(r, i, s, &e, "cannot make a blob");
        return;
    }
    r->blob_stage = 0;
    int rc = rp_run_step(r, q_blob, &e);
    if (rc == FBW_OK && !fbw_blob_error(r->blob)->code)
        rc = fbw_client_wait(r->cl); /* the close reply: the id is usable once it is in */
    if (fbw_blob_error(r->blob)->code)
        rp_add_failure(r, i, s, fbw_blob_error(r->blob), "blob write failed");
    else if (rc)
        rp_add_failure(r, i, s, &e, "blob write failed");
    else if (keep_blob_id(r, i, s) != FBW_OK)
        rp_add_failure(r, i, s, NULL, "the replayed blob has no id");
    fbw_blob_free(r->blob);
    r->blob = NULL;
}

static void do_free(run *r, size_t i)
{
    const fbw_step *s = r->s;
    if (!s->stmt || !r->st[s->stmt])
        return; /* freeing what the replay never allocated (a failed prepare): nothing to do */
    if (s->kind == FBW_STEP_DROP) {
        fbw_stmt_free(r->st[s->stmt]); /* deferred: rides with the next request */
        r->st[s->stmt] = NULL;
        return;
    }
    int rc = q_close(r);
    fbw_err e;
    fbw_err_clear(&e);
    if (rc == FBW_AGAIN)
        rc = rp_run_step(r, q_close, &e);
    if (rc)
        rp_add_failure(r, i, s, &e, "close failed");
}

static void do_start(run *r, size_t i)
{
    const fbw_step *s = r->s;
    fbw_tx *t = r->tx[s->tx];
    if (fbw_tx_start_tpb(t, s->data, s->len)) {
        rp_add_failure(r, i, s, &t->err, "cannot start the transaction");
        return;
    }
    r->tx_start[s->tx] = i; /* its reply arrives with the next request's */
    if (grow_for_one((void **)&r->pend, &r->pend_cap, r->npend, sizeof *r->pend)) {
        atomic_store(&r->rp->nomem, 1);
        return;
    }
    r->pend[r->npend++] = s->tx;
}

static void do_end(run *r, size_t i)
{
    const fbw_step *s = r->s;
    fbw_tx *t = r->tx[s->tx];
    fbw_err_clear(&t->err);
    fbw_err e;
    fbw_err_clear(&e);
    int rc = rp_run_step(r, q_end, &e);
    rp_check(r, i, rc, &e, &t->err, "transaction end failed");
}

static void do_immediate(run *r, size_t i)
{
    if (r->s->imm2) {
        rp_do_immediate2(r, i);
        return;
    }
    fbw_err e;
    fbw_err_clear(&e);
    memset(&r->res, 0, sizeof r->res);
    int rc = rp_run_step(r, q_immediate, &e);
    rp_check(r, i, rc, &e, &r->res.err, "execute immediate failed");
}

/* Starts whose reply has arrived by now: report the ones the server refused. */
static void check_starts(run *r)
{
    for (size_t k = 0; k < r->npend;) {
        int t = r->pend[k];
        if (r->tx_start[t] && r->tx[t] && r->tx[t]->state == FBW_TX_STARTING) {
            k++;
            continue;
        }
        if (r->tx_start[t] && r->tx[t] && r->tx[t]->state == FBW_TX_FAILED) {
            fbw_step start = {.kind = FBW_STEP_START, .tx = t};
            rp_add_failure(r, r->tx_start[t], &start, &r->tx[t]->err, "transaction start failed");
        }
        r->tx_start[t] = 0;
        r->pend[k] = r->pend[--r->npend];
    }
}

static void do_step(run *r, size_t i)
{
    switch (r->s->kind) {
    case FBW_STEP_START: do_start(r, i); break;
    case FBW_STEP_COMMIT: case FBW_STEP_COMMIT_RETAINING: case FBW_STEP_ROLLBACK:
    case FBW_STEP_ROLLBACK_RETAINING: do_end(r, i); break;
    case FBW_STEP_PREPARE: do_prepare(r, i); break;
    case FBW_STEP_EXECUTE: do_execute(r, i); break;
    case FBW_STEP_FETCH: do_fetch(r, i); break;
    case FBW_STEP_CLOSE: case FBW_STEP_DROP: do_free(r, i); break;
    case FBW_STEP_IMMEDIATE: do_immediate(r, i); break;
    case FBW_STEP_BLOB: do_blob(r, i); break;
    case FBW_STEP_BLOB_READ: rp_do_blob_read(r, i); break;
    case FBW_STEP_INFO_SQL: case FBW_STEP_INFO_DATABASE: case FBW_STEP_INFO_TRANSACTION:
        rp_do_info(r, i);
        break;
    default: break;
    }
}

/* Wait until the request's time comes: its offset from the capture's start, scaled. A client's
 * think time is kept as long as the replay keeps up; when a reply came later than in the capture,
 * the next request goes at once (catching up, as pgreplay does) instead of every delay adding to
 * the next, so the load keeps the capture's rate. */
static void pace(const fbw_replay *rp, uint64_t capture_ts)
{
    if (rp->o.pace_none || capture_ts < rp->cap_t0)
        return;
    sleep_until(rp->start_ns + (uint64_t)((double)(capture_ts - rp->cap_t0) / rp->o.speed));
}

static void set_not_run(fbw_replay *rp, rconn *c, const char *fmt, ...) FBW_PRINTF(3, 4);
static void set_not_run(fbw_replay *rp, rconn *c, const char *fmt, ...)
{
    char tmp[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    free(c->not_run);
    c->not_run = dup_str(rp, tmp);
}

/* Grow a slot table from had to n elements (zeroed). */
static int grow_table(void **a, size_t had, size_t n, size_t size)
{
    void *p = realloc(*a, n * size);
    if (!p)
        return -1;
    memset((char *)p + had * size, 0, (n - had) * size);
    *a = p;
    return 0;
}

static size_t grown(size_t have, size_t need)
{
    size_t n = have * 2 > need ? have * 2 : need;
    return n < 16 ? 16 : n;
}

/* The slots step s names exist: tables grow as the stream names new slots, transactions come from
 * a pool of ended ones (their generation kept, so a statement that still points to one sees its
 * cursor gone). */
static int ensure_slots(run *r, const fbw_step *s)
{
    size_t tx = s->tx > 0 ? (size_t)s->tx : 0, st = s->stmt > 0 ? (size_t)s->stmt : 0;
    if (!r->tx || tx > r->ntx) {
        size_t had = r->tx ? r->ntx + 1 : 0, n = grown(r->ntx, tx);
        if (grow_table((void **)&r->tx, had, n + 1, sizeof *r->tx) ||
            grow_table((void **)&r->tx_start, had, n + 1, sizeof *r->tx_start) ||
            grow_table((void **)&r->tx_orig, had, n + 1, sizeof *r->tx_orig))
            return -1;
        r->ntx = n;
    }
    if (!r->st || st > r->nst) {
        size_t had = r->st ? r->nst + 1 : 0, n = grown(r->nst, st);
        if (grow_table((void **)&r->st, had, n + 1, sizeof *r->st) ||
            grow_table((void **)&r->slot_exec, had, n + 1, sizeof *r->slot_exec) ||
            grow_table((void **)&r->ex, had, n + 1, sizeof *r->ex) ||
            grow_table((void **)&r->sql, had, n + 1, sizeof *r->sql))
            return -1;
        r->nst = n;
    }
    if (tx && !r->tx[tx] && r->c) {
        uint64_t gen = 0;
        if (r->ntxpool) {
            r->tx[tx] = r->txpool[--r->ntxpool];
            gen = r->tx[tx]->generation;
        } else if (!(r->tx[tx] = malloc(sizeof *r->tx[tx]))) {
            return -1;
        }
        fbw_tx_init(r->tx[tx], r->c);
        r->tx[tx]->generation = gen;
    }
    return 0;
}

/* After a commit or rollback: the transaction's blobs are gone, and an ended transaction goes
 * back to the pool (its small number too). */
static void tx_ended(run *r, int t)
{
    for (size_t k = 0; k < r->nblob_ids;)
        if (r->blob_ids[k].tx == t)
            r->blob_ids[k] = r->blob_ids[--r->nblob_ids];
        else
            k++;
    if (!r->tx[t] || r->tx[t]->state != FBW_TX_ENDED || r->tx_start[t])
        return;
    if (grow_for_one((void **)&r->txpool, &r->txpool_cap, r->ntxpool, sizeof *r->txpool))
        return; /* kept where it is */
    r->txpool[r->ntxpool++] = r->tx[t];
    r->tx[t] = NULL;
    if (grow_for_one((void **)&r->tx_free, &r->tx_free_cap, r->ntx_free, sizeof *r->tx_free))
        return; /* the number is not reused */
    r->tx_orig[t] = 0;
    r->tx_free[r->ntx_free++] = t;
}

/* The small number standing for the step's transaction slot orig (0: none, -1: out of memory). */
static int small_tx(run *r, int orig)
{
    if (orig <= 0)
        return orig;
    for (size_t t = 1; r->tx_orig && t <= r->ntx && (int)t <= r->tx_used; t++)
        if (r->tx_orig[t] == orig)
            return (int)t;
    int t = r->ntx_free ? r->tx_free[--r->ntx_free] : r->tx_used + 1;
    fbw_step probe = {.tx = t};
    if (ensure_slots(r, &probe))
        return -1;
    if (t > r->tx_used)
        r->tx_used = t;
    r->tx_orig[t] = orig;
    return t;
}

static void account(run *r, const fbw_qstep *x, uint64_t ns, uint32_t rts, int ran);
static void exec_begin(run *r, const fbw_qstep *x);
static void exec_end(run *r, int slot);

/* One step from the stream: run it (when connected and not broken), measure it, count it. */
static void run_one(run *r, const fbw_qstep *x)
{
    fbw_step local = x->s; /* shared with fan-out copies: the small transaction number is ours */
    const fbw_step *s = &local;
    size_t i = x->index;
    int ran = r->c && !r->broken;
    local.tx = ran ? small_tx(r, x->s.tx) : 0; /* a step not run needs no transaction */
    if (local.tx < 0 || ensure_slots(r, s)) {
        atomic_store(&r->rp->nomem, 1);
        if (ran)
            set_not_run(r->rp, r->rc, "out of memory");
        r->broken = 1;
        return;
    }
    if (!ran) {
        r->step = i;
        r->step_ok = 0;
        if (s->kind == FBW_STEP_EXECUTE && s->stmt > 0)
            exec_begin(r, x);
        account(r, x, 0, 0, 0);
        return;
    }
    r->s = s;
    atomic_store(&r->rc->q.pacing, 1);
    pace(r->rp, s->t_req);
    atomic_store(&r->rc->q.pacing, 0);
    uint64_t before = fbw_conn_stats(r->c)->round_trips;
    uint64_t t0 = now_ns();
    r->rc->kinds[s->kind].steps++;
    r->step = i;
    r->step_ok = 1;
    r->once_result = FBW_FP_NOT_COMPARED;
    if (s->kind == FBW_STEP_EXECUTE && s->stmt > 0)
        exec_begin(r, x);
    if (s->problem)
        rp_add_failure(r, i, s, NULL, s->problem);
    else
        do_step(r, i);
    uint64_t rts = fbw_conn_stats(r->c)->round_trips - before;
    uint64_t ns = now_ns() - t0;
    r->rc->kinds[s->kind].round_trips += rts;
    check_starts(r);
    if (s->tx > 0 && (s->kind == FBW_STEP_COMMIT || s->kind == FBW_STEP_ROLLBACK ||
                      (r->tx[s->tx] && r->tx[s->tx]->state == FBW_TX_ENDED)))
        tx_ended(r, s->tx); /* also COMMIT or ROLLBACK as SQL */
    account(r, x, ns, (uint32_t)rts, 1);
    atomic_fetch_add(&r->rp->steps_done, 1);
}

/* Take the connection's steps from its queue until the reader ends it. Every wait is bounded;
 * the reader closes every queue when it stops, whatever the reason. Steps that cannot run (no
 * connection, a broken one) are still taken and counted on the capture's side, so the reader
 * never waits on a connection that gave up. */
static void run_stream(run *r)
{
    for (;;) {
        fbw_qstep *x = NULL;
        int got = fbw_stepq_pop(&r->rc->q, &x, now_ns() + 1000000000u);
        if (got == FBW_STEPQ_TIMEOUT)
            continue;
        if (got != FBW_STEPQ_STEP)
            break;
        run_one(r, x);
        fbw_qstep_unref(x);
    }
    for (size_t k = 1; r->ex && k <= r->nst; k++)
        exec_end(r, (int)k);
}

static void free_slots(run *r)
{
    for (size_t k = 1; r->st && k <= r->nst; k++) {
        fbw_stmt_free(r->st[k]);
        free(r->sql[k]);
        free(r->ex[k]);
    }
    for (size_t t = 1; r->tx && t <= r->ntx; t++)
        free(r->tx[t]);
    for (size_t k = 0; k < r->ntxpool; k++)
        free(r->txpool[k]);
    free(r->txpool);
    free(r->st);
    free(r->sql);
    free(r->ex);
    free(r->tx);
    free(r->tx_start);
    free(r->tx_orig);
    free(r->tx_free);
    free(r->slot_exec);
    free(r->blob_ids);
    free(r->rblobs);
    free(r->pend);
    free(r->vals);
    fbw_buf_free(&r->res2.row);
    fbw_buf_free(&r->info.data);
}

/* A connection that began after another one ended in the capture begins after it in the replay
 * too (its SQL may need what the other committed, e.g. a table). */
static void wait_predecessors(fbw_replay *rp, const rconn *c)
{
    for (size_t i = 0; i < rp->njobs; i++) {
        const rconn *o = rp->jobs[i];
        if (o == c || o->t_last >= c->t_first)
            continue;
        while (!atomic_load(&o->finished))
            sleep_until(now_ns() + 1000000u);
    }
}

static void replay_conn(fbw_replay *rp, rconn *c)
{
    atomic_store(&c->q.pacing, 1);
    pace(rp, c->t_first);
    atomic_store(&c->q.pacing, 0);
    wait_predecessors(rp, c);
    fbw_client_opts o;
    fbw_client_opts_init(&o);
    o.conn.user = rp->o.user;
    o.conn.password = rp->o.password;
    o.conn.wire_crypt = rp->o.wire_crypt;
    if (rp->o.row_format != FBW_REPLAY_ROWS_CAPTURED)
        o.conn.row_format = rp->o.row_format;
    run r;
    memset(&r, 0, sizeof r);
    r.rp = rp;
    r.rc = c;
    fbw_err err;
    fbw_err_clear(&err);
    if (fbw_client_connect(rp->o.dsn, &o, &r.cl, &err)) {
        set_not_run(rp, c, "cannot connect to %s: %s%s%s%s", rp->o.dsn, err.msg,
                    err.sqlstate[0] ? " [SQLSTATE " : "", err.sqlstate,
                    err.sqlstate[0] ? "]" : "");
        r.cl = NULL;
        run_stream(&r); /* counted, not run */
        free_slots(&r);
        return;
    }
    r.c = fbw_client_conn(r.cl);
    c->replayed = 1;
    atomic_fetch_add(&rp->open_conns, 1);
    run_stream(&r);
    free_slots(&r);
    atomic_fetch_sub(&rp->open_conns, 1);
    if (r.broken) {
        if (!c->not_run) /* else out of memory, which not_run says */
            set_not_run(rp, c, "the replay connection failed: %s", fbw_client_error(r.cl)->msg);
        c->stats = *fbw_conn_stats(r.c);
        fbw_client_abort(r.cl);
        return;
    }
    pace(rp, c->q.t_detach);
    if (fbw_conn_detach(r.c) == FBW_OK)
        fbw_client_wait(r.cl); /* the capture's detach is counted too: count ours */
    c->stats = *fbw_conn_stats(r.c);
    fbw_client_close(r.cl);
}

/* ---- the report ---- */

typedef struct totals {
    fbw_stats capture, replay;
    kind_count kinds[FBW_STEP_KINDS];
    uint64_t steps, failed;
    size_t conns, replayed;
    uint64_t compared, matched, different;
} totals;

static void ratio_text(fbw_buf *b, const char *name, uint64_t cap, uint64_t rep, int replayed)
{
    putf(b, "%-18s %12" PRIu64, name, cap);
    if (!replayed) {
        put(b, "            -       -\n");
        return;
    }
    putf(b, " %12" PRIu64, rep);
    if (cap)
        putf(b, " %7.2f\n", (double)rep / (double)cap);
    else
        put(b, "       -\n");
}

static void figures_text(fbw_buf *b, const fbw_stats *cap, const fbw_stats *rep, int replayed)
{
    putf(b, "%-18s %12s %12s %7s\n", "", "capture", "fbwire", "ratio");
    ratio_text(b, "round_trips", cap->round_trips, rep->round_trips, replayed);
    ratio_text(b, "packets_sent", cap->packets_sent, rep->packets_sent, replayed);
    ratio_text(b, "packets_received", cap->packets_received, rep->packets_received, replayed);
    ratio_text(b, "bytes_sent", cap->bytes_sent, rep->bytes_sent, replayed);
    ratio_text(b, "bytes_received", cap->bytes_received, rep->bytes_received, replayed);
}

/* Steps per kind; after a replay also how many failed and the round trips fbwire spent on them. */
static void kinds_text(fbw_buf *b, const kind_count *k, int replayed)
{
    if (replayed)
        putf(b, "%-18s %12s %12s %12s\n", "step", "count", "failed", "round_trips");
    else
        putf(b, "%-18s %12s\n", "step", "count");
    for (int i = 0; i < FBW_STEP_KINDS; i++) {
        if (!k[i].steps)
            continue;
        putf(b, "%-18s %12" PRIu64, fbw_step_name(i), k[i].steps);
        if (replayed)
            putf(b, " %12" PRIu64 " %12" PRIu64, k[i].failed, k[i].round_trips);
        put(b, "\n");
    }
}

static void failure_text(fbw_buf *b, const failure *f)
{
    putf(b, "failed: step %zu %s", f->step, fbw_step_name(f->kind));
    if (f->stmt)
        putf(b, " s%d", f->stmt);
    if (f->tx)
        putf(b, " t%d", f->tx);
    put(b, ": ");
    quote(b, f->message, strlen(f->message));
    if (f->sqlstate[0])
        putf(b, " [SQLSTATE %s]", f->sqlstate);
    put(b, "\n");
}

static void stats_json(fbw_buf *b, const fbw_stats *s)
{
    putf(b,
         "{\"round_trips\":%" PRIu64 ",\"packets_sent\":%" PRIu64 ",\"packets_received\":%" PRIu64
         ",\"bytes_sent\":%" PRIu64 ",\"bytes_received\":%" PRIu64 "}",
         s->round_trips, s->packets_sent, s->packets_received, s->bytes_sent, s->bytes_received);
}

static void ratio_json(fbw_buf *b, const fbw_stats *cap, const fbw_stats *rep, int replayed)
{
    if (!replayed) {
        put(b, "null");
        return;
    }
    const uint64_t c[] = {cap->round_trips, cap->packets_sent, cap->packets_received,
                          cap->bytes_sent, cap->bytes_received};
    const uint64_t r[] = {rep->round_trips, rep->packets_sent, rep->packets_received,
                          rep->bytes_sent, rep->bytes_received};
    static const char *const names[] = {"round_trips", "packets_sent", "packets_received",
                                        "bytes_sent", "bytes_received"};
    put(b, "{");
    for (int i = 0; i < 5; i++) {
        putf(b, "%s\"%s\":", i ? "," : "", names[i]);
        if (c[i])
            putf(b, "%.4f", (double)r[i] / (double)c[i]);
        else
            put(b, "null");
    }
    put(b, "}");
}

static void kinds_json(fbw_buf *b, const kind_count *k)
{
    put(b, "{");
    int first = 1;
    for (int i = 0; i < FBW_STEP_KINDS; i++) {
        if (!k[i].steps)
            continue;
        putf(b,
             "%s\"%s\":{\"count\":%" PRIu64 ",\"failed\":%" PRIu64 ",\"round_trips\":%" PRIu64 "}",
             first ? "" : ",", fbw_step_name(i), k[i].steps, k[i].failed, k[i].round_trips);
        first = 0;
    }
    put(b, "}");
}

static void failures_json(fbw_buf *b, const rconn *c)
{
    put(b, "[");
    for (size_t i = 0; i < c->nfail; i++) {
        const failure *f = &c->fail[i];
        putf(b, "%s{\"step\":%zu,\"kind\":\"%s\",\"stmt\":%d,\"tx\":%d,\"message\":", i ? "," : "",
             f->step, fbw_step_name(f->kind), f->stmt, f->tx);
        quote(b, f->message, strlen(f->message));
        put(b, ",\"sqlstate\":");
        quote_cstr(b, f->sqlstate[0] ? f->sqlstate : NULL);
        put(b, "}");
    }
    put(b, "]");
}

static void list_counts(const fbw_workload *w, kind_count *k)
{
    for (size_t i = 0; i < w->n; i++)
        k[w->steps[i].kind].steps++;
}

static void conn_text(fbw_replay *rp, fbw_buf *b, const fbw_report_conn *ci, rconn *c)
{
    putf(b, "connection %d: %s -> %s\n", ci->id, ci->client, ci->server);
    if (ci->open_at_end && !ci->problem)
        put(b, "note: the capture ended before this connection did: its workload is what the "
               "capture holds\n");
    if (ci->encrypted)
        putf(b, "error: the capture is encrypted (wire crypt %s): its SQL cannot be read; %s\n",
             ci->encrypted,
             rp->o.list ? "the steps below are only those before op_crypt"
                        : "nothing of this connection was replayed");
    else if (ci->problem)
        putf(b, "error: the capture cannot be decoded to its end (%s); %s\n", ci->problem,
             rp->o.list ? "the steps below are only those decoded before it"
                        : "nothing of this connection was replayed");
    if (rp->o.list) {
        for (size_t i = 0; i < c->w.n; i++)
            step_text(b, i, &c->w.steps[i]);
        kinds_text(b, c->kinds, 0);
    } else {
        if (c->replayed)
            putf(b, "replayed on %s\n", rp->o.dsn);
        if (c->not_run)
            putf(b, "error: %s\n", c->not_run);
        for (size_t i = 0; i < c->nfail; i++)
            failure_text(b, &c->fail[i]);
        if (c->more_fail)
            putf(b, "failed: %zu more steps (the first %d are listed)\n", c->more_fail,
                 MAX_FAILURES_KEPT);
        if (c->src.w.late)
            putf(b, "note: %" PRIu64 " replies came after their step was handed on to the replay "
                    "(streaming window): not in the capture's results, so not compared\n",
                 c->src.w.late);
        figures_text(b, ci->stats, &c->stats, c->replayed);
        kinds_text(b, c->kinds, c->replayed);
    }
    not_replayed_text(b, rp->o.list ? &c->w : &c->src.w);
}

static void conn_json(fbw_replay *rp, fbw_buf *b, const fbw_report_conn *ci, rconn *c)
{
    putf(b, "{\"id\":%d,\"client\":\"%s\",\"server\":\"%s\",\"encrypted\":", ci->id, ci->client,
         ci->server);
    quote_cstr(b, ci->encrypted);
    put(b, ",\"problem\":");
    quote_cstr(b, ci->problem);
    putf(b, ",\"open_at_end\":%s", ci->open_at_end ? "true" : "false");
    if (rp->o.list) {
        put(b, ",\"steps\":[");
        for (size_t i = 0; i < c->w.n; i++) {
            put(b, i ? "," : "");
            step_json(b, i, &c->w.steps[i]);
        }
        put(b, "]");
    } else {
        putf(b, ",\"replayed\":%s,\"error\":", c->replayed ? "true" : "false");
        quote_cstr(b, c->not_run);
        put(b, ",\"failures\":");
        failures_json(b, c);
        put(b, ",\"replay\":");
        if (c->replayed)
            stats_json(b, &c->stats);
        else
            put(b, "null");
        put(b, ",\"ratio\":");
        ratio_json(b, ci->stats, &c->stats, c->replayed);
        putf(b, ",\"late_replies\":%" PRIu64, c->src.w.late);
    }
    put(b, ",\"capture\":");
    stats_json(b, ci->stats);
    put(b, ",\"step_counts\":");
    kinds_json(b, c->kinds);
    put(b, ",");
    not_replayed_json(b, rp->o.list ? &c->w : &c->src.w);
    put(b, "}");
}

static void add_totals(totals *t, const fbw_report_conn *ci, const rconn *c)
{
    t->conns++;
    fbw_stats_add(&t->capture, ci->stats);
    if (c->replayed) {
        t->replayed++;
        fbw_stats_add(&t->replay, &c->stats);
    }
    for (int k = 0; k < FBW_STEP_KINDS; k++) {
        t->kinds[k].steps += c->kinds[k].steps;
        t->kinds[k].failed += c->kinds[k].failed;
        t->kinds[k].round_trips += c->kinds[k].round_trips;
        t->steps += c->kinds[k].steps;
        t->failed += c->kinds[k].failed;
    }
}

static void totals_text(fbw_replay *rp, fbw_buf *b, const totals *t)
{
    putf(b, "\ntotal: %zu connection%s, %zu replayed, %" PRIu64 " steps, %" PRIu64 " failed\n",
         t->conns, t->conns == 1 ? "" : "s", t->replayed, t->steps, t->failed);
    if (!rp->o.list)
        figures_text(b, &t->capture, &t->replay, t->replayed > 0);
    kinds_text(b, t->kinds, t->replayed > 0);
}

static void totals_json(fbw_replay *rp, fbw_buf *b, const totals *t)
{
    putf(b,
         "\"total\":{\"connections\":%zu,\"replayed\":%zu,\"steps\":%" PRIu64
         ",\"failed\":%" PRIu64 ",\"capture\":",
         t->conns, t->replayed, t->steps, t->failed);
    stats_json(b, &t->capture);
    if (!rp->o.list) {
        put(b, ",\"replay\":");
        stats_json(b, &t->replay);
        put(b, ",\"ratio\":");
        ratio_json(b, &t->capture, &t->replay, t->replayed > 0);
    }
    put(b, ",\"step_counts\":");
    kinds_json(b, t->kinds);
    put(b, "}");
}

/* A connection still open when a damaged capture file ended was cut at an arbitrary point: it
 * gets a problem like any other undecodable one, so it is never replayed in part silently. */
static void check_truncation(char *why, size_t size, fbw_report_conn *ci,
                             const fbw_cap_summary *sum)
{
    if (ci->problem || !ci->open_at_end || !sum->truncated[0])
        return;
    snprintf(why, size, "the capture file is truncated while this connection was open: %s",
             sum->truncated);
    ci->problem = why;
}

/* ---- results and latency, counted as each execution ends ---- */

/* FBW_FP_* for an execution: its rows and affected rows against the capture's. */
static int compare(const fbw_replay *rp, const xacc *x)
{
    const fbw_result *cap = &x->cap, *rep = &x->rep;
    if (rp->o.results_ignore || !x->ok)
        return FBW_FP_NOT_COMPARED;
    if (x->kind == FBW_STEP_BLOB_READ) { /* its bytes: as many as the capture read */
        if (cap->unknown)
            return FBW_FP_NOT_COMPARED;
        return rep->rows == cap->rows && rep->hash == cap->hash ? FBW_FP_MATCH : FBW_FP_DIFFERENT;
    }
    int compared = 0, same = 1;
    if (cap->rows >= 0) {
        compared = 1;
        same &= rep->rows == cap->rows && (cap->unknown || rep->unknown || rep->hash == cap->hash);
    }
    if (cap->affected >= 0 && cap->rows < 0 && rep->rows < 0) {
        compared = 1;
        same &= rep->affected == cap->affected;
    }
    return !compared ? FBW_FP_NOT_COMPARED : same ? FBW_FP_MATCH : FBW_FP_DIFFERENT;
}

static void side_text(fbw_buf *b, const char *who, const fbw_result *r, int rows)
{
    putf(b, "%s ", who);
    if (rows)
        putf(b, "%" PRId64 " rows (hash %016" PRIx64 "%s)", r->rows, r->hash,
             r->unknown ? ", format unknown" : "");
    else
        putf(b, "%" PRId64 " affected", r->affected);
}

static void difference_text(fbw_buf *b, const diff *d)
{
    int rows = d->cap.rows >= 0;
    if (d->kind == FBW_STEP_BLOB_READ) {
        putf(b,
             "different: step %zu blob_read (row %" PRIu32 " col %u of step %zu): capture %" PRId64
             " bytes%s (hash %016" PRIx64 "), replay %" PRId64 " bytes (hash %016" PRIx64 ")\n",
             d->step, d->read_row + 1, d->read_col + 1u, d->read_exec, d->cap.rows,
             d->cap.eof ? "" : " read of it", d->cap.hash, d->rep.rows, d->rep.hash);
        return;
    }
    putf(b, "different: step %zu %s s%d ", d->step, fbw_step_name(d->kind), d->stmt);
    if (d->sql)
        quote(b, d->sql, strlen(d->sql));
    put(b, ": ");
    side_text(b, "capture", &d->cap, rows);
    put(b, ", ");
    side_text(b, "replay", &d->rep, rows);
    put(b, "\n");
}

static void difference_json(fbw_buf *b, const diff *d)
{
    const fbw_result *cap = &d->cap, *rep = &d->rep;
    putf(b, "{\"step\":%zu,\"kind\":\"%s\",\"stmt\":%d,\"sql\":", d->step,
         fbw_step_name(d->kind), d->stmt);
    quote_cstr(b, d->sql);
    putf(b,
         ",\"capture\":{\"rows\":%" PRId64 ",\"hash\":\"%016" PRIx64 "\",\"affected\":%" PRId64
         "},\"replay\":{\"rows\":%" PRId64 ",\"hash\":\"%016" PRIx64 "\",\"affected\":%" PRId64 "}}",
         cap->rows, cap->hash, cap->affected, rep->rows, rep->hash, rep->affected);
}

#define MAX_DIFFS_SHOWN 20

/* Result differences of one job; counts go into t. */
static void differences(const fbw_replay *rp, fbw_buf *b, const rconn *c, totals *t, int json)
{
    (void)rp;
    t->compared += c->compared;
    t->matched += c->matched;
    t->different += c->different;
    if (json)
        put(b, ",\"differences\":[");
    for (size_t k = 0; k < c->ndiffs; k++) {
        if (json) {
            put(b, k ? "," : "");
            difference_json(b, &c->diffs[k]);
        } else {
            difference_text(b, &c->diffs[k]);
        }
    }
    if (json)
        put(b, "]");
    else if (c->more_diffs)
        putf(b, "different: %zu more (--json lists all)\n", c->more_diffs);
}

/* Keep a difference for the report: every one for JSON, the first MAX_DIFFS_SHOWN for text. */
static void keep_diff(run *r, const xacc *x)
{
    rconn *c = r->rc;
    if (!r->rp->o.json && c->ndiffs >= MAX_DIFFS_SHOWN) {
        c->more_diffs++;
        return;
    }
    if (grow_for_one((void **)&c->diffs, &c->diffs_cap, c->ndiffs, sizeof *c->diffs)) {
        atomic_store(&r->rp->nomem, 1);
        return;
    }
    diff *d = &c->diffs[c->ndiffs++];
    d->step = x->step;
    d->stmt = x->stmt;
    d->kind = x->kind;
    d->read_exec = x->read_exec;
    d->read_row = x->read_row;
    d->read_col = x->read_col;
    d->sql = x->sql ? dup_str(r->rp, x->sql) : NULL;
    d->cap = x->cap;
    d->rep = x->rep;
}

/* ---- for replay_ops.c ---- */

void rp_nomem(run *r)
{
    atomic_store(&r->rp->nomem, 1);
}

/* An execution that ended at once (replay_ops.c): compare it, count it, keep its difference. */
int rp_count_once(run *r, const xacc *x)
{
    int res = compare(r->rp, x);
    rconn *c = r->rc;
    if (res != FBW_FP_NOT_COMPARED) {
        c->compared++;
        c->matched += res == FBW_FP_MATCH;
    }
    if (res == FBW_FP_DIFFERENT) {
        c->different++;
        keep_diff(r, x);
    }
    return res;
}

/* ---- latency per fingerprint ---- */

static const char *const end_names[FBW_STEP_KINDS] = {
    [FBW_STEP_COMMIT] = "COMMIT", [FBW_STEP_COMMIT_RETAINING] = "COMMIT RETAIN",
    [FBW_STEP_ROLLBACK] = "ROLLBACK", [FBW_STEP_ROLLBACK_RETAINING] = "ROLLBACK RETAIN",
    [FBW_STEP_BLOB] = "(blob write)", [FBW_STEP_BLOB_READ] = "(blob read)",
};

static int is_execution(int kind)
{
    return kind == FBW_STEP_EXECUTE || kind == FBW_STEP_IMMEDIATE || end_names[kind] != NULL;
}

/* One execution into the shared table (the threads add as their executions end). */
static void add_fp(run *r, const char *kind_name, const char *sql, const fbw_fp_exec *e)
{
    fbw_buf key;
    fbw_buf_init(&key);
    if (kind_name)
        put(&key, kind_name);
    else if (sql)
        fbw_fingerprint(sql, strlen(sql), &key);
    else
        put(&key, "(statement prepared before the capture)");
    fbw_replay *rp = r->rp;
    pthread_mutex_lock(&rp->f_mu);
    if (rp->f && fbw_fpstats_add(rp->f, (const char *)fbw_buf_head(&key), fbw_buf_avail(&key), e))
        atomic_store(&rp->nomem, 1);
    pthread_mutex_unlock(&rp->f_mu);
    fbw_buf_free(&key);
}

/* The execution of a statement slot ended (its next execute, its drop, the connection's end):
 * compare its result and add its latency. */
static void exec_end(run *r, int slot)
{
    xacc *x = r->ex ? r->ex[slot] : NULL;
    if (!x || !x->step)
        return;
    int res = compare(r->rp, x);
    rconn *c = r->rc;
    if (res != FBW_FP_NOT_COMPARED) {
        c->compared++;
        c->matched += res == FBW_FP_MATCH;
    }
    if (res == FBW_FP_DIFFERENT) {
        c->different++;
        keep_diff(r, x);
    }
    x->e.result = res;
    add_fp(r, NULL, x->sql, &x->e);
    free(x->sql);
    x->sql = NULL;
    x->step = 0;
}

static void exec_begin(run *r, const fbw_qstep *q)
{
    int slot = q->s.stmt;
    exec_end(r, slot);
    xacc *x = r->ex[slot];
    if (!x && !(x = r->ex[slot] = malloc(sizeof *x))) {
        atomic_store(&r->rp->nomem, 1);
        return;
    }
    memset(x, 0, sizeof *x);
    x->step = q->index;
    x->stmt = slot;
    x->kind = FBW_STEP_EXECUTE;
    x->cap = q->s.result;
    x->rep = (fbw_result){.rows = -1, .affected = -1};
    x->sql = q->s.sql_step && r->sql[slot] ? dup_str(r->rp, r->sql[slot]) : NULL;
}

static void add_to(fbw_fp_exec *e, const fbw_step *s, uint64_t ns, uint32_t rts)
{
    e->capture_ns += s->t_end > s->t_req ? s->t_end - s->t_req : 0;
    e->capture_rt += s->round_trips;
    e->replay_ns += ns;
    e->replay_rt += rts;
}

/* An execution is its execute step, the fetch steps of its cursor and the info_sql steps that
 * asked about it: latencies and round trips of those steps add up (think time between them is not
 * latency). */
static void account(run *r, const fbw_qstep *q, uint64_t ns, uint32_t rts, int ran)
{
    const fbw_step *s = &q->s;
    int ok = ran && r->step_ok;
    int slot = s->stmt > 0 ? s->stmt : 0;
    xacc *x = slot && r->ex ? r->ex[slot] : NULL;
    if (s->kind == FBW_STEP_PREPARE && slot && s->data) {
        free(r->sql[slot]);
        r->sql[slot] = dup_str(r->rp, (const char *)s->data);
    }
    if (s->kind == FBW_STEP_EXECUTE && x && x->step == q->index) {
        x->ok = ok;
        x->e.replayed = ok && r->rc->replayed;
        add_to(&x->e, s, ns, rts);
    } else if ((s->kind == FBW_STEP_FETCH || s->kind == FBW_STEP_INFO_SQL) &&
               s->owner != q->index && x && x->step == s->owner) {
        x->e.replayed &= ok;
        add_to(&x->e, s, ns, rts);
    } else if (is_execution(s->kind)) {
        fbw_fp_exec e = {.replayed = ok && r->rc->replayed,
                         .result = ran ? r->once_result : FBW_FP_NOT_COMPARED};
        add_to(&e, s, ns, rts);
        const char *sql = s->kind == FBW_STEP_IMMEDIATE ? (const char *)s->data : NULL;
        add_fp(r, end_names[s->kind], sql, &e);
    }
    if (s->kind == FBW_STEP_DROP && slot)
        exec_end(r, slot);
}

/* ---- running every connection at once ---- */

static void *conn_thread(void *arg)
{
    rconn *c = arg;
    replay_conn(c->rp, c);
    atomic_store(&c->finished, 1);
    atomic_fetch_add(&c->rp->done_conns, 1);
    return NULL;
}

static int add_job_slot(fbw_replay *rp, rconn *c)
{
    rconn **j = realloc(rp->jobs, (rp->njobs + 1) * sizeof *j);
    if (!j)
        return -1;
    rp->jobs = j;
    if (fbw_stepq_init(&c->q, FBW_STREAM_QUEUE_STEPS, FBW_STREAM_QUEUE_BYTES) != FBW_OK)
        return -1;
    c->q_ready = 1;
    rp->jobs[rp->njobs++] = c;
    c->rp = rp;
    return 0;
}

/* The reader's view: each captured connection feeds its own queue and its copies'. */
static int plan_stream(fbw_replay *rp)
{
    fbw_stream *st = &rp->st;
    st->file = rp->o.file;
    st->keys = rp->o.keys;
    st->ports = rp->o.ports;
    st->nports = rp->o.nports;
    st->explicit_ports = rp->o.explicit_ports;
    st->n = rp->n;
    st->src = calloc(rp->n ? rp->n : 1, sizeof *st->src);
    st->all = calloc(rp->njobs ? rp->njobs : 1, sizeof *st->all);
    if (!st->src || !st->all)
        return -1;
    for (size_t i = 0; i < rp->njobs; i++) {
        rconn *c = rp->jobs[i];
        rconn *orig = conn_at(rp, c->id);
        fbw_stepq **q = realloc(orig->src.q, (orig->src.nq + 1) * sizeof *q);
        if (!q)
            return -1;
        q[orig->src.nq++] = &c->q;
        orig->src.q = q;
        st->src[c->id - 1] = &orig->src;
        st->all[st->nall++] = &c->q;
    }
    for (size_t i = 0; i < rp->njobs; i++) { /* nothing decoded: nothing will come */
        rconn *orig = conn_at(rp, rp->jobs[i]->id);
        if (!orig->src.packets) {
            orig->src.ended = 1;
            fbw_stepq_close(&rp->jobs[i]->q, 0);
        }
    }
    for (size_t i = 0; i < rp->n; i++) /* not replayed: the reader only counts their steps */
        if (rp->c[i].id && !rp->c[i].run) {
            fbw_workload_init(&rp->c[i].src.w);
            st->src[i] = &rp->c[i].src;
        }
    return 0;
}

/* The replayed connections: every captured one to replay, then --connections copies. */
static int plan_jobs(fbw_replay *rp)
{
    size_t captured = 0;
    for (size_t i = 0; i < rp->n; i++) {
        rconn *c = &rp->c[i];
        if (!c->run)
            continue;
        c->wl = &c->src.w;
        fbw_workload_init(&c->src.w);
        c->src.t_detach = c->t_detach;
        if (add_job_slot(rp, c))
            return -1;
        if (!captured || c->t_first < rp->cap_t0)
            rp->cap_t0 = c->t_first;
        if (c->t_last > rp->cap_t1)
            rp->cap_t1 = c->t_last;
        captured++;
    }
    if (rp->o.connections && captured && (size_t)rp->o.connections < captured)
        fprintf(stderr,
                "fbwire-pcap: --connections %d is fewer than the %zu captured connections: each "
                "is replayed once\n",
                rp->o.connections, captured);
    for (size_t j = captured; captured && j < (size_t)rp->o.connections; j++) {
        rconn *orig = rp->jobs[j % captured];
        rconn *c = calloc(1, sizeof *c);
        if (!c)
            return -1;
        c->wl = orig->wl;
        c->id = orig->id;
        c->t_first = orig->t_first;
        c->t_last = orig->t_last;
        c->copy = (int)(j / captured);
        c->run = 1;
        if (add_job_slot(rp, c)) {
            if (c->q_ready)
                fbw_stepq_destroy(&c->q);
            free(c);
            return -1;
        }
    }
    return plan_stream(rp);
}

static void progress_line(fbw_replay *rp, int final)
{
    fprintf(stderr, "\rreplay: %.1f s, %d/%zu connections open, %d done, %lu steps, %lu failed%s",
            (double)(now_ns() - rp->start_ns) / 1e9, atomic_load(&rp->open_conns), rp->njobs,
            atomic_load(&rp->done_conns), (unsigned long)atomic_load(&rp->steps_done),
            (unsigned long)atomic_load(&rp->steps_failed), final ? "\n" : "   ");
    fflush(stderr);
}

static void run_jobs(fbw_replay *rp)
{
    int progress = rp->o.progress || isatty(2);
    size_t started = 0;
    rp->start_ns = now_ns();
    for (; started < rp->njobs; started++)
        if (pthread_create(&rp->jobs[started]->thread, NULL, conn_thread, rp->jobs[started])) {
            for (size_t k = started; k < rp->njobs; k++) {
                set_not_run(rp, rp->jobs[k], "cannot start a thread for it");
                fbw_stepq_abandon(&rp->jobs[k]->q); /* the reader must not wait on it */
                atomic_store(&rp->jobs[k]->finished, 1);
            }
            break;
        }
    int reading = fbw_stream_start(&rp->st) == FBW_OK;
    if (!reading) {
        atomic_store(&rp->nomem, 1);
        for (size_t k = 0; k < rp->njobs; k++)
            fbw_stepq_close(&rp->jobs[k]->q, 0);
    }
    uint64_t next = rp->start_ns + 1000000000u;
    while ((size_t)atomic_load(&rp->done_conns) < started) {
        sleep_until(now_ns() + 50000000u);
        if (progress && now_ns() >= next) {
            progress_line(rp, 0);
            next += 1000000000u;
        }
    }
    for (size_t i = 0; i < started; i++)
        pthread_join(rp->jobs[i]->thread, NULL);
    rp->wall_ns = now_ns() - rp->start_ns;
    if (reading)
        fbw_stream_join(&rp->st);
    if (atomic_load(&rp->st.nomem) || (reading && rp->st.status != FBW_OK))
        atomic_store(&rp->nomem, 1);
    if (rp->st.forced) /* not an error: the docs ("Streaming") say when and why */
        fprintf(stderr,
                "fbwire-pcap: replay: %llu steps queued past a full queue (a replay connection "
                "was stuck while another waited for the reader)\n",
                (unsigned long long)rp->st.forced);
    if (progress)
        progress_line(rp, 1);
}

/* ---- the report ---- */

static void copies_text(fbw_replay *rp, fbw_buf *b, totals *t)
{
    for (size_t i = 0; i < rp->njobs; i++) {
        rconn *c = rp->jobs[i];
        if (!c->copy)
            continue;
        uint64_t steps = 0, failed = 0;
        for (int k = 0; k < FBW_STEP_KINDS; k++) {
            steps += c->kinds[k].steps;
            failed += c->kinds[k].failed;
        }
        putf(b, "\nconnection %d copy %d: %" PRIu64 " steps, %" PRIu64 " failed\n", c->id, c->copy,
             steps, failed);
        if (c->not_run)
            putf(b, "error: %s\n", c->not_run);
        for (size_t k = 0; k < c->nfail && k < MAX_DIFFS_SHOWN; k++)
            failure_text(b, &c->fail[k]);
        differences(rp, b, c, t, 0);
        t->steps += steps;
        t->failed += failed;
    }
}

static void copies_json(fbw_replay *rp, fbw_buf *b, totals *t)
{
    put(b, ",\"copies\":[");
    size_t shown = 0;
    for (size_t i = 0; i < rp->njobs; i++) {
        rconn *c = rp->jobs[i];
        if (!c->copy)
            continue;
        uint64_t steps = 0, failed = 0;
        for (int k = 0; k < FBW_STEP_KINDS; k++) {
            steps += c->kinds[k].steps;
            failed += c->kinds[k].failed;
        }
        putf(b, "%s{\"id\":%d,\"copy\":%d,\"steps\":%" PRIu64 ",\"failed\":%" PRIu64 ",\"error\":",
             shown++ ? "," : "", c->id, c->copy, steps, failed);
        quote_cstr(b, c->not_run);
        put(b, ",\"failures\":");
        failures_json(b, c);
        differences(rp, b, c, t, 1);
        put(b, "}");
        t->steps += steps;
        t->failed += failed;
    }
    put(b, "]");
}

static int copies_bad(const fbw_replay *rp)
{
    for (size_t i = 0; i < rp->njobs; i++)
        if (rp->jobs[i]->copy && (rp->jobs[i]->not_run || rp->jobs[i]->nfail))
            return 1;
    return 0;
}

static void load_text(fbw_replay *rp, fbw_buf *b, fbw_fpstats *f, const totals *t)
{
    double cap = (double)(rp->cap_t1 - rp->cap_t0) / 1e9, wall = (double)rp->wall_ns / 1e9;
    putf(b, "\nstatements by fingerprint (latency in ms, request to last reply; rt: round trips "
            "per execution; results: matched/compared)\n");
    fbw_fpstats_text(f, b, 40);
    putf(b, "\nresults: %" PRIu64 " compared, %" PRIu64 " matched, %" PRIu64 " different%s\n",
         t->compared, t->matched, t->different, rp->o.results_ignore ? " (--results ignore)" : "");
    putf(b, "wall time: %.3f s replay, %.3f s capture (ratio %.3f), pace %s", wall, cap,
         cap > 0 ? wall / cap : 0.0, rp->o.pace_none ? "none" : "original");
    if (!rp->o.pace_none)
        putf(b, ", speed %g", rp->o.speed);
    putf(b, ", %zu connections\n", rp->njobs);
}

static void load_json(fbw_replay *rp, fbw_buf *b, fbw_fpstats *f, const totals *t)
{
    putf(b,
         ",\"load\":{\"pace\":\"%s\",\"speed\":%g,\"connections\":%zu,\"wall_s\":%.6f,"
         "\"capture_s\":%.6f,\"results\":{\"compared\":%" PRIu64 ",\"matched\":%" PRIu64
         ",\"different\":%" PRIu64 ",\"ignored\":%s},\"statements\":",
         rp->o.pace_none ? "none" : "original", rp->o.speed, rp->njobs, (double)rp->wall_ns / 1e9,
         (double)(rp->cap_t1 - rp->cap_t0) / 1e9, t->compared, t->matched, t->different,
         rp->o.results_ignore ? "true" : "false");
    fbw_fpstats_json(f, b);
    put(b, "}");
}

int fbw_replay_finish(fbw_replay *rp, const fbw_report *r, const fbw_cap_summary *sum)
{
    totals t;
    memset(&t, 0, sizeof t);
    fbw_stats_reset(&t.capture);
    fbw_stats_reset(&t.replay);
    int bad = sum->truncated[0] != 0;
    size_t count = fbw_report_count(r);
    fbw_report_conn *ci = calloc(count ? count : 1, sizeof *ci);
    char (*why)[400] = calloc(count ? count : 1, sizeof *why);
    if (!ci || !why) {
        free(ci);
        free(why);
        fprintf(stderr, "fbwire-pcap: out of memory\n");
        return 1;
    }
    /* which connections run: decoded to their end and not only listed */
    for (size_t i = 0; i < count; i++) {
        fbw_report_conn_info(r, i, &ci[i]);
        check_truncation(why[i], sizeof why[i], &ci[i], sum);
        if (rp->o.connection && ci[i].id != rp->o.connection)
            continue;
        rconn *c = conn_at(rp, ci[i].id);
        if (!c)
            break;
        c->id = ci[i].id;
        c->run = !rp->o.list && !ci[i].problem;
        bad |= ci[i].problem != NULL || c->w.nomem;
    }
    fbw_fpstats *f = NULL;
    if (!rp->o.list) {
        f = rp->f = fbw_fpstats_new();
        if (!f || plan_jobs(rp))
            atomic_store(&rp->nomem, 1);
        else
            run_jobs(rp);
        for (size_t i = 0; i < rp->n; i++)
            bad |= rp->c[i].src.w.nomem;
    }
    fbw_buf b;
    fbw_buf_init(&b);
    if (rp->o.json) {
        putf(&b, "{\"mode\":\"%s\",\"database\":", rp->o.list ? "list" : "replay");
        quote_cstr(&b, rp->o.list ? NULL : rp->o.dsn);
        put(&b, ",\"truncated\":");
        quote_cstr(&b, sum->truncated[0] ? sum->truncated : NULL);
        put(&b, ",\"connections\":[");
    }
    size_t shown = 0;
    for (size_t i = 0; i < count; i++) {
        if (rp->o.connection && ci[i].id != rp->o.connection)
            continue;
        rconn *c = conn_at(rp, ci[i].id);
        if (!c)
            break;
        if (c->run)
            bad |= c->not_run != NULL || c->nfail > 0;
        else if (rp->o.list)
            list_counts(&c->w, c->kinds);
        else /* not replayed: the steps the reader decoded before the problem */
            for (int k = 0; k < FBW_STEP_KINDS; k++)
                c->kinds[k].steps = c->src.kinds[k];
        add_totals(&t, &ci[i], c);
        if (rp->o.json) {
            put(&b, shown ? "," : "");
            conn_json(rp, &b, &ci[i], c);
            b.len--; /* reopen the object for its result differences */
            if (c->run)
                differences(rp, &b, c, &t, 1);
            put(&b, "}");
        } else {
            put(&b, shown ? "\n" : "");
            conn_text(rp, &b, &ci[i], c);
            if (c->run)
                differences(rp, &b, c, &t, 0);
        }
        shown++;
        flush(rp, &b);
    }
    if (rp->o.connection && !shown) {
        fprintf(stderr, "fbwire-pcap: the capture has no connection %d (it has %zu)\n",
                rp->o.connection, count);
        bad = 1;
    }
    fbw_buf copies;
    fbw_buf_init(&copies);
    if (!rp->o.json && f)
        copies_text(rp, &b, &t);
    else if (f)
        copies_json(rp, &copies, &t);
    bad |= copies_bad(rp);
    bad |= t.different > 0;
    if (rp->o.json) {
        put(&b, "]");
        if (fbw_buf_avail(&copies))
            fbw_buf_append(&b, fbw_buf_head(&copies), fbw_buf_avail(&copies));
        put(&b, ",");
        totals_json(rp, &b, &t);
        if (f)
            load_json(rp, &b, f, &t);
        put(&b, "}\n");
    } else {
        totals_text(rp, &b, &t);
        if (f)
            load_text(rp, &b, f, &t);
    }
    flush(rp, &b);
    fbw_buf_free(&copies);
    free(ci);
    free(why);
    if (atomic_load(&rp->nomem))
        fprintf(stderr, "fbwire-pcap: out of memory: the replay report is incomplete\n");
    return bad || atomic_load(&rp->nomem) ? 1 : 0;
}
