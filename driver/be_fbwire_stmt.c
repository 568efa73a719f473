/* SPDX-License-Identifier: MIT */
/* be_fbwire_stmt.c - the native backend's statements: prepare (in the transaction prepare_tx
 * picks), binding sysbench values to described parameters, execution in a planned transaction
 * and fetch, results as text cells, close. */
#include "be_fbwire_stmt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- statements ---- */

/* Longest text a BLOB parameter takes: the largest VARCHAR in bytes. */
#define BLOB_TEXT_MAX 32765u

/* BLOB parameters are bound as VARCHAR: the client chooses the input message's format and the
 * server turns a string assigned to a blob into a new blob, as it does for a literal. So a text
 * value reaches a BLOB column with no op_create_blob2 and no extra round trip, in the pipelined
 * path too (the fbclient baseline sends every text value as SQL_TEXT, which the server converts
 * the same way: be_fbclient_bind_params). Text longer than BLOB_TEXT_MAX is refused by bind_one's
 * length check (22001). */
static int blob_params_as_text(sbdrv_be_stmt *bs, fbw_err *err)
{
    const fbw_msgfmt *in = fbw_stmt_input(bs->s);
    int blobs = 0;
    for (uint16_t i = 0; i < in->n; i++)
        blobs |= in->cols[i].type == FBW_SQL_BLOB;
    if (!blobs)
        return FBW_OK;
    fbw_col *cols = malloc(in->n * sizeof *cols);
    if (!cols)
        return fbw_err_set(err, FBW_E_NOMEM, "fbwire: out of memory");
    memcpy(cols, in->cols, in->n * sizeof *cols);
    for (uint16_t i = 0; i < in->n; i++) {
        if (cols[i].type != FBW_SQL_BLOB)
            continue;
        cols[i].type = FBW_SQL_VARYING;
        cols[i].length = BLOB_TEXT_MAX;
        cols[i].scale = 0;
        cols[i].subtype = 0;
        if (in->cols[i].subtype != 1)
            cols[i].charset = FBW_CS_OCTETS; /* binary blob: the bytes as they are */
    }
    fbw_msgfmt f = {cols, in->n, in->n};
    int rc = fbw_stmt_set_input(bs->s, &f);
    free(cols);
    return rc ? be_fbwire_server_error(fbw_stmt_error(bs->s), err) : FBW_OK;
}

int be_fbwire_prepare(sbdrv_be_conn *c, const char *sql, size_t len, sbdrv_be_stmt **out,
                          fbw_err *err)
{
    be_fbwire_release_query(c);
    *out = NULL;
    if (fbw_pipe_queued(c->pipe)) { /* a sync point; a queued statement's failure is reported later */
        int rc = be_fbwire_pipe_sync(c, err);
        if (rc)
            return rc;
    }
    sbdrv_be_stmt *bs = calloc(1, sizeof *bs);
    if (!bs)
        return fbw_err_set(err, FBW_E_NOMEM, "fbwire: out of memory");
    bs->c = c;
    int shown = (int)(len < sizeof bs->what ? len : sizeof bs->what - 1);
    snprintf(bs->what, sizeof bs->what, "%.*s", shown, sql);
    fbw_tx *tx = NULL;
    int rc = fbw_stmt_new(c->conn, &bs->s, err);
    if (rc == FBW_OK)
        rc = be_fbwire_prepare_tx(c, &tx, err);
    if (rc == FBW_OK)
        rc = be_fbwire_waited(c, fbw_client_prepare(c->client, bs->s, tx, sql, len), err);
    if (rc == FBW_OK && !fbw_stmt_prepared(bs->s))
        rc = be_fbwire_server_error(fbw_stmt_error(bs->s), err);
    if (rc == FBW_OK)
        rc = blob_params_as_text(bs, err);
    if (rc == FBW_OK) {
        bs->nparams = fbw_stmt_input(bs->s)->n;
        size_t n = bs->nparams ? bs->nparams : 1;
        bs->vals = calloc(n, sizeof *bs->vals);
        bs->num = calloc(n, sizeof *bs->num);
        if (!bs->vals || !bs->num)
            rc = fbw_err_set(err, FBW_E_NOMEM, "fbwire: out of memory");
    }
    if (rc) {
        be_fbwire_stmt_free(bs);
        return rc;
    }
    *out = bs;
    return FBW_OK;
}

unsigned be_fbwire_param_count(const sbdrv_be_stmt *s) { return s->nparams; }

static int is_text(const fbw_col *col) { return col->type == FBW_SQL_VARYING || col->type == FBW_SQL_TEXT; }

/* One sysbench value for a described parameter: native where the types meet, else through the
 * canonical text parser (value.h), which rounds and range-checks like the server. */
static int bind_one(sbdrv_be_stmt *bs, unsigned i, const sbdrv_val *v, fbw_err *err)
{
    const fbw_col *col = &fbw_stmt_input(bs->s)->cols[i];
    fbw_value *x = &bs->vals[i];
    memset(x, 0, sizeof *x);
    x->type = col->type;
    if (v->type == SBDRV_VAL_NULL) {
        x->is_null = 1;
        return FBW_OK;
    }
    if (col->type == FBW_SQL_NULL) /* "? IS NULL": only the null flag counts, no bytes travel */
        return FBW_OK;
    const char *text = v->s;
    size_t len = v->len;
    if (v->type == SBDRV_VAL_INT64) {
        int exact = col->scale == 0 && (col->type == FBW_SQL_INT64 ||
                    (col->type == FBW_SQL_LONG && v->i >= INT32_MIN && v->i <= INT32_MAX) ||
                    (col->type == FBW_SQL_SHORT && v->i >= INT16_MIN && v->i <= INT16_MAX));
        if (exact) {
            x->u.i64 = v->i;
            return FBW_OK;
        }
        len = (size_t)snprintf(bs->num[i], sizeof bs->num[i], "%lld", (long long)v->i);
        text = bs->num[i];
    } else if (v->type == SBDRV_VAL_DOUBLE) {
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

int be_fbwire_bind_all(sbdrv_be_stmt *bs, const sbdrv_val *params, size_t n, fbw_err *err)
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

/* Every blob of the buffered rows in one round trip (blobset.h). */
static int read_blobs(sbdrv_be_stmt *bs, fbw_tx *tx, fbw_err *err)
{
    sbdrv_be_conn *c = bs->c;
    size_t added = 0;
    int rc = c->blobs ? FBW_OK : fbw_blobset_new(c->conn, 0, &c->blobs, err);
    if (rc == FBW_OK) {
        fbw_blobset_reset(c->blobs);
        rc = fbw_blobset_add_rows(c->blobs, bs->s, tx, 0, &added, err);
    }
    for (int k = 0; rc == FBW_OK && added && fbw_blobset_pending(c->blobs) && k < 64; k++)
        rc = be_fbwire_round_trip(c, fbw_blobset_queue, c->blobs, err);
    if (rc == FBW_OK && fbw_blobset_error(c->blobs)->code != FBW_OK)
        rc = be_fbwire_server_error(fbw_blobset_error(c->blobs), err);
    return rc;
}

/* Rows as text cells (backend.h), in the canonical forms of value.h; a blob as its bytes. */
int be_fbwire_fill_result(sbdrv_be_stmt *bs, fbw_tx *tx, sbdrv_be_result *res, fbw_err *err)
{
    const fbw_msgfmt *f = fbw_stmt_output(bs->s);
    size_t nrows = fbw_stmt_row_count(bs->s);
    fbw_value vals[64];
    fbw_value *v = f->n <= 64 ? vals : calloc(f->n, sizeof *v);
    if (!v)
        return fbw_err_set(err, FBW_E_NOMEM, "fbwire: out of memory");
    int rc = FBW_OK, blobs = 0;
    /* A statement whose transaction already ended (committed in the execute's own write) has
     * blob ids no one can open: they are shown as ids, as before blobs were read. */
    for (uint16_t i = 0; i < f->n && tx && fbw_tx_state(tx) == FBW_TX_ACTIVE; i++)
        blobs |= f->cols[i].type == FBW_SQL_BLOB;
    if (blobs && nrows)
        rc = read_blobs(bs, tx, err);
    for (size_t r = 0; r < nrows && rc == FBW_OK; r++) {
        rc = fbw_stmt_row(bs->s, r, v, err);
        for (uint16_t i = 0; i < f->n && rc == FBW_OK; i++) {
            if (v[i].is_null) {
                rc = sbdrv_be_result_add(res, NULL, 0, err);
                continue;
            }
            if (blobs && f->cols[i].type == FBW_SQL_BLOB) {
                size_t n;
                const uint8_t *p = fbw_blobset_cell(bs->c->blobs, r, i, &n);
                rc = p ? sbdrv_be_result_add(res, p, n, err)
                       : fbw_err_set(err, FBW_E_BADVALUE, "fbwire: blob of row %zu not read", r + 1);
                continue;
            }
            fbw_buf_reset(&bs->c->text);
            rc = fbw_value_to_text(&v[i], &f->cols[i], NULL, &bs->c->text, err);
            const char *t = bs->c->text.data ? (const char *)bs->c->text.data : "";
            if (rc == FBW_OK)
                rc = sbdrv_be_result_add(res, t, char_len(&f->cols[i], t, bs->c->text.len), err);
        }
    }
    if (v != vals)
        free(v);
    if (blobs && bs->c->blobs)
        fbw_blobset_reset(bs->c->blobs); /* the closes ride along with the next request */
    fbw_stmt_clear_rows(bs->s);
    return rc;
}

static int queue_execute(void *arg)
{
    be_fbwire_exec_plan *x = arg;
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
            return rc; /* FBW_WAIT: a handle is not known yet; called again after a wait */
        x->queued = 1;
    }
    if (x->commit_after)
        return fbw_tx_commit(x->tx);
    return FBW_OK;
}

int be_fbwire_fetch_all(sbdrv_be_conn *c, sbdrv_be_stmt *bs, fbw_err *err)
{
    int rc = FBW_OK;
    while (rc == FBW_OK && !fbw_stmt_eof(bs->s) && fbw_stmt_error(bs->s)->code == FBW_OK)
        rc = be_fbwire_waited(c, fbw_client_fetch(c->client, bs->s), err);
    return rc;
}

/* Execute in tx (queued as x says), fetch every row, fill res. */
int be_fbwire_execute_in(sbdrv_be_conn *c, be_fbwire_exec_plan *x, sbdrv_be_result *res, fbw_err *err)
{
    sbdrv_be_stmt *bs = x->bs;
    int rc = be_fbwire_round_trip(c, queue_execute, x, err);
    if (rc == FBW_OK)
        rc = be_fbwire_fetch_all(c, bs, err);
    if (rc)
        return rc;
    if (fbw_tx_error(x->tx)->code != FBW_OK && fbw_tx_state(x->tx) == FBW_TX_FAILED)
        return be_fbwire_server_error(fbw_tx_error(x->tx), err);
    if (fbw_stmt_error(bs->s)->code != FBW_OK)
        return be_fbwire_server_error(fbw_stmt_error(bs->s), err);
    if (fbw_stmt_has_cursor(bs->s) || fbw_stmt_output(bs->s)->n > 0) {
        sbdrv_be_result_set_cols(res, fbw_stmt_output(bs->s)->n);
        rc = be_fbwire_fill_result(bs, x->tx, res, err);
    }
    res->affected = fbw_stmt_affected(bs->s);
    return rc;
}

void be_fbwire_close(sbdrv_be_stmt *s)
{
    sbdrv_be_conn *c = s->c;
    if (fbw_pipe_queued(c->pipe)) { /* its queued executions are answered first (their errors kept) */
        fbw_err ignored;
        be_fbwire_pipe_sync(c, &ignored);
    }
    if (c->reader_bs == s) {
        c->reader = 0;
        c->reader_bs = NULL;
    }
    be_fbwire_stmt_free(s);
}
