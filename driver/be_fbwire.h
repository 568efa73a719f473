/* SPDX-License-Identifier: MIT */
/* be_fbwire.h - the native backend's parts (driver/be_fbwire*.c) and what they share: the
 * attachment and statement records and the calls one part makes into another. Internal to the
 * sysbench driver; the backend's contract is backend.h.
 *   be_fbwire.c       connection: connect, create, disconnect, errors, waits, statistics, vtable
 *   be_fbwire_tx.c    transactions and autocommit: BEGIN/COMMIT/ROLLBACK, where a statement runs
 *   be_fbwire_stmt.c  statements: prepare, binding, results, the unprepared fast path
 *   be_fbwire_pipe.c  pipelined transactions on the library's pipeline mode (wire/pipe.h)
 *   be_fbwire_bulk.c  multi-row INSERT: pipelined single-row executes, or the batch API */
#ifndef BE_FBWIRE_H
#define BE_FBWIRE_H

#include "backend.h"

#include "batch.h"
#include "fbwire.h"
#include "msgs.h" /* FBW_ISC_READ_ONLY_TRANS: a SELECT that writes, retried read-write */


struct sbdrv_be_conn {
    const sbdrv_be_conf *conf;
    fbw_client *cl;
    fbw_conn *c;
    fbw_tx exp;          /* explicit transaction (BEGIN) */
    int exp_open;
    fbw_tx own;          /* a statement's own transaction (autocommit) */
    fbw_tx shared[2];    /* shared autocommit / pipelined read-only transaction; a restart
                            commits one while starting the other in the same write */
    int cur;             /* shared[cur] is the live one */
    unsigned shared_count;
    uint64_t shared_started_ms;
    fbw_tx_opts rw, ro, ac;
    fbw_buf text;        /* scratch for result text */
    struct sbdrv_be_stmt *query; /* re-prepared for each unprepared DML query (its handle is kept) */
    /* pipelined transaction (--fbwire-pipeline=transaction): the library's pipeline (pipe.h) */
    fbw_pipe *pipe;
    unsigned reader;                 /* the latest execution's number: its rows may still be read */
    struct sbdrv_be_stmt *reader_bs;
};

struct sbdrv_be_stmt {
    sbdrv_be_conn *c;
    fbw_stmt *s;
    unsigned nparams;
    fbw_value *vals;     /* nparams */
    char (*num)[48];     /* nparams scratch strings for numbers bound to text columns */
    char what[96];       /* start of the SQL, to name the statement in a pipelined error */
};

/* What one execution queues, depending on the transaction it runs in. */
typedef struct exec_call {
    sbdrv_be_stmt *bs;
    fbw_tx *tx;
    fbw_tx *end_first; /* commit this (the previous shared transaction) before starting tx */
    int start;         /* queue fbw_tx_start(tx, opts) first */
    const fbw_tx_opts *opts;
    int commit_after;  /* own transaction: queue its commit right after the statement */
    int queued;
} exec_call;


static inline int tx_live(const fbw_tx *t)
{
    return t->state == FBW_TX_STARTING || t->state == FBW_TX_ACTIVE;
}

/* be_fbwire.c: errors and waits */
int be_fbwire_fail(sbdrv_be_conn *c, int rc, fbw_err *err); /* the client's (or connection's) error */
int be_fbwire_server_error(const fbw_err *e, fbw_err *err); /* a request's server error */
int be_fbwire_wait_all(sbdrv_be_conn *c, fbw_err *err);
int be_fbwire_run(sbdrv_be_conn *c, int (*fn)(void *), void *arg, fbw_err *err);

/* be_fbwire_tx.c */
int be_fbwire_end_tx(sbdrv_be_conn *c, fbw_tx *t, int commit, fbw_err *err);
int be_fbwire_end_checked(sbdrv_be_conn *c, fbw_tx *t, int commit, fbw_err *err);
int be_fbwire_prepare_tx(sbdrv_be_conn *c, fbw_tx **out, fbw_err *err);
void be_fbwire_shared_plan(sbdrv_be_conn *c, exec_call *x, const fbw_tx_opts *opts);
int be_fbwire_execute_bound(sbdrv_be_stmt *bs, sbdrv_be_result *res, int pipelinable, fbw_err *err);
int be_fbwire_begin(sbdrv_be_conn *c, fbw_err *err);
int be_fbwire_commit(sbdrv_be_conn *c, fbw_err *err);
int be_fbwire_rollback(sbdrv_be_conn *c, fbw_err *err);
int be_fbwire_execute(sbdrv_be_stmt *bs, const sbdrv_val *params, size_t n, sbdrv_be_result *res,
                    fbw_err *err);

/* be_fbwire_stmt.c */
void be_fbwire_stmt_free(sbdrv_be_stmt *bs);
void be_fbwire_release_query(sbdrv_be_conn *c);
int be_fbwire_bind_all(sbdrv_be_stmt *bs, const sbdrv_val *params, size_t n, fbw_err *err);
int be_fbwire_fill_result(sbdrv_be_stmt *bs, sbdrv_be_result *res, fbw_err *err);
int be_fbwire_q_fetch(void *arg);
int be_fbwire_execute_in(sbdrv_be_conn *c, exec_call *x, sbdrv_be_result *res, fbw_err *err);
int be_fbwire_prepare(sbdrv_be_conn *c, const char *sql, size_t len, sbdrv_be_stmt **out, fbw_err *err);
unsigned be_fbwire_param_count(const sbdrv_be_stmt *s);
void be_fbwire_close(sbdrv_be_stmt *s);
int be_fbwire_exec(sbdrv_be_conn *c, const char *sql, size_t len, sbdrv_be_result *res, fbw_err *err);

/* be_fbwire_pipe.c */
int be_fbwire_pipe_on(const sbdrv_be_conn *c);
int be_fbwire_pipe_kind(int st);
int be_fbwire_pipe_sync(sbdrv_be_conn *c, fbw_err *err);
void be_fbwire_pipe_reset(sbdrv_be_conn *c);
int be_fbwire_pipe_settle(sbdrv_be_conn *c, fbw_err *err);
int be_fbwire_pipe_execute(sbdrv_be_stmt *bs, sbdrv_be_result *res, fbw_err *err);
int be_fbwire_pipe_commit(sbdrv_be_conn *c, fbw_err *err);
int be_fbwire_fetch_rows(sbdrv_be_conn *c, sbdrv_be_result *res, fbw_err *err);

/* be_fbwire_bulk.c */
int be_fbwire_bulk_insert(sbdrv_be_conn *c, const sbdrv_bulk_insert *b, sbdrv_be_result *res,
                        fbw_err *err);

#endif
