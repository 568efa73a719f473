/* SPDX-License-Identifier: MIT */
/* replay_ops.c - the replay's steps beyond prepare/execute/fetch (replay_step.h): blob reads on the
 * ids the replay fetched at the capture's rows and columns, op_exec_immediate2 with the client's
 * message formats, scroll fetches and cursor counts, and info requests with the client's items. Blob reads and execute immediate with
 * an output are executions that end at once: compared and counted when they end. */
#include "replay_step.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- blob ids of the replay's rows ---- */

/* The blob ids of a row (its blob columns) for later blob reads. */
void rp_keep_row_blobs(rp_step *r, size_t step, uint32_t row, const fbw_value *v,
                       const fbw_msgfmt *out)
{
    for (uint16_t k = 0; k < out->n; k++) {
        if ((out->cols[k].type != FBW_SQL_BLOB && out->cols[k].type != FBW_SQL_QUAD) ||
            v[k].is_null)
            continue;
        if (r->rows.n < REPLAY_ROW_BLOBS_MAX && r->rows.n == r->rows.cap) {
            size_t cap = r->rows.cap ? r->rows.cap * 2 : 16;
            rp_rowblob *n = realloc(r->rows.v, cap * sizeof *n);
            if (!n) {
                r->nomem = 1;
                return;
            }
            r->rows.v = n;
            r->rows.cap = cap;
        }
        rp_rowblob *b;
        if (r->rows.n < REPLAY_ROW_BLOBS_MAX) {
            b = &r->rows.v[r->rows.n++];
        } else { /* full: the oldest goes */
            b = &r->rows.v[r->rows.next];
            r->rows.next = (r->rows.next + 1) % REPLAY_ROW_BLOBS_MAX;
            if (b->step > r->rows.gone)
                r->rows.gone = b->step;
        }
        b->step = step;
        b->row = row;
        b->col = k;
        b->id = v[k];
        b->id.type = FBW_SQL_BLOB;
    }
}

int rp_hash_rows(rp_step *r, fbw_stmt *st, pcaptool_result *res, int64_t max, size_t keep_step)
{
    const fbw_msgfmt *out = fbw_stmt_output(st);
    fbw_value *v = calloc(out->n ? out->n : 1, sizeof *v);
    if (!v) {
        r->nomem = 1;
        return -1;
    }
    for (size_t k = 0; k < fbw_stmt_row_count(st); k++) {
        if (max >= 0 && res->rows >= max)
            break;
        fbw_err err;
        res->rows = res->rows < 0 ? 1 : res->rows + 1;
        if (fbw_stmt_row(st, k, v, &err) == FBW_OK) {
            res->hash += pcaptool_row_hash(v, out);
            if (keep_step)
                rp_keep_row_blobs(r, keep_step, (uint32_t)(res->rows - 1), v, out);
        } else {
            res->unknown = 1;
        }
    }
    free(v);
    return 0;
}

/* The replay's blob id at the row and column of an execution, newest first; NULL if none. */
static const fbw_value *row_blob(const rp_step *r, size_t step, uint32_t row, uint16_t col)
{
    for (size_t j = r->rows.n; j-- > 0;) {
        const rp_rowblob *b = &r->rows.v[(r->rows.next + j) % (r->rows.n ? r->rows.n : 1)];
        if (b->step == step && b->row == row && b->col == col)
            return &b->id;
    }
    return NULL;
}


/* A blob read or an execute immediate with an output: an execution that ends at once, compared
 * and counted now (its latency goes with the step: account). */
static void once_end(rp_step *r, size_t i, const pcaptool_result *rep)
{
    const pcaptool_step *s = r->s;
    rp_exec x;
    memset(&x, 0, sizeof x);
    x.step = i;
    x.stmt = s->stmt;
    x.ok = r->step_ok;
    x.kind = s->kind;
    x.cap = s->result;
    x.rep = *rep;
    x.read_exec = s->read_exec;
    x.read_row = s->read_row;
    x.read_col = s->read_col;
    x.sql = s->kind == PCAPTOOL_STEP_IMMEDIATE ? (char *)s->data : NULL;
    int res = rp_compare(&x, r->results_ignore);
    rp_tally_result(r->tally, &x, res);
    r->once_result = res;
}

/* op_exec_immediate2: the captured input message decoded in the client's format and sent in it;
 * the output row in the client's format, hashed like a fetched row. */
void rp_do_immediate2(rp_step *r, size_t i)
{
    const pcaptool_step *s = r->s;
    if (s->msg_n && rp_decode_as_sent(r, i))
        return;
    fbw_err e;
    fbw_err_clear(&e);
    fbw_msgfmt in = {s->msg_cols, s->msg_n, s->msg_n};
    r->rq.imm_out = (fbw_msgfmt){s->out_cols, s->out_n, s->out_n};
    /* --inline-blob-size captured (negative): what this op_exec_immediate2 asked for; else the
     * connection already asks for N (replay_conn.c) */
    if (r->inline_blob_size < 0)
        fbw_conn_set_inline_blob_size(r->c, (int32_t)s->inline_blob_size);
    int rc;
    do
        rc = fbw_client_complete(r->cl, fbw_exec_immediate2(r->c, rp_slots_tx(r->sl, s->tx),
                                                            (const char *)s->data, s->len, &in,
                                                            r->rq.vals, &r->rq.imm_out,
                                                            &r->rq.res2));
    while (rc == FBW_WAIT);
    rc = rp_step_waited(r, rc, &e);
    rp_check(r, i, rc, &e, &r->rq.res2.err, "execute immediate failed");
    if (rc || r->rq.res2.err.code || !s->out_n)
        return;
    pcaptool_result res = {.rows = r->rq.res2.has_row ? 1 : 0, .affected = -1, .eof = 1};
    if (r->rq.res2.has_row) {
        fbw_msgfmt out = {s->out_cols, s->out_n, s->out_n};
        fbw_value *v = calloc(out.n, sizeof *v);
        if (!v) {
            r->nomem = 1;
            return;
        }
        fbw_bytes raw = {fbw_buf_head(&r->rq.res2.row), fbw_buf_avail(&r->rq.res2.row)};
        if (fbw_msg_decode(raw, &out, fbw_conn_get_info(r->c)->protocol, v, &e) == FBW_OK) {
            res.hash = pcaptool_row_hash(v, &out);
            rp_keep_row_blobs(r, i, 0, v, &out); /* blob ids it returned (RETURNING): readable */
        } else {
            res.unknown = 1;
        }
        free(v);
    }
    once_end(r, i, &res);
}

/* ---- scrollable cursors (protocol 18+) ---- */

/* The end of a cursor request that returned rc: 1 when its reply came and holds no error, else 0
 * with the step's failure recorded (the library's refusal before sending, the wait's or the
 * server's error). */
static int cursor_reply(rp_step *r, size_t i, fbw_stmt *st, int rc, const char *what)
{
    if (rc && !fbw_is_fatal(rc) && fbw_stmt_error(st)->code) {
        rp_add_failure(r, i, r->s, fbw_stmt_error(st), what); /* refused, not sent */
        return 0;
    }
    fbw_err e;
    fbw_err_clear(&e);
    rc = rp_step_waited(r, rc, &e);
    rp_check(r, i, rc, &e, fbw_stmt_error(st), what);
    return !rc && !fbw_stmt_error(st)->code;
}

/* op_fetch_scroll: the same move (op and position) on the replayed cursor, opened scrollable when
 * the captured execute's was (replay_steps.c); its row (or none past either end) is compared with
 * the capture's. Below protocol 18, or on a cursor the target could not open scrollable, the
 * library refuses before sending, and the step fails with its reason. */
void rp_do_fetch_scroll(rp_step *r, size_t i)
{
    const pcaptool_step *s = r->s;
    if (!rp_need_stmt(r, i, 1))
        return;
    fbw_stmt *st = r->sl->st[s->stmt];
    if (!cursor_reply(r, i, st, fbw_client_fetch_scroll(r->cl, st, s->fetch_op, s->fetch_pos),
                      "scroll fetch failed"))
        return;
    pcaptool_result res = {.rows = 0, .affected = -1, .eof = fbw_stmt_eof(st)};
    if (rp_hash_rows(r, st, &res, -1, 0))
        return;
    fbw_stmt_clear_rows(st);
    once_end(r, i, &res);
}

/* op_info_cursor: the record count of the replayed scrollable cursor, compared with the capture's. */
void rp_do_count_cursor(rp_step *r, size_t i)
{
    const pcaptool_step *s = r->s;
    if (!rp_need_stmt(r, i, 1))
        return;
    fbw_stmt *st = r->sl->st[s->stmt];
    int64_t n = -1;
    if (!cursor_reply(r, i, st, fbw_client_count_cursor(r->cl, st, &n), "cursor count failed"))
        return;
    pcaptool_result res = {.rows = n, .affected = -1, .eof = 1};
    once_end(r, i, &res);
}

/* ---- info requests: the client's items and buffer length on the replayed object ---- */

/* The object the info request asks about: op and handle (FBW_WAIT while its handle is unknown). */
static int info_target(rp_step *r, int32_t *op, uint16_t *h)
{
    const pcaptool_step *s = r->s;
    *h = 0;
    *op = FBW_OP_INFO_DATABASE;
    if (s->kind == PCAPTOOL_STEP_INFO_SQL) {
        *op = FBW_OP_INFO_SQL;
        return fbw_stmt_handle(r->sl->st[s->stmt], h);
    }
    if (s->kind == PCAPTOOL_STEP_INFO_TRANSACTION) {
        *op = FBW_OP_INFO_TRANSACTION;
        return fbw_tx_handle(r->sl->tx[s->tx], h);
    }
    return FBW_OK;
}

/* The reply is not compared (ids, page counts and sizes differ between servers); an error is a
 * failure. Asked for the affected rows after an execution, they are that execution's result. */
void rp_do_info(rp_step *r, size_t i)
{
    const pcaptool_step *s = r->s;
    if (s->kind == PCAPTOOL_STEP_INFO_SQL && !rp_need_stmt(r, i, 0))
        return;
    fbw_err e;
    fbw_err_clear(&e);
    int rc;
    do {
        int32_t op;
        uint16_t h;
        rc = info_target(r, &op, &h);
        if (rc == FBW_OK)
            rc = fbw_conn_info_request(r->c, op, h, s->data, s->len, s->info_buflen, &r->rq.info);
        rc = fbw_client_complete(r->cl, rc);
    } while (rc == FBW_WAIT);
    rc = rp_step_waited(r, rc, &e);
    rp_check(r, i, rc, &e, &r->rq.info.err, "info request failed");
    /* Records asked for: the affected rows of the statement's execution being measured, when it
     * is the one the capture asked about (owner). The capture's execution may have been handed on
     * before this reply came (streaming): then its affected rows are unknown and not compared. */
    rp_exec *x =
        s->owner && s->stmt > 0 && (size_t)s->stmt <= r->sl->nst ? r->sl->ex[s->stmt] : NULL;
    if (rc || r->rq.info.err.code || s->kind != PCAPTOOL_STEP_INFO_SQL || !x || x->step != s->owner ||
        !s->len || !memchr(s->data, FBW_INFO_SQL_RECORDS, s->len))
        return;
    uint64_t affected = 0, selected = 0;
    if (fbw_info_records(fbw_buf_head(&r->rq.info.data), fbw_buf_avail(&r->rq.info.data), &affected,
                         &selected, &e) == FBW_OK)
        x->rep.affected = (int64_t)affected;
    else
        rp_add_failure(r, i, s, &e, "the record counts cannot be read");
}

/* ---- blob reads: the id fetched at the capture's row and column, read as the client did ---- */

/* The open and the client's acts that went with it in one write, then (called again with a new
 * act_end) each later write's acts; r->rd remembers how far it got, as a wait may come between. */
static int queue_blob_acts(void *arg)
{
    rp_step *r = arg;
    const pcaptool_step *s = r->s;
    int rc = FBW_OK;
    if (!r->rd.opened) {
        rc = fbw_blob_open(r->rq.blob, rp_slots_tx(r->sl, s->tx), &r->rd.id, s->bpb, s->bpb_len);
        if (rc)
            return rc;
        r->rd.opened = 1;
        r->rd.act_end = 0; /* the acts the client sent in the same write as the open */
        while (r->rd.act_end < r->rd.acts_n && !s->acts[r->rd.act_end].burst)
            r->rd.act_end++;
    }
    for (; r->rd.act < r->rd.act_end && rc == FBW_OK; r->rd.act += rc == FBW_OK) {
        const pcaptool_blob_act *a = &s->acts[r->rd.act];
        uint16_t h;
        if (a->op == FBW_OP_GET_SEGMENT) {
            uint32_t len = a->buflen < 3 ? 3 : a->buflen > FBW_BLOB_READ_MAX ? FBW_BLOB_READ_MAX
                                                                              : a->buflen;
            r->rd.more_len = len;
            rc = fbw_blob_read(r->rq.blob, len);
        } else if (a->op == FBW_OP_SEEK_BLOB) {
            rc = fbw_blob_seek(r->rq.blob, a->mode, a->offset);
        } else if ((rc = fbw_blob_handle(r->rq.blob, &h)) == FBW_OK) {
            rc = fbw_conn_info_request(r->c, FBW_OP_INFO_BLOB, h, a->items, a->nitems, a->buflen,
                                       &r->rq.info);
        }
    }
    return rc;
}

void rp_do_blob_read(rp_step *r, size_t i)
{
    const pcaptool_step *s = r->s;
    const fbw_value *id = row_blob(r, s->read_exec, s->read_row, s->read_col);
    if (!id) {
        char msg[200];
        if (s->read_exec <= r->rows.gone)
            snprintf(msg, sizeof msg,
                     "not replayable: the replay's blob id at row %" PRIu32 " column %u of step "
                     "%zu is forgotten (a connection keeps the latest %d blob ids of its rows)",
                     s->read_row + 1, s->read_col + 1u, s->read_exec, REPLAY_ROW_BLOBS_MAX);
        else
            snprintf(msg, sizeof msg,
                     "the replay fetched no blob id at row %" PRIu32 " column %u of step %zu",
                     s->read_row + 1, s->read_col + 1u, s->read_exec);
        rp_add_failure(r, i, s, NULL, msg);
        return;
    }
    r->rd.id = *id;
    fbw_err e;
    fbw_err_clear(&e);
    if (fbw_blob_new(r->c, &r->rq.blob, &e)) {
        rp_add_failure(r, i, s, &e, "cannot make a blob");
        return;
    }
    fbw_err_clear(&r->rq.info.err);
    r->rd.opened = 0;
    r->rd.act = 0;
    r->rd.more_len = FBW_BLOB_READ_MAX;
    r->rd.acts_n = 0;
    while (r->rd.acts_n < s->nacts && s->acts[r->rd.acts_n].op != FBW_OP_CLOSE_BLOB &&
           s->acts[r->rd.acts_n].op != FBW_OP_CANCEL_BLOB)
        r->rd.acts_n++;
    int rc = rp_run_step(r, queue_blob_acts, &e);
    while (!rc && !fbw_blob_error(r->rq.blob)->code && r->rd.act < r->rd.acts_n) {
        r->rd.act_end = r->rd.act + 1; /* the client waited here: the next write */
        while (r->rd.act_end < r->rd.acts_n && !s->acts[r->rd.act_end].burst)
            r->rd.act_end++;
        rc = rp_run_step(r, queue_blob_acts, &e);
    }
    const pcaptool_result *cap = &s->result;
    size_t n = 0;
    /* beyond the client's reads: to the end when it read to the end, else to as many bytes */
    while (!rc && !fbw_blob_error(r->rq.blob)->code && !fbw_blob_eof(r->rq.blob) &&
           (cap->eof || (fbw_blob_data(r->rq.blob, &n), (int64_t)n < cap->rows))) {
        do
            rc = fbw_client_complete(r->cl, fbw_blob_read(r->rq.blob, r->rd.more_len));
        while (rc == FBW_WAIT);
        rc = rp_step_waited(r, rc, &e);
    }
    const uint8_t *data = fbw_blob_data(r->rq.blob, &n);
    if (fbw_blob_error(r->rq.blob)->code)
        rp_add_failure(r, i, s, fbw_blob_error(r->rq.blob), "blob read failed");
    else if (rc)
        rp_add_failure(r, i, s, &e, "blob read failed");
    else if (r->rq.info.err.code)
        rp_add_failure(r, i, s, &r->rq.info.err, "blob info request failed");
    else {
        pcaptool_result res = {.affected = -1};
        if (!cap->eof && (int64_t)n > cap->rows)
            n = (size_t)cap->rows; /* the capture read a prefix: compare as much */
        res.rows = (int64_t)n;
        res.hash = pcaptool_fnv(PCAPTOOL_FNV_BASIS, data, n);
        res.eof = fbw_blob_eof(r->rq.blob);
        once_end(r, i, &res);
    }
    /* closed as the client did: waiting for the reply when it waited, else the close rides with
     * the next request (fbw_blob_free queues it) */
    if (!rc && r->rd.acts_n < s->nacts && s->acts[r->rd.acts_n].burst) {
        do
            rc = fbw_client_complete(r->cl, fbw_blob_close(r->rq.blob));
        while (rc == FBW_WAIT);
        if (rp_step_waited(r, rc, &e) != FBW_OK)
            rp_add_failure(r, i, s, &e, "blob close failed");
    }
    fbw_blob_free(r->rq.blob);
    r->rq.blob = NULL;
}

