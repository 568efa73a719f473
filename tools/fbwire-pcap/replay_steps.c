/* SPDX-License-Identifier: MIT */
/* replay_steps.c - transactions, prepare, execute, fetch, free, blob writes and plain execute
 * immediate of a replay connection (replay_step.h). */
#include "replay_step.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The request that ends the step's transaction, queued. */
static int queue_end(fbw_tx *t, int kind)
{
    switch (kind) {
    case PCAPTOOL_STEP_COMMIT:
        return fbw_tx_commit(t);
    case PCAPTOOL_STEP_COMMIT_RETAINING:
        return fbw_tx_commit_retaining(t);
    case PCAPTOOL_STEP_ROLLBACK:
        return fbw_tx_rollback(t);
    default:
        return fbw_tx_rollback_retaining(t);
    }
}

static void do_prepare(rp_step *r, size_t i)
{
    const pcaptool_step *s = r->s;
    fbw_err e;
    fbw_err_clear(&e);
    if (!r->sl->st[s->stmt] && fbw_stmt_new(r->c, &r->sl->st[s->stmt], &e)) {
        rp_add_failure(r, i, s, &e, "cannot allocate a statement");
        return;
    }
    int rc = rp_step_waited(r,
                            fbw_client_prepare(r->cl, r->sl->st[s->stmt], rp_slots_tx(r->sl, s->tx),
                                               (const char *)s->data, s->len),
                            &e);
    rp_check(r, i, rc, &e, fbw_stmt_error(r->sl->st[s->stmt]), "prepare failed");
}

static int bind_as_sent(rp_step *r, size_t i)
{
    const pcaptool_step *s = r->s;
    fbw_msgfmt f = {s->msg_cols, s->msg_n, s->msg_n};
    if (rp_decode_as_sent(r, i))
        return -1;
    if (fbw_stmt_set_input(r->sl->st[s->stmt], &f) != FBW_OK) {
        rp_add_failure(r, i, s, fbw_stmt_error(r->sl->st[s->stmt]),
                       "cannot bind as the client did");
        return -1;
    }
    return 0;
}

/* Without the client's message (no parameters): nothing to bind. */
static int bind_params(rp_step *r, size_t i)
{
    const pcaptool_step *s = r->s;
    if (s->msg_cols && s->msg_n)
        return bind_as_sent(r, i);
    const fbw_msgfmt *in = fbw_stmt_input(r->sl->st[s->stmt]);
    if (in->n != s->nparams) {
        char msg[128];
        snprintf(msg, sizeof msg,
                 "the capture sends %u parameters, the replayed statement takes %u", s->nparams,
                 in->n);
        rp_add_failure(r, i, s, NULL, msg);
        return -1;
    }
    free(r->rq.vals);
    r->rq.vals = calloc(in->n ? in->n : 1, sizeof *r->rq.vals);
    if (!r->rq.vals) {
        rp_add_failure(r, i, s, NULL, "out of memory");
        return -1;
    }
    for (uint16_t k = 0; k < in->n; k++) {
        const pcaptool_param *pa = &s->params[k];
        r->rq.vals[k].type = in->cols[k].type;
        if (pa->is_null || !pa->text) {
            r->rq.vals[k].is_null = 1;
            continue;
        }
        fbw_err e;
        fbw_err_clear(&e);
        if (fbw_value_from_text(&in->cols[k], pa->text, pa->len, &r->rq.vals[k], &e)) {
            fbw_err_prefix(&e, "parameter %u", k + 1);
            rp_add_failure(r, i, s, &e, "bad parameter");
            return -1;
        }
    }
    return 0;
}

/* Count and hash the buffered rows into the result of the statement's current execution; a
 * cursor the capture did not read to its end is hashed only as far as the capture read it. */
static void take_rows(rp_step *r, fbw_stmt *st, int slot)
{
    size_t e = r->sl->slot_exec[slot];
    if (!e || !r->sl->ex[slot] || r->sl->ex[slot]->step != e)
        return;
    const pcaptool_result *cap = &r->sl->ex[slot]->cap;
    rp_hash_rows(r, st, &r->sl->ex[slot]->rep, !cap->eof && cap->rows >= 0 ? cap->rows : -1, e);
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
static int ask_rows_as_captured(rp_step *r, size_t i)
{
    const pcaptool_step *s = r->s;
    fbw_stmt *st = r->sl->st[s->stmt];
    const fbw_msgfmt *cur = fbw_stmt_output(st);
    if (!r->rows_captured || !s->row_cols || cur->n != s->row_n)
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

static void do_execute(rp_step *r, size_t i)
{
    const pcaptool_step *s = r->s;
    if (!rp_need_stmt(r, i, 1) || bind_params(r, i) || ask_rows_as_captured(r, i))
        return;
    fbw_err e;
    fbw_err_clear(&e);
    fbw_stmt *st = r->sl->st[s->stmt];
    r->sl->slot_exec[s->stmt] = i;
    pcaptool_result *res = &r->sl->ex[s->stmt]->rep;
    /* negative: --inline-blob-size captured, what this captured execute asked for */
    fbw_stmt_set_inline_blob_size(st, r->inline_blob_size < 0 ? (int32_t)s->inline_blob_size
                                                              : r->inline_blob_size);
    /* A scrollable cursor as the client opened; a target below protocol 18 refuses it and the
     * cursor opens forward-only (its rows are the same): the scroll steps then fail, saying why. */
    if (fbw_stmt_set_scrollable(st, s->scrollable) != FBW_OK)
        fbw_stmt_set_scrollable(st, 0);
    int rc = rp_step_waited(r,
                            fbw_client_execute(r->cl, st, rp_slots_tx(r->sl, s->tx), r->rq.vals,
                                               s->count_info ? FBW_EXEC_COUNT : 0),
                            &e);
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
static void do_fetch(rp_step *r, size_t i)
{
    const pcaptool_step *s = r->s;
    if (!rp_need_stmt(r, i, 1))
        return;
    fbw_stmt *st = r->sl->st[s->stmt];
    fbw_err e;
    fbw_err_clear(&e);
    while (!fbw_stmt_eof(st) && !fbw_stmt_error(st)->code) {
        fbw_stmt_clear_rows(st);
        int rc = rp_step_waited(r, fbw_client_fetch(r->cl, st), &e);
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

/* Create, write and close in one write (blob.h: the writes address the pending blob); a stage
 * queued stays queued when a later one has to wait for the create's reply. */
static int queue_blob_write(void *arg)
{
    rp_step *r = arg;
    const pcaptool_step *s = r->s;
    int rc = FBW_OK;
    if (r->rq.blob_stage == 0 &&
        (rc = fbw_blob_create(r->rq.blob, rp_slots_tx(r->sl, s->tx), s->bpb, s->bpb_len)) == FBW_OK)
        r->rq.blob_stage = 1;
    if (rc == FBW_OK && r->rq.blob_stage == 1 &&
        (rc = fbw_blob_write(r->rq.blob, s->data, s->len)) == FBW_OK)
        r->rq.blob_stage = 2;
    if (rc == FBW_OK && r->rq.blob_stage == 2 && (rc = fbw_blob_close(r->rq.blob)) == FBW_OK)
        r->rq.blob_stage = 3;
    return rc;
}

/* Remember the id of the blob step i created (until its transaction ends). */
static int keep_blob_id(rp_step *r, size_t i, const pcaptool_step *s)
{
    if (rp_grow_for_one((void **)&r->made, &r->made_cap, r->nmade, sizeof *r->made))
        return FBW_E_NOMEM;
    rp_blobid *b = &r->made[r->nmade];
    memset(b, 0, sizeof *b);
    b->step = i;
    b->tx = s->tx;
    int rc = fbw_blob_id(r->rq.blob, &b->id);
    r->nmade += rc == FBW_OK;
    return rc;
}

/* The client's blob written again from the captured segments (as one stream: fbwire cuts its own
 * segments); its new id replaces the captured one in the executes that send it. */
static void do_blob(rp_step *r, size_t i)
{
    const pcaptool_step *s = r->s;
    fbw_err e;
    fbw_err_clear(&e);
    if (s->cancelled)
        return; /* the client discarded it: nothing uses its id */
    if (fbw_blob_new(r->c, &r->rq.blob, &e)) {
        rp_add_failure(r, i, s, &e, "cannot make a blob");
        return;
    }
    r->rq.blob_stage = 0;
    int rc = rp_run_step(r, queue_blob_write, &e);
    if (rc == FBW_OK && !fbw_blob_error(r->rq.blob)->code)
        rc = fbw_client_wait(r->cl); /* the close reply: the id is usable once it is in */
    if (fbw_blob_error(r->rq.blob)->code)
        rp_add_failure(r, i, s, fbw_blob_error(r->rq.blob), "blob write failed");
    else if (rc)
        rp_add_failure(r, i, s, &e, "blob write failed");
    else if (keep_blob_id(r, i, s) != FBW_OK)
        rp_add_failure(r, i, s, NULL, "the replayed blob has no id");
    fbw_blob_free(r->rq.blob);
    r->rq.blob = NULL;
}

static void do_free(rp_step *r, size_t i)
{
    const pcaptool_step *s = r->s;
    if (!s->stmt || !r->sl->st[s->stmt])
        return; /* freeing what the replay never allocated (a failed prepare): nothing to do */
    if (s->kind == PCAPTOOL_STEP_DROP) {
        fbw_stmt_free(r->sl->st[s->stmt]); /* deferred: rides with the next request */
        r->sl->st[s->stmt] = NULL;
        return;
    }
    fbw_stmt *st = r->sl->st[s->stmt];
    int rc = fbw_stmt_close(st); /* its reply rides with the next request, unless it must wait */
    fbw_err e;
    fbw_err_clear(&e);
    if (rc == FBW_WAIT) {
        do
            rc = fbw_client_complete(r->cl, fbw_stmt_close(st));
        while (rc == FBW_WAIT);
        rc = rp_step_waited(r, rc, &e);
    }
    if (rc)
        rp_add_failure(r, i, s, &e, "close failed");
}

static void do_start(rp_step *r, size_t i)
{
    const pcaptool_step *s = r->s;
    fbw_tx *t = r->sl->tx[s->tx];
    if (fbw_tx_start_tpb(t, s->data, s->len)) {
        rp_add_failure(r, i, s, fbw_tx_error(t), "cannot start the transaction");
        return;
    }
    r->sl->tx_start[s->tx] = i; /* its reply arrives with the next request's */
    if (rp_grow_for_one((void **)&r->sl->pend, &r->sl->pend_cap, r->sl->npend,
                        sizeof *r->sl->pend)) {
        r->nomem = 1;
        return;
    }
    r->sl->pend[r->sl->npend++] = s->tx;
}

static void do_end(rp_step *r, size_t i)
{
    const pcaptool_step *s = r->s;
    fbw_tx *t = r->sl->tx[s->tx];
    fbw_err e;
    fbw_err_clear(&e);
    int rc;
    do
        rc = fbw_client_complete(r->cl, queue_end(t, s->kind));
    while (rc == FBW_WAIT);
    rc = rp_step_waited(r, rc, &e);
    rp_check(r, i, rc, &e, fbw_tx_error(t), "transaction end failed");
}

static void do_immediate(rp_step *r, size_t i)
{
    if (r->s->imm2) {
        rp_do_immediate2(r, i);
        return;
    }
    fbw_err e;
    fbw_err_clear(&e);
    memset(&r->rq.res, 0, sizeof r->rq.res);
    const pcaptool_step *s = r->s;
    int rc;
    do
        rc = fbw_client_complete(r->cl, fbw_exec_immediate(r->c, rp_slots_tx(r->sl, s->tx),
                                                           (const char *)s->data, s->len,
                                                           &r->rq.res));
    while (rc == FBW_WAIT);
    rc = rp_step_waited(r, rc, &e);
    rp_check(r, i, rc, &e, &r->rq.res.err, "execute immediate failed");
}

/* Starts whose reply has arrived by now: report the ones the server refused. */
void rp_step_check_starts(rp_step *r)
{
    for (size_t k = 0; k < r->sl->npend;) {
        int t = r->sl->pend[k];
        if (r->sl->tx_start[t] && r->sl->tx[t] && fbw_tx_state(r->sl->tx[t]) == FBW_TX_STARTING) {
            k++;
            continue;
        }
        if (r->sl->tx_start[t] && r->sl->tx[t] && fbw_tx_state(r->sl->tx[t]) == FBW_TX_FAILED) {
            pcaptool_step start = {.kind = PCAPTOOL_STEP_START, .tx = t};
            rp_add_failure(r, r->sl->tx_start[t], &start, fbw_tx_error(r->sl->tx[t]),
                           "transaction start failed");
        }
        r->sl->tx_start[t] = 0;
        r->sl->pend[k] = r->sl->pend[--r->sl->npend];
    }
}

void rp_step_run(rp_step *r, size_t i)
{
    switch (r->s->kind) {
    case PCAPTOOL_STEP_START:
        do_start(r, i);
        break;
    case PCAPTOOL_STEP_COMMIT:
    case PCAPTOOL_STEP_COMMIT_RETAINING:
    case PCAPTOOL_STEP_ROLLBACK:
    case PCAPTOOL_STEP_ROLLBACK_RETAINING:
        do_end(r, i);
        break;
    case PCAPTOOL_STEP_PREPARE:
        do_prepare(r, i);
        break;
    case PCAPTOOL_STEP_EXECUTE:
        do_execute(r, i);
        break;
    case PCAPTOOL_STEP_FETCH:
        do_fetch(r, i);
        break;
    case PCAPTOOL_STEP_CLOSE:
    case PCAPTOOL_STEP_DROP:
        do_free(r, i);
        break;
    case PCAPTOOL_STEP_IMMEDIATE:
        do_immediate(r, i);
        break;
    case PCAPTOOL_STEP_BLOB:
        do_blob(r, i);
        break;
    case PCAPTOOL_STEP_BLOB_READ:
        rp_do_blob_read(r, i);
        break;
    case PCAPTOOL_STEP_FETCH_SCROLL:
        rp_do_fetch_scroll(r, i);
        break;
    case PCAPTOOL_STEP_COUNT_CURSOR:
        rp_do_count_cursor(r, i);
        break;
    case PCAPTOOL_STEP_INFO_SQL:
    case PCAPTOOL_STEP_INFO_DATABASE:
    case PCAPTOOL_STEP_INFO_TRANSACTION:
        rp_do_info(r, i);
        break;
    default:
        break;
    }
}

void rp_step_tx_ended(rp_step *r, int t)
{
    for (size_t k = 0; k < r->nmade;)
        if (r->made[k].tx == t)
            r->made[k] = r->made[--r->nmade];
        else
            k++;
    rp_slots_tx_ended(r->sl, t);
}

void rp_step_free(rp_step *r)
{
    free(r->made);
    free(r->rows.v);
    free(r->rq.vals);
    fbw_buf_free(&r->rq.res2.row);
    fbw_buf_free(&r->rq.info.data);
}
