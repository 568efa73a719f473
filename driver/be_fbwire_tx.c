/* SPDX-License-Identifier: MIT */
/* be_fbwire_tx.c - the native backend's transactions: BEGIN (queued, it rides along with the
 * first statement), COMMIT and ROLLBACK, and where a statement outside BEGIN runs
 * (--fbwire-autocommit: the shared autocommit transaction restarted now and then, its own
 * transaction, or the long-lived read-only one), each queued so that it costs one round trip. */
#include "be_fbwire_tx.h"

/* ---- explicit transactions ---- */

/* The end of t was answered: its own error, and a failed commit rolled back. */
static int end_checked(sbdrv_be_conn *c, fbw_tx *t, int commit, fbw_err *err)
{
    int rc;
    if (fbw_tx_error(t)->code != FBW_OK) {
        rc = be_fbwire_server_error(fbw_tx_error(t), err);
        if (commit && tx_live(t)) { /* a failed commit leaves nothing open: roll back */
            fbw_tx_rollback(t);
            fbw_err keep = *err;
            be_fbwire_wait_all(c, err);
            *err = keep;
        }
        return rc;
    }
    return FBW_OK;
}

int be_fbwire_end_tx(sbdrv_be_conn *c, fbw_tx *t, int commit, fbw_err *err)
{
    if (!tx_live(t))
        return FBW_OK;
    int rc = be_fbwire_wait_queued(c, commit ? fbw_tx_commit(t) : fbw_tx_rollback(t), err);
    return rc ? rc : end_checked(c, t, commit, err);
}

/* The shared tail of execute and bulk insert: see be_fbwire_tx.h. */
int be_fbwire_end_own(sbdrv_be_conn *c, fbw_tx *t, int rc, fbw_err *err)
{
    if (rc == FBW_OK)
        return be_fbwire_end_tx(c, t, 1, err);
    fbw_err keep = *err;
    if (!sbdrv_be_conn_lost(rc, err))
        be_fbwire_end_tx(c, t, 0, err);
    *err = keep;
    return rc;
}

int be_fbwire_begin(sbdrv_be_conn *c, fbw_err *err)
{
    int rc = be_fbwire_commit(c, err);
    if (rc)
        return rc;
    /* Queued only: op_transaction goes out with the transaction's first statement. */
    rc = fbw_tx_start(c->explicit_tx, &c->opts_rw);
    if (rc)
        return be_fbwire_fail(c, rc, err);
    c->explicit_open = 1;
    return FBW_OK;
}

int be_fbwire_commit(sbdrv_be_conn *c, fbw_err *err)
{
    int pipelined = c->conf->pipeline == SBDRV_PIPE_TRANSACTION && c->explicit_open;
    c->explicit_open = 0;
    return pipelined ? be_fbwire_pipe_commit(c, err) : be_fbwire_end_tx(c, c->explicit_tx, 1, err);
}

int be_fbwire_rollback(sbdrv_be_conn *c, fbw_err *err)
{
    c->explicit_open = 0;
    if (c->conf->pipeline == SBDRV_PIPE_TRANSACTION)
        return be_fbwire_pipe_rollback(c, err);
    return be_fbwire_end_tx(c, c->explicit_tx, 0, err);
}

/* The transaction a prepare runs in: Firebird 3 refuses to prepare without one ("invalid
 * transaction handle (expecting explicit transaction start)"). Outside BEGIN that is the shared
 * transaction (read-only in pipelined and per-statement mode: prepare only reads metadata),
 * started here when none is live; the statement may later execute in any transaction. */
int be_fbwire_prepare_tx(sbdrv_be_conn *c, fbw_tx **out, fbw_err *err)
{
    *out = c->explicit_tx;
    if (c->explicit_open) {
        /* BEGIN's op_transaction is still queued: a new statement's allocation would take the
         * 0xFFFF shorthand, so the start is answered first (no cost: it had to go anyway). */
        if (fbw_tx_state(c->explicit_tx) != FBW_TX_STARTING)
            return FBW_OK;
        int rc = be_fbwire_wait_all(c, err);
        return rc                              ? rc
               : fbw_tx_state(c->explicit_tx) == FBW_TX_ACTIVE ? FBW_OK
                                               : be_fbwire_server_error(fbw_tx_error(c->explicit_tx), err);
    }
    fbw_tx *t = c->shared[c->shared_live];
    if (!tx_live(t)) {
        int rc = fbw_tx_start(t, c->conf->autocommit == SBDRV_AC_SHARED ? &c->opts_ac : &c->opts_ro);
        rc = be_fbwire_wait_queued(c, rc, err);
        if (rc)
            return rc;
        if (fbw_tx_state(t) != FBW_TX_ACTIVE)
            return be_fbwire_server_error(fbw_tx_error(t), err);
        sbdrv_be_shared_started(&c->shared_age, 0);
    }
    *out = t;
    return FBW_OK;
}

/* The shared (or read-only) transaction, restarted when it has run long enough. */
void be_fbwire_shared_plan(sbdrv_be_conn *c, be_fbwire_exec_plan *x, const fbw_tx_opts *opts)
{
    fbw_tx *live = c->shared[c->shared_live];
    x->opts = opts;
    if (tx_live(live)) {
        if (!sbdrv_be_shared_due(c->conf, &c->shared_age)) {
            x->tx = live;
            c->shared_age.statements++;
            return;
        }
        x->end_first = live;
        c->shared_live ^= 1;
    }
    x->tx = c->shared[c->shared_live];
    x->start = 1;
    sbdrv_be_shared_started(&c->shared_age, 1);
}
