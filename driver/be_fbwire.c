/* SPDX-License-Identifier: MIT */
/* be_fbwire.c - the native backend: fbwire's own protocol client behind the backend vtable.
 *
 * Where fbclient waits after every request, this backend queues what belongs together and waits
 * once (docs/design.md, Pipelining). Statements outside BEGIN (--fbwire-autocommit):
 *   - shared (default): one read-committed transaction with isc_tpb_autocommit, so the engine
 *     commits (retaining) every statement that changed something, durably, before its reply;
 *     op_execute + op_info_sql(records) go out together, one round trip; the transaction is
 *     restarted every N statements or T ms (it would hold back garbage collection), the restart
 *     riding along with the next statement; DDL runs in a transaction of its own;
 *   - pipelined: a write gets its own transaction: op_transaction + op_execute +
 *     op_info_sql(records) + op_commit in one write, one round trip; a SELECT runs in a
 *     long-lived read-only read-committed transaction restarted like the shared one;
 *   - BEGIN queues op_transaction, which goes out with the first statement of the transaction;
 *   - a multi-row INSERT goes through the batch API on protocol 16+ (Firebird 4+: create, rows
 *     and execute in one round trip), else as one pipelined run of single-row executes.
 * --fbwire-pipeline=transaction: inside BEGIN ... COMMIT, executions of prepared statements are
 * queued without waiting (see "pipelined transactions" below); COMMIT of a transaction that
 * wrote nothing rides along with them (one round trip), a writing transaction is committed only
 * after every reply was checked (two round trips).
 * --fbwire-autocommit=per-statement and =shared behave like the fbclient backend's modes so that
 * the two clients can be compared request for request. */
#include "backend.h"

#include "batch.h"
#include "fbwire.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define ISC_READ_ONLY_TRANS 335544361u /* a SELECT that writes: retried in a read-write transaction */
#define BULK_CHUNK 500                 /* rows per wait in a pipelined bulk insert */
#define PIPE_MAX_REPLIES 2048          /* pipelined transaction: replies in flight before a sync */
#define PIPE_MAX_BYTES ((size_t)1 << 20) /* ... and request bytes queued before a sync */

/* One queued execution of a pipelined transaction: its own result, and what names it. */
typedef struct pipe_ent {
    struct pipe_ent *next;
    fbw_exec_out out;
    unsigned k;          /* its place in the transaction, from 1 */
    char what[100];      /* the statement's SQL (start of) */
} pipe_ent;

struct fbw_be_conn {
    const fbw_be_conf *conf;
    fbw_client *cl;
    fbw_conn *c;
    fbw_tx exp;          /* explicit transaction (BEGIN) */
    int exp_open;
    fbw_tx own;          /* a statement's own transaction (autocommit) */
    fbw_tx shared[2];    /* shared autocommit / pipelined read-only transaction; a restart
                            commits one while starting the other in the same write */
    int cur;             /* shared[cur] is the live one */
    unsigned shared_count;
    uint64_t shared_started_ms;
    fbw_tx_opts rw, ro, ac;
    fbw_buf text;        /* scratch for result text */
    struct fbw_be_stmt *query; /* re-prepared for each unprepared DML query (its handle is kept) */
    /* pipelined transaction (--fbwire-pipeline=transaction) */
    pipe_ent *pipe_head, *pipe_tail; /* queued in this transaction, not yet checked */
    pipe_ent *pipe_spare;            /* checked entries for reuse */
    unsigned pipe_n;                 /* executions queued in this transaction */
    int pipe_writes;                 /* one of them may write: COMMIT only after checking */
    int pipe_failed;                 /* a queued statement failed: report, never commit */
    fbw_err pipe_err;
    pipe_ent *reader;                /* the latest execution: its rows may still be read */
    struct fbw_be_stmt *reader_bs;
};

struct fbw_be_stmt {
    fbw_be_conn *c;
    fbw_stmt *s;
    unsigned nparams;
    fbw_value *vals;     /* nparams */
    char (*num)[48];     /* nparams scratch strings for numbers bound to text columns */
    char what[96];       /* start of the SQL, to name the statement in a pipelined error */
};

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static int iso_of(fbw_be_isolation i)
{
    switch (i) {
    case FBW_BE_ISO_READ_COMMITTED_NOREC: return FBW_ISO_READ_COMMITTED_NO_REC;
    case FBW_BE_ISO_READ_CONSISTENCY: return FBW_ISO_READ_CONSISTENCY;
    case FBW_BE_ISO_SNAPSHOT: return FBW_ISO_SNAPSHOT;
    case FBW_BE_ISO_SERIALIZABLE: return FBW_ISO_SERIALIZABLE;
    default: return FBW_ISO_READ_COMMITTED;
    }
}

/* Copy the client's error, or the connection's when the client has none. */
static int fail(fbw_be_conn *c, int rc, fbw_err *err)
{
    const fbw_err *e = fbw_client_error(c->cl);
    if (e->code == FBW_OK)
        e = fbw_conn_error(c->c);
    if (e->code != FBW_OK)
        *err = *e;
    else
        fbw_err_set(err, rc, "fbwire: %s", fbw_rc_name(rc));
    return rc;
}

/* A server error of a request becomes the operation's error. */
static int server_error(const fbw_err *e, fbw_err *err)
{
    *err = *e;
    return e->code;
}

static int wait_all(fbw_be_conn *c, fbw_err *err)
{
    int rc = fbw_client_wait(c->cl);
    return rc ? fail(c, rc, err) : FBW_OK;
}

typedef struct queued {
    int (*fn)(void *arg);
    void *arg;
} queued;

static int run(fbw_be_conn *c, int (*fn)(void *), void *arg, fbw_err *err)
{
    int rc = fbw_client_run(c->cl, fn, arg);
    return rc ? fail(c, rc, err) : FBW_OK;
}

/* ---- connect ---- */

static int fbwire_global_init(fbw_err *err)
{
    (void)err;
    return FBW_OK;
}

static int open_conn(const fbw_be_conf *conf, int create, fbw_be_conn **out, fbw_err *err)
{
    *out = NULL;
    fbw_be_conn *c = calloc(1, sizeof *c);
    if (!c)
        return fbw_err_set(err, FBW_E_NOMEM, "fbwire: out of memory");
    c->conf = conf;
    fbw_client_opts o;
    fbw_client_opts_init(&o);
    o.conn.user = conf->user;
    o.conn.password = conf->password;
    o.conn.auth_list = conf->auth && conf->auth[0] ? conf->auth : NULL;
    o.conn.compress = conf->compress;
    o.conn.process_name = "sysbench";
    const char *wc = conf->wire_crypt ? conf->wire_crypt : "enabled";
    o.conn.wire_crypt = !strcasecmp(wc, "required")   ? FBW_WIRE_CRYPT_REQUIRED
                        : !strcasecmp(wc, "disabled") ? FBW_WIRE_CRYPT_DISABLED
                                                      : FBW_WIRE_CRYPT_ENABLED;
    o.conn.create = create;
    o.conn.page_size = conf->page_size;
    int rc = fbw_client_connect(conf->db, &o, &c->cl, err);
    if (rc) {
        free(c);
        return rc;
    }
    c->c = fbw_client_conn(c->cl);
    fbw_tx_init(&c->exp, c->c);
    fbw_tx_init(&c->own, c->c);
    fbw_tx_init(&c->shared[0], c->c);
    fbw_tx_init(&c->shared[1], c->c);
    fbw_tx_opts_init(&c->rw);
    c->rw.isolation = iso_of(conf->isolation);
    c->rw.lock_timeout = conf->lock_timeout;
    c->ro = c->rw;
    c->ro.isolation = FBW_ISO_READ_COMMITTED;
    c->ro.read_only = 1;
    fbw_tx_opts_init(&c->ac);
    c->ac.lock_timeout = conf->lock_timeout;
    c->ac.autocommit = 1;
    fbw_buf_init(&c->text);
    *out = c;
    return FBW_OK;
}

static int fbwire_connect(const fbw_be_conf *conf, fbw_be_conn **out, fbw_err *err)
{
    return open_conn(conf, 0, out, err);
}

static int fbwire_create(const fbw_be_conf *conf, fbw_be_conn **out, fbw_err *err)
{
    return open_conn(conf, 1, out, err);
}

static int tx_live(const fbw_tx *t) { return t->state == FBW_TX_STARTING || t->state == FBW_TX_ACTIVE; }

static void stmt_free(fbw_be_stmt *bs);
static void release_query(fbw_be_conn *c);
static void pipe_free_all(fbw_be_conn *c);

static void fbwire_disconnect(fbw_be_conn *c)
{
    if (!c)
        return;
    release_query(c);
    if (fbw_conn_get_state(c->c) == FBW_CS_READY) {
        if (tx_live(&c->exp))
            fbw_tx_rollback(&c->exp);
        for (int i = 0; i < 2; i++)
            if (tx_live(&c->shared[i]))
                fbw_tx_commit(&c->shared[i]);
        fbw_client_close(c->cl); /* detach waits for the queued ends too */
    } else {
        fbw_client_abort(c->cl);
    }
    fbw_buf_free(&c->text);
    pipe_free_all(c);
    free(c);
}

/* ---- explicit transactions ---- */

static int end_checked(fbw_be_conn *c, fbw_tx *t, int commit, fbw_err *err);

static int end_tx(fbw_be_conn *c, fbw_tx *t, int commit, fbw_err *err)
{
    if (!tx_live(t))
        return FBW_OK;
    int rc = commit ? fbw_tx_commit(t) : fbw_tx_rollback(t);
    if (rc == FBW_OK)
        rc = wait_all(c, err);
    else
        rc = fail(c, rc, err);
    return rc ? rc : end_checked(c, t, commit, err);
}

/* The end of t was answered: its own error, and a failed commit rolled back. */
static int end_checked(fbw_be_conn *c, fbw_tx *t, int commit, fbw_err *err)
{
    int rc;
    if (t->err.code != FBW_OK) {
        rc = server_error(&t->err, err);
        if (commit && tx_live(t)) { /* a failed commit leaves nothing open: roll back */
            fbw_tx_rollback(t);
            fbw_err keep = *err;
            wait_all(c, err);
            *err = keep;
        }
        return rc;
    }
    return FBW_OK;
}

static int pipe_sync(fbw_be_conn *c, fbw_err *err);
static int pipe_error(const fbw_be_conn *c, fbw_err *err);
static void pipe_reset(fbw_be_conn *c);
static int fbwire_commit(fbw_be_conn *c, fbw_err *err);

static int fbwire_begin(fbw_be_conn *c, fbw_err *err)
{
    int rc = fbwire_commit(c, err);
    if (rc)
        return rc;
    /* Queued only: op_transaction goes out with the transaction's first statement. */
    rc = fbw_tx_start(&c->exp, &c->rw);
    if (rc)
        return fail(c, rc, err);
    c->exp_open = 1;
    return FBW_OK;
}

/* COMMIT of a pipelined transaction (a sync point). */
static int pipe_commit(fbw_be_conn *c, fbw_err *err)
{
    int rc;
    if (!c->pipe_failed && !c->pipe_writes && tx_live(&c->exp)) {
        /* Only SELECTs were queued: the COMMIT rides along, one round trip; a failed SELECT
         * is still reported (the event restarts), and nothing was written that could be lost. */
        rc = fbw_tx_commit(&c->exp);
        rc = rc ? fail(c, rc, err) : pipe_sync(c, err);
        if (rc == FBW_OK)
            rc = c->pipe_failed ? pipe_error(c, err) : end_checked(c, &c->exp, 1, err);
    } else {
        /* Every reply is checked before the COMMIT is sent: a failed statement rolls back. */
        rc = pipe_sync(c, err);
        if (rc == FBW_OK && c->pipe_failed) {
            rc = pipe_error(c, err);
            fbw_err keep = *err;
            end_tx(c, &c->exp, 0, err);
            *err = keep;
        } else if (rc == FBW_OK) {
            rc = end_tx(c, &c->exp, 1, err);
        }
    }
    pipe_reset(c);
    return rc;
}

static int fbwire_commit(fbw_be_conn *c, fbw_err *err)
{
    int pipelined = c->conf->pipeline == FBW_PIPE_TRANSACTION && c->exp_open;
    c->exp_open = 0;
    return pipelined ? pipe_commit(c, err) : end_tx(c, &c->exp, 1, err);
}

static int fbwire_rollback(fbw_be_conn *c, fbw_err *err)
{
    c->exp_open = 0;
    if (c->conf->pipeline == FBW_PIPE_TRANSACTION) {
        int rc = end_tx(c, &c->exp, 0, err); /* also answers whatever was queued */
        if (rc == FBW_OK)
            rc = pipe_sync(c, err);
        pipe_reset(c);
        return rc;
    }
    return end_tx(c, &c->exp, 0, err);
}

/* ---- statements ---- */

typedef struct prep_call {
    fbw_be_stmt *bs;
    fbw_tx *tx;
    const char *sql;
    size_t len;
} prep_call;

static int q_prepare(void *arg)
{
    prep_call *p = arg;
    return fbw_stmt_prepare(p->bs->s, p->tx, p->sql, p->len);
}

/* The transaction a prepare runs in: Firebird 3 refuses to prepare without one ("invalid
 * transaction handle (expecting explicit transaction start)"). Outside BEGIN that is the shared
 * transaction (read-only in pipelined and per-statement mode: prepare only reads metadata),
 * started here when none is live; the statement may later execute in any transaction. */
static int prepare_tx(fbw_be_conn *c, fbw_tx **out, fbw_err *err)
{
    *out = &c->exp;
    if (c->exp_open) {
        /* BEGIN's op_transaction is still queued: a new statement's allocation would take the
         * 0xFFFF shorthand, so the start is answered first (no cost: it had to go anyway). */
        if (c->exp.state != FBW_TX_STARTING)
            return FBW_OK;
        int rc = wait_all(c, err);
        return rc ? rc : c->exp.state == FBW_TX_ACTIVE ? FBW_OK : server_error(&c->exp.err, err);
    }
    fbw_tx *t = &c->shared[c->cur];
    if (!tx_live(t)) {
        int rc = fbw_tx_start(t, c->conf->autocommit == FBW_AC_SHARED ? &c->ac : &c->ro);
        rc = rc ? fail(c, rc, err) : wait_all(c, err);
        if (rc)
            return rc;
        if (t->state != FBW_TX_ACTIVE)
            return server_error(&t->err, err);
        c->shared_count = 0;
        c->shared_started_ms = now_ms();
    }
    *out = t;
    return FBW_OK;
}

static void stmt_free(fbw_be_stmt *bs)
{
    if (!bs)
        return;
    fbw_stmt_free(bs->s);
    free(bs->vals);
    free(bs->num);
    free(bs);
}

/* The statement kept for unprepared DML stays prepared on the server, and Firebird counts the table
 * it names as in use (a DROP would fail). Any other statement releases it first: its DSQL_drop
 * rides in the same write as the new statement's requests. */
static void release_query(fbw_be_conn *c)
{
    stmt_free(c->query);
    c->query = NULL;
}

static int fbwire_prepare(fbw_be_conn *c, const char *sql, size_t len, fbw_be_stmt **out,
                          fbw_err *err)
{
    release_query(c);
    *out = NULL;
    if (c->pipe_head) { /* a sync point; a queued statement's failure is reported later */
        int rc = pipe_sync(c, err);
        if (rc)
            return rc;
    }
    fbw_be_stmt *bs = calloc(1, sizeof *bs);
    if (!bs)
        return fbw_err_set(err, FBW_E_NOMEM, "fbwire: out of memory");
    bs->c = c;
    int shown = (int)(len < sizeof bs->what ? len : sizeof bs->what - 1);
    snprintf(bs->what, sizeof bs->what, "%.*s", shown, sql);
    int rc = fbw_stmt_new(c->c, &bs->s, err);
    prep_call p = {bs, NULL, sql, len};
    if (rc == FBW_OK)
        rc = prepare_tx(c, &p.tx, err);
    if (rc == FBW_OK)
        rc = run(c, q_prepare, &p, err);
    if (rc == FBW_OK && !fbw_stmt_prepared(bs->s))
        rc = server_error(fbw_stmt_error(bs->s), err);
    if (rc == FBW_OK) {
        bs->nparams = fbw_stmt_input(bs->s)->n;
        size_t n = bs->nparams ? bs->nparams : 1;
        bs->vals = calloc(n, sizeof *bs->vals);
        bs->num = calloc(n, sizeof *bs->num);
        if (!bs->vals || !bs->num)
            rc = fbw_err_set(err, FBW_E_NOMEM, "fbwire: out of memory");
    }
    if (rc) {
        stmt_free(bs);
        return rc;
    }
    *out = bs;
    return FBW_OK;
}

static unsigned fbwire_param_count(const fbw_be_stmt *s) { return s->nparams; }

static int is_text(const fbw_col *col) { return col->type == FBW_SQL_VARYING || col->type == FBW_SQL_TEXT; }

/* One sysbench value for a described parameter: native where the types meet, else through the
 * canonical text parser (value.h), which rounds and range-checks like the server. */
static int bind_one(fbw_be_stmt *bs, unsigned i, const fbw_val *v, fbw_err *err)
{
    const fbw_col *col = &fbw_stmt_input(bs->s)->cols[i];
    fbw_value *x = &bs->vals[i];
    memset(x, 0, sizeof *x);
    x->type = col->type;
    if (v->type == FBW_VAL_NULL) {
        x->is_null = 1;
        return FBW_OK;
    }
    if (col->type == FBW_SQL_NULL) /* "? IS NULL": only the null flag counts, no bytes travel */
        return FBW_OK;
    const char *text = v->s;
    size_t len = v->len;
    if (v->type == FBW_VAL_INT64) {
        int exact = col->scale == 0 && (col->type == FBW_SQL_INT64 ||
                    (col->type == FBW_SQL_LONG && v->i >= INT32_MIN && v->i <= INT32_MAX) ||
                    (col->type == FBW_SQL_SHORT && v->i >= INT16_MIN && v->i <= INT16_MAX));
        if (exact) {
            x->u.i64 = v->i;
            return FBW_OK;
        }
        len = (size_t)snprintf(bs->num[i], sizeof bs->num[i], "%lld", (long long)v->i);
        text = bs->num[i];
    } else if (v->type == FBW_VAL_DOUBLE) {
        if (col->type == FBW_SQL_DOUBLE) {
            x->u.f64 = v->d;
            return FBW_OK;
        }
        len = (size_t)snprintf(bs->num[i], sizeof bs->num[i], "%.17g", v->d);
        text = bs->num[i];
    }
    if (is_text(col) && len > col->length) {
        /* The message encoder would refuse it without a word; say what the server would. */
        fbw_err_set(err, FBW_E_BADVALUE,
                    "string right truncation: parameter %u takes at most %u bytes, got %zu",
                    i + 1, (unsigned)col->length, len);
        memcpy(err->sqlstate, "22001", 6);
        return FBW_E_BADVALUE;
    }
    if (is_text(col)) {
        x->u.bytes.p = (const uint8_t *)text;
        x->u.bytes.n = len;
        return FBW_OK;
    }
    return fbw_value_from_text(col, text, len, x, err);
}

static int bind_all(fbw_be_stmt *bs, const fbw_val *params, size_t n, fbw_err *err)
{
    if (n != bs->nparams)
        return fbw_err_set(err, FBW_E_USAGE, "fbwire: %zu values for %u parameters", n, bs->nparams);
    for (unsigned i = 0; i < bs->nparams; i++) {
        int rc = bind_one(bs, i, &params[i], err);
        if (rc)
            return rc;
    }
    return FBW_OK;
}

/* A CHAR(n) in a multi-byte charset travels as n * max-bytes-per-char bytes, blank padded: a
 * CHAR(4) UTF8 literal 'abcd' arrives as 'abcd' and 12 blanks. Like fbclient with charset NONE
 * (and isql), keep the n characters the column holds, padding included, and cut only the
 * blanks that stand for unused byte room. */
static size_t char_len(const fbw_col *col, const char *p, size_t n)
{
    unsigned bpc = col->charset == FBW_CS_UTF8 ? 4u : col->charset == 3 /* UNICODE_FSS */ ? 3u : 1u;
    if (col->type != FBW_SQL_TEXT || bpc == 1)
        return n;
    size_t want = col->length / bpc, chars = 0, i = 0;
    while (i < n && chars < want) {
        i++;
        while (i < n && ((unsigned char)p[i] & 0xC0) == 0x80)
            i++;
        chars++;
    }
    for (size_t k = i; k < n; k++)
        if (p[k] != ' ')
            return n; /* not padding after all: keep everything */
    return i;
}

/* Rows as text cells (backend.h), in the canonical forms of value.h. */
static int fill_result(fbw_be_stmt *bs, fbw_be_result *res, fbw_err *err)
{
    const fbw_msgfmt *f = fbw_stmt_output(bs->s);
    size_t nrows = fbw_stmt_row_count(bs->s);
    fbw_value vals[64];
    fbw_value *v = f->n <= 64 ? vals : calloc(f->n, sizeof *v);
    if (!v)
        return fbw_err_set(err, FBW_E_NOMEM, "fbwire: out of memory");
    int rc = FBW_OK;
    for (size_t r = 0; r < nrows && rc == FBW_OK; r++) {
        rc = fbw_stmt_row(bs->s, r, v, err);
        for (uint16_t i = 0; i < f->n && rc == FBW_OK; i++) {
            if (v[i].is_null) {
                rc = fbw_be_result_add(res, NULL, 0, err);
                continue;
            }
            fbw_buf_reset(&bs->c->text);
            rc = fbw_value_to_text(&v[i], &f->cols[i], NULL, &bs->c->text, err);
            const char *t = bs->c->text.data ? (const char *)bs->c->text.data : "";
            if (rc == FBW_OK)
                rc = fbw_be_result_add(res, t, char_len(&f->cols[i], t, bs->c->text.len), err);
        }
    }
    if (v != vals)
        free(v);
    fbw_stmt_clear_rows(bs->s);
    return rc;
}

/* What one execution queues, depending on the transaction it runs in. */
typedef struct exec_call {
    fbw_be_stmt *bs;
    fbw_tx *tx;
    fbw_tx *end_first; /* commit this (the previous shared transaction) before starting tx */
    int start;         /* queue fbw_tx_start(tx, opts) first */
    const fbw_tx_opts *opts;
    int commit_after;  /* own transaction: queue its commit right after the statement */
    int queued;
} exec_call;

static int q_execute(void *arg)
{
    exec_call *x = arg;
    int rc;
    if (!x->queued) {
        if (x->end_first) {
            rc = fbw_tx_commit(x->end_first);
            if (rc)
                return rc;
            x->end_first = NULL;
        }
        if (x->start) {
            rc = fbw_tx_start(x->tx, x->opts);
            if (rc)
                return rc;
            x->start = 0;
        }
        int st = fbw_stmt_type(x->bs->s);
        unsigned flags = (st == FBW_STMT_INSERT || st == FBW_STMT_UPDATE || st == FBW_STMT_DELETE)
                             ? FBW_EXEC_COUNT : 0;
        rc = fbw_stmt_execute(x->bs->s, x->tx, x->bs->vals, flags);
        if (rc)
            return rc; /* FBW_AGAIN: a handle is not known yet; called again after a wait */
        x->queued = 1;
    }
    if (x->commit_after)
        return fbw_tx_commit(x->tx);
    return FBW_OK;
}

static int q_fetch(void *arg) { return fbw_stmt_fetch(arg); }

/* Execute in tx (queued as x says), fetch every row, fill res. */
static int execute_in(fbw_be_conn *c, exec_call *x, fbw_be_result *res, fbw_err *err)
{
    fbw_be_stmt *bs = x->bs;
    int rc = run(c, q_execute, x, err);
    while (rc == FBW_OK && !fbw_stmt_eof(bs->s) && fbw_stmt_error(bs->s)->code == FBW_OK)
        rc = run(c, q_fetch, bs->s, err);
    if (rc)
        return rc;
    if (x->tx->err.code != FBW_OK && x->tx->state == FBW_TX_FAILED)
        return server_error(&x->tx->err, err);
    if (fbw_stmt_error(bs->s)->code != FBW_OK)
        return server_error(fbw_stmt_error(bs->s), err);
    if (fbw_stmt_has_cursor(bs->s) || fbw_stmt_output(bs->s)->n > 0) {
        fbw_be_result_set_cols(res, fbw_stmt_output(bs->s)->n);
        rc = fill_result(bs, res, err);
    }
    res->affected = fbw_stmt_affected(bs->s);
    return rc;
}

/* ---- pipelined transactions (--fbwire-pipeline=transaction) ----
 * Inside BEGIN ... COMMIT an execution of a prepared SELECT, INSERT, UPDATE or DELETE is queued
 * with its own fbw_exec_out and not waited for. Everything queued is written and answered at a
 * sync point: COMMIT/ROLLBACK, fetch_rows (the script reads a result), a request that must wait
 * (a statement handle still unknown, SQL text, a prepare, another statement type), or the caps on
 * replies and bytes in flight. The replies are checked there; the first failure (named by its
 * place and SQL, with its own gds codes and SQLSTATE) is reported by the sync point if it can
 * report (an execute, COMMIT), else by the next execute/exec/commit. A failed transaction is rolled
 * back, never committed; one that queued only SELECTs lets its COMMIT ride along (nothing to
 * lose), one that may have written sends COMMIT only after every reply was checked. */

static int pipe_on(const fbw_be_conn *c)
{
    return c->conf->pipeline == FBW_PIPE_TRANSACTION && c->exp_open;
}

static int pipe_kind(int st)
{
    return st == FBW_STMT_SELECT || st == FBW_STMT_SELECT_FOR_UPD || st == FBW_STMT_INSERT ||
           st == FBW_STMT_UPDATE || st == FBW_STMT_DELETE;
}

/* Check the answered entries: the first error becomes the transaction's; the entries are done. */
static void pipe_collect(fbw_be_conn *c)
{
    for (pipe_ent *e = c->pipe_head; e; e = e->next) {
        if (e->out.err.code == FBW_OK || c->pipe_failed)
            continue;
        c->pipe_failed = 1;
        c->pipe_err = e->out.err;
        fbw_err_prefix(&c->pipe_err, "statement %u of %u of the pipelined transaction (%s)",
                       e->k, c->pipe_n, e->what);
    }
    if (c->pipe_head) {
        c->pipe_tail->next = c->pipe_spare;
        c->pipe_spare = c->pipe_head;
        c->pipe_head = c->pipe_tail = NULL;
    }
}

/* Write what is queued and wait for every reply, then check them. Only a lost connection (or a
 * local failure) is returned; statement errors are in pipe_failed/pipe_err. */
static int pipe_sync(fbw_be_conn *c, fbw_err *err)
{
    if (!c->pipe_head && fbw_conn_outstanding(c->c) == 0)
        return FBW_OK;
    int rc = wait_all(c, err);
    if (rc == FBW_OK)
        pipe_collect(c);
    return rc;
}

static int pipe_error(const fbw_be_conn *c, fbw_err *err)
{
    *err = c->pipe_err;
    return c->pipe_err.code ? c->pipe_err.code : FBW_E_SERVER;
}

/* The transaction ended: forget its pipeline (entries stay for reuse). */
static void pipe_reset(fbw_be_conn *c)
{
    pipe_collect(c);
    c->pipe_n = 0;
    c->pipe_writes = 0;
    c->pipe_failed = 0;
    fbw_err_clear(&c->pipe_err);
    c->reader = NULL;
    c->reader_bs = NULL;
}

/* Before a request that cannot be queued in an open pipelined transaction: sync, and say whether
 * a queued statement failed (FBW_E_SERVER with its error) for callers that report it. */
static int pipe_settle(fbw_be_conn *c, fbw_err *err)
{
    if (!pipe_on(c))
        return FBW_OK;
    int rc = pipe_sync(c, err);
    if (rc)
        return rc;
    return c->pipe_failed ? pipe_error(c, err) : FBW_OK;
}

static pipe_ent *pipe_take(fbw_be_conn *c)
{
    pipe_ent *e = c->pipe_spare;
    if (e)
        c->pipe_spare = e->next;
    else if (!(e = malloc(sizeof *e)))
        return NULL;
    memset(e, 0, sizeof *e);
    return e;
}

static void pipe_put_back(fbw_be_conn *c, pipe_ent *e)
{
    e->next = c->pipe_spare;
    c->pipe_spare = e;
}

static void pipe_free_all(fbw_be_conn *c)
{
    pipe_reset(c);
    while (c->pipe_spare) {
        pipe_ent *e = c->pipe_spare;
        c->pipe_spare = e->next;
        free(e);
    }
}

static int pipe_over_caps(fbw_be_conn *c)
{
    const uint8_t *p;
    size_t n = 0;
    if (fbw_conn_outstanding(c->c) >= PIPE_MAX_REPLIES)
        return 1;
    return fbw_conn_pending(c->c, &p, &n) != FBW_OK || n >= PIPE_MAX_BYTES;
}

/* Queue one execution of bs (values bound) in the explicit transaction; res is deferred. */
static int pipe_execute(fbw_be_stmt *bs, fbw_be_result *res, fbw_err *err)
{
    fbw_be_conn *c = bs->c;
    if (c->pipe_failed)
        return pipe_error(c, err);
    if (c->reader) /* the previous result can no longer be read: drop its rows as they come */
        c->reader->out.drop_rows = 1;
    c->reader = NULL;
    pipe_ent *e = pipe_take(c);
    if (!e)
        return fbw_err_set(err, FBW_E_NOMEM, "fbwire: out of memory");
    int rc;
    while ((rc = fbw_stmt_execute_out(bs->s, &c->exp, bs->vals, 0, &e->out)) == FBW_AGAIN) {
        rc = pipe_sync(c, err); /* a handle is not known yet: this request must wait */
        if (rc == FBW_OK && c->pipe_failed)
            rc = pipe_error(c, err);
        if (rc) {
            pipe_put_back(c, e);
            return rc;
        }
    }
    if (rc) {
        pipe_put_back(c, e);
        return fail(c, rc, err);
    }
    e->k = ++c->pipe_n;
    snprintf(e->what, sizeof e->what, "%s", bs->what);
    if (c->pipe_tail)
        c->pipe_tail->next = e;
    else
        c->pipe_head = e;
    c->pipe_tail = e;
    int st = fbw_stmt_type(bs->s);
    if (st != FBW_STMT_SELECT)
        c->pipe_writes = 1;
    c->reader = e;
    c->reader_bs = bs;
    res->deferred = 1;
    res->deferred_write = st == FBW_STMT_INSERT || st == FBW_STMT_UPDATE || st == FBW_STMT_DELETE;
    if (fbw_stmt_has_cursor(bs->s) || fbw_stmt_output(bs->s)->n > 0)
        fbw_be_result_set_cols(res, fbw_stmt_output(bs->s)->n);
    if (!pipe_over_caps(c))
        return FBW_OK;
    rc = pipe_sync(c, err);
    return rc ? rc : c->pipe_failed ? pipe_error(c, err) : FBW_OK;
}

/* The script reads the latest result: a sync point. */
static int fbwire_fetch_rows(fbw_be_conn *c, fbw_be_result *res, fbw_err *err)
{
    if (!res->deferred)
        return FBW_OK;
    res->deferred = 0;
    pipe_ent *e = c->reader;
    fbw_be_stmt *bs = c->reader_bs;
    int rc = pipe_sync(c, err);
    if (rc)
        return rc;
    if (!e || !bs)
        return fbw_err_set(err, FBW_E_USAGE, "fbwire: no pipelined result to read");
    if (c->pipe_failed)
        return pipe_error(c, err);
    while (rc == FBW_OK && !fbw_stmt_eof(bs->s) && fbw_stmt_error(bs->s)->code == FBW_OK)
        rc = run(c, q_fetch, bs->s, err); /* more rows than the first fetch brought */
    if (rc == FBW_OK && fbw_stmt_error(bs->s)->code != FBW_OK)
        rc = server_error(fbw_stmt_error(bs->s), err);
    if (rc == FBW_OK && res->has_set)
        rc = fill_result(bs, res, err);
    res->affected = e->out.affected;
    return rc;
}

/* The shared (or read-only) transaction, restarted when it has run long enough. */
static void shared_plan(fbw_be_conn *c, exec_call *x, const fbw_tx_opts *opts)
{
    const fbw_be_conf *f = c->conf;
    fbw_tx *live = &c->shared[c->cur];
    x->opts = opts;
    if (tx_live(live)) {
        int due = (f->restart_statements && c->shared_count >= f->restart_statements) ||
                  (f->restart_ms && now_ms() - c->shared_started_ms >= f->restart_ms);
        if (!due) {
            x->tx = live;
            c->shared_count++;
            return;
        }
        x->end_first = live;
        c->cur ^= 1;
    }
    x->tx = &c->shared[c->cur];
    x->start = 1;
    c->shared_count = 1;
    c->shared_started_ms = now_ms();
}

static int execute_own(fbw_be_conn *c, fbw_be_stmt *bs, fbw_be_result *res, int pipelined,
                       fbw_err *err)
{
    exec_call x = {.bs = bs, .tx = &c->own, .start = 1, .opts = &c->rw};
    int cursor = fbw_stmt_has_cursor(bs->s);
    /* Firebird counts every table a transaction's statements touched as in use until it ends,
     * so DDL (or an EXECUTE BLOCK doing DDL) fails with "object ... is in use" while the
     * read-only transaction of earlier SELECTs lives: commit that one in the same write. */
    int st = fbw_stmt_type(bs->s);
    if (pipelined && (st == FBW_STMT_DDL || st == FBW_STMT_EXEC_PROCEDURE) &&
        tx_live(&c->shared[c->cur]))
        x.end_first = &c->shared[c->cur];
    x.commit_after = pipelined && !cursor; /* a cursor must be read to its end before commit */
    if (!pipelined) {
        int rc = fbw_tx_start(&c->own, &c->rw);
        if (rc == FBW_OK)
            rc = wait_all(c, err);
        else
            rc = fail(c, rc, err);
        if (rc)
            return rc;
        if (c->own.state != FBW_TX_ACTIVE)
            return server_error(&c->own.err, err);
        x.start = 0;
    }
    int rc = execute_in(c, &x, res, err);
    if (x.commit_after) {
        if (rc == FBW_OK && c->own.err.code != FBW_OK)
            rc = server_error(&c->own.err, err); /* the commit itself failed */
        if (tx_live(&c->own)) {             /* it failed: nothing may stay open */
            fbw_err keep = *err;
            end_tx(c, &c->own, 0, err);
            *err = keep;
        }
        return rc;
    }
    if (rc == FBW_OK)
        return end_tx(c, &c->own, 1, err);
    fbw_err keep = *err;
    if (!fbw_be_conn_lost(rc, err))
        end_tx(c, &c->own, 0, err);
    *err = keep;
    return rc;
}

/* pipelinable: a prepared statement of the script (SQL text, prepared and freed within one
 * call, always waits). */
static int execute_bound(fbw_be_stmt *bs, fbw_be_result *res, int pipelinable, fbw_err *err)
{
    fbw_be_conn *c = bs->c;
    fbw_be_result_reset(res);
    if (c->exp_open) {
        if (pipelinable && pipe_on(c) && pipe_kind(fbw_stmt_type(bs->s)))
            return pipe_execute(bs, res, err);
        int rc = pipe_settle(c, err);
        if (rc)
            return rc;
        exec_call x = {.bs = bs, .tx = &c->exp};
        return execute_in(c, &x, res, err);
    }
    switch (c->conf->autocommit) {
    case FBW_AC_SHARED: {
        /* DDL (and EXECUTE BLOCK, which the dialect uses for IF [NOT] EXISTS) cannot share the
         * transaction that used the tables: it runs in its own one, started, executed and
         * committed in one write together with the commit of the shared transaction. */
        int st = fbw_stmt_type(bs->s);
        if (st == FBW_STMT_DDL || st == FBW_STMT_EXEC_PROCEDURE)
            return execute_own(c, bs, res, 1, err);
        exec_call x = {.bs = bs};
        shared_plan(c, &x, &c->ac);
        return execute_in(c, &x, res, err);
    }
    case FBW_AC_PIPELINED:
        if (fbw_stmt_type(bs->s) == FBW_STMT_SELECT) {
            exec_call x = {.bs = bs};
            shared_plan(c, &x, &c->ro);
            int rc = execute_in(c, &x, res, err);
            if (rc != FBW_E_SERVER || err->ngds == 0 || err->gds[0] != ISC_READ_ONLY_TRANS)
                return rc;
            fbw_be_result_reset(res); /* a SELECT that writes (a procedure): read-write after all */
        }
        return execute_own(c, bs, res, 1, err);
    default:
        return execute_own(c, bs, res, 0, err);
    }
}

static int fbwire_execute(fbw_be_stmt *bs, const fbw_val *params, size_t n, fbw_be_result *res,
                          fbw_err *err)
{
    int rc = bind_all(bs, params, n, err);
    return rc ? rc : execute_bound(bs, res, 1, err);
}

static void fbwire_close(fbw_be_stmt *s)
{
    fbw_be_conn *c = s->c;
    if (c->pipe_head) { /* its queued executions are answered first (their errors kept) */
        fbw_err ignored;
        pipe_sync(c, &ignored);
    }
    if (c->reader_bs == s) {
        c->reader = NULL;
        c->reader_bs = NULL;
    }
    stmt_free(s);
}

/* INSERT, UPDATE or DELETE text without parameters and without RETURNING: its execution has no
 * cursor and no output, so it can go out right behind its own prepare. Conservative: a '?' or the
 * word RETURNING anywhere (even inside a literal) takes the ordinary path. */
static int plain_dml(const char *sql, size_t len)
{
    static const char *const verbs[] = {"INSERT", "UPDATE", "DELETE"};
    size_t i = 0;
    while (i < len && isspace((unsigned char)sql[i]))
        i++;
    int verb = 0;
    for (size_t k = 0; k < sizeof verbs / sizeof *verbs; k++)
        if (len - i > 6 && strncasecmp(sql + i, verbs[k], 6) == 0 && isspace((unsigned char)sql[i + 6]))
            verb = 1;
    if (!verb)
        return 0;
    for (size_t j = i; j < len; j++)
        if (sql[j] == '?' || (len - j >= 9 && strncasecmp(sql + j, "RETURNING", 9) == 0))
            return 0;
    return 1;
}

typedef struct fast_call {
    fbw_be_stmt *bs;
    fbw_tx *ptx;      /* transaction to prepare in */
    const char *sql;
    size_t len;
    int prepare_queued;
    exec_call x;      /* where it executes (explicit or shared transaction, with restart) */
} fast_call;

/* allocate + prepare + execute + records info in one write (stmt.h fbw_stmt_execute_unprepared) */
static int q_fast(void *arg)
{
    fast_call *k = arg;
    fbw_stmt *s = k->bs->s;
    int rc;
    if (!k->prepare_queued) {
        rc = fbw_stmt_prepare(s, k->ptx, k->sql, k->len);
        if (rc)
            return rc;
        k->prepare_queued = 1;
    }
    exec_call *x = &k->x;
    if (x->end_first) {
        if ((rc = fbw_tx_commit(x->end_first)) != FBW_OK)
            return rc;
        x->end_first = NULL;
    }
    if (x->start) {
        if ((rc = fbw_tx_start(x->tx, x->opts)) != FBW_OK)
            return rc;
        x->start = 0;
    }
    /* After a wait (FBW_AGAIN) the prepare may have been answered: execute normally then, or
     * leave the prepare's error in the statement. */
    if (fbw_stmt_prepared(s))
        return fbw_stmt_execute(s, x->tx, NULL, FBW_EXEC_COUNT);
    rc = fbw_stmt_execute_unprepared(s, x->tx, FBW_EXEC_COUNT);
    return rc == FBW_E_USAGE && fbw_stmt_error(s)->code != FBW_E_USAGE ? FBW_OK : rc;
}

static int exec_fast(fbw_be_conn *c, const char *sql, size_t len, fbw_be_result *res, fbw_err *err)
{
    if (!c->query) {
        fbw_be_stmt *bs = calloc(1, sizeof *bs);
        if (!bs)
            return fbw_err_set(err, FBW_E_NOMEM, "fbwire: out of memory");
        bs->c = c;
        int rc = fbw_stmt_new(c->c, &bs->s, err);
        if (rc) {
            free(bs);
            return rc;
        }
        c->query = bs;
    }
    fast_call k = {.bs = c->query, .sql = sql, .len = len};
    int rc = prepare_tx(c, &k.ptx, err);
    if (rc == FBW_OK) {
        if (c->exp_open)
            k.x.tx = &c->exp;
        else
            shared_plan(c, &k.x, &c->ac);
        rc = run(c, q_fast, &k, err);
    }
    fbw_stmt *s = c->query->s;
    if (rc == FBW_OK && fbw_stmt_error(s)->code != FBW_OK)
        rc = server_error(fbw_stmt_error(s), err);
    if (rc == FBW_OK)
        res->affected = fbw_stmt_affected(s);
    return rc;
}

static int fbwire_exec(fbw_be_conn *c, const char *sql, size_t len, fbw_be_result *res, fbw_err *err)
{
    fbw_be_result_reset(res);
    int prc = pipe_settle(c, err); /* SQL text is not pipelined: a sync point */
    if (prc)
        return prc;
    if (plain_dml(sql, len) && (c->exp_open || c->conf->autocommit == FBW_AC_SHARED))
        return exec_fast(c, sql, len, res, err);
    release_query(c);
    fbw_be_stmt *bs = NULL;
    int rc = fbwire_prepare(c, sql, len, &bs, err);
    if (rc == FBW_OK)
        rc = bs->nparams ? fbw_err_set(err, FBW_E_USAGE, "fbwire: statement has parameters")
                         : execute_bound(bs, res, 0, err);
    stmt_free(bs);
    return rc;
}

/* ---- bulk insert: every row's execute queued, one wait per chunk ---- */

typedef struct bulk_call {
    fbw_be_stmt *bs;
    const fbw_bulk_insert *b;
    fbw_tx *tx;
    size_t next, end;
    fbw_err *err;
    int bind_rc;
} bulk_call;

static int q_bulk(void *arg)
{
    bulk_call *k = arg;
    while (k->next < k->end) {
        int rc = bind_all(k->bs, k->b->values + k->next * k->b->ncols, k->b->ncols, k->err);
        if (rc) {
            k->bind_rc = rc;
            return FBW_OK;
        }
        rc = fbw_stmt_execute(k->bs->s, k->tx, k->bs->vals, 0);
        if (rc)
            return rc;
        k->next++;
    }
    return FBW_OK;
}

static int immediate(fbw_be_conn *c, fbw_tx *t, const char *sql, fbw_err *err)
{
    fbw_exec_result r;
    int rc = fbw_exec_immediate(c->c, t, sql, strlen(sql), &r);
    if (rc == FBW_OK)
        rc = wait_all(c, err);
    else
        rc = fail(c, rc, err);
    if (rc == FBW_OK && r.err.code != FBW_OK)
        rc = server_error(&r.err, err);
    return rc;
}

static int insert_rows(fbw_be_conn *c, fbw_be_stmt *bs, fbw_tx *tx, const fbw_bulk_insert *b,
                       fbw_err *err)
{
    bulk_call k = {bs, b, tx, 0, 0, err, FBW_OK};
    while (k.next < b->nrows) {
        k.end = k.next + BULK_CHUNK < b->nrows ? k.next + BULK_CHUNK : b->nrows;
        /* Every execute of the chunk is answered before the next chunk is sent, so the first
         * failing row stops the insert; each reply's error lands in the statement. */
        int rc = run(c, q_bulk, &k, err);
        if (rc == FBW_OK && k.bind_rc)
            rc = k.bind_rc;
        if (rc)
            return rc;
        if (fbw_stmt_error(bs->s)->code != FBW_OK)
            return server_error(fbw_stmt_error(bs->s), err);
    }
    return FBW_OK;
}

/* ---- bulk insert on protocol 16+ (Firebird 4+): the batch API ----
 * op_batch_create, the rows packed into op_batch_msg packets and op_batch_exec go out in one
 * write and cost one round trip per chunk; the server stops at the first failing row
 * (multierror off), and the caller's transaction or savepoint undoes the rows before it. */

#define BATCH_CHUNK_BYTES ((size_t)4 << 20) /* well under the server's 16 MiB batch buffer */

typedef struct batch_call {
    fbw_batch *bt;
    fbw_be_stmt *bs;
    const fbw_bulk_insert *b;
    fbw_tx *tx;
    size_t next, end;
    fbw_err *err;
    int bind_rc;
    int created;
} batch_call;

static int q_batch(void *arg)
{
    batch_call *k = arg;
    int rc;
    if (!k->created) {
        if ((rc = fbw_batch_create(k->bt)) != FBW_OK)
            return rc;
        k->created = 1;
    }
    for (; k->next < k->end; k->next++) {
        rc = bind_all(k->bs, k->b->values + k->next * k->b->ncols, k->b->ncols, k->err);
        if (rc) {
            k->bind_rc = rc; /* nothing of this chunk is executed; the caller rolls back */
            return FBW_OK;
        }
        if ((rc = fbw_batch_add(k->bt, k->bs->vals)) != FBW_OK)
            return rc;
    }
    return fbw_batch_execute(k->bt, k->tx);
}

/* Every row of the chunk must be in the completion state as inserted, or the first error. */
static int batch_outcome(fbw_batch *bt, size_t rows, fbw_err *err)
{
    if (fbw_batch_error(bt)->code != FBW_OK)
        return server_error(fbw_batch_error(bt), err);
    const fbw_batch_cs *cs = fbw_batch_result(bt);
    if (!fbw_batch_executed(bt) || cs == NULL)
        return fbw_err_set(err, FBW_E_PROTO, "fbwire: batch executed without a completion state");
    if (cs->nerrors > 0) {
        uint32_t pos = 0;
        int rc = fbw_batch_cs_error_at(cs, 0, &pos, err);
        fbw_err_prefix(err, "row %u of the multi-row INSERT", pos + 1);
        return rc == FBW_OK ? FBW_E_SERVER : rc;
    }
    for (uint32_t i = 0; i < rows; i++) {
        int32_t st = fbw_batch_cs_state(cs, i);
        if (st != 1 && st != FBW_BATCH_SUCCESS_NO_INFO)
            return fbw_err_set(err, FBW_E_PROTO,
                               "fbwire: batch row %u of %zu reports state %d, not 1 row inserted",
                               i + 1, rows, (int)st);
    }
    return FBW_OK;
}

static int insert_batch(fbw_be_conn *c, fbw_be_stmt *bs, fbw_tx *tx, const fbw_bulk_insert *b,
                        fbw_err *err)
{
    fbw_batch_opts o;
    fbw_batch_opts_init(&o);
    fbw_batch *bt = NULL;
    int rc = fbw_batch_new(c->c, bs->s, &o, &bt, err);
    size_t msg = fbw_msg_length(fbw_stmt_input(bs->s));
    size_t per = msg ? BATCH_CHUNK_BYTES / msg : b->nrows;
    batch_call k = {bt, bs, b, tx, 0, 0, err, FBW_OK, 0};
    while (rc == FBW_OK && k.next < b->nrows) {
        size_t first = k.next;
        k.end = per > 0 && b->nrows - k.next > per ? k.next + per : b->nrows;
        rc = run(c, q_batch, &k, err);
        if (rc == FBW_OK && k.bind_rc)
            rc = k.bind_rc;
        if (rc == FBW_OK)
            rc = batch_outcome(bt, k.end - first, err);
    }
    fbw_batch_free(bt);
    return rc;
}

static int fbwire_bulk_insert(fbw_be_conn *c, const fbw_bulk_insert *b, fbw_be_result *res,
                              fbw_err *err)
{
    fbw_be_result_reset(res);
    int prc = pipe_settle(c, err);
    if (prc)
        return prc;
    int explicit_tr = c->exp_open;
    fbw_tx *tx = explicit_tr ? &c->exp : &c->own;
    int rc = FBW_OK;
    if (explicit_tr)
        rc = immediate(c, tx, "SAVEPOINT FBW_BULK", err);
    else if ((rc = fbw_tx_start(tx, &c->rw)) != FBW_OK)
        rc = fail(c, rc, err);
    fbw_be_stmt *bs = NULL;
    if (rc == FBW_OK)
        rc = fbwire_prepare(c, b->single, b->single_len, &bs, err);
    if (rc == FBW_OK)
        rc = fbw_conn_get_info(c->c)->protocol >= 16 ? insert_batch(c, bs, tx, b, err)
                                                     : insert_rows(c, bs, tx, b, err);
    stmt_free(bs);
    if (rc == FBW_OK)
        res->affected = b->nrows;
    if (explicit_tr) {
        if (rc == FBW_OK)
            return immediate(c, tx, "RELEASE SAVEPOINT FBW_BULK ONLY", err);
        if (!fbw_be_conn_lost(rc, err)) {
            fbw_err keep = *err;
            immediate(c, tx, "ROLLBACK TO SAVEPOINT FBW_BULK", err);
            *err = keep;
        }
        return rc;
    }
    if (rc == FBW_OK)
        return end_tx(c, tx, 1, err);
    fbw_err keep = *err;
    if (!fbw_be_conn_lost(rc, err))
        end_tx(c, tx, 0, err);
    *err = keep;
    return rc;
}

static int fbwire_stats(fbw_be_conn *c, fbw_stats *out, fbw_err *err)
{
    (void)err;
    *out = *fbw_conn_stats(c->c);
    return FBW_OK;
}

static const fbw_stats *fbwire_stats_ref(fbw_be_conn *c) { return fbw_conn_stats(c->c); }

const fbw_backend fbw_backend_fbwire = {
    .name = "fbwire",
    .global_init = fbwire_global_init,
    .connect = fbwire_connect,
    .create = fbwire_create,
    .disconnect = fbwire_disconnect,
    .begin = fbwire_begin,
    .commit = fbwire_commit,
    .rollback = fbwire_rollback,
    .prepare = fbwire_prepare,
    .param_count = fbwire_param_count,
    .execute = fbwire_execute,
    .close = fbwire_close,
    .exec = fbwire_exec,
    .bulk_insert = fbwire_bulk_insert,
    .fetch_rows = fbwire_fetch_rows,
    .stats = fbwire_stats,
    .stats_ref = fbwire_stats_ref,
};
