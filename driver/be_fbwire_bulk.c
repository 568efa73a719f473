/* SPDX-License-Identifier: MIT */
/* be_fbwire_bulk.c - the native backend's multi-row INSERT: the batch API on protocol 16+, else
 * single-row executes queued in chunks; inside BEGIN under a savepoint, else in a transaction of
 * its own. */
#include "be_fbwire_bulk.h"

#include "be_fbwire_pipe.h"
#include "be_fbwire_stmt.h"
#include "be_fbwire_tx.h"
#include "batch.h"

#include <string.h>

#define BULK_CHUNK 500                 /* rows per wait in a pipelined bulk insert */

/* ---- bulk insert: every row's execute queued, one wait per chunk ---- */

/* One chunk of rows to queue: rows next .. end-1 of b, bound to bs, executed in tx. A row whose
 * values cannot be bound stops the chunk with bind_rc (err filled). */
typedef struct rows_call {
    sbdrv_be_stmt *bs;
    const sbdrv_bulk_insert *b;
    fbw_tx *tx;
    size_t next, end;
    fbw_err *err;
    int bind_rc;
    fbw_batch *bt; /* the batch API: the batch, and whether its create was queued */
    int created;
} rows_call;

static int queue_bulk(void *arg)
{
    rows_call *k = arg;
    while (k->next < k->end) {
        int rc = be_fbwire_bind_all(k->bs, k->b->values + k->next * k->b->ncols, k->b->ncols, k->err);
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

static int immediate(sbdrv_be_conn *c, fbw_tx *t, const char *sql, fbw_err *err)
{
    fbw_exec_result r;
    int rc = be_fbwire_wait_queued(c, fbw_exec_immediate(c->conn, t, sql, strlen(sql), &r), err);
    if (rc == FBW_OK && r.err.code != FBW_OK)
        rc = be_fbwire_server_error(&r.err, err);
    return rc;
}

static int insert_rows(sbdrv_be_conn *c, sbdrv_be_stmt *bs, fbw_tx *tx, const sbdrv_bulk_insert *b,
                       fbw_err *err)
{
    rows_call k = {bs, b, tx, 0, 0, err, FBW_OK, NULL, 0};
    while (k.next < b->nrows) {
        k.end = k.next + BULK_CHUNK < b->nrows ? k.next + BULK_CHUNK : b->nrows;
        /* Every execute of the chunk is answered before the next chunk is sent, so the first
         * failing row stops the insert; each reply's error lands in the statement. */
        int rc = be_fbwire_round_trip(c, queue_bulk, &k, err);
        if (rc == FBW_OK && k.bind_rc)
            rc = k.bind_rc;
        if (rc)
            return rc;
        if (fbw_stmt_error(bs->s)->code != FBW_OK)
            return be_fbwire_server_error(fbw_stmt_error(bs->s), err);
    }
    return FBW_OK;
}

/* ---- bulk insert on protocol 16+ (Firebird 4+): the batch API ----
 * op_batch_create, the rows packed into op_batch_msg packets and op_batch_exec go out in one
 * write and cost one round trip per chunk; the server stops at the first failing row
 * (multierror off), and the caller's transaction or savepoint undoes the rows before it. */

#define BATCH_CHUNK_BYTES ((size_t)4 << 20) /* well under the server's 16 MiB batch buffer */


static int queue_batch(void *arg)
{
    rows_call *k = arg;
    int rc;
    if (!k->created) {
        if ((rc = fbw_batch_create(k->bt)) != FBW_OK)
            return rc;
        k->created = 1;
    }
    for (; k->next < k->end; k->next++) {
        rc = be_fbwire_bind_all(k->bs, k->b->values + k->next * k->b->ncols, k->b->ncols, k->err);
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
        return be_fbwire_server_error(fbw_batch_error(bt), err);
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

static int insert_batch(sbdrv_be_conn *c, sbdrv_be_stmt *bs, fbw_tx *tx, const sbdrv_bulk_insert *b,
                        fbw_err *err)
{
    fbw_batch_opts o;
    fbw_batch_opts_init(&o);
    fbw_batch *bt = NULL;
    int rc = fbw_batch_new(c->conn, bs->s, &o, &bt, err);
    size_t msg = fbw_msg_length(fbw_stmt_input(bs->s));
    size_t per = msg ? BATCH_CHUNK_BYTES / msg : b->nrows;
    rows_call k = {bs, b, tx, 0, 0, err, FBW_OK, bt, 0};
    while (rc == FBW_OK && k.next < b->nrows) {
        size_t first = k.next;
        k.end = per > 0 && b->nrows - k.next > per ? k.next + per : b->nrows;
        rc = be_fbwire_round_trip(c, queue_batch, &k, err);
        if (rc == FBW_OK && k.bind_rc)
            rc = k.bind_rc;
        if (rc == FBW_OK)
            rc = batch_outcome(bt, k.end - first, err);
    }
    fbw_batch_free(bt);
    return rc;
}

int be_fbwire_bulk_insert(sbdrv_be_conn *c, const sbdrv_bulk_insert *b, sbdrv_be_result *res,
                              fbw_err *err)
{
    sbdrv_be_result_reset(res);
    int prc = be_fbwire_pipe_settle(c, err);
    if (prc)
        return prc;
    int explicit_tr = c->explicit_open;
    fbw_tx *tx = explicit_tr ? c->explicit_tx : c->own_tx;
    int rc = FBW_OK;
    if (explicit_tr)
        rc = immediate(c, tx, "SAVEPOINT FBW_BULK", err);
    else if ((rc = fbw_tx_start(tx, &c->opts_rw)) != FBW_OK)
        rc = be_fbwire_fail(c, rc, err);
    sbdrv_be_stmt *bs = NULL;
    if (rc == FBW_OK)
        rc = be_fbwire_prepare(c, b->single, b->single_len, &bs, err);
    if (rc == FBW_OK)
        rc = fbw_conn_get_info(c->conn)->protocol >= 16 ? insert_batch(c, bs, tx, b, err)
                                                     : insert_rows(c, bs, tx, b, err);
    be_fbwire_stmt_free(bs);
    if (rc == FBW_OK)
        res->affected = b->nrows;
    if (explicit_tr) {
        if (rc == FBW_OK)
            return immediate(c, tx, "RELEASE SAVEPOINT FBW_BULK ONLY", err);
        if (!sbdrv_be_conn_lost(rc, err)) {
            fbw_err keep = *err;
            immediate(c, tx, "ROLLBACK TO SAVEPOINT FBW_BULK", err);
            *err = keep;
        }
        return rc;
    }
    return be_fbwire_end_own(c, tx, rc, err);
}

