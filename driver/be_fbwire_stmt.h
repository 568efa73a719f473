/* SPDX-License-Identifier: MIT */
/* be_fbwire_stmt.h - the native backend's statements: prepare, binding, execution in the
 * transaction it belongs to (explicit, shared, read-only or its own, or queued in a pipelined
 * transaction), results as text cells, the unprepared fast path for SQL text. Stands on
 * be_fbwire_tx.h, be_fbwire_pipe.h and be_fbwire_conn.h. Internal to the sysbench driver;
 * driver/be_fbwire.c lists the backend's layers. */
#ifndef BE_FBWIRE_STMT_H
#define BE_FBWIRE_STMT_H

#include "be_fbwire_conn.h"

/* The backend ops (backend.h). */
int be_fbwire_prepare(sbdrv_be_conn *c, const char *sql, size_t len, sbdrv_be_stmt **out,
                      fbw_err *err);
unsigned be_fbwire_param_count(const sbdrv_be_stmt *s);
int be_fbwire_execute(sbdrv_be_stmt *bs, const sbdrv_val *params, size_t n, sbdrv_be_result *res,
                      fbw_err *err);
void be_fbwire_close(sbdrv_be_stmt *s);
int be_fbwire_exec(sbdrv_be_conn *c, const char *sql, size_t len, sbdrv_be_result *res,
                   fbw_err *err);
int be_fbwire_fetch_rows(sbdrv_be_conn *c, sbdrv_be_result *res, fbw_err *err);

/* Bind n sysbench values to the statement's described parameters (bs->vals). */
int be_fbwire_bind_all(sbdrv_be_stmt *bs, const sbdrv_val *params, size_t n, fbw_err *err);

#endif
