/* SPDX-License-Identifier: MIT */
/* pipe.h - pipeline mode: queue many requests of one transaction without waiting for their
 * replies, wait once at a sync point, and get every request's own result in order.
 *
 * What no Firebird client offers (libpq calls the idea pipeline mode): executions of prepared
 * statements and blob requests of a transaction are queued back to back and go out in one write;
 * the replies are read and checked only at a sync point (fbw_pipe_sync, or a cap reached, or a
 * request that cannot be queued before earlier replies arrive). The rules:
 *   - requests are numbered 1..n in the transaction; each keeps its own result (fbw_pipe_result);
 *   - the first failed request is the pipeline's error, named by its place ("statement k of n of
 *     the pipelined transaction (what)", "blob k of n ...") with the server's own gds codes and
 *     SQLSTATE; later requests' errors are not reported over it;
 *   - caps bound what is in flight before a sync: replies (default FBW_PIPE_MAX_REPLIES) and
 *     request bytes (FBW_PIPE_MAX_BYTES), so neither side buffers without limit;
 *   - a transaction with a failed request is never committed: fbw_pipe_commit rolls it back and
 *     returns the request's error. If only SELECTs were queued, COMMIT rides along with them (one
 *     round trip: nothing was written that a failure could leave half done); a transaction that
 *     may have written sends COMMIT only after every reply was checked (two round trips).
 *
 * The pipeline itself never blocks and never reads a clock: every wait goes through the wait
 * callback of its options (fbw_client_pipe_wait for the blocking client, client.h; a test can
 * answer with scripted server bytes instead). docs/library.md has a complete example. */
#ifndef FBW_PIPE_H
#define FBW_PIPE_H

#include "blob.h"
#include "stmt.h"

#define FBW_PIPE_MAX_REPLIES 2048u            /* default cap: replies in flight before a sync */
#define FBW_PIPE_MAX_BYTES ((size_t)1 << 20)  /* default cap: request bytes queued before a sync */
#define FBW_PIPE_WHAT_MAX 100                 /* bytes of a request's name kept (with the NUL) */

/* Send what is queued and read until no reply is outstanding; on failure fill err. */
typedef int (*fbw_pipe_wait_fn)(void *arg, fbw_err *err);

typedef struct fbw_pipe_opts {
    unsigned max_replies;  /* 0: FBW_PIPE_MAX_REPLIES */
    size_t max_bytes;      /* 0: FBW_PIPE_MAX_BYTES */
    fbw_pipe_wait_fn wait; /* required */
    void *wait_arg;
} fbw_pipe_opts;

typedef struct fbw_pipe fbw_pipe;

FBW_API void fbw_pipe_opts_init(fbw_pipe_opts *o);
/* A pipeline on connection c. FBW_E_USAGE without a wait callback, FBW_E_NOMEM. */
FBW_API int fbw_pipe_new(fbw_conn *c, const fbw_pipe_opts *o, fbw_pipe **out, fbw_err *err);
/* Frees the pipeline (nothing is sent; end the transaction first). The results of requests still
 * in flight stay owned by the pipeline until their replies arrive, so free it only once nothing is
 * outstanding on the connection (or after the connection is gone). NULL is fine. */
FBW_API void fbw_pipe_free(fbw_pipe *p);

/* Start pipelining the transaction tx (started by the caller; its fbw_tx_start may still be queued
 * and then rides along with the first request). Forgets what an earlier transaction left. */
FBW_API void fbw_pipe_begin(fbw_pipe *p, fbw_tx *tx);

/* Queue one execution of the prepared statement s in the pipeline's transaction (params and flags
 * as fbw_stmt_execute; a cursor's first fetch is queued with it). `what` names the request in the
 * error (copied, FBW_PIPE_WHAT_MAX bytes kept; NULL: none); *k (may be NULL) gets its number.
 * Syncs by itself when the statement's handle is not known yet or a cap is reached. Returns
 * FBW_OK, the pipeline's first error once a request failed (nothing more is queued then), a wait's
 * error, or FBW_E_USAGE for a statement that would end or start a transaction itself. */
FBW_API int fbw_pipe_execute(fbw_pipe *p, fbw_stmt *s, const fbw_value *params, unsigned flags,
                             const char *what, unsigned *k, fbw_err *err);
/* Count blob b's requests, which the caller queued in the pipeline's transaction (fbw_blob_create +
 * writes + close, or fbw_blob_read_all), as request *k: at the sync its fbw_blob_error() is
 * checked like an execution's. A blob may have been written, so the COMMIT waits for the check.
 * The blob must stay alive until then. Same returns as fbw_pipe_execute. */
FBW_API int fbw_pipe_blob(fbw_pipe *p, fbw_blob *b, const char *what, unsigned *k, fbw_err *err);

/* Sync point: send what is queued, wait for every reply and check them in order. Returns FBW_OK or
 * the wait's error only; a failed request is the pipeline's error (fbw_pipe_error), reported by
 * the next fbw_pipe_execute / fbw_pipe_commit. */
FBW_API int fbw_pipe_sync(fbw_pipe *p, fbw_err *err);
/* The first failed request (prefixed with its place, see above); code FBW_OK while none failed. */
FBW_API const fbw_err *fbw_pipe_error(const fbw_pipe *p);
/* Requests queued since the last sync (not checked yet). */
FBW_API unsigned fbw_pipe_queued(const fbw_pipe *p);
/* Requests queued in this transaction (the n of "k of n"). */
FBW_API unsigned fbw_pipe_count(const fbw_pipe *p);
/* Whether a request may have written (anything but a SELECT or a blob read was queued). */
FBW_API int fbw_pipe_writes(const fbw_pipe *p);

/* The oldest queued request whose reply has not arrived: its number, and (what may be NULL) the
 * text that names it; 0 when every queued request was answered. A blob counts as unanswered
 * until its sync. After a lost connection this names the first request the server may or may not
 * have run. */
FBW_API unsigned fbw_pipe_oldest_unanswered(const fbw_pipe *p, const char **what);

/* The result of execution k once a sync checked it (done, rows, affected, its own error), or NULL
 * when k is not an execution or no longer held: results are held from the sync that answered them
 * until the next request is queued after it (fbw_pipe_execute may sync by itself at a cap). Set
 * drop_rows on a result in flight to discard its rows as they arrive (nobody will read them); the
 * rows themselves are the statement's (stmt.h: its latest execution's only). */
FBW_API fbw_exec_out *fbw_pipe_result(fbw_pipe *p, unsigned k);

/* End the transaction by the rules above: returns FBW_OK once committed, else the first failed
 * request's error (the transaction rolled back; a read-only one may have committed), COMMIT's own
 * error (then rolled back) or a wait's error. The pipeline is ready for fbw_pipe_begin again. */
FBW_API int fbw_pipe_commit(fbw_pipe *p, fbw_err *err);
/* Roll back and answer everything queued. Returns the rollback's or the wait's error; queued
 * requests' errors are dropped (the transaction is gone anyway). */
FBW_API int fbw_pipe_rollback(fbw_pipe *p, fbw_err *err);

#endif
