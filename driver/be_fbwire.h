/* SPDX-License-Identifier: MIT */
/* be_fbwire.h - the native backend's parts (driver/be_fbwire*.c) and what they share: the
 * attachment and statement records and the calls one part makes into another. Internal to the
 * sysbench driver; the backend's contract is backend.h.
 *   be_fbwire.c       connection: connect, create, disconnect, errors, waits, statistics, vtable
 *   be_fbwire_tx.c    transactions and autocommit: BEGIN/COMMIT/ROLLBACK, where a statement runs
 *   be_fbwire_stmt.c  statements: prepare, binding, results, the unprepared fast path
 *   be_fbwire_pipe.c  pipelined transactions on the library's pipeline mode (wire/pipe.h)
 *   be_fbwire_bulk.c  multi-row INSERT: pipelined single-row executes, or the batch API */
#ifndef FBW_BE_FBWIRE_H
#define FBW_BE_FBWIRE_H

#include "backend.h"

#include "batch.h"
#include "fbwire.h"
#include "msgs.h" /* FBW_ISC_READ_ONLY_TRANS: a SELECT that writes, retried read-write */


struct fbw_be_conn {
    const fbw_be_conf *conf;
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
    fbw_blobset *blobs;  /* the blobs of a result, read together (created on first use) */
    struct fbw_be_stmt *query; /* re-prepared for each unprepared DML query (its handle is kept) */
    /* pipelined transaction (--fbwire-pipeline=transaction): the library's pipeline (pipe.h) */
    fbw_pipe *pipe;
    unsigned reader;                 /* the latest execution's number: its rows may still be read */
    struct fbw_be_stmt *reader_bs;
};

struct fbw_be_stmt {
    fbw_be_conn *c;
    fbw_stmt *s;
    unsigned nparams;
    fbw_value *vals;     /* nparams */
    char (*num)[48];     /* nparams scratch strings for numbers bound to text columns */
    char what[96];       /* start of the SQL, to name the statement in a pipelined error */
};

/* What one execution queues, depending on the transaction it runs in. */
typedef struct exec_call {
    fbw_be_stmt *bs;
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
int fbw_bew_fail(fbw_be_conn *c, int rc, fbw_err *err); /* the client's (or connection's) error */
int fbw_bew_server_error(const fbw_err *e, fbw_err *err); /* a request's server error */
int fbw_bew_wait_all(fbw_be_conn *c, fbw_err *err);
int fbw_bew_run(fbw_be_conn *c, int (*fn)(void *), void *arg, fbw_err *err);

/* be_fbwire_tx.c */
int fbw_bew_end_tx(fbw_be_conn *c, fbw_tx *t, int commit, fbw_err *err);
int fbw_bew_end_checked(fbw_be_conn *c, fbw_tx *t, int commit, fbw_err *err);
int fbw_bew_prepare_tx(fbw_be_conn *c, fbw_tx **out, fbw_err *err);
void fbw_bew_shared_plan(fbw_be_conn *c, exec_call *x, const fbw_tx_opts *opts);
int fbw_bew_execute_bound(fbw_be_stmt *bs, fbw_be_result *res, int pipelinable, fbw_err *err);
int fbw_bew_begin(fbw_be_conn *c, fbw_err *err);
int fbw_bew_commit(fbw_be_conn *c, fbw_err *err);
int fbw_bew_rollback(fbw_be_conn *c, fbw_err *err);
int fbw_bew_execute(fbw_be_stmt *bs, const fbw_val *params, size_t n, fbw_be_result *res,
                    fbw_err *err);

/* be_fbwire_stmt.c */
void fbw_bew_stmt_free(fbw_be_stmt *bs);
void fbw_bew_release_query(fbw_be_conn *c);
int fbw_bew_bind_all(fbw_be_stmt *bs, const fbw_val *params, size_t n, fbw_err *err);
/* Rows as text cells; blob columns as their contents, all read in one round trip in tx. */
int fbw_bew_fill_result(fbw_be_stmt *bs, fbw_tx *tx, fbw_be_result *res, fbw_err *err);
int fbw_bew_q_fetch(void *arg);
int fbw_bew_execute_in(fbw_be_conn *c, exec_call *x, fbw_be_result *res, fbw_err *err);
int fbw_bew_prepare(fbw_be_conn *c, const char *sql, size_t len, fbw_be_stmt **out, fbw_err *err);
unsigned fbw_bew_param_count(const fbw_be_stmt *s);
void fbw_bew_close(fbw_be_stmt *s);
int fbw_bew_exec(fbw_be_conn *c, const char *sql, size_t len, fbw_be_result *res, fbw_err *err);

/* be_fbwire_pipe.c */
int fbw_bew_pipe_on(const fbw_be_conn *c);
int fbw_bew_pipe_kind(int st);
int fbw_bew_pipe_sync(fbw_be_conn *c, fbw_err *err);
void fbw_bew_pipe_reset(fbw_be_conn *c);
int fbw_bew_pipe_settle(fbw_be_conn *c, fbw_err *err);
int fbw_bew_pipe_execute(fbw_be_stmt *bs, fbw_be_result *res, fbw_err *err);
int fbw_bew_pipe_commit(fbw_be_conn *c, fbw_err *err);
int fbw_bew_fetch_rows(fbw_be_conn *c, fbw_be_result *res, fbw_err *err);

/* be_fbwire_bulk.c */
int fbw_bew_bulk_insert(fbw_be_conn *c, const fbw_bulk_insert *b, fbw_be_result *res,
                        fbw_err *err);

#endif
