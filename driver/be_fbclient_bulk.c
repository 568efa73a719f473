/* SPDX-License-Identifier: MIT */
/* be_fbclient_bulk.c - the baseline backend's multi-row INSERT: the single-row statement
 * prepared once and executed per row, each execute waiting for its reply; inside BEGIN under a
 * savepoint, else in a transaction of its own. */
#include "be_fbclient.h"

static int savepoint(sbdrv_be_conn *c, const char *sql, fbw_err *err)
{
    isc_status st[STATUS_LEN];
    if (API->immediate(st, &c->db, &c->exp_tr, 0, sql, SQL_DIALECT_V6, NULL) && has_error(st))
        return be_fbclient_status_err(st, err, "savepoint");
    return FBW_OK;
}

static int insert_rows(sbdrv_be_stmt *s, isc_handle *tr, const sbdrv_bulk_insert *b,
                       sbdrv_be_result *res, fbw_err *err)
{
    isc_status st[STATUS_LEN];
    for (size_t r = 0; r < b->nrows; r++) {
        int rc = be_fbclient_bind_params(s, b->values + r * b->ncols, b->ncols, err);
        if (rc != FBW_OK)
            return rc;
        if (API->execute(st, tr, &s->h, SQLDA_VERSION1, s->in) && has_error(st))
            return be_fbclient_status_err(st, err, "bulk insert");
    }
    sbdrv_be_result_reset(res);
    res->affected = b->nrows;
    return FBW_OK;
}

int be_fbclient_bulk_insert(sbdrv_be_conn *c, const sbdrv_bulk_insert *b, sbdrv_be_result *res,
                        fbw_err *err)
{
    isc_handle own = 0, *tr = &c->exp_tr;
    int explicit_tr = c->exp_tr != 0;
    sbdrv_be_stmt *s = NULL;
    int rc = explicit_tr ? savepoint(c, "SAVEPOINT FBW_BULK", err)
                         : be_fbclient_start_tr(c, &own, c->tpb, c->tpb_len, err);
    if (rc != FBW_OK)
        return rc;
    if (!explicit_tr)
        tr = &own;
    rc = be_fbclient_prepare_in(c, tr, b->single, b->single_len, &s, err);
    if (rc == FBW_OK)
        rc = insert_rows(s, tr, b, res, err);
    be_fbclient_stmt_free(s);
    if (explicit_tr) {
        if (rc == FBW_OK)
            return savepoint(c, "RELEASE SAVEPOINT FBW_BULK ONLY", err);
        if (!sbdrv_be_conn_lost(rc, err)) {
            fbw_err keep = *err;
            (void)savepoint(c, "ROLLBACK TO SAVEPOINT FBW_BULK", err);
            *err = keep;
        }
        return rc;
    }
    return be_fbclient_release_tr(c, &own, TR_OWN, rc, err);
}
