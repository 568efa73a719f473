/* SPDX-License-Identifier: MIT */
/* be_fbwire_tx.c - the native backend's transactions: BEGIN (queued, it rides along with the
 * first statement), COMMIT and ROLLBACK, and where a statement outside BEGIN runs
 * (--fbwire-autocommit: the shared autocommit transaction restarted now and then, its own
 * transaction, or the long-lived read-only one), each queued so that it costs one round trip. */
#include "be_fbwire.h"

#include <time.h>

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ---- explicit transactions ---- */

int be_fbwire_end_tx(sbdrv_be_conn *c, fbw_tx *t, int commit, fbw_err *err)
{
    if (!tx_live(t))
        return FBW_OK;
    int rc = commit ? fbw_tx_commit(t) : fbw_tx_rollback(t);
    if (rc == FBW_OK)
        rc = be_fbwire_wait_all(c, err);
    else
        rc = be_fbwire_fail(c, rc, err);
    return rc ? rc : be_fbwire_end_checked(c, t, commit, err);
}

/* The end of t was answered: its own error, and a failed commit rolled back. */
int be_fbwire_end_checked(sbdrv_be_conn *c, fbw_tx *t, int commit, fbw_err *err)
{
    int rc;
    if (t->err.code != FBW_OK) {
        rc = be_fbwire_server_error(&t->err, err);
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

int be_fbwire_begin(sbdrv_be_conn *c, fbw_err *err)
{
    int rc = be_fbwire_commit(c, err);
    if (rc)
        return rc;
    /* Queued only: op_transaction goes out with the transaction's first statement. */
    rc = fbw_tx_start(&c->exp, &c->rw);
    if (rc)
        return be_fbwire_fail(c, rc, err);
    c->exp_open = 1;
    return FBW_OK;
}

int be_fbwire_commit(sbdrv_be_conn *c, fbw_err *err)
{
    int pipelined = c->conf->pipeline == SBDRV_PIPE_TRANSACTION && c->exp_open;
    c->exp_open = 0;
    return pipelined ? be_fbwire_pipe_commit(c, err) : be_fbwire_end_tx(c, &c->exp, 1, err);
}

int be_fbwire_rollback(sbdrv_be_conn *c, fbw_err *err)
{
    c->exp_open = 0;
    if (c->conf->pipeline == SBDRV_PIPE_TRANSACTION) {
        int rc = fbw_pipe_rollback(c->pipe, err); /* also answers whatever was queued */
        be_fbwire_pipe_reset(c);
        return rc;
    }
    return be_fbwire_end_tx(c, &c->exp, 0, err);
}

/* The transaction a prepare runs in: Firebird 3 refuses to prepare without one ("invalid
 * transaction handle (expecting explicit transaction start)"). Outside BEGIN that is the shared
 * transaction (read-only in pipelined and per-statement mode: prepare only reads metadata),
 * started here when none is live; the statement may later execute in any transaction. */
int be_fbwire_prepare_tx(sbdrv_be_conn *c, fbw_tx **out, fbw_err *err)
{
    *out = &c->exp;
    if (c->exp_open) {
        /* BEGIN's op_transaction is still queued: a new statement's allocation would take the
         * 0xFFFF shorthand, so the start is answered first (no cost: it had to go anyway). */
        if (c->exp.state != FBW_TX_STARTING)
            return FBW_OK;
        int rc = be_fbwire_wait_all(c, err);
        return rc                              ? rc
               : c->exp.state == FBW_TX_ACTIVE ? FBW_OK
                                               : be_fbwire_server_error(&c->exp.err, err);
    }
    fbw_tx *t = &c->shared[c->cur];
    if (!tx_live(t)) {
        int rc = fbw_tx_start(t, c->conf->autocommit == SBDRV_AC_SHARED ? &c->ac : &c->ro);
        rc = rc ? be_fbwire_fail(c, rc, err) : be_fbwire_wait_all(c, err);
        if (rc)
            return rc;
        if (t->state != FBW_TX_ACTIVE)
            return be_fbwire_server_error(&t->err, err);
        c->shared_count = 0;
        c->shared_started_ms = now_ms();
    }
    *out = t;
    return FBW_OK;
}

/* The shared (or read-only) transaction, restarted when it has run long enough. */
void be_fbwire_shared_plan(sbdrv_be_conn *c, exec_call *x, const fbw_tx_opts *opts)
{
    const sbdrv_be_conf *f = c->conf;
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

static int execute_own(sbdrv_be_conn *c, sbdrv_be_stmt *bs, sbdrv_be_result *res, int pipelined,
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
            rc = be_fbwire_wait_all(c, err);
        else
            rc = be_fbwire_fail(c, rc, err);
        if (rc)
            return rc;
        if (c->own.state != FBW_TX_ACTIVE)
            return be_fbwire_server_error(&c->own.err, err);
        x.start = 0;
    }
    int rc = be_fbwire_execute_in(c, &x, res, err);
    if (x.commit_after) {
        if (rc == FBW_OK && c->own.err.code != FBW_OK)
            rc = be_fbwire_server_error(&c->own.err, err); /* the commit itself failed */
        if (tx_live(&c->own)) {             /* it failed: nothing may stay open */
            fbw_err keep = *err;
            be_fbwire_end_tx(c, &c->own, 0, err);
            *err = keep;
        }
        return rc;
    }
    if (rc == FBW_OK)
        return be_fbwire_end_tx(c, &c->own, 1, err);
    fbw_err keep = *err;
    if (!sbdrv_be_conn_lost(rc, err))
        be_fbwire_end_tx(c, &c->own, 0, err);
    *err = keep;
    return rc;
}

/* pipelinable: a prepared statement of the script (SQL text, prepared and freed within one
 * call, always waits). */
int be_fbwire_execute_bound(sbdrv_be_stmt *bs, sbdrv_be_result *res, int pipelinable, fbw_err *err)
{
    sbdrv_be_conn *c = bs->c;
    sbdrv_be_result_reset(res);
    if (c->exp_open) {
        if (pipelinable && be_fbwire_pipe_on(c) && be_fbwire_pipe_kind(fbw_stmt_type(bs->s)))
            return be_fbwire_pipe_execute(bs, res, err);
        int rc = be_fbwire_pipe_settle(c, err);
        if (rc)
            return rc;
        exec_call x = {.bs = bs, .tx = &c->exp};
        return be_fbwire_execute_in(c, &x, res, err);
    }
    switch (c->conf->autocommit) {
    case SBDRV_AC_SHARED: {
        /* DDL (and EXECUTE BLOCK, which the dialect uses for IF [NOT] EXISTS) cannot share the
         * transaction that used the tables: it runs in its own one, started, executed and
         * committed in one write together with the commit of the shared transaction. */
        int st = fbw_stmt_type(bs->s);
        if (st == FBW_STMT_DDL || st == FBW_STMT_EXEC_PROCEDURE)
            return execute_own(c, bs, res, 1, err);
        exec_call x = {.bs = bs};
        be_fbwire_shared_plan(c, &x, &c->ac);
        return be_fbwire_execute_in(c, &x, res, err);
    }
    case SBDRV_AC_PIPELINED:
        if (fbw_stmt_type(bs->s) == FBW_STMT_SELECT) {
            exec_call x = {.bs = bs};
            be_fbwire_shared_plan(c, &x, &c->ro);
            int rc = be_fbwire_execute_in(c, &x, res, err);
            if (rc != FBW_E_SERVER || err->ngds == 0 || err->gds[0] != FBW_ISC_READ_ONLY_TRANS)
                return rc;
            sbdrv_be_result_reset(res); /* a SELECT that writes (a procedure): read-write after all */
        }
        return execute_own(c, bs, res, 1, err);
    default:
        return execute_own(c, bs, res, 0, err);
    }
}

int be_fbwire_execute(sbdrv_be_stmt *bs, const sbdrv_val *params, size_t n, sbdrv_be_result *res,
                          fbw_err *err)
{
    int rc = be_fbwire_bind_all(bs, params, n, err);
    return rc ? rc : be_fbwire_execute_bound(bs, res, 1, err);
}

