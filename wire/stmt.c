/* SPDX-License-Identifier: MIT */
/* stmt.c - statements (docs/protocol/statements.md §2-3, lazy-send.md). */
#include "stmt.h"
#include "request.h"

#include "msgs.h"
#include "pending.h"
#include "status.h"
#include "value.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PREPARE_BUFFER 64384 /* what fbclient asks for (MAX_MEDIUM_BLOCK_SIZE) */
#define DSQL_CLOSE 1
#define DSQL_DROP 2
#define CURSOR_SCROLLABLE 1 /* IStatement::CURSOR_TYPE_SCROLLABLE in op_execute's cursor flags */

enum { ALLOC_NONE, ALLOC_PENDING, ALLOC_DONE };

/* One queued execution. Replies come strictly in order, so several executions of the statement can
 * be in flight; each reply handler gets its execution's record. The latest execution (s->last) is
 * what the statement-level results show; older ones report only to their fbw_exec_out and drop
 * their rows. A record is freed when its last reply arrived and a later execution exists. */
typedef struct exec_rec {
    fbw_stmt *s;
    fbw_exec_out *out;   /* the caller's, or NULL */
    int pending;         /* replies of this execution still due */
    int failed;          /* op_execute failed: the fetch's error is only a consequence */
    fbw_tx *tx;          /* transaction it ran in and the handle sent (COMMIT as SQL, 1.5) */
    uint16_t tr_sent;
    uint32_t timeout_ms; /* the statement timeout op_execute carried (0: none) */
} exec_rec;

struct fbw_stmt {
    fbw_conn *conn;
    uint16_t handle;
    int alloc;              /* ALLOC_* */
    uint64_t alloc_token;
    fbw_pending pend;       /* replies outstanding for this statement; freed before they came */

    int prepared, type, flags;
    int prepare_queued;     /* a prepare is queued and its reply has not arrived */
    fbw_describe desc;
    fbw_msgfmt in, out;
    fbw_colname *in_names, *out_names;
    fbw_buf in_blr, out_blr;
    /* What travels, when it differs from in/out (compact formats, msg.h): the BLRs describe these,
     * parameters are converted to wire_in before encoding, rows expanded from wire_out on arrival,
     * so rows and formats the program sees are always the described ones. */
    int row_format;         /* FBW_ROW_FORMAT_* for the next prepare */
    fbw_msgfmt wire_in, wire_out;
    int compact_in, compact_out;
    fbw_value *wire_vals;   /* scratch: max(in.n, out.n) values */

    exec_rec *last;         /* the latest execution, NULL before the first */
    size_t exec_pending;    /* replies outstanding for executions (their rows are framed with
                             * the output format of the time they were queued) */
    int cursor_open, eof, exec_failed;
    int fetch_blr;          /* the next op_fetch must carry the output BLR: the server takes the
                             * row format from the first fetch after execute (delayed format) */
    fbw_tx *cursor_tx;      /* transaction the cursor lives in, and its generation then */
    uint64_t cursor_tx_gen;
    uint32_t fetch_size;
    uint32_t timeout_ms;    /* fbw_stmt_set_timeout; 0: the connection's */
    int32_t inline_size;    /* fbw_stmt_set_inline_blob_size; negative: the connection's */
    int scrollable;         /* fbw_stmt_set_scrollable: open later cursors scrollable */
    int cursor_scroll;      /* the open cursor was opened scrollable */
    int64_t cursor_count;   /* fbw_stmt_count_cursor's answer; -1 none */
    unsigned prepare_flags; /* fbw_stmt_set_prepare_flags: FBW_PREPARE_* beyond the prefetch bits */

    fbw_buf rows;           /* raw messages back to back */
    fbw_buf row_offs;       /* size_t offsets into rows, one per row, plus the end */
    size_t nrows;
    uint64_t affected;
    fbw_buf scratch;        /* encoded input message */
    fbw_err err;
};

/* ---- allocation of describe storage ---- */

static void free_side(fbw_msgfmt *f, fbw_colname **names)
{
    free(f->cols);
    f->cols = NULL;
    f->n = f->cap = 0;
    free(*names);
    *names = NULL;
}

static int alloc_side(void *arg, fbw_describe_side *side, uint32_t count)
{
    fbw_stmt *s = arg;
    fbw_msgfmt *f = side == &s->desc.in ? &s->in : &s->out;
    fbw_colname **names = side == &s->desc.in ? &s->in_names : &s->out_names;
    free_side(f, names);
    size_t n = count ? count : 1;
    f->cols = calloc(n, sizeof *f->cols);
    *names = calloc(n, sizeof **names);
    if (!f->cols || !*names) {
        free_side(f, names);
        return FBW_E_NOMEM;
    }
    f->cap = (uint16_t)count;
    side->fmt = f;
    side->names = *names;
    return FBW_OK;
}

static void free_wire(fbw_stmt *s)
{
    free(s->wire_in.cols);
    free(s->wire_out.cols);
    free(s->wire_vals);
    memset(&s->wire_in, 0, sizeof s->wire_in);
    memset(&s->wire_out, 0, sizeof s->wire_out);
    s->wire_vals = NULL;
    s->compact_in = s->compact_out = 0;
}

static void reset_describe(fbw_stmt *s)
{
    free_side(&s->in, &s->in_names);
    free_side(&s->out, &s->out_names);
    free_wire(s);
    memset(&s->desc, 0, sizeof s->desc);
    s->desc.alloc = alloc_side;
    s->desc.alloc_arg = s;
    s->desc.in.fmt = &s->in;
    s->desc.out.fmt = &s->out;
    fbw_buf_reset(&s->in_blr);
    fbw_buf_reset(&s->out_blr);
    s->prepared = 0;
}

int fbw_stmt_new(fbw_conn *c, fbw_stmt **out, fbw_err *err)
{
    fbw_stmt *s = calloc(1, sizeof *s);
    if (!s)
        return fbw_err_set(err, FBW_E_NOMEM, "out of memory");
    s->conn = c;
    s->row_format = fbw_conn_row_format(c);
    s->inline_size = -1;
    s->cursor_count = -1;
    fbw_err_clear(&s->err);
    reset_describe(s);
    *out = s;
    return FBW_OK;
}

static void destroy(void *arg)
{
    fbw_stmt *s = arg;
    free_side(&s->in, &s->in_names);
    free_side(&s->out, &s->out_names);
    free_wire(s);
    fbw_buf_free(&s->in_blr);
    fbw_buf_free(&s->out_blr);
    fbw_buf_free(&s->rows);
    fbw_buf_free(&s->row_offs);
    fbw_buf_free(&s->scratch);
    free(s->last);
    free(s);
}

/* Every reply handler starts here: it accounts the reply and frees a statement its user dropped. */
static int settle(fbw_stmt *s, int rc) { return fbw_pending_settle(&s->pend, rc, destroy, s); }

/* The format rows travel in: the one the fetch BLR asked for. */
static const fbw_msgfmt *rows_fmt(const fbw_stmt *s) { return s->compact_out ? &s->wire_out : &s->out; }

/* The row format a request's answer carries rows in, if any. */
static const fbw_msgfmt *answer_rows(const fbw_stmt *s, const fbw_pkt *p)
{
    int rows = p->op == FBW_OP_FETCH || p->op == FBW_OP_FETCH_SCROLL || p->op == FBW_OP_EXECUTE2;
    return rows ? rows_fmt(s) : NULL;
}

static int request(fbw_stmt *s, const fbw_pkt *p, fbw_reply_fn fn)
{
    const fbw_msgfmt *rows = answer_rows(s, p);
    return fbw_pending_track(&s->pend, fbw_conn_request_rows(s->conn, p, rows, fn, s));
}

/* A request of execution x: its reply goes to x's handler. */
static int request_exec(exec_rec *x, const fbw_pkt *p, fbw_reply_fn fn)
{
    fbw_stmt *s = x->s;
    const fbw_msgfmt *rows = answer_rows(s, p);
    int rc = fbw_pending_track(&s->pend, fbw_conn_request_rows(s->conn, p, rows, fn, x));
    if (rc == FBW_OK) {
        x->pending++;
        s->exec_pending++;
        if (x->out)
            x->out->done = 0;
    }
    return rc;
}

/* Every execution reply handler ends here (rc != FBW_AGAIN): the record is done with once its
 * last reply arrived and a later execution replaced it; then the statement's own accounting. */
static int settle_exec(exec_rec *x, int rc)
{
    fbw_stmt *s = x->s;
    if (rc == FBW_AGAIN)
        return rc;
    s->exec_pending--;
    if (--x->pending == 0) {
        if (x->out)
            x->out->done = 1;
        if (x != s->last)
            free(x);
    }
    return settle(s, rc);
}

/* A new execution: reuse the previous record when nothing of it is outstanding. */
static exec_rec *new_exec(fbw_stmt *s, fbw_tx *tx, uint16_t tr, fbw_exec_out *out)
{
    exec_rec *x = s->last;
    if (!x || x->pending > 0) {
        x = malloc(sizeof *x);
        if (!x)
            return NULL;
    }
    memset(x, 0, sizeof *x);
    x->s = s;
    x->out = out;
    x->tx = tx;
    x->tr_sent = tr;
    if (out) {
        memset(out, 0, sizeof *out);
        fbw_err_clear(&out->err);
    }
    s->last = x;
    return x;
}

/* Rows are kept only for the latest execution, and only while its reader wants them. */
static int keeps_rows(const exec_rec *x)
{
    return x == x->s->last && !(x->out && x->out->drop_rows);
}

static int ignore_reply(void *arg, fbw_conn *c, const fbw_pkt *r, fbw_err *err)
{
    (void)c, (void)r, (void)err;
    return settle(arg, FBW_OK);
}

static int expect_response(const fbw_pkt *r, fbw_err *err, const char *what)
{
    if (r->op == FBW_OP_RESPONSE)
        return FBW_OK;
    return fbw_err_set(err, FBW_E_PROTO, "unexpected op %d in answer to %s", (int)r->op, what);
}

/* ---- handles ---- */

static int stmt_handle(const fbw_stmt *s, uint16_t *h)
{
    if (s->alloc == ALLOC_DONE) {
        *h = s->handle;
        return FBW_OK;
    }
    if (s->alloc == ALLOC_PENDING && fbw_conn_get_info(s->conn)->lazy &&
        fbw_conn_allocations(s->conn) == s->alloc_token) {
        *h = FBW_INVALID_OBJECT;
        return FBW_OK;
    }
    return s->alloc == ALLOC_PENDING ? FBW_WAIT : FBW_E_USAGE;
}

/* The handle for op_execute, op_execute2, op_fetch and batch packets: the server looks the statement
 * up while decoding those (to parse their BLR and messages, protocol.cpp xdr_sql_blr) and takes the
 * id as unsigned there, so 0xFFFF is a framing error that closes the connection. Only a known
 * handle will do: FBW_WAIT while the allocation is unanswered. */
static int stmt_handle_decoded(const fbw_stmt *s, uint16_t *h)
{
    if (s->alloc == ALLOC_DONE) {
        *h = s->handle;
        return FBW_OK;
    }
    return s->alloc == ALLOC_PENDING ? FBW_WAIT : FBW_E_USAGE;
}

static int on_alloc(void *arg, fbw_conn *c, const fbw_pkt *r, fbw_err *err)
{
    fbw_stmt *s = arg;
    (void)c;
    int rc = expect_response(r, err, "op_allocate_statement");
    if (rc)
        return settle(s, rc);
    if (fbw_status_decode(r->u.resp.status, &s->err, NULL) != FBW_OK)
        s->alloc = ALLOC_NONE;
    else {
        s->handle = r->u.resp.object;
        s->alloc = ALLOC_DONE;
    }
    return settle(s, FBW_OK);
}

/* ---- prepare ---- */

/* The compact form of one side, when the statement uses compact formats and it differs. */
static int make_wire(const fbw_stmt *s, const fbw_msgfmt *described, fbw_msgfmt *wire, int *differs)
{
    *differs = 0;
    if (s->row_format != FBW_ROW_FORMAT_COMPACT || described->n == 0)
        return FBW_OK;
    wire->cols = calloc(described->n, sizeof *wire->cols);
    if (!wire->cols)
        return FBW_E_NOMEM;
    wire->cap = described->n;
    *differs = fbw_msgfmt_compact(described, wire) > 0;
    return FBW_OK;
}

/* Rows come back in the _EX time zone forms, which carry the zone's offset (value.h); CHAR goes
 * both ways as VARCHAR when the statement uses compact formats. */
static int build_blrs(fbw_stmt *s, fbw_err *err)
{
    fbw_msgfmt_tz_ex(&s->out);
    int rc = make_wire(s, &s->in, &s->wire_in, &s->compact_in);
    if (rc == FBW_OK)
        rc = make_wire(s, &s->out, &s->wire_out, &s->compact_out);
    size_t nvals = s->in.n > s->out.n ? s->in.n : s->out.n;
    if (rc == FBW_OK && (s->compact_in || s->compact_out) &&
        !(s->wire_vals = calloc(nvals, sizeof *s->wire_vals)))
        rc = FBW_E_NOMEM;
    if (rc)
        return fbw_err_set(err, rc, "out of memory");
    int proto = fbw_conn_get_info(s->conn)->protocol;
    rc = fbw_blr_build(s->compact_in ? &s->wire_in : &s->in, proto, 3, &s->in_blr, err);
    return rc ? rc : fbw_blr_build(rows_fmt(s), proto, 3, &s->out_blr, err);
}

static int on_describe(void *arg, fbw_conn *c, const fbw_pkt *r, fbw_err *err);

static int describe_done_or_continue(fbw_stmt *s, const uint8_t *data, size_t n)
{
    int truncated = 0;
    int rc = fbw_describe_parse(&s->desc, data, n, &truncated, &s->err);
    if (rc)
        return rc; /* recorded in s->err; statement stays unprepared */
    if (truncated) {
        int sel = s->desc.out.complete < s->desc.out.count || !s->desc.out.have_count;
        uint32_t from = (sel ? s->desc.out.complete : s->desc.in.complete) + 1;
        uint8_t items[40];
        fbw_pkt p = {.op = FBW_OP_INFO_SQL};
        p.u.info.object = s->handle;
        p.u.info.items.p = items;
        p.u.info.items.n = fbw_describe_continue_items(sel, from, items);
        p.u.info.buffer_length = PREPARE_BUFFER;
        return request(s, &p, on_describe);
    }
    if (s->desc.in.complete < s->desc.in.count || s->desc.out.complete < s->desc.out.count)
        return fbw_err_set(&s->err, FBW_E_BADVALUE, "describe reply incomplete without truncation");
    s->type = s->desc.stmt_type;
    s->flags = s->desc.stmt_flags;
    rc = build_blrs(s, &s->err);
    if (rc == FBW_OK)
        s->prepared = 1;
    return rc;
}

static int on_describe(void *arg, fbw_conn *c, const fbw_pkt *r, fbw_err *err)
{
    fbw_stmt *s = arg;
    (void)c;
    int rc = expect_response(r, err, "op_info_sql");
    if (rc == FBW_OK && fbw_status_decode(r->u.resp.status, &s->err, NULL) == FBW_OK) {
        rc = describe_done_or_continue(s, r->u.resp.data.p, r->u.resp.data.n);
        if (rc == FBW_E_NOMEM)
            return settle(s, rc);
        rc = FBW_OK; /* bad describe data fails the statement, not the connection */
    }
    return settle(s, rc);
}

static int on_prepare(void *arg, fbw_conn *c, const fbw_pkt *r, fbw_err *err)
{
    ((fbw_stmt *)arg)->prepare_queued = 0;
    return on_describe(arg, c, r, err);
}

/* The transaction to prepare in: FB3 refuses to prepare most statements without one ("invalid
 * transaction handle (expecting explicit transaction start)"). A transaction still starting can
 * go as 0xFFFF only when no op_allocate_statement is queued in between (it would take that name);
 * otherwise wait for the start's reply. No transaction, or an ended one: prepare without. */
static int prepare_tr(const fbw_stmt *s, const fbw_tx *tx, uint16_t *tr)
{
    *tr = 0;
    if (!tx || !fbw_tx_live(tx))
        return FBW_OK;
    int rc = fbw_tx_handle(tx, tr);
    if (rc == FBW_OK && *tr == FBW_INVALID_OBJECT && s->alloc == ALLOC_NONE)
        rc = FBW_WAIT;
    return rc;
}

/* The op_prepare_statement flags (protocol 20): the prefetch bits of the items asked, as
 * fbclient sends them, plus the caller's. A caller's flag cannot go to an older server. */
static int prepare_flags(fbw_stmt *s, uint16_t *flags)
{
    const int protocol = fbw_conn_get_info(s->conn)->protocol;
    *flags = (uint16_t)(FBW_PREPARE_PREFETCH_METADATA | s->prepare_flags);
    if (s->prepare_flags == 0 || protocol >= FBW_PROTOCOL_PREPARE_FLAGS)
        return FBW_OK;
    return fbw_err_set(&s->err, FBW_E_UNSUPPORTED,
                       "prepare flags need protocol %d (Firebird 6); this connection speaks "
                       "protocol %d: flags 0x%x were not sent", FBW_PROTOCOL_PREPARE_FLAGS,
                       protocol, s->prepare_flags);
}

void fbw_stmt_set_prepare_flags(fbw_stmt *s, unsigned flags) { s->prepare_flags = flags & 0xFFFFu; }
unsigned fbw_stmt_prepare_flags(const fbw_stmt *s) { return s->prepare_flags; }

int fbw_stmt_prepare(fbw_stmt *s, fbw_tx *tx, const char *sql, size_t len)
{
    uint16_t tr, flags;
    int rc = prepare_flags(s, &flags);
    if (rc)
        return rc;
    rc = prepare_tr(s, tx, &tr);
    if (rc)
        return rc;
    rc = fbw_stmt_close(s);
    if (rc)
        return rc;
    if (s->alloc == ALLOC_NONE) {
        fbw_pkt a = {.op = FBW_OP_ALLOCATE_STATEMENT};
        a.u.rlse.object = fbw_conn_get_info(s->conn)->db_handle;
        rc = request(s, &a, on_alloc);
        if (rc)
            return rc;
        s->alloc = ALLOC_PENDING;
        s->alloc_token = fbw_conn_note_allocation(s->conn);
    }
    uint16_t h;
    rc = stmt_handle(s, &h);
    if (rc)
        return rc; /* FBW_WAIT on a port without lazy send: wait for the allocation */
    reset_describe(s);
    fbw_err_clear(&s->err);
    fbw_pkt p = {.op = FBW_OP_PREPARE_STATEMENT};
    p.u.sqlst.tr = tr;
    p.u.sqlst.stmt = h;
    p.u.sqlst.dialect = 3;
    p.u.sqlst.sql.p = (const uint8_t *)sql;
    p.u.sqlst.sql.n = len;
    p.u.sqlst.items.p = fbw_describe_items;
    p.u.sqlst.items.n = fbw_describe_items_len;
    p.u.sqlst.buffer_length = PREPARE_BUFFER;
    p.u.sqlst.flags = flags; /* encoded from protocol 20 on (pkt.c) */
    rc = request(s, &p, on_prepare);
    if (rc == FBW_OK)
        s->prepare_queued = 1;
    return rc;
}

/* ---- rows ---- */

/* A row is kept in the described format: one that travelled compact is expanded here, once. */
static int store_row(fbw_stmt *s, fbw_bytes raw)
{
    size_t off = s->rows.len;
    if (s->nrows == 0 && fbw_buf_append(&s->row_offs, &off, sizeof off))
        return FBW_E_NOMEM;
    if (s->compact_out) {
        int rc = fbw_msg_expand(raw, &s->wire_out, &s->out, fbw_conn_get_info(s->conn)->protocol,
                                s->wire_vals, &s->rows, &s->err);
        if (rc) /* cannot happen for a framed row: its VARCHARs fit their CHAR columns */
            return rc;
    } else if (fbw_buf_append(&s->rows, raw.p, raw.n))
        return FBW_E_NOMEM;
    off = s->rows.len;
    if (fbw_buf_append(&s->row_offs, &off, sizeof off))
        return FBW_E_NOMEM;
    s->nrows++;
    return FBW_OK;
}

void fbw_stmt_clear_rows(fbw_stmt *s)
{
    fbw_buf_reset(&s->rows);
    fbw_buf_reset(&s->row_offs);
    s->nrows = 0;
}

int fbw_stmt_row(const fbw_stmt *s, size_t i, fbw_value *values, fbw_err *err)
{
    if (i >= s->nrows)
        return fbw_err_set(err, FBW_E_USAGE, "row %zu of %zu", i, s->nrows);
    size_t a, b;
    memcpy(&a, s->row_offs.data + i * sizeof(size_t), sizeof a);
    memcpy(&b, s->row_offs.data + (i + 1) * sizeof(size_t), sizeof b);
    fbw_bytes raw = {s->rows.data + a, b - a};
    return fbw_msg_decode(raw, &s->out, fbw_conn_get_info(s->conn)->protocol, values, err);
}

/* ---- execute and fetch ---- */

/* The timeout an execution carries: the statement's own, else its connection's. One that this
 * connection cannot send is refused (FBW_E_UNSUPPORTED, in s->err) before anything is queued. */
static int exec_timeout(fbw_stmt *s, uint32_t *ms)
{
    *ms = s->timeout_ms ? s->timeout_ms : fbw_conn_statement_timeout(s->conn);
    return fbw_conn_check_timeout(s->conn, *ms, &s->err);
}

/* Firebird's message says a statement-level timeout expired, not which: add the one this execution
 * carried, so that the error names its limit wherever it is reported. */
static void note_timeout(const exec_rec *x, fbw_err *e)
{
    size_t n = strlen(e->msg);
    if (x->timeout_ms && fbw_err_has_gds(e, FBW_ISC_REQ_STMT_TIMEOUT) && n < sizeof e->msg)
        snprintf(e->msg + n, sizeof e->msg - n, " (statement timeout %lu ms)",
                 (unsigned long)x->timeout_ms);
}

static void note_exec_status(exec_rec *x, const fbw_pkt *r)
{
    fbw_stmt *s = x->s;
    fbw_err e;
    if (fbw_status_decode(r->u.resp.status, &e, NULL) != FBW_OK) {
        note_timeout(x, &e);
        x->failed = 1;
        if (x->out && x->out->err.code == FBW_OK)
            x->out->err = e;
        if (x->out)
            x->out->eof = 1;
        if (x != s->last)
            return;
        /* A failed prepare queued ahead of this execute already said why: keep that. */
        if (s->err.code == FBW_OK)
            s->err = e;
        s->exec_failed = 1;
        s->cursor_open = 0;
        s->eof = 1;
        return; /* an error reply carries object 0, which says nothing about the transaction */
    }
    /* COMMIT / ROLLBACK / SET TRANSACTION as SQL change which transaction is alive (1.5). */
    if (x->tx)
        fbw_tx_note_exec_reply(x->tx, x->tr_sent, r->u.resp.object);
}

static int take_row(exec_rec *x, fbw_bytes raw)
{
    if (x->out)
        x->out->rows++;
    return keeps_rows(x) ? store_row(x->s, raw) : FBW_OK;
}

static int on_execute(void *arg, fbw_conn *c, const fbw_pkt *r, fbw_err *err)
{
    exec_rec *x = arg;
    (void)c;
    if (r->op == FBW_OP_SQL_RESPONSE) { /* op_execute2: the singleton row, then op_response */
        int rc = r->u.sqldata.messages ? take_row(x, r->u.sqldata.msg) : FBW_OK;
        return rc ? settle_exec(x, rc) : FBW_AGAIN;
    }
    int rc = expect_response(r, err, "op_execute");
    if (rc == FBW_OK)
        note_exec_status(x, r);
    return settle_exec(x, rc);
}

static void fetch_ended(exec_rec *x)
{
    if (x->out)
        x->out->eof = 1;
    if (x == x->s->last)
        x->s->eof = 1;
}

static int on_fetch(void *arg, fbw_conn *c, const fbw_pkt *r, fbw_err *err)
{
    exec_rec *x = arg;
    fbw_stmt *s = x->s;
    (void)c;
    if (r->op == FBW_OP_FETCH_RESPONSE) {
        if (r->u.sqldata.messages) {
            if (x == s->last)
                s->eof = 0; /* a scroll fetch found a row after an earlier one found none */
            int rc = take_row(x, r->u.sqldata.msg);
            return rc ? settle_exec(x, rc) : FBW_AGAIN;
        }
        if (r->u.sqldata.status == 100)
            fetch_ended(x);
        return settle_exec(x, FBW_OK);
    }
    int rc = expect_response(r, err, "op_fetch");
    if (rc == FBW_OK) {
        /* An execute that failed makes its fetch fail too; keep the first (real) error. */
        fbw_err e;
        int fetch_failed = 0;
        if (!x->failed && fbw_status_decode(r->u.resp.status, &e, NULL) != FBW_OK) {
            note_timeout(x, &e);
            fetch_failed = 1;
            if (x->out && x->out->err.code == FBW_OK)
                x->out->err = e;
            if (x == s->last)
                s->err = e;
        }
        fetch_ended(x);
        /* A fetch that failed (a cancelled one, say) leaves the cursor open on Firebird 4: the
         * next prepare or execute closes it first (fbw_stmt_close; harmless where it is closed). */
        if (x == s->last && !fetch_failed)
            s->cursor_open = 0;
    }
    return settle_exec(x, rc);
}

static int on_records(void *arg, fbw_conn *c, const fbw_pkt *r, fbw_err *err)
{
    exec_rec *x = arg;
    (void)c;
    int rc = expect_response(r, err, "op_info_sql");
    fbw_err ignored;
    if (rc == FBW_OK && fbw_status_decode(r->u.resp.status, &ignored, NULL) == FBW_OK) {
        uint64_t sel = 0, n = 0;
        if (fbw_info_records(r->u.resp.data.p, r->u.resp.data.n, &n, &sel, &ignored))
            n = 0;
        if (x->out)
            x->out->affected = n;
        if (x == x->s->last)
            x->s->affected = n;
    }
    return settle_exec(x, rc);
}

/* op_info_sql for the affected-row counts, queued right behind an execute on handle h. */
static int queue_records(exec_rec *x, uint16_t h)
{
    static const uint8_t items[] = {FBW_INFO_SQL_RECORDS, FBW_INFO_END};
    fbw_pkt q = {.op = FBW_OP_INFO_SQL};
    q.u.info.object = h;
    q.u.info.items.p = items;
    q.u.info.items.n = sizeof items;
    q.u.info.buffer_length = 64;
    return request_exec(x, &q, on_records);
}

static uint32_t fetch_size(const fbw_stmt *s)
{
    if (s->fetch_size)
        return s->fetch_size;
    size_t len = fbw_msg_length(&s->out);
    uint32_t n = 1000;
    if (len && (1u << 20) / len < n)
        n = (uint32_t)((1u << 20) / len);
    return n < 10 ? 10 : n;
}

/* op_fetch (f->op FBW_OP_FETCH: a forward batch) or op_fetch_scroll (f's op and position set). */
static int queue_fetch(fbw_stmt *s, fbw_pkt *f, uint16_t messages)
{
    uint16_t h;
    int rc = stmt_handle_decoded(s, &h);
    if (rc)
        return rc;
    f->u.sqldata.stmt = h;
    if (s->fetch_blr) { /* the first fetch after execute names the row format (delayed format) */
        f->u.sqldata.blr.p = s->out_blr.data;
        f->u.sqldata.blr.n = s->out_blr.len;
    }
    f->u.sqldata.messages = messages;
    rc = request_exec(s->last, f, on_fetch);
    if (rc == FBW_OK)
        s->fetch_blr = 0;
    return rc;
}

static int queue_batch(fbw_stmt *s)
{
    fbw_pkt f = {.op = FBW_OP_FETCH};
    return queue_fetch(s, &f, (uint16_t)(fetch_size(s) > 0xFFFF ? 0xFFFF : fetch_size(s)));
}

int fbw_stmt_fetch(fbw_stmt *s)
{
    if (!s->cursor_open || s->eof || !s->last)
        return FBW_OK;
    return queue_batch(s);
}

/* ---- scrollable cursors ---- */

static int scroll_supported(fbw_stmt *s, const char *what)
{
    int proto = fbw_conn_get_info(s->conn)->protocol;
    if (proto >= FBW_PROTOCOL_FETCH_SCROLL)
        return FBW_OK;
    return fbw_err_set(&s->err, FBW_E_UNSUPPORTED,
                       "%s needs protocol %d (Firebird 5 or later); this connection speaks "
                       "protocol %d: nothing was sent",
                       what, FBW_PROTOCOL_FETCH_SCROLL, proto);
}

int fbw_stmt_set_scrollable(fbw_stmt *s, int on)
{
    if (on) {
        int rc = scroll_supported(s, "a scrollable cursor");
        if (rc)
            return rc;
    }
    s->scrollable = on != 0;
    return FBW_OK;
}

int fbw_stmt_scrollable(const fbw_stmt *s) { return s->scrollable; }

/* What every scroll request needs: the protocol, an open cursor, opened scrollable. */
static int scroll_ready(fbw_stmt *s, const char *what)
{
    int rc = scroll_supported(s, what);
    if (rc)
        return rc;
    if (!s->cursor_open || !s->last)
        return fbw_err_set(&s->err, FBW_E_USAGE, "%s: the statement has no open cursor", what);
    if (!s->cursor_scroll)
        return fbw_err_set(&s->err, FBW_E_USAGE,
                           "%s: the cursor is forward-only (fbw_stmt_set_scrollable before "
                           "execute opens a scrollable one)",
                           what);
    return FBW_OK;
}

static const char *fetch_op_name(int op)
{
    static const char *const names[] = {"FETCH NEXT", "FETCH PRIOR",    "FETCH FIRST",
                                        "FETCH LAST", "FETCH ABSOLUTE", "FETCH RELATIVE"};
    return op >= 0 && op <= FBW_FETCH_RELATIVE ? names[op] : "a scroll fetch";
}

int fbw_stmt_fetch_scroll(fbw_stmt *s, int op, int32_t pos)
{
    int rc = scroll_ready(s, fetch_op_name(op));
    if (rc)
        return rc;
    if (op < FBW_FETCH_NEXT || op > FBW_FETCH_RELATIVE)
        return fbw_err_set(&s->err, FBW_E_USAGE, "unknown scroll fetch op %d", op);
    fbw_pkt f = {.op = FBW_OP_FETCH_SCROLL};
    f.u.sqldata.fetch_op = (uint16_t)op;
    f.u.sqldata.fetch_pos = op == FBW_FETCH_ABSOLUTE || op == FBW_FETCH_RELATIVE ? pos : 0;
    fbw_err_clear(&s->err);
    rc = queue_fetch(s, &f, 1);
    if (rc == FBW_OK)
        s->eof = 0; /* until the answer says the move found no row */
    return rc;
}

static int on_cursor_info(void *arg, fbw_conn *c, const fbw_pkt *r, fbw_err *err)
{
    exec_rec *x = arg;
    fbw_stmt *s = x->s;
    (void)c;
    int rc = expect_response(r, err, "op_info_cursor");
    if (rc == FBW_OK && x == s->last &&
        fbw_status_decode(r->u.resp.status, &s->err, NULL) == FBW_OK &&
        fbw_info_cursor_count(r->u.resp.data.p, r->u.resp.data.n, &s->cursor_count, &s->err))
        s->cursor_count = -1; /* a reply without the count fails the request, not the connection */
    return settle_exec(x, rc);
}

int fbw_stmt_count_cursor(fbw_stmt *s)
{
    static const uint8_t items[] = {FBW_INFO_CURSOR_RECORD_COUNT, FBW_INFO_END};
    int rc = scroll_ready(s, "the cursor's record count");
    uint16_t h;
    if (rc == FBW_OK)
        rc = stmt_handle_decoded(s, &h);
    if (rc)
        return rc;
    fbw_pkt q = {.op = FBW_OP_INFO_CURSOR};
    q.u.info.object = h;
    q.u.info.items.p = items;
    q.u.info.items.n = sizeof items;
    q.u.info.buffer_length = 32;
    s->cursor_count = -1;
    fbw_err_clear(&s->err);
    return request_exec(s->last, &q, on_cursor_info);
}

int64_t fbw_stmt_cursor_count(const fbw_stmt *s) { return s->cursor_count; }

void fbw_stmt_set_fetch_size(fbw_stmt *s, uint32_t rows) { s->fetch_size = rows; }

static int cursor_still_on_server(const fbw_stmt *s)
{
    if (!s->cursor_open)
        return 0;
    const fbw_tx *t = s->cursor_tx;
    return t && fbw_tx_generation(t) == s->cursor_tx_gen && fbw_tx_live(t);
}

int fbw_stmt_close(fbw_stmt *s)
{
    int open = cursor_still_on_server(s);
    s->cursor_open = 0;
    if (!open)
        return FBW_OK;
    uint16_t h;
    int rc = stmt_handle(s, &h);
    if (rc)
        return rc;
    fbw_pkt p = {.op = FBW_OP_FREE_STATEMENT};
    p.u.sqlfree.stmt = h;
    p.u.sqlfree.option = DSQL_CLOSE;
    return request(s, &p, ignore_reply); /* deferred by the server; rides with the next request */
}

static int encode_params(fbw_stmt *s, const fbw_value *params, fbw_bytes *msg)
{
    fbw_buf_reset(&s->scratch);
    msg->p = NULL;
    msg->n = 0;
    if (s->in.n == 0)
        return FBW_OK;
    const fbw_msgfmt *f = &s->in;
    if (s->compact_in) {
        fbw_values_compact(&s->in, &s->wire_in, params, s->wire_vals);
        f = &s->wire_in;
        params = s->wire_vals;
    }
    fbw_wr w;
    fbw_wr_init(&w, &s->scratch);
    int rc = fbw_msg_encode(&w, f, fbw_conn_get_info(s->conn)->protocol, params, &s->err);
    if (rc)
        return rc;
    msg->p = s->scratch.data;
    msg->n = s->scratch.len;
    return FBW_OK;
}

int fbw_stmt_set_input(fbw_stmt *s, const fbw_msgfmt *f)
{
    if (!s->prepared)
        return fbw_err_set(&s->err, FBW_E_USAGE, "statement is not prepared");
    if (f->n != s->in.n)
        return fbw_err_set(&s->err, FBW_E_USAGE, "%u parameters given, the statement takes %u",
                           f->n, s->in.n);
    fbw_buf blr;
    fbw_buf_init(&blr);
    int rc = fbw_blr_build(f, fbw_conn_get_info(s->conn)->protocol, 3, &blr, &s->err);
    if (rc) {
        fbw_buf_free(&blr);
        return rc;
    }
    if (f->n)
        memcpy(s->in.cols, f->cols, f->n * sizeof *f->cols);
    fbw_buf_free(&s->in_blr);
    s->in_blr = blr;
    s->compact_in = 0; /* the caller's format travels as given */
    return FBW_OK;
}

int fbw_stmt_set_output(fbw_stmt *s, const fbw_msgfmt *f)
{
    if (!s->prepared)
        return fbw_err_set(&s->err, FBW_E_USAGE, "statement is not prepared");
    if (f->n != s->out.n)
        return fbw_err_set(&s->err, FBW_E_USAGE, "%u columns given, the statement returns %u",
                           f->n, s->out.n);
    if (s->exec_pending)
        return fbw_err_set(&s->err, FBW_E_USAGE, "replies of an execution are still to come");
    fbw_buf blr;
    fbw_buf_init(&blr);
    int rc = fbw_blr_build(f, fbw_conn_get_info(s->conn)->protocol, 3, &blr, &s->err);
    if (rc) {
        fbw_buf_free(&blr);
        return rc;
    }
    if (f->n)
        memcpy(s->out.cols, f->cols, f->n * sizeof *f->cols);
    fbw_buf_free(&s->out_blr);
    s->out_blr = blr;
    s->compact_out = 0;
    fbw_stmt_clear_rows(s); /* buffered rows were in the old format */
    return FBW_OK;
}

void fbw_stmt_set_row_format(fbw_stmt *s, int format) { s->row_format = format; }
void fbw_stmt_set_timeout(fbw_stmt *s, uint32_t ms) { s->timeout_ms = ms; }
uint32_t fbw_stmt_timeout(const fbw_stmt *s) { return s->timeout_ms; }
void fbw_stmt_set_inline_blob_size(fbw_stmt *s, int32_t size) { s->inline_size = size < 0 ? -1 : size; }
int32_t fbw_stmt_inline_blob_size(const fbw_stmt *s) { return s->inline_size; }

/* What op_execute asks for: the statement's size, else the connection's; none below protocol 19. */
static uint32_t exec_inline_size(const fbw_stmt *s)
{
    if (s->inline_size < 0)
        return fbw_conn_inline_size(s->conn);
    if (fbw_conn_get_info(s->conn)->protocol < 19)
        return 0;
    return s->inline_size > 65535 ? 65535u : (uint32_t)s->inline_size;
}
int fbw_stmt_compact(const fbw_stmt *s) { return s->compact_in || s->compact_out; }

int fbw_stmt_execute(fbw_stmt *s, fbw_tx *tx, const fbw_value *params, unsigned flags)
{
    return fbw_stmt_execute_out(s, tx, params, flags, NULL);
}

int fbw_stmt_execute_out(fbw_stmt *s, fbw_tx *tx, const fbw_value *params, unsigned flags,
                         fbw_exec_out *out)
{
    if (!s->prepared)
        return fbw_err_set(&s->err, FBW_E_USAGE, "statement is not prepared");
    uint32_t timeout;
    int rc = exec_timeout(s, &timeout);
    int cursor = fbw_stmt_has_cursor(s);
    if (rc == FBW_OK && cursor && s->scrollable) /* the protocol may differ from when it was set */
        rc = scroll_supported(s, "a scrollable cursor");
    if (rc)
        return rc;
    uint16_t tr = 0, h;
    rc = tx ? fbw_tx_handle(tx, &tr) : FBW_OK;
    if (rc == FBW_E_USAGE && s->type == FBW_STMT_START_TRANS)
        rc = FBW_OK; /* SET TRANSACTION goes with handle 0; the reply names the new one (1.5) */
    if (rc == FBW_OK)
        rc = stmt_handle_decoded(s, &h);
    if (rc == FBW_E_USAGE)
        return fbw_err_set(&s->err, FBW_E_USAGE, "transaction or statement handle not available");
    if (rc)
        return rc;
    rc = fbw_stmt_close(s);
    if (rc)
        return rc;
    fbw_err_clear(&s->err);
    fbw_stmt_clear_rows(s);
    s->eof = 0;
    s->exec_failed = 0;
    s->affected = 0;
    fbw_bytes msg;
    rc = encode_params(s, params, &msg);
    if (rc)
        return rc;
    fbw_pkt p = {.op = !cursor && s->out.n > 0 ? FBW_OP_EXECUTE2 : FBW_OP_EXECUTE};
    p.u.sqldata.stmt = h;
    p.u.sqldata.tr = tr;
    p.u.sqldata.blr.p = s->in_blr.data;
    p.u.sqldata.blr.n = s->in_blr.len;
    p.u.sqldata.messages = s->in.n > 0;
    p.u.sqldata.msg = msg;
    p.u.sqldata.inline_blob_size = exec_inline_size(s);
    p.u.sqldata.timeout = timeout; /* encoded from protocol 16 on (pkt.c) */
    p.u.sqldata.cursor_flags = cursor && s->scrollable ? CURSOR_SCROLLABLE : 0; /* from 18 on */
    if (p.op == FBW_OP_EXECUTE2) {
        p.u.sqldata.out_blr.p = s->out_blr.data;
        p.u.sqldata.out_blr.n = s->out_blr.len;
    }
    exec_rec *x = new_exec(s, tx, tr, out);
    if (!x)
        return FBW_E_NOMEM;
    x->timeout_ms = timeout;
    rc = request_exec(x, &p, on_execute);
    if (rc)
        return rc;
    if ((tx && fbw_tx_autocommit(tx)) || s->type == FBW_STMT_COMMIT)
        fbw_conn_mark_commits(s->conn);
    if (cursor) {
        s->cursor_open = 1;
        s->cursor_tx = tx;
        s->cursor_tx_gen = tx ? fbw_tx_generation(tx) : 0;
        s->cursor_scroll = s->scrollable;
        s->cursor_count = -1;
        s->fetch_blr = 1;
        if (!(flags & FBW_EXEC_NO_FETCH))
            rc = queue_batch(s);
    } else {
        s->eof = 1;
    }
    if (rc == FBW_OK && (flags & FBW_EXEC_COUNT) && !cursor)
        rc = queue_records(x, h);
    return rc;
}

int fbw_stmt_execute_unprepared(fbw_stmt *s, fbw_tx *tx, unsigned flags)
{
    if (!s->prepare_queued)
        return fbw_err_set(&s->err, FBW_E_USAGE, "no prepare is queued for this statement");
    uint32_t timeout;
    int rc = exec_timeout(s, &timeout);
    if (rc)
        return rc;
    uint16_t tr = 0, h;
    rc = tx ? fbw_tx_handle(tx, &tr) : FBW_OK;
    if (rc == FBW_OK)
        rc = stmt_handle_decoded(s, &h);
    if (rc == FBW_E_USAGE)
        return fbw_err_set(&s->err, FBW_E_USAGE, "transaction or statement handle not available");
    if (rc)
        return rc;
    /* s->err is not cleared: the prepare's reply, still to come, may fill it. */
    fbw_stmt_clear_rows(s);
    s->eof = 1;
    s->exec_failed = 0;
    s->affected = 0;
    fbw_pkt p = {.op = FBW_OP_EXECUTE};
    p.u.sqldata.stmt = h;
    p.u.sqldata.tr = tr;
    p.u.sqldata.timeout = timeout;
    exec_rec *x = new_exec(s, tx, tr, NULL);
    if (!x)
        return FBW_E_NOMEM;
    x->timeout_ms = timeout;
    rc = request_exec(x, &p, on_execute);
    if (rc == FBW_OK && tx && fbw_tx_autocommit(tx))
        fbw_conn_mark_commits(s->conn); /* like fbw_stmt_execute: the engine commits inside it */
    if (rc == FBW_OK && (flags & FBW_EXEC_COUNT))
        rc = queue_records(x, h);
    return rc;
}

/* ---- free ---- */

void fbw_stmt_free(fbw_stmt *s)
{
    if (!s)
        return;
    uint16_t h;
    if (fbw_conn_get_state(s->conn) == FBW_CS_READY && stmt_handle(s, &h) == FBW_OK) {
        fbw_pkt p = {.op = FBW_OP_FREE_STATEMENT};
        p.u.sqlfree.stmt = h;
        p.u.sqlfree.option = DSQL_DROP;
        request(s, &p, ignore_reply);
    }
    fbw_pending_release(&s->pend, s->conn, destroy, s);
}

/* ---- accessors ---- */

int fbw_stmt_busy(const fbw_stmt *s) { return fbw_pending_busy(&s->pend); }
int fbw_stmt_prepared(const fbw_stmt *s) { return s->prepared; }
int fbw_stmt_type(const fbw_stmt *s) { return s->type; }
int fbw_stmt_has_cursor(const fbw_stmt *s)
{
    return (s->flags & FBW_STMT_FLAG_HAS_CURSOR) || s->type == FBW_STMT_SELECT ||
           s->type == FBW_STMT_SELECT_FOR_UPD;
}
const fbw_msgfmt *fbw_stmt_input(const fbw_stmt *s) { return &s->in; }
const fbw_msgfmt *fbw_stmt_output(const fbw_stmt *s) { return &s->out; }
const fbw_msgfmt *fbw_stmt_wire_input(const fbw_stmt *s) { return s->compact_in ? &s->wire_in : &s->in; }
const fbw_colname *fbw_stmt_input_names(const fbw_stmt *s) { return s->in_names; }
const fbw_colname *fbw_stmt_output_names(const fbw_stmt *s) { return s->out_names; }
size_t fbw_stmt_row_count(const fbw_stmt *s) { return s->nrows; }
int fbw_stmt_eof(const fbw_stmt *s) { return s->eof; }
uint64_t fbw_stmt_affected(const fbw_stmt *s) { return s->affected; }
const fbw_err *fbw_stmt_error(const fbw_stmt *s) { return &s->err; }
int fbw_stmt_handle(const fbw_stmt *s, uint16_t *h) { return stmt_handle_decoded(s, h); }

/* ---- execute immediate ---- */

typedef struct immediate {
    fbw_exec_result *res;
    fbw_tx *tx;
    uint16_t sent;
} immediate;

static int on_immediate(void *arg, fbw_conn *c, const fbw_pkt *r, fbw_err *err)
{
    immediate *im = arg;
    (void)c;
    int rc = expect_response(r, err, "op_exec_immediate");
    if (rc == FBW_OK) {
        if (fbw_status_decode(r->u.resp.status, &im->res->err, NULL) == FBW_OK && im->tx)
            fbw_tx_note_exec_reply(im->tx, im->sent, r->u.resp.object);
    }
    im->res->done = 1;
    free(im);
    return rc;
}

int fbw_exec_immediate(fbw_conn *c, fbw_tx *tx, const char *sql, size_t len, fbw_exec_result *res)
{
    uint16_t tr = 0;
    int rc = tx ? fbw_tx_handle(tx, &tr) : FBW_OK;
    if (rc == FBW_E_USAGE)
        tr = 0; /* an ended transaction: only SET TRANSACTION and session statements make sense */
    else if (rc)
        return rc;
    immediate *im = malloc(sizeof *im);
    if (!im)
        return FBW_E_NOMEM;
    im->res = res;
    im->tx = tx;
    im->sent = tr;
    res->done = 0;
    fbw_err_clear(&res->err);
    fbw_pkt p = {.op = FBW_OP_EXEC_IMMEDIATE};
    p.u.sqlst.tr = tr;
    p.u.sqlst.dialect = 3;
    p.u.sqlst.sql.p = (const uint8_t *)sql;
    p.u.sqlst.sql.n = len;
    rc = fbw_conn_request_owned(c, &p, on_immediate, im);
    if (rc)
        free(im);
    else if (tx && fbw_tx_autocommit(tx))
        fbw_conn_mark_commits(c);
    return rc;
}

/* ---- execute immediate with messages (op_exec_immediate2) ---- */

typedef struct immediate2 {
    fbw_exec_result2 *res;
    fbw_tx *tx;
    uint16_t sent;
} immediate2;

static int on_immediate2(void *arg, fbw_conn *c, const fbw_pkt *r, fbw_err *err)
{
    immediate2 *im = arg;
    (void)c;
    if (r->op == FBW_OP_SQL_RESPONSE) { /* the output row, then op_response */
        if (r->u.sqldata.messages) {
            fbw_buf_reset(&im->res->row);
            if (fbw_buf_append(&im->res->row, r->u.sqldata.msg.p, r->u.sqldata.msg.n) != FBW_OK)
                fbw_err_set(&im->res->err, FBW_E_NOMEM, "out of memory for the output row");
            else
                im->res->has_row = 1;
        }
        return FBW_AGAIN;
    }
    int rc = expect_response(r, err, "op_exec_immediate2");
    if (rc == FBW_OK && fbw_status_decode(r->u.resp.status, &im->res->err, NULL) == FBW_OK &&
        im->tx)
        fbw_tx_note_exec_reply(im->tx, im->sent, r->u.resp.object);
    im->res->done = 1;
    free(im);
    return rc;
}

int fbw_exec_immediate2(fbw_conn *c, fbw_tx *tx, const char *sql, size_t len,
                        const fbw_msgfmt *in, const fbw_value *params, const fbw_msgfmt *out,
                        fbw_exec_result2 *res)
{
    uint16_t tr = 0;
    int rc = tx ? fbw_tx_handle(tx, &tr) : FBW_OK;
    if (rc == FBW_E_USAGE)
        tr = 0; /* as fbw_exec_immediate: only SET TRANSACTION and session statements then */
    else if (rc)
        return rc;
    res->done = 0;
    res->has_row = 0;
    fbw_buf_reset(&res->row);
    fbw_err_clear(&res->err);
    int protocol = fbw_conn_get_info(c)->protocol;
    int has_in = in && in->n > 0, has_out = out && out->n > 0;
    fbw_buf in_blr, out_blr, msg;
    fbw_buf_init(&in_blr);
    fbw_buf_init(&out_blr);
    fbw_buf_init(&msg);
    if (has_in) {
        fbw_wr w;
        fbw_wr_init(&w, &msg);
        rc = fbw_blr_build(in, protocol, 3, &in_blr, &res->err);
        if (rc == FBW_OK)
            rc = fbw_msg_encode(&w, in, protocol, params, &res->err);
    }
    if (rc == FBW_OK && has_out)
        rc = fbw_blr_build(out, protocol, 3, &out_blr, &res->err);
    immediate2 *im = rc == FBW_OK ? malloc(sizeof *im) : NULL;
    if (rc == FBW_OK && !im)
        rc = FBW_E_NOMEM;
    if (rc == FBW_OK) {
        im->res = res;
        im->tx = tx;
        im->sent = tr;
        fbw_pkt p = {.op = FBW_OP_EXEC_IMMEDIATE2};
        p.u.sqlst.tr = tr;
        p.u.sqlst.dialect = 3;
        p.u.sqlst.sql.p = (const uint8_t *)sql;
        p.u.sqlst.sql.n = len;
        p.u.sqlst.blr.p = in_blr.data ? fbw_buf_head(&in_blr) : NULL;
        p.u.sqlst.blr.n = fbw_buf_avail(&in_blr);
        p.u.sqlst.messages = has_in ? 1 : 0;
        p.u.sqlst.msg.p = msg.data ? fbw_buf_head(&msg) : NULL;
        p.u.sqlst.msg.n = fbw_buf_avail(&msg);
        p.u.sqlst.out_blr.p = out_blr.data ? fbw_buf_head(&out_blr) : NULL;
        p.u.sqlst.out_blr.n = fbw_buf_avail(&out_blr);
        p.u.sqlst.inline_blob_size = fbw_conn_inline_size(c);
        rc = fbw_conn_request_rows_owned(c, &p, has_out ? out : NULL, on_immediate2, im);
        if (rc)
            free(im);
        if (rc == FBW_OK && tx && fbw_tx_autocommit(tx))
            fbw_conn_mark_commits(c);
    }
    fbw_buf_free(&in_blr);
    fbw_buf_free(&out_blr);
    fbw_buf_free(&msg);
    return rc;
}
