/* SPDX-License-Identifier: MIT */
/* be_fbwire_bulk.h - the native backend's multi-row INSERT (backend.h bulk_insert): the batch
 * API on protocol 16+, else single-row executes queued in chunks. Stands on be_fbwire_stmt.h,
 * be_fbwire_tx.h, be_fbwire_pipe.h and be_fbwire_conn.h. Internal to the sysbench driver;
 * driver/be_fbwire.c lists the backend's layers. */
#ifndef BE_FBWIRE_BULK_H
#define BE_FBWIRE_BULK_H

#include "be_fbwire_conn.h"

int be_fbwire_bulk_insert(sbdrv_be_conn *c, const sbdrv_bulk_insert *b, sbdrv_be_result *res,
                          fbw_err *err);

#endif
