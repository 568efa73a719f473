/* SPDX-License-Identifier: MIT */
/* replay.c - list a captured workload, or replay it through fbwire's blocking client and compare
 * round trips (replay.h). Each step is queued the way an fbwire application would: a transaction
 * start is only queued (it rides with the next request), frees are deferred, prepare, execute,
 * fetch, commit and execute immediate wait for their replies because the next step needs them. */
#include "replay.h"

#include "client.h"
#include "stmt.h"
#include "value.h"
#include "workload.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

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

/* One captured connection: its workload and, after a replay, what happened. */
typedef struct rconn {
    fbw_workload w;
    int seen;
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
    int nomem;
};

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
        rp->nomem = 1;
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
            rp->nomem = 1;
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
                    const struct fbw_pkt *p)
{
    fbw_replay *rp = arg;
    if (rp->o.connection && conn_id != rp->o.connection)
        return;
    rconn *c = conn_at(rp, conn_id);
    if (!c)
        return;
    c->seen = 1;
    fbw_workload_packet(&c->w, d, from_client, p);
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
    default:
        break;
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
    const fbw_step *s;  /* the step being queued */
    fbw_value *vals;
    fbw_exec_result res;
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
            r->rp->nomem = 1;
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
    return fbw_stmt_execute(r->st[r->s->stmt], tx_of(r, r->s->tx), r->vals, FBW_EXEC_COUNT);
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

/* The captured values as the replayed statement describes its parameters (text in between, so a
 * client that bound other types than the server describes still replays). */
static int bind_params(run *r, size_t i)
{
    const fbw_step *s = r->s;
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

static void do_execute(run *r, size_t i)
{
    const fbw_step *s = r->s;
    if (!need_stmt(r, i, 1) || bind_params(r, i))
        return;
    fbw_err e;
    fbw_err_clear(&e);
    int rc = run_step(r, q_execute, &e);
    check(r, i, rc, &e, fbw_stmt_error(r->st[s->stmt]), "execute failed");
    fbw_stmt_clear_rows(r->st[s->stmt]);
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

static void do_immediate(run *r, size_t i)
{
    fbw_err e;
    fbw_err_clear(&e);
    memset(&r->res, 0, sizeof r->res);
    int rc = run_step(r, q_immediate, &e);
    check(r, i, rc, &e, &r->res.err, "execute immediate failed");
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
    default: break;
    }
}

static void run_steps(run *r, const fbw_workload *w)
{
    for (size_t i = 0; i < w->n && !r->broken; i++) {
        r->s = &w->steps[i];
        uint64_t before = fbw_conn_stats(r->c)->round_trips;
        r->rc->kinds[r->s->kind].steps++;
        if (r->s->problem)
            add_failure(r, i + 1, r->s, NULL, r->s->problem);
        else
            do_step(r, i + 1);
        r->rc->kinds[r->s->kind].round_trips += fbw_conn_stats(r->c)->round_trips - before;
        check_starts(r, w);
    }
}

static int alloc_slots(run *r, const fbw_workload *w)
{
    r->tx = calloc((size_t)w->ntx + 1, sizeof *r->tx);
    r->tx_start = calloc((size_t)w->ntx + 1, sizeof *r->tx_start);
    r->st = calloc((size_t)w->nstmt + 1, sizeof *r->st);
    if (!r->tx || !r->tx_start || !r->st)
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
    free(r->vals);
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

static void replay_conn(fbw_replay *rp, rconn *c)
{
    fbw_client_opts o;
    fbw_client_opts_init(&o);
    o.conn.user = rp->o.user;
    o.conn.password = rp->o.password;
    o.conn.wire_crypt = rp->o.wire_crypt;
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
        return;
    }
    r.c = fbw_client_conn(r.cl);
    c->replayed = 1;
    if (alloc_slots(&r, &c->w)) {
        rp->nomem = 1;
        set_not_run(rp, c, "out of memory");
    } else {
        run_steps(&r, &c->w);
    }
    free_slots(&r, &c->w);
    if (r.broken) {
        set_not_run(rp, c, "the replay connection failed: %s", fbw_client_error(r.cl)->msg);
        c->stats = *fbw_conn_stats(r.c);
        fbw_client_abort(r.cl);
        return;
    }
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

/* Replay (unless listing) one connection; returns 1 when anything about it failed. */
static int handle_conn(fbw_replay *rp, const fbw_report_conn *ci, rconn *c)
{
    int bad = ci->problem != NULL || c->w.nomem;
    if (!rp->o.list && !ci->problem) {
        replay_conn(rp, c);
        bad |= c->not_run != NULL || c->nfail > 0;
    } else {
        /* listing, or decoded only in part: a partial replay would look like the whole workload */
        list_counts(&c->w, c->kinds);
    }
    return bad;
}

int fbw_replay_finish(fbw_replay *rp, const fbw_report *r, const fbw_cap_summary *sum)
{
    totals t;
    memset(&t, 0, sizeof t);
    fbw_stats_reset(&t.capture);
    fbw_stats_reset(&t.replay);
    int bad = sum->truncated[0] != 0;
    fbw_buf b;
    fbw_buf_init(&b);
    if (rp->o.json)
        putf(&b, "{\"mode\":\"%s\",\"database\":", rp->o.list ? "list" : "replay");
    if (rp->o.json) {
        quote_cstr(&b, rp->o.list ? NULL : rp->o.dsn);
        put(&b, ",\"truncated\":");
        quote_cstr(&b, sum->truncated[0] ? sum->truncated : NULL);
        put(&b, ",\"connections\":[");
    }
    size_t shown = 0;
    for (size_t i = 0; i < fbw_report_count(r); i++) {
        fbw_report_conn ci;
        char why[400];
        fbw_report_conn_info(r, i, &ci);
        check_truncation(why, sizeof why, &ci, sum);
        if (rp->o.connection && ci.id != rp->o.connection)
            continue;
        rconn *c = conn_at(rp, ci.id);
        if (!c)
            break;
        bad |= handle_conn(rp, &ci, c);
        add_totals(&t, &ci, c);
        if (rp->o.json) {
            put(&b, shown ? "," : "");
            conn_json(rp, &b, &ci, c);
        } else {
            put(&b, shown ? "\n" : "");
            conn_text(rp, &b, &ci, c);
        }
        shown++;
        flush(rp, &b); /* a long replay shows each connection as it finishes */
    }
    if (rp->o.connection && !shown) {
        fprintf(stderr, "fbwire-pcap: the capture has no connection %d (it has %zu)\n",
                rp->o.connection, fbw_report_count(r));
        bad = 1;
    }
    if (rp->o.json) {
        put(&b, "],");
        totals_json(rp, &b, &t);
        put(&b, "}\n");
    } else {
        totals_text(rp, &b, &t);
    }
    flush(rp, &b);
    if (rp->nomem)
        fprintf(stderr, "fbwire-pcap: out of memory: the replay report is incomplete\n");
    return bad || rp->nomem ? 1 : 0;
}
