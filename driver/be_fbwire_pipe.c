/* SPDX-License-Identifier: MIT */
/* be_fbwire_pipe.c - the native backend's pipelined transactions (--fbwire-pipeline=transaction):
 * a thin user of the library's pipeline mode (wire/pipe.h), which holds the engine. */
#include "be_fbwire.h"

/* ---- pipelined transactions (--fbwire-pipeline=transaction) ----
 * Inside BEGIN ... COMMIT an execution of a prepared SELECT, INSERT, UPDATE or DELETE goes into the
 * library's pipeline (pipe.h: queue, sync points, caps, first error, commit after the check) and
 * is not waited for. Sync points here: COMMIT/ROLLBACK, fetch_rows (the script reads a result),
 * and a request that cannot be pipelined (SQL text, a prepare, another statement type). The first
 * failure is reported by the sync point if it can report (an execute, COMMIT), else by the next
 * execute/exec/commit. */

int fbw_bew_pipe_on(const fbw_be_conn *c)
{
    return c->conf->pipeline == FBW_PIPE_TRANSACTION && c->exp_open;
}

int fbw_bew_pipe_kind(int st)
{
    return st == FBW_STMT_SELECT || st == FBW_STMT_SELECT_FOR_UPD || st == FBW_STMT_INSERT ||
           st == FBW_STMT_UPDATE || st == FBW_STMT_DELETE;
}

/* Write what is queued, wait for every reply and check them. Only a lost connection (or a local
 * failure) is returned; a statement's error is the pipeline's (pipe_failed). */
int fbw_bew_pipe_sync(fbw_be_conn *c, fbw_err *err) { return fbw_pipe_sync(c->pipe, err); }

static int pipe_failed(const fbw_be_conn *c) { return fbw_pipe_error(c->pipe)->code != FBW_OK; }

static int pipe_error(const fbw_be_conn *c, fbw_err *err)
{
    *err = *fbw_pipe_error(c->pipe);
    return err->code ? err->code : FBW_E_SERVER;
}

/* The transaction ended (the pipeline forgot it): no result is left to read. */
void fbw_bew_pipe_reset(fbw_be_conn *c)
{
    c->reader = 0;
    c->reader_bs = NULL;
}

/* Before a request that cannot be queued in an open pipelined transaction: sync, and say whether
 * a queued statement failed (FBW_E_SERVER with its error) for callers that report it. */
int fbw_bew_pipe_settle(fbw_be_conn *c, fbw_err *err)
{
    if (!fbw_bew_pipe_on(c))
        return FBW_OK;
    int rc = fbw_bew_pipe_sync(c, err);
    if (rc)
        return rc;
    return pipe_failed(c) ? pipe_error(c, err) : FBW_OK;
}

/* Queue one execution of bs (values bound) in the explicit transaction; res is deferred. */
int fbw_bew_pipe_execute(fbw_be_stmt *bs, fbw_be_result *res, fbw_err *err)
{
    fbw_be_conn *c = bs->c;
    if (pipe_failed(c))
        return pipe_error(c, err);
    fbw_exec_out *prev = c->reader ? fbw_pipe_result(c->pipe, c->reader) : NULL;
    if (prev) /* the previous result can no longer be read: drop its rows as they come */
        prev->drop_rows = 1;
    c->reader = 0;
    unsigned k = 0;
    int rc = fbw_pipe_execute(c->pipe, bs->s, bs->vals, 0, bs->what, &k, err);
    if (k == 0) /* not queued */
        return rc;
    int st = fbw_stmt_type(bs->s);
    c->reader = k;
    c->reader_bs = bs;
    res->deferred = 1;
    res->deferred_write = st == FBW_STMT_INSERT || st == FBW_STMT_UPDATE || st == FBW_STMT_DELETE;
    if (fbw_stmt_has_cursor(bs->s) || fbw_stmt_output(bs->s)->n > 0)
        fbw_be_result_set_cols(res, fbw_stmt_output(bs->s)->n);
    return rc; /* a sync at the caps may already report a failure */
}

/* The script reads the latest result: a sync point. */
int fbw_bew_fetch_rows(fbw_be_conn *c, fbw_be_result *res, fbw_err *err)
{
    if (!res->deferred)
        return FBW_OK;
    res->deferred = 0;
    unsigned k = c->reader;
    fbw_be_stmt *bs = c->reader_bs;
    int rc = fbw_bew_pipe_sync(c, err);
    if (rc)
        return rc;
    const fbw_exec_out *e = k ? fbw_pipe_result(c->pipe, k) : NULL;
    if (!e || !bs)
        return fbw_err_set(err, FBW_E_USAGE, "fbwire: no pipelined result to read");
    if (pipe_failed(c))
        return pipe_error(c, err);
    while (rc == FBW_OK && !fbw_stmt_eof(bs->s) && fbw_stmt_error(bs->s)->code == FBW_OK)
        /* more rows than the first fetch brought */
        rc = fbw_bew_run(c, fbw_bew_q_fetch, bs->s, err);
    if (rc == FBW_OK && fbw_stmt_error(bs->s)->code != FBW_OK)
        rc = fbw_bew_server_error(fbw_stmt_error(bs->s), err);
    if (rc == FBW_OK && res->has_set)
        rc = fbw_bew_fill_result(bs, &c->exp, res, err);
    res->affected = e->affected;
    return rc;
}

/* COMMIT of a pipelined transaction (a sync point): the library's rules (pipe.h) decide whether
 * it rides along or waits for every reply to be checked. */
int fbw_bew_pipe_commit(fbw_be_conn *c, fbw_err *err)
{
    int rc = fbw_pipe_commit(c->pipe, err);
    fbw_bew_pipe_reset(c);
    return rc;
}

