/* SPDX-License-Identifier: MIT */
/* batch.h - the batch API of protocol 16+ (Firebird 4.0+) for a prepared statement: op_batch_create
 * with the input BLR, message length and batch parameter block, op_batch_msg packets carrying many
 * packed messages each, op_batch_exec and its op_batch_cs completion state (per-message counts and
 * errors), op_batch_sync (P17), op_batch_cancel, op_batch_rls. Sans-I/O like stmt.h.
 * Create, messages and execute go out in one write and cost one round trip: the server holds back
 * the create/msg replies and flushes them with the exec reply (docs/protocol/statements.md §6,
 * docs/protocol/pipelining.md §2).
 * Not here: blobs inside batches (op_batch_regblob, blob streams), op_info_batch. */
#ifndef FBW_BATCH_H
#define FBW_BATCH_H

#include "stmt.h"

/* Per-message states besides a row count (IBatchCompletionState, FirebirdInterface.idl). */
#define FBW_BATCH_EXECUTE_FAILED (-1)
#define FBW_BATCH_SUCCESS_NO_INFO (-2)
#define FBW_BATCH_NOT_EXECUTED (-3) /* fbwire's: the server stopped before this message */

#define FBW_BATCH_PACKET_DEFAULT (128u << 10) /* fbclient's ClientBatchBuffer */

typedef struct fbw_batch_opts {
    int multierror;           /* TAG_MULTIERROR: go on after a failing message (default 0) */
    int record_counts;        /* TAG_RECORD_COUNTS: per-message row counts (default 1) */
    uint32_t buffer_bytes;    /* TAG_BUFFER_BYTES_SIZE; 0 = not sent (server: 16 MiB, max 256 MiB) */
    uint32_t detailed_errors; /* TAG_DETAILED_ERRORS; 0 = not sent (server: 64, max 256) */
    size_t packet_bytes;      /* encoded messages per op_batch_msg; 0 = FBW_BATCH_PACKET_DEFAULT */
} fbw_batch_opts;

FBW_API void fbw_batch_opts_init(fbw_batch_opts *o);
/* The batch parameter block: version 1, then wide clumplets (tag, 4-byte LE length, 4-byte LE
 * value). Returns FBW_OK or FBW_E_NOMEM. */
FBW_API int fbw_batch_pb_build(const fbw_batch_opts *o, fbw_buf *out);

/* ---- completion state (op_batch_cs), decoded without a connection ---- */

typedef struct fbw_batch_cs_error {
    uint32_t pos;       /* 0-based message index */
    size_t off, len;    /* its status vector in fbw_batch_cs.detail; len 0 = position only */
} fbw_batch_cs_error;

typedef struct fbw_batch_cs {
    uint32_t reccount;         /* messages processed */
    uint32_t nupdates;         /* reccount with record counts, else 0 */
    int32_t *updates;
    uint32_t nerrors;          /* detailed errors first, then the bare positions */
    fbw_batch_cs_error *errors;
    uint8_t *detail;           /* owned copy of the packet's detail bytes */
    size_t detail_len;
} fbw_batch_cs;

FBW_API void fbw_batch_cs_free(fbw_batch_cs *cs);
/* Rows changed by message i, or FBW_BATCH_EXECUTE_FAILED / SUCCESS_NO_INFO / NOT_EXECUTED. */
FBW_API int32_t fbw_batch_cs_state(const fbw_batch_cs *cs, uint32_t i);
/* Error k (< nerrors): its position, and in err its decoded status (FBW_E_SERVER) or, for a bare
 * position, FBW_E_SERVER "no detail kept". Returns err->code, or FBW_E_USAGE for k out of range. */
FBW_API int fbw_batch_cs_error_at(const fbw_batch_cs *cs, uint32_t k, uint32_t *pos, fbw_err *err);

/* ---- the batch on a connection ---- */

typedef struct fbw_batch fbw_batch;

/* A batch for prepared statement s (its input format and handle are taken now; s must outlive the
 * batch). FBW_E_UNSUPPORTED below protocol 16, FBW_E_USAGE when s is not prepared. */
FBW_API int fbw_batch_new(fbw_conn *c, fbw_stmt *s, const fbw_batch_opts *o, fbw_batch **out, fbw_err *err);
/* Queues op_batch_rls if the batch exists on the server (deferred, ignored), frees when no reply is
 * outstanding. NULL is fine. */
FBW_API void fbw_batch_free(fbw_batch *b);

/* Queue op_batch_create (its reply is deferred: nothing waits for it alone). */
FBW_API int fbw_batch_create(fbw_batch *b);
/* Encode one message (values as for fbw_stmt_execute) into the pending packet; a full packet is
 * queued as op_batch_msg. A value that does not encode takes nothing (FBW_E_USAGE/BADVALUE). */
FBW_API int fbw_batch_add(fbw_batch *b, const fbw_value *params);
/* Queue the pending messages as op_batch_msg now. */
FBW_API int fbw_batch_flush(fbw_batch *b);
/* Queue the pending messages and op_batch_exec in tx; the completion state arrives with its reply.
 * After execute the server's batch is empty and can take messages again. FBW_WAIT while tx's start
 * is unanswered and its handle cannot be named yet. */
FBW_API int fbw_batch_execute(fbw_batch *b, fbw_tx *tx);
/* op_batch_sync (P17+, FBW_E_UNSUPPORTED before): flushes the deferred replies, nothing else. */
FBW_API int fbw_batch_sync(fbw_batch *b);
/* op_batch_cancel: the server drops the messages it holds; pending ones here are dropped too. */
FBW_API int fbw_batch_cancel(fbw_batch *b);
/* op_batch_rls: the statement can execute normally again; the batch can be created anew. */
FBW_API int fbw_batch_release(fbw_batch *b);

/* Results, valid once the replies are in. */
FBW_API uint64_t fbw_batch_pending(const fbw_batch *b);   /* messages added since the last execute */
FBW_API int fbw_batch_executed(const fbw_batch *b);       /* a completion state arrived for the last execute */
FBW_API const fbw_batch_cs *fbw_batch_result(const fbw_batch *b);
/* First error of the create/msg/exec replies (or of encoding), code FBW_OK when none. Errors of
 * single messages are in the completion state, not here. */
FBW_API const fbw_err *fbw_batch_error(const fbw_batch *b);

#endif
