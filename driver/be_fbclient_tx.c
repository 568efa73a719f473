/* SPDX-License-Identifier: MIT */
/* be_fbclient_tx.c - the baseline backend's transactions: the TPBs built once per connection,
 * BEGIN/COMMIT/ROLLBACK, and where a statement outside BEGIN runs (--fbclient-autocommit:
 * a transaction of its own per statement, or the shared isc_tpb_autocommit transaction restarted
 * every N statements or T ms). Each ISC call waits for its reply: no request rides along. */
#include "be_fbclient.h"

/* ---------------------------------------------------------------- transactions */

static int put_isolation(char *t, int n, sbdrv_be_isolation iso)
{
    switch (iso) {
    case SBDRV_BE_ISO_SNAPSHOT:
        t[n++] = TPB_CONCURRENCY;
        break;
    case SBDRV_BE_ISO_SERIALIZABLE:
        t[n++] = TPB_CONSISTENCY;
        break;
    case SBDRV_BE_ISO_READ_COMMITTED_NOREC:
        t[n++] = TPB_READ_COMMITTED;
        t[n++] = TPB_NO_REC_VERSION;
        break;
    case SBDRV_BE_ISO_READ_CONSISTENCY:
        t[n++] = TPB_READ_COMMITTED;
        t[n++] = TPB_READ_CONSISTENCY;
        break;
    default:
        t[n++] = TPB_READ_COMMITTED;
        t[n++] = TPB_REC_VERSION;
        break;
    }
    return n;
}

static int put_wait(char *t, int n, int lock_timeout)
{
    if (lock_timeout == 0) {
        t[n++] = TPB_NOWAIT;
        return n;
    }
    t[n++] = TPB_WAIT;
    if (lock_timeout > 0) {
        uint32_t v = (uint32_t)lock_timeout;
        t[n++] = TPB_LOCK_TIMEOUT;
        t[n++] = 4;
        for (int i = 0; i < 4; i++)
            t[n++] = (char)(v >> (8 * i));
    }
    return n;
}

void be_fbclient_build_tpbs(sbdrv_be_conn *c)
{
    int n = 0;
    c->tpb[n++] = TPB_VERSION3;
    c->tpb[n++] = TPB_WRITE;
    n = put_isolation(c->tpb, n, c->conf->isolation);
    c->tpb_len = put_wait(c->tpb, n, c->conf->lock_timeout);
    n = 0;
    c->tpb_ac[n++] = TPB_VERSION3;
    c->tpb_ac[n++] = TPB_WRITE;
    n = put_isolation(c->tpb_ac, n, SBDRV_BE_ISO_READ_COMMITTED);
    n = put_wait(c->tpb_ac, n, c->conf->lock_timeout);
    c->tpb_ac[n++] = TPB_AUTOCOMMIT;
    c->tpb_ac_len = n;
}

int be_fbclient_start_tr(sbdrv_be_conn *c, isc_handle *tr, const char *tpb, int len, fbw_err *err)
{
    isc_status st[STATUS_LEN];
    isc_teb teb = {&c->db, len, tpb};
    *tr = 0;
    if (API->start_multiple(st, tr, 1, &teb) && has_error(st))
        return be_fbclient_status_err(st, err, "start transaction");
    return FBW_OK;
}

int be_fbclient_end_tr(isc_handle *tr, int commit, fbw_err *err)
{
    isc_status st[STATUS_LEN];
    if (*tr == 0)
        return FBW_OK;
    if (commit) {
        if (API->commit(st, tr) && has_error(st)) {
            int rc = be_fbclient_status_err(st, err, "commit");
            isc_status st2[STATUS_LEN];
            if (API->rollback(st2, tr) && has_error(st2))
                *tr = 0; /* the handle is useless either way */
            return rc;
        }
    } else if (API->rollback(st, tr) && has_error(st)) {
        *tr = 0;
        return be_fbclient_status_err(st, err, "rollback");
    }
    *tr = 0;
    return FBW_OK;
}

/* The shared autocommit transaction, restarted when it has run long enough. */
static int shared_tr(sbdrv_be_conn *c, fbw_err *err)
{
    if (c->shared_tr != 0) {
        if (!sbdrv_be_shared_due(c->conf, &c->shared_age))
            return FBW_OK;
        int rc = be_fbclient_end_tr(&c->shared_tr, 1, err);
        if (rc != FBW_OK)
            return rc;
    }
    sbdrv_be_shared_started(&c->shared_age, 0);
    return be_fbclient_start_tr(c, &c->shared_tr, c->tpb_ac, c->tpb_ac_len, err);
}

/* The transaction a statement runs in (explicit, shared or a new one of its own). */
int be_fbclient_acquire_tr(sbdrv_be_conn *c, isc_handle **tr, isc_handle *own, int *how, fbw_err *err)
{
    if (c->exp_tr != 0) {
        *how = TR_EXPLICIT;
        *tr = &c->exp_tr;
        return FBW_OK;
    }
    if (c->conf->autocommit == SBDRV_AC_SHARED) {
        *how = TR_SHARED;
        *tr = &c->shared_tr;
        return shared_tr(c, err);
    }
    *how = TR_OWN;
    *tr = own;
    return be_fbclient_start_tr(c, own, c->tpb, c->tpb_len, err);
}

/* Finish a statement's transaction: commit (rc == OK) or roll back its own transaction. */
int be_fbclient_release_tr(sbdrv_be_conn *c, isc_handle *own, int how, int rc, fbw_err *err)
{
    if (how == TR_SHARED)
        c->shared_age.statements++;
    if (how != TR_OWN)
        return rc;
    if (rc == FBW_OK)
        return be_fbclient_end_tr(own, 1, err);
    fbw_err keep = *err;
    (void)be_fbclient_end_tr(own, 0, err);
    *err = keep;
    return rc;
}

int be_fbclient_begin(sbdrv_be_conn *c, fbw_err *err)
{
    int rc = be_fbclient_end_tr(&c->exp_tr, 1, err);
    if (rc == FBW_OK)
        rc = be_fbclient_start_tr(c, &c->exp_tr, c->tpb, c->tpb_len, err);
    return rc;
}

int be_fbclient_commit(sbdrv_be_conn *c, fbw_err *err)
{
    return be_fbclient_end_tr(&c->exp_tr, 1, err);
}

int be_fbclient_rollback(sbdrv_be_conn *c, fbw_err *err)
{
    return be_fbclient_end_tr(&c->exp_tr, 0, err);
}
