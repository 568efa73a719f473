/* SPDX-License-Identifier: MIT */
/* be_fbwire_tx.h - the native backend's transactions: BEGIN/COMMIT/ROLLBACK, ending a transaction
 * and checking its end, and where a statement runs (the transaction a prepare uses, the shared
 * transaction and its restart). Stands on be_fbwire_pipe.h and be_fbwire_conn.h. Internal to the
 * sysbench driver; driver/be_fbwire.c lists the backend's layers. */
#ifndef BE_FBWIRE_TX_H
#define BE_FBWIRE_TX_H

#include "be_fbwire_conn.h"
#include "be_fbwire_pipe.h"

/* What one execution queues, depending on the transaction it runs in. */
typedef struct be_fbwire_exec_plan {
    sbdrv_be_stmt *bs;
    fbw_tx *tx;
    fbw_tx *end_first; /* commit this (the previous shared transaction) before starting tx */
    int start;         /* queue fbw_tx_start(tx, opts) first */
    const fbw_tx_opts *opts;
    int commit_after;  /* own transaction: queue its commit right after the statement */
    int queued;
} be_fbwire_exec_plan;

/* The backend ops (backend.h). */
int be_fbwire_begin(sbdrv_be_conn *c, fbw_err *err);
int be_fbwire_commit(sbdrv_be_conn *c, fbw_err *err);
int be_fbwire_rollback(sbdrv_be_conn *c, fbw_err *err);

/* Commit or roll back t (a no-op when it is not live) and wait; a failed commit rolls back. */
int be_fbwire_end_tx(sbdrv_be_conn *c, fbw_tx *t, int commit, fbw_err *err);
/* End a transaction an operation started for itself: commit after success (rc == FBW_OK), else
 * roll back unless the attachment is lost, keeping the operation's error. Returns the outcome. */
int be_fbwire_end_own(sbdrv_be_conn *c, fbw_tx *t, int rc, fbw_err *err);
/* The transaction a prepare runs in: the explicit one, else the shared one (started now when
 * none is live). */
int be_fbwire_prepare_tx(sbdrv_be_conn *c, fbw_tx **out, fbw_err *err);
/* Plan an execution in the shared (or read-only) transaction started with opts, restarting it
 * when it is due (--P-shared-restart-*). */
void be_fbwire_shared_plan(sbdrv_be_conn *c, be_fbwire_exec_plan *x, const fbw_tx_opts *opts);

#endif
