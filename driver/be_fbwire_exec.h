/* SPDX-License-Identifier: MIT */
/* be_fbwire_exec.h - the native backend's executions (backend.h execute, exec, fetch_rows): where
 * a statement runs, reading a pipelined result, SQL text. Stands on be_fbwire_stmt.h,
 * be_fbwire_tx.h, be_fbwire_pipe.h and be_fbwire_conn.h. Internal to the sysbench driver;
 * driver/be_fbwire.c lists the backend's layers. */
#ifndef BE_FBWIRE_EXEC_H
#define BE_FBWIRE_EXEC_H

#include "be_fbwire_conn.h"

int be_fbwire_execute(sbdrv_be_stmt *bs, const sbdrv_val *params, size_t n, sbdrv_be_result *res,
                      fbw_err *err);
int be_fbwire_exec(sbdrv_be_conn *c, const char *sql, size_t len, sbdrv_be_result *res,
                   fbw_err *err);
int be_fbwire_fetch_rows(sbdrv_be_conn *c, sbdrv_be_result *res, fbw_err *err);

#endif
