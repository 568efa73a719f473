/* SPDX-License-Identifier: MIT */
/* be_fbwire_pipe.h - the native backend's pipelined transactions (--fbwire-pipeline=transaction)
 * on the library's pipeline mode (wire/pipe.h). Stands on be_fbwire_conn.h only. Internal to the
 * sysbench driver; driver/be_fbwire.c lists the backend's layers. */
#ifndef BE_FBWIRE_PIPE_H
#define BE_FBWIRE_PIPE_H

#include "be_fbwire_conn.h"

/* True inside BEGIN ... COMMIT with --fbwire-pipeline=transaction. */
int be_fbwire_pipe_on(const sbdrv_be_conn *c);
/* True for a statement type (FBW_STMT_*) whose executions are queued without waiting. */
int be_fbwire_pipe_kind(int st);
/* Write what is queued, wait for every reply and check them. Only a lost connection (or a local
 * failure) is returned; a statement's error stays the pipeline's. */
int be_fbwire_pipe_sync(sbdrv_be_conn *c, fbw_err *err);
/* Before a request that cannot be queued in an open pipelined transaction: sync, and return a
 * queued statement's failure (FBW_E_SERVER with its error). */
int be_fbwire_pipe_settle(sbdrv_be_conn *c, fbw_err *err);
/* Queue one execution of bs (values bound) in the explicit transaction; res is deferred. */
int be_fbwire_pipe_execute(sbdrv_be_stmt *bs, sbdrv_be_result *res, fbw_err *err);
/* The script reads the latest result (a sync point): *bs is the statement whose rows are to be
 * read, *affected its count; a queued statement's failure is returned. */
int be_fbwire_pipe_reader(sbdrv_be_conn *c, sbdrv_be_stmt **bs, uint64_t *affected, fbw_err *err);
/* COMMIT and ROLLBACK of a pipelined transaction (sync points). */
int be_fbwire_pipe_commit(sbdrv_be_conn *c, fbw_err *err);
int be_fbwire_pipe_rollback(sbdrv_be_conn *c, fbw_err *err);

#endif
