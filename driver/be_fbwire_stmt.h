/* SPDX-License-Identifier: MIT */
/* be_fbwire_stmt.h - the native backend's statements: prepare, binding, execution in a planned
 * transaction (be_fbwire_tx.h) with every row fetched, results as text cells, close. Stands on
 * be_fbwire_tx.h, be_fbwire_pipe.h and be_fbwire_conn.h. Internal to the sysbench driver;
 * driver/be_fbwire.c lists the backend's layers. */
#ifndef BE_FBWIRE_STMT_H
#define BE_FBWIRE_STMT_H

#include "be_fbwire_conn.h"
#include "be_fbwire_tx.h"

/* The backend ops (backend.h). */
int be_fbwire_prepare(sbdrv_be_conn *c, const char *sql, size_t len, sbdrv_be_stmt **out,
                      fbw_err *err);
unsigned be_fbwire_param_count(const sbdrv_be_stmt *s);
void be_fbwire_close(sbdrv_be_stmt *s);

/* Bind n sysbench values to the statement's described parameters (bs->vals). */
int be_fbwire_bind_all(sbdrv_be_stmt *bs, const sbdrv_val *params, size_t n, fbw_err *err);
/* Execute as x plans (bound values), fetch every row, fill res (rows, affected). */
int be_fbwire_execute_in(sbdrv_be_conn *c, be_fbwire_exec_plan *x, sbdrv_be_result *res,
                         fbw_err *err);
/* Fetch until the cursor is at its end or fails (the first fetch went with the execute). */
int be_fbwire_fetch_all(sbdrv_be_conn *c, sbdrv_be_stmt *bs, fbw_err *err);
/* The rows fetched so far as text cells of res (backend.h), in the canonical forms of value.h;
 * blob columns as their contents, all read in one round trip in tx. */
int be_fbwire_fill_result(sbdrv_be_stmt *bs, fbw_tx *tx, sbdrv_be_result *res, fbw_err *err);

#endif
