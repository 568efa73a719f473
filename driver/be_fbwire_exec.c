/* SPDX-License-Identifier: MIT */
/* be_fbwire_exec.c - the native backend's executions: where a statement runs (inside BEGIN, queued
 * in a pipelined transaction or waited for; outside it by --fbwire-autocommit: the shared
 * autocommit transaction, the read-only one, or a transaction of its own, each queued so that it
 * costs one round trip), reading a pipelined result, and SQL text with the unprepared fast path
 * for plain INSERT/UPDATE/DELETE. */
#include "be_fbwire_exec.h"

#include "be_fbwire_pipe.h"
#include "be_fbwire_stmt.h"
#include "be_fbwire_tx.h"
#include "msgs.h" /* FBW_ISC_READ_ONLY_TRANS: a SELECT that writes, retried read-write */

#include <ctype.h>
#include <stdlib.h>
#include <strings.h>

static int execute_own(sbdrv_be_conn *c, sbdrv_be_stmt *bs, sbdrv_be_result *res, int pipelined,
                       fbw_err *err)
{
    be_fbwire_exec_plan x = {.bs = bs, .tx = c->own_tx, .start = 1, .opts = &c->opts_rw};
    int cursor = fbw_stmt_has_cursor(bs->s);
    /* Firebird counts every table a transaction's statements touched as in use until it ends,
     * so DDL (or an EXECUTE BLOCK doing DDL) fails with "object ... is in use" while the
     * read-only transaction of earlier SELECTs lives: commit that one in the same write. */
    int st = fbw_stmt_type(bs->s);
    if (pipelined && (st == FBW_STMT_DDL || st == FBW_STMT_EXEC_PROCEDURE) &&
        tx_live(c->shared[c->shared_live]))
        x.end_first = c->shared[c->shared_live];
    x.commit_after = pipelined && !cursor; /* a cursor must be read to its end before commit */
    if (!pipelined) {
        int rc = be_fbwire_wait_queued(c, fbw_tx_start(c->own_tx, &c->opts_rw), err);
        if (rc)
            return rc;
        if (fbw_tx_state(c->own_tx) != FBW_TX_ACTIVE)
            return be_fbwire_server_error(fbw_tx_error(c->own_tx), err);
        x.start = 0;
    }
    int rc = be_fbwire_execute_in(c, &x, res, err);
    if (x.commit_after) {
        if (rc == FBW_OK && fbw_tx_error(c->own_tx)->code != FBW_OK)
            rc = be_fbwire_server_error(fbw_tx_error(c->own_tx), err); /* the commit itself failed */
        if (tx_live(c->own_tx)) {             /* it failed: nothing may stay open */
            fbw_err keep = *err;
            be_fbwire_end_tx(c, c->own_tx, 0, err);
            *err = keep;
        }
        return rc;
    }
    return be_fbwire_end_own(c, c->own_tx, rc, err);
}

/* pipelinable: a prepared statement of the script (SQL text, prepared and freed within one
 * call, always waits). */
static int execute_bound(sbdrv_be_stmt *bs, sbdrv_be_result *res, int pipelinable, fbw_err *err)
{
    sbdrv_be_conn *c = bs->c;
    sbdrv_be_result_reset(res);
    if (c->explicit_open) {
        if (pipelinable && be_fbwire_pipe_on(c) && be_fbwire_pipe_kind(fbw_stmt_type(bs->s)))
            return be_fbwire_pipe_execute(bs, res, err);
        int rc = be_fbwire_pipe_settle(c, err);
        if (rc)
            return rc;
        be_fbwire_exec_plan x = {.bs = bs, .tx = c->explicit_tx};
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
        be_fbwire_exec_plan x = {.bs = bs};
        be_fbwire_shared_plan(c, &x, &c->opts_ac);
        return be_fbwire_execute_in(c, &x, res, err);
    }
    case SBDRV_AC_PIPELINED:
        if (fbw_stmt_type(bs->s) == FBW_STMT_SELECT) {
            be_fbwire_exec_plan x = {.bs = bs};
            be_fbwire_shared_plan(c, &x, &c->opts_ro);
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
    return rc ? rc : execute_bound(bs, res, 1, err);
}

/* The script reads a deferred result (backend.h fetch_rows): a sync point, then the rows. */
int be_fbwire_fetch_rows(sbdrv_be_conn *c, sbdrv_be_result *res, fbw_err *err)
{
    if (!res->deferred)
        return FBW_OK;
    res->deferred = 0;
    sbdrv_be_stmt *bs = NULL;
    uint64_t affected = 0;
    int rc = be_fbwire_pipe_reader(c, &bs, &affected, err);
    if (rc)
        return rc;
    rc = be_fbwire_fetch_all(c, bs, err); /* more rows than the first fetch brought */
    if (rc == FBW_OK && fbw_stmt_error(bs->s)->code != FBW_OK)
        rc = be_fbwire_server_error(fbw_stmt_error(bs->s), err);
    if (rc == FBW_OK && res->has_set)
        rc = be_fbwire_fill_result(bs, c->explicit_tx, res, err);
    res->affected = affected;
    return rc;
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
    sbdrv_be_stmt *bs;
    fbw_tx *ptx;      /* transaction to prepare in */
    const char *sql;
    size_t len;
    int prepare_queued;
    be_fbwire_exec_plan x;      /* where it executes (explicit or shared transaction, with restart) */
} fast_call;

/* allocate + prepare + execute + records info in one write (stmt.h fbw_stmt_execute_unprepared) */
static int queue_fast(void *arg)
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
    be_fbwire_exec_plan *x = &k->x;
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
    /* After a wait (FBW_WAIT) the prepare may have been answered: execute normally then, or
     * leave the prepare's error in the statement (fbw_stmt_prepare cleared it when queued, so an
     * error here is the prepare's: "Table unknown", not a usage error of the execute). */
    if (fbw_stmt_prepared(s))
        return fbw_stmt_execute(s, x->tx, NULL, FBW_EXEC_COUNT);
    if (fbw_stmt_error(s)->code != FBW_OK)
        return FBW_OK;
    rc = fbw_stmt_execute_unprepared(s, x->tx, FBW_EXEC_COUNT);
    return rc == FBW_E_USAGE && fbw_stmt_error(s)->code != FBW_E_USAGE ? FBW_OK : rc;
}

static int exec_fast(sbdrv_be_conn *c, const char *sql, size_t len, sbdrv_be_result *res, fbw_err *err)
{
    if (!c->query) {
        sbdrv_be_stmt *bs = calloc(1, sizeof *bs);
        if (!bs)
            return fbw_err_set(err, FBW_E_NOMEM, "fbwire: out of memory");
        bs->c = c;
        int rc = fbw_stmt_new(c->conn, &bs->s, err);
        if (rc) {
            free(bs);
            return rc;
        }
        c->query = bs;
    }
    fast_call k = {.bs = c->query, .sql = sql, .len = len};
    int rc = be_fbwire_prepare_tx(c, &k.ptx, err);
    if (rc == FBW_OK) {
        if (c->explicit_open)
            k.x.tx = c->explicit_tx;
        else
            be_fbwire_shared_plan(c, &k.x, &c->opts_ac);
        rc = be_fbwire_round_trip(c, queue_fast, &k, err);
    }
    fbw_stmt *s = c->query->s;
    if (rc == FBW_OK && fbw_stmt_error(s)->code != FBW_OK)
        rc = be_fbwire_server_error(fbw_stmt_error(s), err);
    if (rc == FBW_OK)
        res->affected = fbw_stmt_affected(s);
    return rc;
}

int be_fbwire_exec(sbdrv_be_conn *c, const char *sql, size_t len, sbdrv_be_result *res, fbw_err *err)
{
    sbdrv_be_result_reset(res);
    int prc = be_fbwire_pipe_settle(c, err); /* SQL text is not pipelined: a sync point */
    if (prc)
        return prc;
    if (plain_dml(sql, len) && (c->explicit_open || c->conf->autocommit == SBDRV_AC_SHARED))
        return exec_fast(c, sql, len, res, err);
    be_fbwire_release_query(c);
    sbdrv_be_stmt *bs = NULL;
    int rc = be_fbwire_prepare(c, sql, len, &bs, err);
    if (rc == FBW_OK)
        rc = bs->nparams ? fbw_err_set(err, FBW_E_USAGE, "fbwire: statement has parameters")
                         : execute_bound(bs, res, 0, err);
    be_fbwire_stmt_free(bs);
    return rc;
}
