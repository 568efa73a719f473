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
 * for no gain at the tens to hundreds of connections a capture holds. Threads share nothing but
 * atomic progress counters; each writes only its own rconn, read after it is joined. */
#include "replay.h"

#include "blob.h"
#include "client.h"
#include "fpstats.h"
#include "stmt.h"
#include "value.h"
#include "workload.h"

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

/* One captured connection: its workload and, after a replay, what happened. A fan-out copy
 * (--connections) has no workload of its own: wl points to the captured one's. */
typedef struct rconn {
    fbw_workload w;
    const fbw_workload *wl;
    int id;               /* captured connection id */
    int copy;             /* 0 the first replay of it, 1.. the fan-out copies */
    int seen;
    int run;              /* to be replayed */
    atomic_int finished;  /* its replay thread is done */
    pthread_t thread;
    uint64_t *rep_ns;     /* per step: replay latency */
    uint32_t *rep_rt;     /* per step: replay round trips */
    fbw_result *rep_res;  /* per step: the replay's result (execute steps) */
    char *ok;             /* per step: ran without failure */
    struct fbw_replay *rp;
    int replayed;         /* connected and ran its steps */
    char *not_run;        /* why it was not replayed (or stopped early), else NULL */
    fbw_stats stats;      /* the replay's, connect to detach */
    kind_count kinds[FBW_STEP_KINDS];
    failure *fail;
    size_t nfail, fail_cap;
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
    *out = rp;
    return FBW_OK;
}

void fbw_replay_free(fbw_replay *rp)
{
    if (!rp)
        return;
    for (size_t i = 0; i < rp->njobs; i++) {
        rconn *c = rp->jobs[i];
        free(c->rep_ns);
        free(c->rep_rt);
        free(c->rep_res);
        free(c->ok);
        if (c->copy) {
            free(c->not_run);
            free(c->fail);
            free(c);
        }
    }
    free(rp->jobs);
    for (size_t i = 0; i < rp->n; i++) {
        fbw_workload_free(&rp->c[i].w);
        free(rp->c[i].not_run);
        free(rp->c[i].fail);
    }
    free(rp->c);
    free(rp);
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
    fbw_workload_packet(&c->w, d, from_client, p, ts_ns);
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
}

static void not_replayed_json(fbw_buf *b, const fbw_workload *w)
{
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

typedef struct run {
    fbw_replay *rp;
    rconn *rc;
    fbw_client *cl;
    fbw_conn *c;
    fbw_tx **tx;        /* by transaction slot */
    size_t *tx_start;   /* by slot: its start step (1-based) while its reply is unchecked */
    fbw_stmt **st;      /* by statement slot */
    size_t *slot_exec;  /* by statement slot: its current execute step (1-based) */
    fbw_value *blob_ids; /* by step: the id of the blob a blob step created in the replay */
    fbw_blob *blob;     /* the blob being written */
    int blob_stage;     /* 0 create, 1 write, 2 close: where a FBW_AGAIN resumes */
    const fbw_workload *w;
    const fbw_step *s;  /* the step being queued */
    fbw_value *vals;
    fbw_exec_result res;
    fbw_exec_result2 res2;  /* op_exec_immediate2 */
    fbw_msgfmt imm_out;     /* its output format: valid until the reply is in */
    fbw_info_result info;   /* info steps and op_info_blob of blob reads */
    size_t act, act_end;    /* blob read: next act to queue, end of the current write */
    size_t acts_n;          /* blob read: acts before its op_close_blob / op_cancel_blob */
    int opened;             /* blob read: op_open_blob2 queued */
    uint32_t more_len;      /* blob read: buffer length of the reads past the capture's */
    fbw_value read_id;      /* blob read: the id it opens */
    int broken;         /* the connection failed: stop */
} run;

static void add_failure(run *r, size_t step, const fbw_step *s, const fbw_err *e,
                        const char *fallback)
{
    rconn *rc = r->rc;
    if (rc->nfail == rc->fail_cap) {
        size_t cap = rc->fail_cap ? rc->fail_cap * 2 : 8;
        failure *f = realloc(rc->fail, cap * sizeof *f);
        if (!f) {
            atomic_store(&r->rp->nomem, 1);
            return;
        }
        rc->fail = f;
        rc->fail_cap = cap;
    }
    failure *f = &rc->fail[rc->nfail++];
    memset(f, 0, sizeof *f);
    f->step = step;
    f->kind = s->kind;
    f->stmt = s->stmt;
    f->tx = s->tx;
    snprintf(f->message, sizeof f->message, "%s", e && e->msg[0] ? e->msg : fallback);
    if (e)
        snprintf(f->sqlstate, sizeof f->sqlstate, "%s", e->sqlstate);
    rc->kinds[s->kind].failed++;
    if (rc->ok)
        rc->ok[step - 1] = 0;
    atomic_fetch_add(&r->rp->steps_failed, 1);
}

static fbw_tx *tx_of(run *r, int slot)
{
    return slot ? r->tx[slot] : NULL;
}

static int q_prepare(void *arg)
{
    run *r = arg;
    return fbw_stmt_prepare(r->st[r->s->stmt], tx_of(r, r->s->tx), (const char *)r->s->data,
                            r->s->len);
}

static int q_execute(void *arg)
{
    run *r = arg;
    return fbw_stmt_execute(r->st[r->s->stmt], tx_of(r, r->s->tx), r->vals,
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
    return fbw_exec_immediate(r->c, tx_of(r, r->s->tx), (const char *)r->s->data, r->s->len,
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
static int run_step(run *r, int (*queue)(void *arg), fbw_err *err)
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
static void check(run *r, size_t i, int rc, const fbw_err *e, const fbw_err *obj, const char *what)
{
    if (obj->code)
        add_failure(r, i, r->s, obj, what);
    else if (rc)
        add_failure(r, i, r->s, e, what);
}

static int need_stmt(run *r, size_t i, int prepared)
{
    const fbw_step *s = r->s;
    if (s->stmt && r->st[s->stmt] && (!prepared || fbw_stmt_prepared(r->st[s->stmt])))
        return 1;
    char msg[96];
    snprintf(msg, sizeof msg, "statement s%d is not %s in the replay", s->stmt,
             prepared ? "prepared" : "allocated");
    add_failure(r, i, s, NULL, msg);
    return 0;
}

static void do_prepare(run *r, size_t i)
{
    const fbw_step *s = r->s;
    fbw_err e;
    fbw_err_clear(&e);
    if (!r->st[s->stmt] && fbw_stmt_new(r->c, &r->st[s->stmt], &e)) {
        add_failure(r, i, s, &e, "cannot allocate a statement");
        return;
    }
    int rc = run_step(r, q_prepare, &e);
    check(r, i, rc, &e, fbw_stmt_error(r->st[s->stmt]), "prepare failed");
}

/* The captured values in the format the client sent them (its own BLR): the server converts them
 * to the parameters' types as it did for the client, so a TIMESTAMP bound to a DATE parameter
 * replays exactly. */
static int decode_as_sent(run *r, size_t i)
{
    const fbw_step *s = r->s;
    fbw_msgfmt f = {s->msg_cols, s->msg_n, s->msg_n};
    free(r->vals);
    r->vals = calloc(f.n ? f.n : 1, sizeof *r->vals);
    if (!r->vals) {
        add_failure(r, i, s, NULL, "out of memory");
        return -1;
    }
    fbw_err e;
    fbw_err_clear(&e);
    fbw_bytes raw = {s->msg, s->msg_len};
    if (fbw_msg_decode(raw, &f, s->msg_protocol, r->vals, &e) != FBW_OK) {
        add_failure(r, i, s, &e, "the captured parameters cannot be decoded");
        return -1;
    }
    for (uint16_t k = 0; s->blob_steps && k < f.n; k++) {
        size_t b = s->blob_steps[k];
        if (!b)
            continue;
        if (r->blob_ids[b - 1].type == 0) {
            char msg[96];
            snprintf(msg, sizeof msg, "parameter %u: its blob (step %zu) was not created", k + 1, b);
            add_failure(r, i, s, NULL, msg);
            return -1;
        }
        r->vals[k].u.quad = r->blob_ids[b - 1].u.quad; /* the replay's blob, same contents */
    }
    return 0;
}

static int bind_as_sent(run *r, size_t i)
{
    const fbw_step *s = r->s;
    fbw_msgfmt f = {s->msg_cols, s->msg_n, s->msg_n};
    if (decode_as_sent(r, i))
        return -1;
    if (fbw_stmt_set_input(r->st[s->stmt], &f) != FBW_OK) {
        add_failure(r, i, s, fbw_stmt_error(r->st[s->stmt]), "cannot bind as the client did");
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
        add_failure(r, i, s, NULL, msg);
        return -1;
    }
    free(r->vals);
    r->vals = calloc(in->n ? in->n : 1, sizeof *r->vals);
    if (!r->vals) {
        add_failure(r, i, s, NULL, "out of memory");
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
            add_failure(r, i, s, &e, "bad parameter");
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
    if (!e)
        return;
    fbw_result *res = &r->rc->rep_res[e - 1];
    const fbw_result *cap = &r->w->steps[e - 1].result;
    const fbw_msgfmt *out = fbw_stmt_output(st);
    fbw_value *v = calloc(out->n ? out->n : 1, sizeof *v);
    if (!v) {
        atomic_store(&r->rp->nomem, 1);
        return;
    }
    const fbw_step *x = &r->w->steps[e - 1];
    uint64_t base = res->rows < 0 ? 0 : (uint64_t)res->rows;
    for (size_t j = 0; j < x->nbrefs; j++) {
        /* the ids the capture's client opened, at the same row and column of this execution */
        const fbw_blob_ref *br = &x->brefs[j];
        fbw_err err;
        if (br->row < base || br->row - base >= fbw_stmt_row_count(st) || br->col >= out->n ||
            fbw_stmt_row(st, (size_t)(br->row - base), v, &err) != FBW_OK ||
            (out->cols[br->col].type != FBW_SQL_BLOB && out->cols[br->col].type != FBW_SQL_QUAD) ||
            v[br->col].is_null)
            continue;
        r->blob_ids[br->step - 1] = v[br->col];
        r->blob_ids[br->step - 1].type = FBW_SQL_BLOB;
    }
    for (size_t k = 0; k < fbw_stmt_row_count(st); k++) {
        if (!cap->eof && cap->rows >= 0 && res->rows >= cap->rows)
            break;
        fbw_err err;
        res->rows = res->rows < 0 ? 1 : res->rows + 1;
        if (fbw_stmt_row(st, k, v, &err) == FBW_OK)
            res->hash += fbw_row_hash(v, out);
        else
            res->unknown = 1;
    }
    free(v);
}

static void do_execute(run *r, size_t i)
{
    const fbw_step *s = r->s;
    if (!need_stmt(r, i, 1) || bind_params(r, i))
        return;
    fbw_err e;
    fbw_err_clear(&e);
    fbw_stmt *st = r->st[s->stmt];
    r->slot_exec[s->stmt] = i;
    fbw_result *res = &r->rc->rep_res[i - 1];
    int rc = run_step(r, q_execute, &e);
    check(r, i, rc, &e, fbw_stmt_error(st), "execute failed");
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
    if (!need_stmt(r, i, 1))
        return;
    fbw_stmt *st = r->st[s->stmt];
    fbw_err e;
    fbw_err_clear(&e);
    while (!fbw_stmt_eof(st) && !fbw_stmt_error(st)->code) {
        fbw_stmt_clear_rows(st);
        int rc = run_step(r, q_fetch, &e);
        if (!rc)
            take_rows(r, st, s->stmt);
        if (rc) {
            check(r, i, rc, &e, fbw_stmt_error(st), "fetch failed");
            return;
        }
        if (!fbw_stmt_row_count(st) && !fbw_stmt_eof(st))
            break; /* nothing was fetched and no end: no open cursor */
    }
    if (fbw_stmt_error(st)->code)
        add_failure(r, i, s, fbw_stmt_error(st), "fetch failed");
    fbw_stmt_clear_rows(st);
}

static int q_blob(void *arg)
{
    run *r = arg;
    const fbw_step *s = r->s;
    int rc = FBW_OK;
    if (r->blob_stage == 0 && (rc = fbw_blob_create(r->blob, tx_of(r, s->tx), s->bpb, s->bpb_len)) == FBW_OK)
        r->blob_stage = 1;
    if (rc == FBW_OK && r->blob_stage == 1 && (rc = fbw_blob_write(r->blob, s->data, s->len)) == FBW_OK)
        r->blob_stage = 2;
    if (rc == FBW_OK && r->blob_stage == 2 && (rc = fbw_blob_close(r->blob)) == FBW_OK)
        r->blob_stage = 3;
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
        add_failure(r, i, s, &e, "cannot make a blob");
        return;
    }
    r->blob_stage = 0;
    int rc = run_step(r, q_blob, &e);
    if (rc == FBW_OK && !fbw_blob_error(r->blob)->code)
        rc = fbw_client_wait(r->cl); /* the close reply: the id is usable once it is in */
    if (fbw_blob_error(r->blob)->code)
        add_failure(r, i, s, fbw_blob_error(r->blob), "blob write failed");
    else if (rc)
        add_failure(r, i, s, &e, "blob write failed");
    else if (fbw_blob_id(r->blob, &r->blob_ids[i - 1]) != FBW_OK)
        add_failure(r, i, s, NULL, "the replayed blob has no id");
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
        rc = run_step(r, q_close, &e);
    if (rc)
        add_failure(r, i, s, &e, "close failed");
}

static void do_start(run *r, size_t i)
{
    const fbw_step *s = r->s;
    fbw_tx *t = r->tx[s->tx];
    if (fbw_tx_start_tpb(t, s->data, s->len)) {
        add_failure(r, i, s, &t->err, "cannot start the transaction");
        return;
    }
    r->tx_start[s->tx] = i; /* its reply arrives with the next request's */
}

static void do_end(run *r, size_t i)
{
    const fbw_step *s = r->s;
    fbw_tx *t = r->tx[s->tx];
    fbw_err_clear(&t->err);
    fbw_err e;
    fbw_err_clear(&e);
    int rc = run_step(r, q_end, &e);
    check(r, i, rc, &e, &t->err, "transaction end failed");
}

static int q_immediate2(void *arg)
{
    run *r = arg;
    const fbw_step *s = r->s;
    fbw_msgfmt in = {s->msg_cols, s->msg_n, s->msg_n};
    r->imm_out = (fbw_msgfmt){s->out_cols, s->out_n, s->out_n};
    return fbw_exec_immediate2(r->c, tx_of(r, s->tx), (const char *)s->data, s->len, &in, r->vals,
                               &r->imm_out, &r->res2);
}

/* op_exec_immediate2: the captured input message decoded in the client's format and sent in it;
 * the output row in the client's format, hashed like a fetched row. */
static void do_immediate2(run *r, size_t i)
{
    const fbw_step *s = r->s;
    if (s->msg_n && decode_as_sent(r, i))
        return;
    fbw_err e;
    fbw_err_clear(&e);
    int rc = run_step(r, q_immediate2, &e);
    check(r, i, rc, &e, &r->res2.err, "execute immediate failed");
    if (rc || r->res2.err.code || !s->out_n)
        return;
    fbw_result *res = &r->rc->rep_res[i - 1];
    res->rows = r->res2.has_row ? 1 : 0;
    res->eof = 1;
    if (!r->res2.has_row)
        return;
    fbw_msgfmt out = {s->out_cols, s->out_n, s->out_n};
    fbw_value *v = calloc(out.n, sizeof *v);
    if (!v) {
        atomic_store(&r->rp->nomem, 1);
        return;
    }
    fbw_bytes raw = {fbw_buf_head(&r->res2.row), fbw_buf_avail(&r->res2.row)};
    if (fbw_msg_decode(raw, &out, fbw_conn_get_info(r->c)->protocol, v, &e) == FBW_OK) {
        res->hash = fbw_row_hash(v, &out);
        for (size_t j = 0; j < s->nbrefs; j++) { /* blob ids it returned that the client read */
            const fbw_blob_ref *br = &s->brefs[j];
            if (br->row == 0 && br->col < out.n && !v[br->col].is_null &&
                (out.cols[br->col].type == FBW_SQL_BLOB || out.cols[br->col].type == FBW_SQL_QUAD)) {
                r->blob_ids[br->step - 1] = v[br->col];
                r->blob_ids[br->step - 1].type = FBW_SQL_BLOB;
            }
        }
    } else {
        res->unknown = 1;
    }
    free(v);
}

static void do_immediate(run *r, size_t i)
{
    if (r->s->imm2) {
        do_immediate2(r, i);
        return;
    }
    fbw_err e;
    fbw_err_clear(&e);
    memset(&r->res, 0, sizeof r->res);
    int rc = run_step(r, q_immediate, &e);
    check(r, i, rc, &e, &r->res.err, "execute immediate failed");
}

/* ---- info requests: the client's items and buffer length on the replayed object ---- */

static int q_info(void *arg)
{
    run *r = arg;
    const fbw_step *s = r->s;
    uint16_t h = 0;
    int32_t op = FBW_OP_INFO_DATABASE;
    int rc = FBW_OK;
    if (s->kind == FBW_STEP_INFO_SQL) {
        op = FBW_OP_INFO_SQL;
        rc = fbw_stmt_handle(r->st[s->stmt], &h);
    } else if (s->kind == FBW_STEP_INFO_TRANSACTION) {
        op = FBW_OP_INFO_TRANSACTION;
        rc = fbw_tx_handle(r->tx[s->tx], &h);
    }
    return rc ? rc : fbw_conn_info_request(r->c, op, h, s->data, s->len, s->info_buflen, &r->info);
}

/* The reply is not compared (ids, page counts and sizes differ between servers); an error is a
 * failure. Asked for the affected rows after an execution, they are that execution's result. */
static void do_info(run *r, size_t i)
{
    const fbw_step *s = r->s;
    if (s->kind == FBW_STEP_INFO_SQL && !need_stmt(r, i, 0))
        return;
    fbw_err e;
    fbw_err_clear(&e);
    int rc = run_step(r, q_info, &e);
    check(r, i, rc, &e, &r->info.err, "info request failed");
    size_t x = s->owner;
    if (rc || r->info.err.code || s->kind != FBW_STEP_INFO_SQL || x == i ||
        r->w->steps[x - 1].counted_by != i)
        return;
    uint64_t affected = 0, selected = 0;
    if (fbw_info_records(fbw_buf_head(&r->info.data), fbw_buf_avail(&r->info.data), &affected,
                         &selected, &e) == FBW_OK)
        r->rc->rep_res[x - 1].affected = (int64_t)affected;
    else
        add_failure(r, i, s, &e, "the record counts cannot be read");
}

/* ---- blob reads: the id fetched at the capture's row and column, read as the client did ---- */

static int q_blob_read(void *arg)
{
    run *r = arg;
    const fbw_step *s = r->s;
    int rc = FBW_OK;
    if (!r->opened) {
        rc = fbw_blob_open(r->blob, tx_of(r, s->tx), &r->read_id, s->bpb, s->bpb_len);
        if (rc)
            return rc;
        r->opened = 1;
        r->act_end = 0; /* the acts the client sent in the same write as the open */
        while (r->act_end < r->acts_n && !s->acts[r->act_end].burst)
            r->act_end++;
    }
    for (; r->act < r->act_end && rc == FBW_OK; r->act += rc == FBW_OK) {
        const fbw_blob_act *a = &s->acts[r->act];
        uint16_t h;
        if (a->op == FBW_OP_GET_SEGMENT) {
            uint32_t len = a->buflen < 3 ? 3 : a->buflen > FBW_BLOB_READ_MAX ? FBW_BLOB_READ_MAX
                                                                              : a->buflen;
            r->more_len = len;
            rc = fbw_blob_read(r->blob, len);
        } else if (a->op == FBW_OP_SEEK_BLOB) {
            rc = fbw_blob_seek(r->blob, a->mode, a->offset);
        } else if ((rc = fbw_blob_handle(r->blob, &h)) == FBW_OK) {
            rc = fbw_conn_info_request(r->c, FBW_OP_INFO_BLOB, h, a->items, a->nitems, a->buflen,
                                       &r->info);
        }
    }
    return rc;
}

static int q_blob_more(void *arg)
{
    run *r = arg;
    return fbw_blob_read(r->blob, r->more_len);
}

static int q_blob_close(void *arg)
{
    run *r = arg;
    return fbw_blob_close(r->blob);
}

static void do_blob_read(run *r, size_t i)
{
    const fbw_step *s = r->s;
    r->read_id = r->blob_ids[i - 1];
    if (r->read_id.type == 0) {
        char msg[160];
        snprintf(msg, sizeof msg,
                 "the replay fetched no blob id at row %" PRIu32 " column %u of step %zu",
                 s->read_row + 1, s->read_col + 1u, s->read_exec);
        add_failure(r, i, s, NULL, msg);
        return;
    }
    fbw_err e;
    fbw_err_clear(&e);
    if (fbw_blob_new(r->c, &r->blob, &e)) {
        add_failure(r, i, s, &e, "cannot make a blob");
        return;
    }
    fbw_err_clear(&r->info.err);
    r->opened = 0;
    r->act = 0;
    r->more_len = FBW_BLOB_READ_MAX;
    r->acts_n = 0;
    while (r->acts_n < s->nacts && s->acts[r->acts_n].op != FBW_OP_CLOSE_BLOB &&
           s->acts[r->acts_n].op != FBW_OP_CANCEL_BLOB)
        r->acts_n++;
    int rc = run_step(r, q_blob_read, &e);
    while (!rc && !fbw_blob_error(r->blob)->code && r->act < r->acts_n) {
        r->act_end = r->act + 1; /* the client waited here: the next write */
        while (r->act_end < r->acts_n && !s->acts[r->act_end].burst)
            r->act_end++;
        rc = run_step(r, q_blob_read, &e);
    }
    const fbw_result *cap = &s->result;
    size_t n = 0;
    /* beyond the client's reads: to the end when it read to the end, else to as many bytes */
    while (!rc && !fbw_blob_error(r->blob)->code && !fbw_blob_eof(r->blob) &&
           (cap->eof || (fbw_blob_data(r->blob, &n), (int64_t)n < cap->rows)))
        rc = run_step(r, q_blob_more, &e);
    const uint8_t *data = fbw_blob_data(r->blob, &n);
    if (fbw_blob_error(r->blob)->code)
        add_failure(r, i, s, fbw_blob_error(r->blob), "blob read failed");
    else if (rc)
        add_failure(r, i, s, &e, "blob read failed");
    else if (r->info.err.code)
        add_failure(r, i, s, &r->info.err, "blob info request failed");
    else {
        fbw_result *res = &r->rc->rep_res[i - 1];
        if (!cap->eof && (int64_t)n > cap->rows)
            n = (size_t)cap->rows; /* the capture read a prefix: compare as much */
        res->rows = (int64_t)n;
        res->hash = fbw_fnv(FBW_FNV_BASIS, data, n);
        res->eof = fbw_blob_eof(r->blob);
    }
    /* closed as the client did: waiting for the reply when it waited, else the close rides with
     * the next request (fbw_blob_free queues it) */
    if (!rc && r->acts_n < s->nacts && s->acts[r->acts_n].burst &&
        run_step(r, q_blob_close, &e) != FBW_OK)
        add_failure(r, i, s, &e, "blob close failed");
    fbw_blob_free(r->blob);
    r->blob = NULL;
}

/* Starts whose reply has arrived by now: report the ones the server refused. */
static void check_starts(run *r, const fbw_workload *w)
{
    for (int t = 1; t <= w->ntx; t++) {
        if (!r->tx_start[t] || r->tx[t]->state == FBW_TX_STARTING)
            continue;
        if (r->tx[t]->state == FBW_TX_FAILED)
            add_failure(r, r->tx_start[t], &w->steps[r->tx_start[t] - 1], &r->tx[t]->err,
                        "transaction start failed");
        r->tx_start[t] = 0;
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
    case FBW_STEP_BLOB_READ: do_blob_read(r, i); break;
    case FBW_STEP_INFO_SQL: case FBW_STEP_INFO_DATABASE: case FBW_STEP_INFO_TRANSACTION:
        do_info(r, i);
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

static void run_steps(run *r, const fbw_workload *w)
{
    for (size_t i = 0; i < w->n && !r->broken; i++) {
        r->s = &w->steps[i];
        pace(r->rp, r->s->t_req);
        uint64_t before = fbw_conn_stats(r->c)->round_trips;
        uint64_t t0 = now_ns();
        r->rc->kinds[r->s->kind].steps++;
        r->rc->ok[i] = 1;
        if (r->s->problem)
            add_failure(r, i + 1, r->s, NULL, r->s->problem);
        else
            do_step(r, i + 1);
        uint64_t rts = fbw_conn_stats(r->c)->round_trips - before;
        r->rc->rep_ns[i] = now_ns() - t0;
        r->rc->rep_rt[i] = (uint32_t)rts;
        r->rc->kinds[r->s->kind].round_trips += rts;
        check_starts(r, w);
        atomic_fetch_add(&r->rp->steps_done, 1);
    }
}

static int alloc_slots(run *r, const fbw_workload *w)
{
    r->tx = calloc((size_t)w->ntx + 1, sizeof *r->tx);
    r->tx_start = calloc((size_t)w->ntx + 1, sizeof *r->tx_start);
    r->st = calloc((size_t)w->nstmt + 1, sizeof *r->st);
    r->slot_exec = calloc((size_t)w->nstmt + 1, sizeof *r->slot_exec);
    r->blob_ids = calloc(w->n ? w->n : 1, sizeof *r->blob_ids);
    fbw_buf_init(&r->res2.row);
    fbw_buf_init(&r->info.data);
    if (!r->tx || !r->tx_start || !r->st || !r->slot_exec || !r->blob_ids)
        return -1;
    for (int t = 1; t <= w->ntx; t++) {
        r->tx[t] = malloc(sizeof *r->tx[t]);
        if (!r->tx[t])
            return -1;
        fbw_tx_init(r->tx[t], r->c);
    }
    return 0;
}

static void free_slots(run *r, const fbw_workload *w)
{
    if (r->st)
        for (int s = 1; s <= w->nstmt; s++)
            fbw_stmt_free(r->st[s]);
    if (r->tx)
        for (int t = 1; t <= w->ntx; t++)
            free(r->tx[t]);
    free(r->st);
    free(r->tx);
    free(r->tx_start);
    free(r->slot_exec);
    free(r->blob_ids);
    free(r->vals);
    fbw_buf_free(&r->res2.row);
    fbw_buf_free(&r->info.data);
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

/* A connection that began after another one ended in the capture begins after it in the replay
 * too (its SQL may need what the other committed, e.g. a table). */
static void wait_predecessors(fbw_replay *rp, const rconn *c)
{
    for (size_t i = 0; i < rp->njobs; i++) {
        const rconn *o = rp->jobs[i];
        if (o == c || o->wl->t_last >= c->wl->t_first)
            continue;
        while (!atomic_load(&o->finished))
            sleep_until(now_ns() + 1000000u);
    }
}

static void replay_conn(fbw_replay *rp, rconn *c)
{
    pace(rp, c->wl->t_first);
    wait_predecessors(rp, c);
    fbw_client_opts o;
    fbw_client_opts_init(&o);
    o.conn.user = rp->o.user;
    o.conn.password = rp->o.password;
    o.conn.wire_crypt = rp->o.wire_crypt;
    run r;
    memset(&r, 0, sizeof r);
    r.rp = rp;
    r.rc = c;
    r.w = c->wl;
    fbw_err err;
    fbw_err_clear(&err);
    if (fbw_client_connect(rp->o.dsn, &o, &r.cl, &err)) {
        set_not_run(rp, c, "cannot connect to %s: %s%s%s%s", rp->o.dsn, err.msg,
                    err.sqlstate[0] ? " [SQLSTATE " : "", err.sqlstate,
                    err.sqlstate[0] ? "]" : "");
        return;
    }
    r.c = fbw_client_conn(r.cl);
    c->replayed = 1;
    atomic_fetch_add(&rp->open_conns, 1);
    if (alloc_slots(&r, c->wl)) {
        atomic_store(&rp->nomem, 1);
        set_not_run(rp, c, "out of memory");
    } else {
        run_steps(&r, c->wl);
    }
    free_slots(&r, c->wl);
    atomic_fetch_sub(&rp->open_conns, 1);
    if (r.broken) {
        set_not_run(rp, c, "the replay connection failed: %s", fbw_client_error(r.cl)->msg);
        c->stats = *fbw_conn_stats(r.c);
        fbw_client_abort(r.cl);
        return;
    }
    pace(rp, c->wl->t_detach);
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
        figures_text(b, ci->stats, &c->stats, c->replayed);
        kinds_text(b, c->kinds, c->replayed);
    }
    not_replayed_text(b, &c->w);
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
    }
    put(b, ",\"capture\":");
    stats_json(b, ci->stats);
    put(b, ",\"step_counts\":");
    kinds_json(b, c->kinds);
    put(b, ",");
    not_replayed_json(b, &c->w);
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

/* ---- results: every execution against the capture's own replies ---- */

/* FBW_FP_* for execute step i of job c (0-based). */
static int compare(const fbw_replay *rp, const rconn *c, size_t i)
{
    const fbw_step *s = &c->wl->steps[i];
    const fbw_result *cap = &s->result, *rep = &c->rep_res[i];
    if (rp->o.results_ignore || !c->ok || !c->ok[i])
        return FBW_FP_NOT_COMPARED;
    if (s->kind == FBW_STEP_BLOB_READ) {
        if (cap->unknown)
            return FBW_FP_NOT_COMPARED;
        return rep->rows == cap->rows && rep->hash == cap->hash ? FBW_FP_MATCH : FBW_FP_DIFFERENT;
    }
    if (s->kind != FBW_STEP_EXECUTE && !(s->kind == FBW_STEP_IMMEDIATE && s->imm2))
        return FBW_FP_NOT_COMPARED;
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

static const char *sql_of(const fbw_workload *w, const fbw_step *s)
{
    if (s->kind == FBW_STEP_IMMEDIATE || s->kind == FBW_STEP_PREPARE)
        return (const char *)s->data;
    if (s->sql_step && w->steps[s->sql_step - 1].data)
        return (const char *)w->steps[s->sql_step - 1].data;
    return NULL;
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

static void difference_text(fbw_buf *b, const rconn *c, size_t i)
{
    const fbw_step *s = &c->wl->steps[i];
    const char *sql = sql_of(c->wl, s);
    int rows = s->result.rows >= 0;
    if (s->kind == FBW_STEP_BLOB_READ) {
        const fbw_result *cap = &s->result, *rep = &c->rep_res[i];
        putf(b,
             "different: step %zu blob_read (row %" PRIu32 " col %u of step %zu): capture %" PRId64
             " bytes%s (hash %016" PRIx64 "), replay %" PRId64 " bytes (hash %016" PRIx64 ")\n",
             i + 1, s->read_row + 1, s->read_col + 1u, s->read_exec, cap->rows,
             cap->eof ? "" : " read of it", cap->hash, rep->rows, rep->hash);
        return;
    }
    putf(b, "different: step %zu %s s%d ", i + 1, fbw_step_name(s->kind), s->stmt);
    if (sql)
        quote(b, sql, strlen(sql));
    put(b, ": ");
    side_text(b, "capture", &s->result, rows);
    put(b, ", ");
    side_text(b, "replay", &c->rep_res[i], rows);
    put(b, "\n");
}

static void difference_json(fbw_buf *b, const rconn *c, size_t i)
{
    const fbw_step *s = &c->wl->steps[i];
    const fbw_result *cap = &s->result, *rep = &c->rep_res[i];
    putf(b, "{\"step\":%zu,\"kind\":\"%s\",\"stmt\":%d,\"sql\":", i + 1, fbw_step_name(s->kind),
         s->stmt);
    quote_cstr(b, sql_of(c->wl, s));
    putf(b,
         ",\"capture\":{\"rows\":%" PRId64 ",\"hash\":\"%016" PRIx64 "\",\"affected\":%" PRId64
         "},\"replay\":{\"rows\":%" PRId64 ",\"hash\":\"%016" PRIx64 "\",\"affected\":%" PRId64 "}}",
         cap->rows, cap->hash, cap->affected, rep->rows, rep->hash, rep->affected);
}

#define MAX_DIFFS_SHOWN 20

/* Result differences of one job; counts go into t. */
static void differences(const fbw_replay *rp, fbw_buf *b, const rconn *c, totals *t, int json)
{
    size_t shown = 0, more = 0;
    if (json)
        put(b, ",\"differences\":[");
    for (size_t i = 0; c->ok && i < c->wl->n; i++) {
        int r = compare(rp, c, i);
        if (r == FBW_FP_NOT_COMPARED)
            continue;
        t->compared++;
        t->matched += r == FBW_FP_MATCH;
        if (r != FBW_FP_DIFFERENT)
            continue;
        t->different++;
        if (json) {
            put(b, shown++ ? "," : "");
            difference_json(b, c, i);
        } else if (shown < MAX_DIFFS_SHOWN) {
            difference_text(b, c, i);
            shown++;
        } else {
            more++;
        }
    }
    if (json)
        put(b, "]");
    else if (more)
        putf(b, "different: %zu more (--json lists all)\n", more);
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

/* An execution is its execute step and the fetch steps of its cursor: latencies and round trips
 * of those steps add up (think time between them is not latency). */
static int add_job(fbw_fpstats *f, const fbw_replay *rp, const rconn *c)
{
    const fbw_workload *w = c->wl;
    fbw_fp_exec *x = calloc(w->n ? w->n : 1, sizeof *x);
    if (!x)
        return -1;
    for (size_t i = 0; i < w->n; i++) {
        const fbw_step *s = &w->steps[i];
        fbw_fp_exec *e = &x[s->owner ? s->owner - 1 : i];
        if (i == (s->owner ? s->owner - 1 : i))
            e->replayed = c->ok && c->ok[i] && c->replayed;
        e->capture_ns += s->t_end > s->t_req ? s->t_end - s->t_req : 0;
        e->capture_rt += s->round_trips;
        if (c->rep_ns) {
            e->replay_ns += c->rep_ns[i];
            e->replay_rt += c->rep_rt[i];
            e->replayed &= c->ok[i];
        }
    }
    int rc = 0;
    fbw_buf key;
    fbw_buf_init(&key);
    for (size_t i = 0; i < w->n && !rc; i++) {
        const fbw_step *s = &w->steps[i];
        if (!is_execution(s->kind))
            continue;
        fbw_buf_reset(&key);
        const char *sql = sql_of(w, s);
        if (end_names[s->kind])
            put(&key, end_names[s->kind]);
        else if (sql)
            fbw_fingerprint(sql, strlen(sql), &key);
        else
            put(&key, "(statement prepared before the capture)");
        x[i].result = compare(rp, c, i);
        rc = fbw_fpstats_add(f, (const char *)fbw_buf_head(&key), fbw_buf_avail(&key), &x[i]);
    }
    fbw_buf_free(&key);
    free(x);
    return rc;
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

static int alloc_results(rconn *c)
{
    size_t n = c->wl->n ? c->wl->n : 1;
    c->rep_ns = calloc(n, sizeof *c->rep_ns);
    c->rep_rt = calloc(n, sizeof *c->rep_rt);
    c->rep_res = calloc(n, sizeof *c->rep_res);
    c->ok = calloc(n, 1);
    if (!c->rep_ns || !c->rep_rt || !c->rep_res || !c->ok)
        return -1;
    for (size_t i = 0; i < c->wl->n; i++)
        c->rep_res[i] = (fbw_result){.rows = -1, .affected = -1};
    return 0;
}

static int add_job_slot(fbw_replay *rp, rconn *c)
{
    rconn **j = realloc(rp->jobs, (rp->njobs + 1) * sizeof *j);
    if (!j)
        return -1;
    rp->jobs = j;
    rp->jobs[rp->njobs++] = c;
    c->rp = rp;
    return alloc_results(c);
}

/* The replayed connections: every captured one to replay, then --connections copies. */
static int plan_jobs(fbw_replay *rp)
{
    size_t captured = 0;
    for (size_t i = 0; i < rp->n; i++) {
        rconn *c = &rp->c[i];
        if (!c->run)
            continue;
        c->wl = &c->w;
        if (add_job_slot(rp, c))
            return -1;
        if (!captured || c->w.t_first < rp->cap_t0)
            rp->cap_t0 = c->w.t_first;
        if (c->w.t_last > rp->cap_t1)
            rp->cap_t1 = c->w.t_last;
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
        c->copy = (int)(j / captured);
        c->run = 1;
        if (add_job_slot(rp, c)) {
            free(c);
            return -1;
        }
    }
    return 0;
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
                atomic_store(&rp->jobs[k]->finished, 1);
            }
            break;
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
        f = fbw_fpstats_new();
        if (!f || plan_jobs(rp))
            atomic_store(&rp->nomem, 1);
        else
            run_jobs(rp);
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
        else
            list_counts(&c->w, c->kinds);
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
    for (size_t i = 0; f && i < rp->njobs; i++)
        if (add_job(f, rp, rp->jobs[i]))
            atomic_store(&rp->nomem, 1);
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
    fbw_fpstats_free(f);
    free(ci);
    free(why);
    if (atomic_load(&rp->nomem))
        fprintf(stderr, "fbwire-pcap: out of memory: the replay report is incomplete\n");
    return bad || atomic_load(&rp->nomem) ? 1 : 0;
}
